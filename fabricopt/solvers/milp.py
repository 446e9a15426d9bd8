"""The MILP backend: PuLP builds, HiGHS (through highspy) or CBC solves.

PuLP's own HiGHS wrapper reports a time-limited solve as "Optimal", negates
maximization objectives inside highspy, drops the objective constant and cannot
warm-start; so this adapter copies the PuLP model into a ``highspy.Highs`` object
itself and reads status, objective, dual bound and node count from it. The same code
serves PuLP 3.3 (what pip resolves on Python 3.11) and PuLP 4: it only uses
``variables()``, ``constraints``, ``objective`` and each constraint's bounds.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np
import pulp

from ..errors import SolverFailure, SolverUnavailable
from .result import SolverOutput

__all__ = ["MilpRun", "run_milp", "milp_method", "highs_version", "cbc_available"]

BACKENDS = ("highs", "cbc")
_EMPTY_ROW_TOL = 1e-9  # a constant row of an empty model holds within this (docs/formats.rst)


@dataclass
class MilpRun:
    """What a MILP backend reports, in the model's own objective units."""

    status: str                      # optimal / feasible / infeasible / no_solution
    values: dict[str, float] | None  # variable name -> value, when a solution exists
    objective: float | None
    bound: float | None
    nodes: int | None
    solver: str
    info: dict = field(default_factory=dict)


@contextlib.contextmanager
def _stdout_silenced():
    """Keep C-level writes to fd 1 (HiGHS's banner) off stdout: ``--json`` output is piped."""
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError):
        yield
        return
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 1)
            try:
                yield
            finally:
                os.dup2(saved, 1)
    finally:
        os.close(saved)


def _new_highs():
    import highspy

    with _stdout_silenced():
        h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    return h


@functools.lru_cache(maxsize=1)
def highs_version() -> str:
    """``"highs X.Y.Z"`` of the installed highspy."""
    h = _new_highs()
    return f"highs {h.versionMajor()}.{h.versionMinor()}.{h.versionPatch()}"


def cbc_available() -> bool:
    """Is PuLP's bundled CBC binary present (PuLP 3 ships it; PuLP 4 does not)?"""
    try:
        return bool(pulp.PULP_CBC_CMD(msg=False).available())
    except Exception:
        return False


def _bounds(constraint) -> tuple[float, float]:
    """Row bounds of a PuLP constraint ``expr (<=|=|>=) -constant``."""
    rhs = -constraint.constant
    if constraint.sense == pulp.LpConstraintLE:
        return -math.inf, rhs
    if constraint.sense == pulp.LpConstraintGE:
        return rhs, math.inf
    return rhs, rhs


def _solve_empty(problem: pulp.LpProblem, solver: str) -> MilpRun:
    """Solve a model without variables (HiGHS: kModelEmpty) by inspection.

    Its rows are constants, so it is feasible iff every one holds, and then its
    optimum is the objective's constant term, proven.
    """
    for constraint in problem.constraints.values():
        lo, hi = _bounds(constraint)
        if lo > _EMPTY_ROW_TOL or hi < -_EMPTY_ROW_TOL:
            return MilpRun("infeasible", None, None, None, 0, solver,
                           {"model_status": "Empty"})
    offset = problem.objective.constant if problem.objective is not None else 0.0
    objective = float(offset or 0.0)
    return MilpRun("optimal", {}, objective, objective, 0, solver, {"model_status": "Empty"})


def _confirm_infeasible(h, time_limit: float | None, elapsed_s: float):
    """Re-run an "infeasible" model without presolve; return the model status to trust.

    HiGHS's MIP presolve has declared small feasible models infeasible (e.g. ERGO-Code/
    HiGHS#2388, #3090; here a 5-op placement MILP under highspy 1.16), and "infeasible"
    is a proof we report. Without presolve the search itself must prove it. Run time is
    per run in HiGHS, so the re-run gets what is left of ``time_limit``.
    """
    import highspy

    if time_limit is not None:
        left = float(time_limit) - elapsed_s
        if left <= 0:
            return highspy.HighsModelStatus.kTimeLimit
        h.setOptionValue("time_limit", left)
    h.setOptionValue("presolve", "off")
    h.clearSolver()  # else HiGHS keeps the first run's verdict
    h.run()
    return h.getModelStatus()


def _solve_highs(problem: pulp.LpProblem, *, time_limit, rel_gap, warm_start, seed) -> MilpRun:
    import highspy

    variables = problem.variables()
    if not variables:
        # HiGHS reports kModelEmpty and no solution (and ignores constant rows).
        return _solve_empty(problem, highs_version())

    inf = highspy.kHighsInf
    h = _new_highs()
    h.setOptionValue("threads", 1)  # fixed for the life of the process (docs/milp.rst)
    h.setOptionValue("random_seed", int(seed) % (2**31 - 1))
    h.setOptionValue("mip_rel_gap", float(rel_gap))
    if rel_gap == 0:
        # HiGHS also stops at an absolute gap of 1e-6, which is 0.1 % of a 1 ms makespan:
        # an exact reference run must close the gap whatever the objective's units.
        h.setOptionValue("mip_abs_gap", 0.0)
    if time_limit is not None:
        h.setOptionValue("time_limit", float(time_limit))

    index = {v.name: k for k, v in enumerate(variables)}
    n = len(variables)
    cost = np.zeros(n)
    for var, coef in problem.objective.items():
        cost[index[var.name]] = coef
    lower = np.array([-inf if v.lowBound is None else v.lowBound for v in variables], float)
    upper = np.array([inf if v.upBound is None else v.upBound for v in variables], float)
    h.addCols(n, cost, lower, upper, 0, np.zeros(n, np.int32), np.zeros(0, np.int32),
              np.zeros(0))
    integer = np.array([k for k, v in enumerate(variables) if v.cat == pulp.LpInteger], np.int32)
    if len(integer):
        h.changeColsIntegrality(len(integer), integer,
                                np.full(len(integer), highspy.HighsVarType.kInteger))
    starts, cols, vals, row_lo, row_hi = [], [], [], [], []
    for constraint in problem.constraints.values():
        starts.append(len(cols))
        for var, coef in constraint.items():
            if coef != 0:
                cols.append(index[var.name])
                vals.append(coef)
        lo, hi = _bounds(constraint)
        row_lo.append(-inf if lo == -math.inf else lo)
        row_hi.append(inf if hi == math.inf else hi)
    if starts:
        h.addRows(len(starts), np.array(row_lo, float), np.array(row_hi, float), len(cols),
                  np.array(starts, np.int32), np.array(cols, np.int32), np.array(vals, float))
    offset = problem.objective.constant if problem.objective is not None else 0.0
    h.changeObjectiveOffset(float(offset or 0.0))
    h.changeObjectiveSense(highspy.ObjSense.kMaximize if problem.sense == pulp.LpMaximize
                           else highspy.ObjSense.kMinimize)
    if warm_start:
        idx = np.array([index[k] for k in warm_start if k in index], np.int32)
        val = np.array([float(warm_start[k]) for k in warm_start if k in index], float)
        if len(idx):
            h.setSolution(len(idx), idx, val)

    S = highspy.HighsModelStatus
    started = time.monotonic()
    h.run()
    model_status = h.getModelStatus()
    if model_status == S.kInfeasible:
        model_status = _confirm_infeasible(h, time_limit, time.monotonic() - started)
    info = h.getInfo()
    has_solution = info.primal_solution_status == 2  # kSolutionStatusFeasible
    if model_status == S.kOptimal:
        status = "optimal"
    elif model_status == S.kInfeasible:
        status = "infeasible"
    elif model_status in (S.kUnbounded, S.kUnboundedOrInfeasible):
        raise SolverFailure(f"HiGHS: model is {h.modelStatusToString(model_status)} "
                            f"(a formulation bug)")
    elif model_status in (S.kTimeLimit, S.kIterationLimit, S.kInterrupt, S.kSolutionLimit,
                          S.kObjectiveBound, S.kObjectiveTarget, S.kUnknown):
        status = "feasible" if has_solution else "no_solution"
    else:
        raise SolverFailure(f"HiGHS: {h.modelStatusToString(model_status)}")
    values = None
    objective = None
    if status in ("optimal", "feasible") and has_solution:
        col = h.getSolution().col_value
        values = {v.name: col[k] for k, v in enumerate(variables)}
        objective = info.objective_function_value
    elif status == "optimal":
        raise SolverFailure("HiGHS: optimal status without a primal solution")
    bound = None
    if len(integer):
        raw = info.mip_dual_bound
        if raw is not None and math.isfinite(raw):
            bound = raw
    elif status == "optimal":
        bound = objective
    nodes = int(info.mip_node_count) if len(integer) else 0
    return MilpRun(status, values, objective, bound, nodes, highs_version(),
                   {"model_status": h.modelStatusToString(model_status)})


def _solve_cbc(problem: pulp.LpProblem, *, time_limit, rel_gap, warm_start, seed) -> MilpRun:
    if not cbc_available():
        raise SolverUnavailable("backend = 'cbc': PuLP's CBC binary is not installed here")
    if not problem.variables():
        # PuLP would add a dummy variable and lose the objective's constant.
        return _solve_empty(problem, "cbc")
    if warm_start:
        by_name = {v.name: v for v in problem.variables()}
        for name, value in warm_start.items():
            if name in by_name:
                by_name[name].setInitialValue(value)
    solver = pulp.PULP_CBC_CMD(msg=False, timeLimit=time_limit, threads=1, gapRel=rel_gap,
                               warmStart=bool(warm_start), options=[f"randomSeed {int(seed) % 2**31 + 1}"])
    problem.solve(solver)
    sol_status = problem.sol_status
    if problem.status == pulp.LpStatusInfeasible or sol_status == pulp.LpSolutionInfeasible:
        status = "infeasible"
    elif sol_status == pulp.LpSolutionOptimal:
        status = "optimal"
    elif sol_status == pulp.LpSolutionIntegerFeasible:
        status = "feasible"
    else:
        status = "no_solution"
    values = objective = None
    if status in ("optimal", "feasible"):
        values = {v.name: (v.varValue if v.varValue is not None else 0.0)
                  for v in problem.variables()}
        objective = pulp.value(problem.objective)
    bound = objective if status == "optimal" else None
    return MilpRun(status, values, objective, bound, None, "cbc", {})


def run_milp(problem: pulp.LpProblem, *, backend: str = "highs", time_limit: float | None = None,
             rel_gap: float = 0.0, warm_start: Mapping[str, float] | None = None,
             seed: int = 0) -> MilpRun:
    """Solve a PuLP model with ``backend`` (``"highs"`` or ``"cbc"``).

    Parameters
    ----------
    problem : pulp.LpProblem
    backend : {"highs", "cbc"}
    time_limit : float, optional
        Seconds; the incumbent is returned with status ``"feasible"`` when it runs out.
    rel_gap : float
        Relative MIP gap at which to stop; 0 (the default) asks for proven optimality.
    warm_start : dict, optional
        Variable name -> value of a known solution (HiGHS ``setSolution``).
    seed : int
        The solver's random seed.

    Returns
    -------
    MilpRun

    Notes
    -----
    A model without variables (PuLP leaves out every variable that is in no row and
    not in the objective) is solved by inspection: ``"optimal"`` with the objective's
    constant as objective and bound and ``values == {}``, or ``"infeasible"`` if one
    of its constant rows fails.

    Examples
    --------
    >>> from fabricopt.formulations._model import new_problem
    >>> p = new_problem("demo", "max")
    >>> x = p.add_variable("x", 0, 3, pulp.LpInteger)
    >>> p += 2 * x + 1
    >>> p += x <= 2.5
    >>> run = run_milp(p)
    >>> run.status, run.objective, run.bound
    ('optimal', 5.0, 5.0)
    """
    if backend not in BACKENDS:
        raise SolverUnavailable(f"backend = {backend!r}: must be one of {', '.join(BACKENDS)}")
    solve_with = _solve_highs if backend == "highs" else _solve_cbc
    return solve_with(problem, time_limit=time_limit, rel_gap=rel_gap,
                      warm_start=warm_start, seed=seed)


def milp_method(build: Callable[..., Any], warm_start_from: Callable[[Any], Any] | None = None
                ) -> Callable[..., SolverOutput]:
    """Turn a formulation's ``build(instance, **options) -> MilpModel`` into a method.

    ``warm_start_from(instance)`` (a heuristic) supplies a MIP start so that a
    time-limited run is never worse than that heuristic.
    """

    def method(instance, *, time_limit: float | None = None, seed: int = 0,
               backend: str = "highs", rel_gap: float = 0.0, warm_start: bool = True,
               **options) -> SolverOutput:
        model = build(instance, **options)
        start = None
        if warm_start and warm_start_from is not None and model.encode is not None:
            incumbent = warm_start_from(instance)
            if incumbent is not None:
                start = model.encode(incumbent)
        run = run_milp(model.problem, backend=backend, time_limit=time_limit,
                       rel_gap=rel_gap, warm_start=start, seed=seed)
        solution = model.decode(run.values) if run.values is not None else None
        bound = model.bound_from_raw(run.bound) if run.bound is not None else None
        info = {"solver": run.solver, "nodes": run.nodes, **run.info}
        status = run.status if solution is not None or run.status == "infeasible" else "no_solution"
        return SolverOutput(solution, status, bound, info)

    method.__doc__ = build.__doc__
    return method
