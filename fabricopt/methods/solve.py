"""``solve``: run a method, then check and score its answer with ``problems``."""

from __future__ import annotations

import logging
import math
import time
import traceback
from numbers import Real
from typing import Mapping

import numpy as np

from fabricopt.errors import (InfeasibleInstance, InvalidInstance, InvalidOption, InvalidSolution,
                              SolverUnavailable)
from fabricopt.problems import instance_from_dict, kind_of
from fabricopt.problems._validate import as_seed, fail
from fabricopt.problems.tolerances import agree, overshoot
from fabricopt.methods.registry import get_method
from fabricopt.methods.result import LIMITS, Result, SolverOutput, relative_gap

__all__ = ["solve"]

_log = logging.getLogger(__name__)



def _call(method, instance, time_limit, seed, bound, options):
    """Call the method with the keywords it accepts (plug-ins may take fewer); ``bound``
    only when it is False, so a method that never heard of it is called as before."""
    kwargs = dict(options)
    for name, value in (("time_limit", time_limit), ("seed", seed)):
        if name in method.passes:
            kwargs[name] = value
    if not bound and "bound" in method.passes:
        kwargs["bound"] = False
    return method.fn(instance, **kwargs)


def _checked_bound(bound, record) -> bool:
    """``bound`` as a bool; refused for a method that computes nothing but a bound."""
    if isinstance(bound, np.bool_):
        bound = bool(bound)
    if not isinstance(bound, bool):
        fail("bound", bound, "must be True or False", InvalidOption)
    if not bound and record.bound_only:
        fail("bound", bound, f"method {record.kind}/{record.name} computes nothing but a "
                             f"bound", InvalidOption)
    return bound


def _checked_limits(time_limit, seed):
    """``(time_limit, seed)`` as a float (or None) and an int; NumPy scalars accepted, a
    ``numpy.random.Generator`` seed gives an integer drawn from it."""
    if time_limit is not None:
        if isinstance(time_limit, bool) or not isinstance(time_limit, Real) \
                or not math.isfinite(time_limit) or time_limit <= 0:
            fail("time_limit", time_limit, "must be a number > 0", InvalidOption)
        time_limit = float(time_limit)
    return time_limit, as_seed("seed", seed, InvalidOption, draw=True)


def solve(instance, method: str, *, time_limit: float | None = None, seed: int = 0,
          bound: bool = True, **options) -> Result:
    """Solve ``instance`` with ``method`` and return the scored :class:`Result`.

    Parameters
    ----------
    instance : instance object or dict
        Any problem kind's instance (a dict is parsed by its ``"problem"`` field).
    method : str
        A name from ``fabricopt.methods(kind)``.
    time_limit : float, optional
        Seconds (> 0; NumPy floats too) the method may use (MILPs stop at it and return their incumbent).
    seed : int or numpy.random.Generator
        Seed of randomized methods, an integer >= 0 (NumPy integers too): same seed,
        same answer. A generator gives the integer seed it draws.
    bound : bool
        True (default): report the best proven bound on the optimum (the method's own
        and the kind's) and certify an ``"optimal"`` claim against it. False: for a
        caller that needs the checked, scored solution and never its gap — no bound is
        computed (the kind's is skipped; a method that names ``bound`` in its signature
        is told to skip its own, and any bound a method reports is dropped), so
        ``bound``, ``gap`` and ``bound_source`` are None, ``info["bound"]`` says why,
        and the status is ``"feasible"`` at most: an ``"optimal"`` claim is not
        certified (``info["optimality"]`` says so).
    **options
        Method-specific options, e.g. ``backend="cbc"`` for MILPs.

    Returns
    -------
    Result
        Objective recomputed by ``problems.evaluate``; a solution that fails
        ``problems.check`` gives status ``"error"``, never a score. A method that
        raises gives status ``"error"`` with ``info["traceback"]``; one that ran past
        ``time_limit`` has ``limit == "time"`` and ``info["time_limit_exceeded"]``;
        ``bound_source`` names the argument behind ``bound``; an ``"optimal"`` claim
        whose proof the re-scored objective contradicts is ``"feasible"`` with the
        reason in ``info["optimality"]``.

    Raises
    ------
    InvalidInstance
        If the instance is malformed.
    InvalidOption
        If ``time_limit``, ``seed``, ``bound`` or an option has a bad value (``bound``
        is False for a method that only computes a bound) or an option is not one the
        method declares — before the method runs.
    SolverUnavailable
        If the method or a backend it needs does not exist here.

    Examples
    --------
    >>> from fabricopt.problems.circuits import CircuitsInstance
    >>> inst = CircuitsInstance(2, 8.0, [[0, 2e9], [1e9, 0]])
    >>> r = solve(inst, "exact")
    >>> r.status, r.objective
    ('optimal', 1.0)
    >>> r = solve(inst, "exact", bound=False)
    >>> r.status, r.objective, r.bound
    ('feasible', 1.0, None)
    """
    if isinstance(instance, Mapping):
        instance = instance_from_dict(instance)
    kind = kind_of(instance)
    if not isinstance(instance, kind.instance_type):
        raise InvalidInstance(f"{type(instance).__name__} is a solution, not an instance")
    time_limit, seed = _checked_limits(time_limit, seed)
    record = get_method(kind.name, method)
    bound = _checked_bound(bound, record)
    options = record.validate(options, instance)

    stopped = {"limit": "none", "bound_source": None}   # the typed fields, filled below

    def result(status, solution=None, objective=None, best=None, info=None, runtime=0.0):
        source = stopped["bound_source"] if best is not None else None
        info = dict(info or {})
        if not bound:
            info["bound"] = "not computed: solve(..., bound=False)"
        done = Result(kind.name, record.name, status, kind.sense, objective, best,
                      relative_gap(objective, best), runtime, solution, info,
                      stopped["limit"], source)
        _log.info("%s / %s: %s, objective %s, bound %s, %.3f s%s", kind.name, record.name,
                  status, objective, best, runtime,
                  f" ({done.info['message']})" if "message" in done.info else "")
        return done

    _log.info("solving a %s instance with %s (time limit %s, seed %d, options %s)",
              kind.name, record.name, time_limit, seed, options or "none")
    start = time.perf_counter()
    try:
        out = _call(record, instance, time_limit, seed, bound, options)
    except InfeasibleInstance as exc:
        return result("infeasible", info={"message": str(exc)},
                      runtime=time.perf_counter() - start)
    except SolverUnavailable:
        raise
    except Exception as exc:  # a method's failure is reported, never propagated
        return result("error", info={"message": f"method {record.name!r} raised "
                                                f"{type(exc).__name__}: {exc}",
                                     "traceback": traceback.format_exc()},
                      runtime=time.perf_counter() - start)
    runtime = time.perf_counter() - start
    overran = time_limit is not None and runtime > time_limit

    if isinstance(out, kind.solution_type) or out is None:
        out = SolverOutput(out, "feasible" if out is not None else "no_solution")
    if not isinstance(out, SolverOutput):
        return result("error", info={"message": f"method {record.name!r} returned a "
                                                f"{type(out).__name__}, expected a "
                                                f"{kind.solution_type.__name__} or SolverOutput"},
                      runtime=runtime)
    info = dict(out.info)
    stopped["limit"] = _limit(out, info, overran)
    if overran:
        info["time_limit_exceeded"] = info.get("time_limit_exceeded") or (
            f"ran {runtime:.3g} s on a {time_limit:g} s limit"
            + ("" if record.honours_time_limit else " (the method does not honour time_limit)"))
    solution = out.solution
    if solution is not None and not isinstance(solution, kind.solution_type):
        info["message"] = (f"method {record.name!r} returned a {type(solution).__name__}, "
                           f"expected a {kind.solution_type.__name__}")
        return result("error", info=info, runtime=runtime)

    # a non-finite bound (inf, nan) proves nothing: solve never returns one
    best = out.bound if bound and isinstance(out.bound, (int, float)) \
        and math.isfinite(out.bound) else None
    claimed_source = info.pop("bound_source", None)   # a plug-in may still name it here
    if best is not None:  # the method's own bound; a NamedBound names its argument
        stopped["bound_source"] = claimed_source or getattr(best, "source", record.name)
        best = float(best)
    if bound and kind.bound is not None and out.status != "infeasible":
        best = _kind_bound(kind, instance, best, stopped)

    if solution is None:
        if out.status in ("optimal", "feasible"):
            info["message"] = f"method {record.name!r} claimed {out.status} without a solution"
            return result("error", info=info, runtime=runtime)
        return result(out.status, best=None if out.status == "infeasible" else best,
                      info=info, runtime=runtime)

    try:
        verdict = kind.check(instance, solution)
    except InvalidSolution as exc:
        info["message"] = f"method {record.name!r} returned an invalid solution: {exc}"
        return result("error", solution=solution, info=info, runtime=runtime)
    if not verdict.feasible:
        info["message"] = f"method {record.name!r} returned an infeasible solution: {verdict.reason}"
        return result("error", solution=solution, info=info, runtime=runtime)
    if out.status in ("infeasible", "no_solution"):
        info["message"] = (f"method {record.name!r} reported {out.status} "
                           f"but returned a feasible solution")
        return result("error", solution=solution, info=info, runtime=runtime)

    objective = float(kind.evaluate(instance, solution))
    if not math.isfinite(objective):
        info["message"] = f"method {record.name!r}: its solution scores {objective!r}, not finite"
        return result("error", solution=solution, info=info, runtime=runtime)
    status = out.status
    if status == "optimal" and not bound:
        # the certificate is a bound that matches the objective: none was kept
        status = "feasible"
        info["optimality"] = (f"method {record.name!r} claimed optimal; not certified "
                              f"without a bound (bound=False): reported feasible")
    elif status == "optimal":
        status, best = _certify(record, kind.sense, objective, out.bound, best, info)
        if status == "optimal":
            stopped["bound_source"] = "optimal"   # the proof is the tightest bound
    if best is not None:
        # one tolerance (problems/tolerances.py): beyond it the bound is wrong
        if overshoot(kind.sense, best, objective):
            info["message"] = (f"method {record.name!r} reported bound {best!r} on the wrong "
                               f"side of objective {objective!r}")
            return result("error", solution=solution, objective=objective, info=info,
                          runtime=runtime)
        if (best - objective if kind.sense == "min" else objective - best) > 0:
            # within CERTIFY_RTOL: the objective is the bound
            best = objective
    return result(status, solution, objective, best, info, runtime)


def _certify(record, sense: str, objective: float, own: float | None, bound: float | None,
             info: dict) -> tuple[str, float | None]:
    """Status and bound of an ``optimal`` claim, re-scored: ``bound = objective`` only
    when the method's own proof agrees with ``evaluate`` (docs/envelope.rst).

    An exact method may prove optimality without a figure (a combinatorial
    argument); a method that reports a bound proves the optimum is that bound, so the
    re-scored objective must match it. Otherwise the status drops to ``feasible``,
    the bound is kept and ``info["optimality"]`` says why.
    """
    if own is None:
        if record.exact:
            return "optimal", objective
        info["optimality"] = (f"method {record.name!r} is not declared exact and claimed "
                              f"optimal without a bound: reported feasible")
        return "feasible", bound
    if agree(own, objective):
        return "optimal", objective
    info["optimality"] = (f"method {record.name!r} claimed optimal with bound {own!r}, but "
                          f"its solution evaluates to {objective!r}: reported feasible")
    return "feasible", bound


def _limit(out: SolverOutput, info: dict, overran: bool) -> str:
    """Why the method stopped (:data:`~fabricopt.methods.result.LIMITS`): its own word
    (``SolverOutput.limit``, or ``info["limit"]`` from an algorithm's details), else
    ``"time"`` when it ran past the limit or reported that time ran out, else ``"none"``."""
    said = out.limit or info.pop("limit", None)
    if said is not None and said not in LIMITS:
        said = None
    if overran or "time_limit_exceeded" in info:
        return "time"
    return said or "none"


def _kind_bound(kind, instance, bound: float | None, stopped: dict) -> float | None:
    """The tighter of the method's bound and the kind's; ``stopped["bound_source"]``
    names the winner (a kind's :class:`~fabricopt.problems.NamedBound` names its
    argument)."""
    theirs = kind.bound(instance)
    if theirs is None:
        return bound
    tighter = _tighter(kind.sense, bound, float(theirs))
    # a method's bound that only matches the kind's (to rounding) is the kind's argument
    if bound is None or tighter != bound or agree(bound, theirs):
        stopped["bound_source"] = getattr(theirs, "source",
                                          kind.bound_name or f"{kind.name} bound")
    return tighter


def _tighter(sense: str, a: float | None, b: float | None) -> float | None:
    if a is None:
        return b
    if b is None:
        return a
    return max(a, b) if sense == "min" else min(a, b)
