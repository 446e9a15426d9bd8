"""CBC, PuLP's bundled binary: the second backend that cross-checks HiGHS."""

from __future__ import annotations

import math
import os
import time

import pulp

from fabricopt.errors import SolverUnavailable
from fabricopt.problems.tolerances import SOLVER_FEASIBILITY_TOL, SOLVER_GAP_TOL

__all__ = ["cbc_available", "cbc_unavailable", "solve_cbc"]


def cbc_unavailable() -> str | None:
    """Why PuLP's bundled CBC binary cannot run here (one line), or None when it can.

    PuLP 3 ships the binary; PuLP 4 does not, and a copy can lose its executable bit.
    """
    path = getattr(pulp.PULP_CBC_CMD, "pulp_cbc_path", None)
    if not path:
        return f"PuLP {pulp.__version__} ships no CBC binary"
    if not os.path.isfile(path):
        return f"PuLP's CBC binary is missing ({os.path.normpath(path)!r})"
    if not os.access(path, os.X_OK):
        return f"PuLP's CBC binary is not executable ({os.path.normpath(path)!r})"
    return None


def cbc_available() -> bool:
    """Can PuLP's bundled CBC binary run here (see :func:`cbc_unavailable`)?"""
    return cbc_unavailable() is None


def _options(seed: int, *, exact: bool) -> list[str]:
    """CBC's command-line options; ``exact`` ones make its proofs meet the certificate."""
    options = [f"randomSeed {int(seed) % 2**31 + 1}",
               # objective terms of 1e-9 of the largest count
               f"dualTolerance {SOLVER_FEASIBILITY_TOL}",
               f"integerTolerance {SOLVER_FEASIBILITY_TOL}",
               # CBC 2.10 can end the search at a diving heuristic's solution, below its
               # own root bound, and call it optimal (a 4-server topology model: 0.667
               # where 1 is feasible; coin-or/Cbc#715, #698): proofs come from branch and
               # bound, starts from the warm start
               "heuristics off",
               # CBC ignores a better solution unless it beats the incumbent by this much
               # (default 1e-5, on objectives scaled near 1)
               f"increment {SOLVER_GAP_TOL}"]
    if exact:
        # CBC's default primal tolerance (1e-7) hides a 3 kB ring's flows beside 10 GB
        # (1.5e-7 of a link); at 1e-9 its integer preprocessing calls feasible placement
        # models infeasible, so it is turned off
        options += [f"primalTolerance {SOLVER_FEASIBILITY_TOL}", "preprocess off"]
    return options


def _solve(problem: pulp.LpProblem, *, time_limit: float | None, rel_gap: float,
           warm_start: bool, options: list[str]):
    """One CBC run: ``(status, values, objective)``."""
    solver = pulp.PULP_CBC_CMD(msg=False, timeLimit=time_limit, threads=1, gapRel=rel_gap,
                               warmStart=warm_start, options=options)
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
    return status, values, objective


def solve_cbc(problem: pulp.LpProblem, *, time_limit: float | None, rel_gap: float,
              warm_start, seed: int):
    """Solve with CBC; returns ``(status, values, objective, bound, nodes, info)``.

    CBC through PuLP reports no dual bound, so only a proven optimum has one. CBC runs
    at the certificate's tolerances (:func:`_options`); an ``infeasible`` there is
    re-checked at CBC's own tolerances, and if that run finds a solution it is
    reported ``feasible`` without a bound: its proof holds only to CBC's looser
    tolerance.
    """
    why = cbc_unavailable()
    if why is not None:
        raise SolverUnavailable(f"backend = 'cbc': {why}")
    if warm_start:
        by_name = {v.name: v for v in problem.variables()}
        for name, value in warm_start.items():
            if name in by_name:
                var = by_name[name]
                # a start computed in scaled units may sit a rounding step outside a bound
                low = -math.inf if var.lowBound is None else var.lowBound
                up = math.inf if var.upBound is None else var.upBound
                var.setInitialValue(min(max(float(value), low), up))
    began = time.monotonic()
    status, values, objective = _solve(problem, time_limit=time_limit, rel_gap=rel_gap,
                                       warm_start=bool(warm_start),
                                       options=_options(seed, exact=True))
    info = {}
    if status == "infeasible":
        left = None if time_limit is None else time_limit - (time.monotonic() - began)
        if left is None or left > 0:
            status, values, objective = _solve(problem, time_limit=left, rel_gap=rel_gap,
                                               warm_start=bool(warm_start),
                                               options=_options(seed, exact=False))
            if status == "optimal":
                status = "feasible"
            if status != "infeasible":
                info["tolerance"] = ("CBC called the model infeasible at the certificate's "
                                     "tolerances and solved it at its own: no proof")
    bound = objective if status == "optimal" else None
    # without a gap to stop at, CBC leaves a proof unfinished only when time runs out
    stopped = (time_limit is not None and rel_gap == 0 and not info
               and status in ("feasible", "no_solution"))
    return status, values, objective, bound, None, {**info, "limit": "time" if stopped else "none"}
