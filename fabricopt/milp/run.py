"""``run_milp``: the backend's one entry point."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Mapping

import numpy as np
import pulp

from fabricopt.errors import SolverUnavailable
from fabricopt.milp.arrays import from_pulp
from fabricopt.milp import cbc as _cbc
from fabricopt.milp.cbc import cbc_available, solve_cbc
from fabricopt.milp.deadline import BuildTimeLimit, build_deadline
from fabricopt.milp.highs import highs_version, solve_empty, solve_highs
from fabricopt.milp.model import MilpModel, new_problem  # noqa: F401  (new_problem: the doctest)
from fabricopt.milp.sparse import SparseModel, columns_of, named_start, to_pulp

__all__ = ["MilpRun", "run_milp", "BACKENDS", "unavailable_backends", "cbc_available",
           "highs_version"]

BACKENDS = ("highs", "cbc")


def unavailable_backends() -> dict[str, str]:
    """The backends of :data:`BACKENDS` that cannot run here, each with why (one line).

    HiGHS is a dependency (highspy); CBC is PuLP's bundled binary, probed on every call
    (:func:`fabricopt.milp.cbc.cbc_unavailable`).

    Examples
    --------
    >>> sorted(set(unavailable_backends()) - {"cbc"})
    []
    """
    why = _cbc.cbc_unavailable()
    return {} if why is None else {"cbc": why}


@dataclass
class MilpRun:
    """What a MILP backend reports, in the model's own objective units.

    Attributes
    ----------
    status : str
        ``optimal`` (proven, and the returned columns have the proven value),
        ``feasible``, ``infeasible`` (proven) or ``no_solution``.
    values : dict or None
        Variable name -> value, when a solution exists.
    objective : float or None
        The objective of ``values`` (computed from them, not taken from the solver).
    bound : float or None
        The solver's dual bound (a bound on the model's optimum), where it has one.
    nodes : int or None
        Branch-and-bound nodes (None where the backend does not say).
    solver : str
        ``"highs X.Y.Z"`` or ``"cbc"``.
    copy_s, solver_s : float
        Seconds spent copying the model into the solver and solving it.
    info : dict
        Backend details: ``model_status``, and ``cross_check`` when the solver's
        objective and its columns' disagreed.
    """

    status: str
    values: dict[str, float] | None
    objective: float | None
    bound: float | None
    nodes: int | None
    solver: str
    info: dict = field(default_factory=dict)
    copy_s: float = 0.0
    solver_s: float = 0.0


def run_milp(model: MilpModel | pulp.LpProblem | SparseModel, *, backend: str = "highs",
             time_limit: float | None = None, rel_gap: float = 0.0,
             warm_start: Mapping[str, float] | None = None, seed: int = 0,
             max_nodes: int | None = None) -> MilpRun:
    """Solve a model with ``backend`` (``"highs"`` or ``"cbc"``).

    Parameters
    ----------
    model : MilpModel, pulp.LpProblem or SparseModel
    backend : {"highs", "cbc"}
    time_limit : float, optional
        Seconds for the whole call, copying the model into the solver included; the
        incumbent is returned with status ``"feasible"`` when it runs out.
    rel_gap : float
        Relative MIP gap at which to stop; 0 (the default) asks for proven optimality.
    warm_start : dict or numpy.ndarray, optional
        Variable name -> value of a known solution (HiGHS ``setSolution``), or the
        full column vector of one (sparse models).
    seed : int
        The solver's random seed.
    max_nodes : int, optional
        Branch-and-bound nodes at most (HiGHS only): unlike ``time_limit``, a budget
        whose answer does not depend on the machine's speed (HiGHS runs on one thread).

    Returns
    -------
    MilpRun

    Raises
    ------
    SolverUnavailable
        For an unknown backend, CBC where PuLP ships none, or CBC with ``max_nodes``.
    SolverFailure
        When the solver fails without a usable answer (an unbounded model, a HiGHS
        error).

    Notes
    -----
    A model without variables (PuLP leaves out every variable that is in no row and
    not in the objective) is solved by inspection: ``"optimal"`` with the objective's
    constant as objective and bound and ``values == {}``, or ``"infeasible"`` if one
    of its constant rows fails. ``"optimal"`` from HiGHS is cross-checked: the
    returned columns must have HiGHS's objective (see :mod:`fabricopt.milp.highs`).

    Examples
    --------
    >>> p = new_problem("demo", "max")
    >>> x = p.add_variable("x", 0, 3, pulp.LpInteger)
    >>> p += 2 * x + 1
    >>> p += x <= 2.5
    >>> run = run_milp(p)
    >>> run.status, run.objective, run.bound
    ('optimal', 5.0, 5.0)
    """
    began = time.monotonic()
    if backend not in BACKENDS:
        raise SolverUnavailable(f"backend = {backend!r}: must be one of {', '.join(BACKENDS)}")
    if max_nodes is not None and backend != "highs":
        raise SolverUnavailable(f"max_nodes = {max_nodes!r}: only the highs backend takes it")
    problem = model.problem if isinstance(model, MilpModel) else model
    sparse = isinstance(problem, SparseModel)
    deadline = None if time_limit is None else began + float(time_limit)
    solver = "cbc" if backend == "cbc" else highs_version()
    arrays = None
    if sparse or backend == "highs":
        try:
            with build_deadline(deadline):
                arrays = problem.arrays() if sparse else from_pulp(problem)
                if sparse and backend == "cbc":
                    # CBC reads the same arrays, through PuLP
                    warm_start = named_start(arrays, warm_start)
                    problem = to_pulp(arrays, problem.name)
        except BuildTimeLimit:
            return MilpRun("no_solution", None, None, None, 0, solver,
                           {"time_limit_exceeded": "the time limit ran out while the model "
                                                   f"was copied into {solver.split()[0]}"},
                           copy_s=time.monotonic() - began)
    if backend == "cbc":
        copied = time.monotonic() if sparse else began
        if not problem.variables():
            # PuLP would add a dummy variable and lose the objective's constant.
            out = solve_empty(arrays if sparse else from_pulp(problem))
        else:
            left = None if deadline is None else max(deadline - time.monotonic(), 0.0)
            out = solve_cbc(problem, time_limit=left, rel_gap=rel_gap, warm_start=warm_start,
                            seed=seed)
            if sparse and out[1] is not None:
                out = _polished(arrays, (out[0], columns_of(arrays, out[1]), *out[2:]), seed)
    else:
        copied = time.monotonic()
        out = solve_empty(arrays) if not arrays.names else solve_highs(
            arrays, deadline=deadline, rel_gap=rel_gap, warm_start=warm_start, seed=seed,
            max_nodes=max_nodes)
    status, values, objective, bound, nodes, info = out
    return MilpRun(status, values, objective, bound, nodes, solver, info,
                   copy_s=copied - began, solver_s=time.monotonic() - copied)


def _polished(arrays, out: tuple, seed: int) -> tuple:
    """CBC's answer with its continuous columns re-solved to full precision.

    CBC writes its solution with 8 significant digits, so a makespan decoded from its
    columns can miss its proof by 1e-8 relative, beyond the certificate's tolerance
    (:mod:`fabricopt.problems.tolerances`). CBC's integer columns are kept; the linear
    program left once they are fixed is solved by HiGHS in double precision, and its
    optimum is the objective (and, for a proven optimum, the bound) CBC's search proved.
    """
    status, values, objective, bound, nodes, info = out
    if status not in ("optimal", "feasible"):
        return out
    ints = np.asarray(arrays.integer, dtype=np.int64)
    lower, upper = arrays.col_lower.copy(), arrays.col_upper.copy()
    fixed = np.clip(np.rint(values.col[ints]), lower[ints], upper[ints])
    lower[ints] = upper[ints] = fixed
    lp = replace(arrays, col_lower=lower, col_upper=upper, integer=ints[:0])
    lp_status, lp_values, lp_objective, _, _, _ = solve_highs(
        lp, deadline=None, rel_gap=0.0, warm_start=None, seed=seed)
    if lp_status != "optimal":   # CBC's columns violate a row by its own tolerance: keep them
        return out
    info = {**info, "continuous_columns": "re-solved by HiGHS with CBC's integers fixed"}
    return (status, lp_values, lp_objective, lp_objective if status == "optimal" else bound,
            nodes, info)
