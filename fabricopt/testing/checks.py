"""Invariants every method's results must satisfy: ``assert_valid`` and ``check_method``."""

from __future__ import annotations

import json
import math
import os
from typing import Any, Mapping, Sequence

from hypothesis import HealthCheck, Phase, given, settings as hsettings, strategies as st

from fabricopt.errors import InvalidArgument, SolverUnavailable
from fabricopt.problems import get_kind, kind_of
from fabricopt.methods import Result, all_methods, get_method, solve
from fabricopt.problems.tolerances import CERTIFY_RTOL, CROSS_RTOL
from fabricopt.methods.result import STATUSES, relative_gap
from fabricopt.testing.strategies import instances

__all__ = ["MethodCheckError", "assert_valid", "check_method", "EXAMPLES_ENV_VAR"]

#: Environment variable that overrides ``check_method``'s default number of examples,
#: e.g. ``FABRICOPT_CHECK_EXAMPLES=200`` for a thorough nightly run.
EXAMPLES_ENV_VAR = "FABRICOPT_CHECK_EXAMPLES"

# A result's own figures (objective re-scored, bound, gap) agree to the certificate's
# tolerance; another method's proven optimum may differ from them by twice it.
_SAME_RTOL = CERTIFY_RTOL
_CROSS_RTOL = CROSS_RTOL


class MethodCheckError(AssertionError):
    """A method broke a rule of the result envelope; the message names method and rule."""


def _close(a: float, b: float, rtol: float) -> bool:
    return abs(a - b) <= rtol * max(abs(a), abs(b))   # relative: the same at every scale


def _worse_or_equal(sense: str, value: float, reference: float, rtol: float) -> bool:
    """Is ``value`` no better than ``reference`` (up to tolerance) for ``sense``?"""
    slack = rtol * max(abs(value), abs(reference))
    return value >= reference - slack if sense == "min" else value <= reference + slack


def _fail(result_or_name, message: str) -> None:
    label = result_or_name if isinstance(result_or_name, str) else \
        f"{result_or_name.problem}/{result_or_name.method}"
    raise MethodCheckError(f"{label}: {message}")


def assert_valid(instance, result: Result | Mapping[str, Any]) -> None:
    """Assert that ``result`` is a correct envelope (docs/envelope.rst) for ``instance``.

    Checks, with the first broken rule in the error message: the status is known and
    not ``"error"``; ``solve`` did not reject an ``optimal`` claim (``info["optimality"]``); a result with status ``optimal``/``feasible`` has a solution and
    every solution passes ``check``; the objective equals ``evaluate`` of the solution;
    the bound is on the right side of the objective (below it when minimizing);
    ``optimal`` means objective == bound; the gap is ``relative_gap(objective, bound)``;
    and the envelope survives a JSON round trip.

    Parameters
    ----------
    instance : instance object
    result : Result or dict
        A :class:`~fabricopt.methods.Result`, or the JSON object ``fabricopt solve
        --json`` printed.

    Raises
    ------
    MethodCheckError
        (an ``AssertionError``) naming the method and the rule it broke.

    Examples
    --------
    >>> import fabricopt
    >>> inst = fabricopt.generate("circuits", seed=1, gpus=4, switches=2)
    >>> assert_valid(inst, fabricopt.solve(inst, "greedy"))
    """
    if isinstance(result, Mapping):
        result = Result.from_dict(result)
    kind = kind_of(instance)
    if result.problem != kind.name:
        _fail(result, f"result is for problem {result.problem!r}, the instance is {kind.name}")
    if result.status not in STATUSES:
        _fail(result, f"status {result.status!r} is not one of {', '.join(STATUSES)}")
    if result.status == "error":
        _fail(result, f"status error: {result.message}")
    if "optimality" in result.info:
        _fail(result, f"claimed optimal, which solve rejected: {result.info['optimality']}")
    if result.sense != kind.sense:
        _fail(result, f"sense {result.sense!r}, the kind's is {kind.sense!r}")
    solution = result.solution
    if result.status in ("optimal", "feasible") and solution is None:
        _fail(result, f"status {result.status} without a solution")
    if solution is not None:
        if result.status not in ("optimal", "feasible"):
            _fail(result, f"status {result.status} with a solution")
        verdict = kind.check(instance, solution)
        if not verdict.feasible:
            _fail(result, f"the solution is infeasible: {verdict.reason}")
        value = float(kind.evaluate(instance, solution))
        if result.objective is None or not _close(result.objective, value, _SAME_RTOL):
            _fail(result, f"reported objective {result.objective!r} != evaluate {value!r}")
    elif result.objective is not None:
        _fail(result, f"objective {result.objective!r} without a solution")
    if result.bound is not None:
        if math.isnan(result.bound):
            _fail(result, "bound is NaN")
        if result.objective is not None and not _worse_or_equal(
                kind.sense, result.objective, result.bound, _SAME_RTOL):
            side = "above" if kind.sense == "min" else "below"
            _fail(result, f"bound {result.bound!r} is {side} the objective {result.objective!r}")
    if result.status == "optimal" and (result.bound is None
                                       or not _close(result.bound, result.objective, _SAME_RTOL)):
        _fail(result, f"status optimal but bound {result.bound!r} != objective {result.objective!r}")
    gap = relative_gap(result.objective, result.bound)
    if (gap is None) != (result.gap is None) or (gap is not None
                                                 and not _close(gap, result.gap, _SAME_RTOL)):
        _fail(result, f"gap {result.gap!r} != relative_gap(objective, bound) = {gap!r}")
    try:
        text = json.dumps(result.to_dict(), allow_nan=False)
    except (TypeError, ValueError) as exc:
        _fail(result, f"the envelope is not JSON: {exc}")
    if Result.from_dict(json.loads(text)).solution != solution:
        _fail(result, "the solution does not survive a JSON round trip")


def _answer(result: Result) -> tuple:
    """What must not change between two runs with the same seed."""
    solution = None if result.solution is None else result.solution.to_dict()
    return result.status, result.objective, result.bound, solution


def check_method(kind: str, name: str, *, examples: int | None = None,
                 max_size: int | None = None, time_limit: float | None = 10.0,
                 reference_time_limit: float | None = None, references: Sequence[str] | None = None,
                 strategy: st.SearchStrategy | None = None,
                 settings: hsettings | None = None) -> None:
    """Property-test method ``name`` of ``kind`` on generated instances.

    For each instance drawn from ``strategy`` (default: :func:`instances`) and a drawn
    seed, the method is solved twice with that seed and:

    - each result passes :func:`assert_valid` (feasible solution, objective ==
      ``evaluate``, bound on the right side, no ``error`` status);
    - a heuristic returns a solution (``no_solution`` is allowed to exact methods,
      which may run out of time, and expected of bound-only ones);
    - only an exact method may refuse an instance by raising ``SolverUnavailable``
      (a case beyond its limits, as ``crux``'s ``enumerate`` does): nothing more is
      checked on that instance;
    - the same seed gives the same answer (status, objective, bound, solution) —
      except for an exact method stopped by its time limit, whose incumbent depends
      on the wall clock, and a run with ``info["time_limit_exceeded"]`` (a heuristic
      whose search the limit cut);
    - against every exact method of the kind that proves optimality (status
      ``"optimal"``; by default with no time limit, so whether a comparison is made
      never depends on the machine's load): the objective is never better
      than the optimum, the bound never beyond it, an ``"optimal"`` claim matches it,
      and neither side reports ``infeasible`` while the other has a solution. A
      reference that refuses the instance (``SolverUnavailable``) is not compared.

    Parameters
    ----------
    kind, name : str
        The method, as registered.
    examples : int, optional
        Instances to try (hypothesis ``max_examples``). Default 10, or the value of
        ``FABRICOPT_CHECK_EXAMPLES``.
    max_size : int, optional
        Passed to :func:`instances`; keep it small where exact methods are MILPs.
    time_limit : float or None
        Given to the method under test.
    reference_time_limit : float or None
        Given to each exact reference method (default None: no limit, so keep
        ``max_size`` small); references that do not prove optimality in time are not
        compared.
    references : sequence of str, optional
        Exact methods to compare with; default every exact, non-bound-only method of
        the kind other than ``name``. ``[]`` skips the comparison.
    strategy : SearchStrategy, optional
        Instances to draw instead of ``instances(kind, max_size)``.
    settings : hypothesis.settings, optional
        Overrides; by default the current hypothesis profile's, with ``examples``,
        no deadline and the too-slow health check off.

    Raises
    ------
    MethodCheckError
        On the first broken rule, after hypothesis shrank the instance (it prints the
        falsifying example).
    SolverUnavailable
        If the method is not registered.

    Examples
    --------
    >>> check_method("circuits", "greedy", examples=3)
    """
    get_kind(kind)
    record = get_method(kind, name)
    if examples is None:
        examples = int(os.environ.get(EXAMPLES_ENV_VAR, "10"))
    if references is None:
        references = [m.name for m in all_methods(kind)
                      if m.exact and not m.bound_only and m.name != name]
    else:
        for ref in references:
            if not get_method(kind, ref).exact:
                raise InvalidArgument(f"references: {ref!r} is not an exact method of {kind}")
    drawn = instances(kind, max_size) if strategy is None else strategy
    label = f"{kind}/{name}"
    sense = get_kind(kind).sense

    def run_once(instance, seed):
        try:
            result = solve(instance, name, time_limit=time_limit, seed=seed)
        except SolverUnavailable as exc:
            if not record.exact:
                _fail(label, f"refused an instance (only exact methods may): {exc}")
            return None
        assert_valid(instance, result)
        return result

    @given(instance=drawn, seed=st.integers(0, 2**31 - 2))
    def check(instance, seed):
        first = run_once(instance, seed)
        if first is None:
            return  # an exact method refused a case beyond its limits
        if record.bound_only:
            if first.solution is not None:
                _fail(label, "a bound-only method returned a solution")
        elif first.status == "no_solution" and not record.exact:
            _fail(label, "returned no solution (only exact methods may run out of time)")
        second = run_once(instance, seed)
        # A run the limit cut depends on the machine's speed (a method that honours
        # time_limit says so in info), as does an exact method's unfinished proof.
        time_limited = (record.exact and first.status in ("feasible", "no_solution")) or any(
            "time_limit_exceeded" in r.info for r in (first, second))
        if not time_limited and _answer(first) != _answer(second):
            _fail(label, f"seed {seed} gave two different answers:\n  {_answer(first)}\n"
                         f"  {_answer(second)}")
        for ref in references:
            try:
                reference = solve(instance, ref, time_limit=reference_time_limit)
            except SolverUnavailable:
                continue  # the reference refuses this case: nothing to compare with
            _compare(label, sense, first, reference)

    base = settings if settings is not None else hsettings()
    # No explain phase: it replays the failure under coverage tracing many times
    # (seconds per method) to list source lines, which says little about a method.
    run = hsettings(base, max_examples=examples, deadline=None,
                    phases=[p for p in base.phases if p is not Phase.explain],
                    suppress_health_check=list(base.suppress_health_check)
                    + [HealthCheck.too_slow, HealthCheck.data_too_large])(check)
    run()


def _compare(label: str, sense: str, result: Result, reference: Result) -> None:
    """Hold ``result`` against an exact method's ``reference`` on the same instance."""
    ref = f"exact method {reference.method!r}"
    if reference.status == "error":
        _fail(label, f"cannot be compared: {ref} failed on this instance: {reference.message}")
    if reference.status == "infeasible" and result.solution is not None:
        _fail(label, f"has a feasible solution but {ref} reported infeasible "
                     f"({reference.message})")
    if result.status == "infeasible" and reference.solution is not None:
        _fail(label, f"reported infeasible ({result.message}) but {ref} found a solution "
                     f"of objective {reference.objective!r}")
    if reference.status != "optimal":
        return
    optimum = reference.objective
    if result.objective is not None and not _worse_or_equal(sense, result.objective, optimum,
                                                            _CROSS_RTOL):
        _fail(label, f"objective {result.objective!r} is better than the optimum "
                     f"{optimum!r} proven by {ref}")
    if result.status == "optimal" and not _close(result.objective, optimum, _CROSS_RTOL):
        _fail(label, f"claimed optimal with objective {result.objective!r}, but {ref} "
                     f"proved {optimum!r}")
    if result.bound is not None and not _worse_or_equal(sense, optimum, result.bound,
                                                        _CROSS_RTOL):
        side = "above" if sense == "min" else "below"
        _fail(label, f"bound {result.bound!r} is {side} the optimum {optimum!r} proven by {ref}")
