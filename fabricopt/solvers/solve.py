"""``solve``: run a method, then check and score its answer with ``problems``."""

from __future__ import annotations

import inspect
import logging
import math
import time
from typing import Any, Mapping

from ..errors import InfeasibleInstance, InvalidInstance, InvalidSolution, SolverUnavailable
from ..problems import get_kind, instance_from_dict, kind_of
from .registry import get_method
from .result import Result, SolverOutput, relative_gap

__all__ = ["solve"]

_log = logging.getLogger(__name__)

# A reported bound may overshoot the objective by solver tolerances; beyond this it is wrong.
_BOUND_RTOL = 1e-6


def _check_options(method, options: Mapping[str, Any]) -> None:
    params = inspect.signature(method.fn).parameters
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return
    for name in options:
        if name not in params:
            accepted = sorted(n for n, p in params.items()
                              if p.kind is p.KEYWORD_ONLY and n not in ("time_limit", "seed"))
            raise ValueError(f"{name}: not an option of method {method.name!r} "
                             f"(options: {', '.join(accepted) or 'none'})")


def _call(method, instance, time_limit, seed, options):
    """Call the method with the keywords it accepts (plug-ins may take fewer)."""
    params = inspect.signature(method.fn).parameters
    takes_all = any(p.kind is p.VAR_KEYWORD for p in params.values())
    kwargs = dict(options)
    for name, value in (("time_limit", time_limit), ("seed", seed)):
        if takes_all or name in params:
            kwargs[name] = value
    return method.fn(instance, **kwargs)


def solve(instance, method: str, *, time_limit: float | None = None, seed: int = 0,
          **options) -> Result:
    """Solve ``instance`` with ``method`` and return the scored :class:`Result`.

    Parameters
    ----------
    instance : instance object or dict
        Any problem kind's instance (a dict is parsed by its ``"problem"`` field).
    method : str
        A name from ``fabricopt.methods(kind)``.
    time_limit : float, optional
        Seconds the method may use (MILPs stop at it and return their incumbent).
    seed : int
        Seed of randomized methods: same seed, same answer.
    **options
        Method-specific options, e.g. ``backend="cbc"`` for MILPs.

    Returns
    -------
    Result
        Objective recomputed by ``problems.evaluate``; a solution that fails
        ``problems.check`` gives status ``"error"``, never a score.

    Raises
    ------
    InvalidInstance
        If the instance is malformed.
    SolverUnavailable
        If the method or a backend it needs does not exist here.

    Examples
    --------
    >>> from fabricopt.problems.circuits import CircuitsInstance
    >>> inst = CircuitsInstance(2, 8.0, [[0, 2e9], [1e9, 0]])
    >>> r = solve(inst, "exact")
    >>> r.status, r.objective
    ('optimal', 1.0)
    """
    if isinstance(instance, Mapping):
        instance = instance_from_dict(instance)
    kind = kind_of(instance)
    if not isinstance(instance, kind.instance_type):
        raise InvalidInstance(f"{type(instance).__name__} is a solution, not an instance")
    if time_limit is not None:
        if isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)) \
                or not math.isfinite(time_limit) or time_limit <= 0:
            raise ValueError(f"time_limit = {time_limit!r}: must be a number > 0")
        time_limit = float(time_limit)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed = {seed!r}: must be an integer")
    record = get_method(kind.name, method)
    _check_options(record, options)

    def result(status, solution=None, objective=None, bound=None, info=None, runtime=0.0):
        done = Result(kind.name, record.name, status, kind.sense, objective, bound,
                      relative_gap(objective, bound), runtime, solution, dict(info or {}))
        _log.info("%s / %s: %s, objective %s, bound %s, %.3f s%s", kind.name, record.name,
                  status, objective, bound, runtime,
                  f" ({done.info['message']})" if "message" in done.info else "")
        return done

    _log.info("solving a %s instance with %s (time limit %s, seed %d, options %s)",
              kind.name, record.name, time_limit, seed, options or "none")
    start = time.perf_counter()
    try:
        out = _call(record, instance, time_limit, seed, options)
    except InfeasibleInstance as exc:
        return result("infeasible", info={"message": str(exc)},
                      runtime=time.perf_counter() - start)
    except SolverUnavailable:
        raise
    except Exception as exc:  # a method's failure is reported, never propagated
        return result("error", info={"message": f"method {record.name!r} raised "
                                                f"{type(exc).__name__}: {exc}"},
                      runtime=time.perf_counter() - start)
    runtime = time.perf_counter() - start

    if isinstance(out, kind.solution_type) or out is None:
        out = SolverOutput(out, "feasible" if out is not None else "no_solution")
    if not isinstance(out, SolverOutput):
        return result("error", info={"message": f"method {record.name!r} returned a "
                                                f"{type(out).__name__}, expected a "
                                                f"{kind.solution_type.__name__} or SolverOutput"},
                      runtime=runtime)
    info = dict(out.info)
    solution = out.solution
    if solution is not None and not isinstance(solution, kind.solution_type):
        info["message"] = (f"method {record.name!r} returned a {type(solution).__name__}, "
                           f"expected a {kind.solution_type.__name__}")
        return result("error", info=info, runtime=runtime)

    bound = out.bound
    if kind.bound is not None and out.status != "infeasible":
        bound = _tighter(kind.sense, bound, kind.bound(instance))

    if solution is None:
        if out.status in ("optimal", "feasible"):
            info["message"] = f"method {record.name!r} claimed {out.status} without a solution"
            return result("error", info=info, runtime=runtime)
        return result(out.status, bound=None if out.status == "infeasible" else bound,
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
    status = out.status
    if bound is not None:
        over = (bound - objective) if kind.sense == "min" else (objective - bound)
        if over > _BOUND_RTOL * max(abs(objective), abs(bound)) + 1e-12:
            info["message"] = (f"method {record.name!r} reported bound {bound!r} on the wrong "
                               f"side of objective {objective!r}")
            return result("error", solution=solution, objective=objective, info=info,
                          runtime=runtime)
        if over > 0:  # within solver tolerance: the objective is the bound
            bound = objective
    if status == "optimal":
        bound = objective  # a proof of optimality is the tightest bound
    return result(status, solution, objective, bound, info, runtime)


def _tighter(sense: str, a: float | None, b: float | None) -> float | None:
    if a is None:
        return b
    if b is None:
        return a
    return max(a, b) if sense == "min" else min(a, b)
