"""CBC, PuLP's bundled binary: the second backend that cross-checks HiGHS."""

from __future__ import annotations

import math

import pulp

from fabricopt.errors import SolverUnavailable
from fabricopt.problems.tolerances import SOLVER_FEASIBILITY_TOL

__all__ = ["cbc_available", "solve_cbc"]


def cbc_available() -> bool:
    """Is PuLP's bundled CBC binary present (PuLP 3 ships it; PuLP 4 does not)?"""
    try:
        return bool(pulp.PULP_CBC_CMD(msg=False).available())
    except Exception:
        return False


def solve_cbc(problem: pulp.LpProblem, *, time_limit: float | None, rel_gap: float,
              warm_start, seed: int):
    """Solve with CBC; returns ``(status, values, objective, bound, nodes, info)``.

    CBC through PuLP reports no dual bound, so only a proven optimum has one.
    """
    if not cbc_available():
        raise SolverUnavailable("backend = 'cbc': PuLP's CBC binary is not installed here")
    if warm_start:
        by_name = {v.name: v for v in problem.variables()}
        for name, value in warm_start.items():
            if name in by_name:
                var = by_name[name]
                # a start computed in scaled units may sit a rounding step outside a bound
                low = -math.inf if var.lowBound is None else var.lowBound
                up = math.inf if var.upBound is None else var.upBound
                var.setInitialValue(min(max(float(value), low), up))
    solver = pulp.PULP_CBC_CMD(msg=False, timeLimit=time_limit, threads=1, gapRel=rel_gap,
                               warmStart=bool(warm_start),
                               options=[f"randomSeed {int(seed) % 2**31 + 1}",
                                        f"primalTolerance {SOLVER_FEASIBILITY_TOL}",
                                        f"dualTolerance {SOLVER_FEASIBILITY_TOL}",
                                        f"integerTolerance {SOLVER_FEASIBILITY_TOL}"])
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
    # without a gap to stop at, CBC leaves a proof unfinished only when time runs out
    stopped = time_limit is not None and rel_gap == 0 and status in ("feasible", "no_solution")
    return status, values, objective, bound, None, {"limit": "time" if stopped else "none"}
