"""A formulation as a registered method: build, warm-start, solve within the time limit.

The backend itself (HiGHS / CBC adapter, :func:`run_milp`) lives in
:mod:`fabricopt.milp`, below ``formulations`` and ``heuristics``; this module only
glues a formulation's ``build`` and a heuristic's warm start to it and reports where
the time went.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from fabricopt.milp import (BACKENDS, BuildTimeLimit, MilpRun, build_deadline, cbc_available,
                            highs_version, run_milp, unavailable_backends)
from fabricopt.methods.options import Option, between
from fabricopt.methods.result import SolverOutput

__all__ = ["MilpRun", "run_milp", "milp_method", "highs_version", "cbc_available",
           "time_left", "MILP_OPTIONS", "BACKEND_OPTION", "SYMMETRY_OPTION"]

#: The ``backend`` option of every method that solves a MILP or an LP.
BACKEND_OPTION = Option("backend", str, "highs", "MILP/LP backend", choices=BACKENDS,
                        unavailable=unavailable_backends)

#: The options every ``milp`` method declares (see :mod:`fabricopt.methods.options`).
MILP_OPTIONS = (
    BACKEND_OPTION,
    Option("rel_gap", float, 0.0, "relative MIP gap at which to stop (0: prove optimality)",
           check=between(0.0, 1.0)),
    Option("warm_start", bool, True, "seed the solver with a heuristic's answer"),
)

#: ``symmetry_breaking`` of the formulations that take a plain on/off switch.
SYMMETRY_OPTION = Option("symmetry_breaking", bool, True,
                         "order interchangeable switches / wavelengths (removes equal optima)")


def time_left(time_limit: float | None, began: float) -> float | None:
    """Seconds left of ``time_limit`` since ``began`` (``time.monotonic()``); None: no limit."""
    return None if time_limit is None else time_limit - (time.monotonic() - began)


def milp_method(build: Callable[..., Any], warm_start_from: Callable[[Any], Any] | None = None,
                *, warm_start_timed: bool = False) -> Callable[..., SolverOutput]:
    """Turn a formulation's ``build(instance, **options) -> MilpModel`` into a method.

    ``warm_start_from(instance)`` (a heuristic) supplies a MIP start so that a
    time-limited run is never worse than that heuristic (with ``warm_start_timed`` it is
    called ``warm_start_from(instance, time_limit=...)``, for a heuristic that honours
    the limit and returns its best so far). ``time_limit`` bounds the
    whole call: building the model and the warm start count, and the solver gets what
    is left (the heuristic runs first, so that its answer stands when the model cannot
    be built in time). ``info`` reports ``warm_start_s``, ``model_build_s`` (building,
    encoding the start and copying the model into the solver) and ``solver_s``, and
    ``time_limit_exceeded`` when time ran out before the solver could run.
    """

    def method(instance, *, time_limit: float | None = None, seed: int = 0,
               backend: str = "highs", rel_gap: float = 0.0, warm_start: bool = True,
               **options) -> SolverOutput:
        began = time.monotonic()
        deadline = None if time_limit is None else began + time_limit
        # The heuristic runs first: if the model cannot be built in time, it is the answer.
        incumbent = None
        if warm_start and warm_start_from is not None:
            incumbent = (warm_start_from(instance, time_limit=time_limit) if warm_start_timed
                         else warm_start_from(instance))
        warmed = time.monotonic()
        info = {"warm_start_s": warmed - began}
        try:
            with build_deadline(deadline):
                model = build(instance, **options)
                start = None
                if incumbent is not None and model.encode is not None:
                    start = model.encode(incumbent)
        except BuildTimeLimit:
            info.update(model_build_s=time.monotonic() - warmed, solver_s=0.0,
                        time_limit_exceeded="the time limit ran out while the model was built")
            return SolverOutput(incumbent, "no_solution" if incumbent is None else "feasible",
                                None, info)
        info["model_build_s"] = time.monotonic() - warmed
        left = time_left(time_limit, began)
        if left is not None and left <= 0:
            info.update(solver_s=0.0, time_limit_exceeded="building the model and the warm "
                                                          "start used the whole time limit")
            return SolverOutput(incumbent, "no_solution" if incumbent is None else "feasible",
                                None, info)
        run = run_milp(model, backend=backend, time_limit=left, rel_gap=rel_gap,
                       warm_start=start, seed=seed)
        info.update(run.info)
        info.update(solver=run.solver, nodes=run.nodes, solver_s=run.solver_s)
        info["model_build_s"] += run.copy_s
        solution = model.decode(run.values) if run.values is not None else None
        bound = model.bound_from_raw(run.bound) if run.bound is not None else None
        if solution is None and incumbent is not None and run.status != "infeasible":
            # the solver stopped before it took the start: the heuristic answer stands
            return SolverOutput(incumbent, "feasible", bound, info)
        status = run.status if solution is not None or run.status == "infeasible" else "no_solution"
        return SolverOutput(solution, status, bound, info)

    method.__doc__ = build.__doc__
    return method
