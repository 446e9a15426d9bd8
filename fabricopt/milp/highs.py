"""HiGHS, in process through highspy, read so that its answers are certificates.

PuLP's own HiGHS wrapper reports a time-limited solve as "Optimal", negates
maximization objectives inside highspy, drops the objective constant and cannot
warm-start; so the model's arrays are handed to a ``highspy.Highs`` object here and
status, objective, dual bound and node count are read from it (docs/milp.rst).

Two HiGHS behaviours are guarded against:

- **A stale MIP start.** HiGHS 1.16 can report ``Optimal`` with the better objective
  it found while ``getSolution()`` hands back the unchanged MIP start (a ``priorities``
  instance of 40 jobs: HiGHS logs 4497.638, the columns are worth 4437.911). The
  objective of the returned columns is compared with HiGHS's; on disagreement the
  model is re-solved without the start, and if that still disagrees the answer is
  ``feasible`` with HiGHS's dual bound — never ``optimal`` (docs/milp.rst).
- **The global thread scheduler.** HiGHS starts one scheduler per process with the
  ``threads`` of the first model that runs; a later model asking for another count
  fails with model status "Not Set". The scheduler is then reset once and the run
  retried; if it still fails, the error says why.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import sys
import time
from typing import Mapping

import numpy as np

from fabricopt.errors import SolverFailure
from fabricopt.milp.arrays import LinearArrays
from fabricopt.problems.tolerances import SOLVER_FEASIBILITY_TOL, SOLVER_GAP_TOL
from fabricopt.milp.sparse import ColumnValues

__all__ = ["solve_highs", "highs_version", "new_highs"]

_EMPTY_ROW_TOL = 1e-9   # a constant row of an empty model holds within this (docs/formats.rst)
# HiGHS's objective and its columns' must agree to rounding. Not a certificate
# tolerance: it only catches columns that are not the solution HiGHS scored (a stale
# MIP start, wrong by far more); ``solve`` certifies at CERTIFY_RTOL (problems/tolerances.py).
_OBJECTIVE_RTOL = 1e-6
_MIN_RUN_S = 1e-3       # HiGHS needs a positive time limit


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


def new_highs():
    """A silent ``highspy.Highs``."""
    import highspy

    with _stdout_silenced():
        h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    return h


@functools.lru_cache(maxsize=1)
def highs_version() -> str:
    """``"highs X.Y.Z"`` of the installed highspy."""
    h = new_highs()
    return f"highs {h.versionMajor()}.{h.versionMinor()}.{h.versionPatch()}"


def _agree(a: float, b: float) -> bool:
    return abs(a - b) <= _OBJECTIVE_RTOL * max(abs(a), abs(b)) + 1e-12


def load_highs(arrays: LinearArrays, *, rel_gap: float, seed: int, start,
               max_nodes: int | None = None):
    """A ``highspy.Highs`` holding ``arrays`` with the options every fabricopt solve
    uses (one thread, ``seed``, ``rel_gap``; an exact run also zeroes the absolute gap;
    ``max_nodes`` caps the branch and bound) and ``start`` as its MIP start if given. ``solve`` and the MPS/LP export both load
    models here, so an exported file is the model HiGHS was given."""
    import highspy

    inf = highspy.kHighsInf
    h = new_highs()
    h.setOptionValue("threads", 1)  # fixed for the life of the process (docs/milp.rst)
    h.setOptionValue("random_seed", int(seed) % (2**31 - 1))
    h.setOptionValue("mip_rel_gap", float(rel_gap))
    # models are scaled to coefficients near 1: these tolerances keep HiGHS's optimum
    # within the certificate's relative tolerance of the re-scored objective
    for option in ("primal_feasibility_tolerance", "dual_feasibility_tolerance"):
        h.setOptionValue(option, SOLVER_FEASIBILITY_TOL)
    # the search prunes and stops by this one: at the certificate's own 1e-9 the dual
    # bound of a 12-op placement model's optimum lands 1.05e-9 below it, outside the proof
    h.setOptionValue("mip_feasibility_tolerance", SOLVER_GAP_TOL)
    if rel_gap == 0:
        # HiGHS also stops at an absolute gap of 1e-6, which is 0.1 % of a 1 ms makespan:
        # an exact reference run must close the gap whatever the objective's units.
        h.setOptionValue("mip_abs_gap", 0.0)
    if max_nodes is not None:
        h.setOptionValue("mip_max_nodes", int(max_nodes))
    n = len(arrays.names)
    h.addCols(n, arrays.cost, np.nan_to_num(arrays.col_lower, neginf=-inf),
              np.nan_to_num(arrays.col_upper, posinf=inf), 0, np.zeros(n, np.int32),
              np.zeros(0, np.int32), np.zeros(0))
    if len(arrays.integer):
        h.changeColsIntegrality(len(arrays.integer), arrays.integer,
                                np.full(len(arrays.integer), highspy.HighsVarType.kInteger))
    if len(arrays.starts):
        h.addRows(len(arrays.starts), np.nan_to_num(arrays.row_lower, neginf=-inf),
                  np.nan_to_num(arrays.row_upper, posinf=inf), len(arrays.index),
                  arrays.starts, arrays.index, arrays.value)
    h.changeObjectiveOffset(arrays.offset)
    h.changeObjectiveSense(highspy.ObjSense.kMaximize if arrays.maximize
                           else highspy.ObjSense.kMinimize)
    if isinstance(start, np.ndarray):
        if len(start):
            h.setSolution(len(start), np.arange(len(start), dtype=np.int32),
                          np.asarray(start, float))
    elif start:
        position = {name: k for k, name in enumerate(arrays.names)}
        idx = np.array([position[k] for k in start if k in position], np.int32)
        val = np.array([float(start[k]) for k in start if k in position], float)
        if len(idx):
            h.setSolution(len(idx), idx, val)
    return h


def _run(h, deadline: float | None):
    """``h.run()`` within what is left before ``deadline``; returns the model status."""
    import highspy

    if deadline is not None:
        left = deadline - time.monotonic()
        if left <= 0:
            return highspy.HighsModelStatus.kTimeLimit
        h.setOptionValue("time_limit", max(left, _MIN_RUN_S))
    status = h.run()
    model_status = h.getModelStatus()
    if status == highspy.HighsStatus.kError and model_status == highspy.HighsModelStatus.kNotset:
        # Another model in this process started HiGHS's global scheduler with other
        # threads; reset it (fabricopt runs one model at a time per process) and retry.
        highspy.Highs.resetGlobalScheduler(True)
        h.clearSolver()
        status = h.run()
        model_status = h.getModelStatus()
        if status == highspy.HighsStatus.kError and model_status == highspy.HighsModelStatus.kNotset:
            raise SolverFailure("HiGHS: run failed with model status 'Not Set' (its thread "
                                "scheduler is held by another HiGHS model in this process "
                                "with other 'threads'); run fabricopt in its own process")
    return model_status


def _confirm_infeasible(h, deadline: float | None):
    """Re-run an "infeasible" model without presolve; return the model status to trust.

    HiGHS's MIP presolve has declared small feasible models infeasible (e.g. ERGO-Code/
    HiGHS#2388, #3090; here a 5-op placement MILP under highspy 1.16), and "infeasible"
    is a proof we report. Without presolve the search itself must prove it, within
    what is left of the time limit.
    """
    h.setOptionValue("presolve", "off")
    h.clearSolver()  # else HiGHS keeps the first run's verdict
    return _run(h, deadline)


def _status(h, model_status, has_solution: bool) -> str:
    import highspy

    S = highspy.HighsModelStatus
    if model_status == S.kOptimal:
        return "optimal"
    if model_status == S.kInfeasible:
        return "infeasible"
    if model_status in (S.kUnbounded, S.kUnboundedOrInfeasible):
        raise SolverFailure(f"HiGHS: model is {h.modelStatusToString(model_status)} "
                            f"(a formulation bug)")
    if model_status in (S.kTimeLimit, S.kIterationLimit, S.kInterrupt, S.kSolutionLimit,
                        S.kObjectiveBound, S.kObjectiveTarget, S.kUnknown):
        return "feasible" if has_solution else "no_solution"
    raise SolverFailure(f"HiGHS: {h.modelStatusToString(model_status)}")


def _attempt(arrays, deadline, rel_gap, seed, start, max_nodes=None):
    """One HiGHS solve: (status, column values or None, HiGHS's objective, info, highs)."""
    import highspy

    h = load_highs(arrays, rel_gap=rel_gap, seed=seed, start=start, max_nodes=max_nodes)
    model_status = _run(h, deadline)
    if model_status == highspy.HighsModelStatus.kInfeasible:
        model_status = _confirm_infeasible(h, deadline)
    info = h.getInfo()
    has_solution = info.primal_solution_status == 2  # kSolutionStatusFeasible
    status = _status(h, model_status, has_solution)
    col = None
    if status in ("optimal", "feasible") and has_solution:
        col = np.asarray(h.getSolution().col_value, float)
    elif status == "optimal":
        raise SolverFailure("HiGHS: optimal status without a primal solution")
    return status, col, info, h.modelStatusToString(model_status)


def _limit_of(model_status: str) -> str:
    """Why HiGHS stopped, as ``Result.limit`` names it (from its model-status text)."""
    text = model_status.lower()
    if "time limit" in text or "interrupt" in text:
        return "time"   # fabricopt interrupts HiGHS only at the deadline
    if "limit" in text:
        return "work"   # iteration, node (solution-limit) budgets
    return "none"


def solve_highs(arrays: LinearArrays, *, deadline: float | None, rel_gap: float,
                warm_start: Mapping[str, float] | None, seed: int,
                max_nodes: int | None = None):
    """Solve ``arrays`` with HiGHS; returns ``(status, values, objective, bound, nodes, info)``.

    ``max_nodes`` caps the branch-and-bound nodes (HiGHS ``mip_max_nodes``).

    ``objective`` is that of the returned columns, never HiGHS's own figure; a
    disagreement between the two is resolved as the module docstring says.
    """
    integer = len(arrays.integer) > 0
    status, col, info, model_status = _attempt(arrays, deadline, rel_gap, seed, warm_start,
                                               max_nodes)
    notes: dict = {"model_status": model_status, "limit": _limit_of(model_status)}
    objective = None if col is None else arrays.objective_of(col)
    reported = None if col is None else info.objective_function_value
    if col is not None and not _agree(objective, reported):
        mismatch = {"highs_objective": reported, "columns_objective": objective}
        if warm_start is not None and len(warm_start):
            retry = _attempt(arrays, deadline, rel_gap, seed, None, max_nodes)
            if retry[1] is not None and _agree(arrays.objective_of(retry[1]),
                                               retry[2].objective_function_value):
                status, col, info, model_status = retry
                objective = arrays.objective_of(col)
                notes = {"model_status": model_status, "limit": _limit_of(model_status),
                         "cross_check": {**mismatch, "resolved": "re-solved without the MIP "
                                                                 "start"}}
                mismatch = None
        if mismatch is not None:
            # Keep the columns we can stand behind; the proof does not cover them.
            status = "feasible"
            notes["cross_check"] = {**mismatch, "resolved": "not reconciled: reported "
                                                            "feasible with HiGHS's dual bound"}
    bound = None
    if integer:
        raw = info.mip_dual_bound
        if raw is not None and math.isfinite(raw):
            bound = float(raw)
    elif status == "optimal":
        bound = objective
    nodes = int(info.mip_node_count) if integer else 0
    values = None if col is None else ColumnValues(arrays.names, col)
    return status, values, objective, bound, nodes, notes


def solve_empty(arrays: LinearArrays):
    """Solve a model without columns (HiGHS: kModelEmpty) by inspection.

    Its rows are constants, so it is feasible iff every one holds (``lower <= 0 <=
    upper``), and then its optimum is the objective's constant term, proven.
    """
    if np.any(arrays.row_lower > _EMPTY_ROW_TOL) or np.any(arrays.row_upper < -_EMPTY_ROW_TOL):
        return "infeasible", None, None, None, 0, {"model_status": "Empty"}
    # (a sparse model solved by CBC may have columns that are in no row: any value)
    col = np.clip(np.zeros(len(arrays.names)), arrays.col_lower, arrays.col_upper)
    return ("optimal", ColumnValues(arrays.names, col), arrays.offset, arrays.offset, 0,
            {"model_status": "Empty"})
