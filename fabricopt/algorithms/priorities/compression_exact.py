"""Priority compression solved exactly in polynomial time: an LP that is integral.

Crux (§4.3) calls the valid max K-cut of the contention DAG difficult and samples random
BFS topological orders (:mod:`.compression`). It is not hard. With levels
``x_v in {0..K-1}`` and a cut variable ``y_e`` per edge ``e = (hi, lo, w)``::

    maximize  sum_e w_e y_e
    s.t.      y_e + x_lo - x_hi <= 0      (e counts only if hi is strictly above lo)
              0 <= y_e <= 1,  0 <= x_v <= K - 1

The order rows ``x_hi >= x_lo`` of the MILP (:mod:`fabricopt.models.priorities`)
are implied (``x_hi - x_lo >= y_e >= 0``). What remains is the matrix ``[N | I]`` with
N the edge-node incidence matrix of the DAG (each row one -1 at hi and one +1 at lo)
and I an identity: an incidence matrix of a directed graph is totally unimodular (TU),
appending unit columns and the unit rows of the bounds keeps it TU, and the right-hand
sides are integers, so every vertex of the LP is integral (Hoffman and Kruskal, 1956)
and the LP optimum *is* the integer optimum.

By LP duality the optimum is also ``W + (min cost of a flow)``, W the total weight, in
the network that sends flow from a source to any job at cost K-1, down DAG edges (an
arc of capacity w_e and cost -1 beside one of infinite capacity and cost 0) and from any
job to the sink for free: a unit of flow along a chain of L edges recovers L cut edges
for K-1, which pays only when the chain is longer than K-1 edges, and K levels cut at
most K-1 edges of any chain. For K = 2 it is a max-weight closure (a min cut).

We solve the LP with HiGHS (``scipy.optimize.linprog``, dual simplex: a vertex,
hence integral) and, so as not to rely on the vertex, round by a threshold: for
``theta in [0, 1)``, ``level_v = floor(x_v + theta)`` keeps every edge's order and the
bounds, cuts every edge with ``x_hi - x_lo >= 1``, and cuts an edge with
``0 <= x_hi - x_lo = d < 1`` for a set of thetas of measure d = y_e. So the mean cut over
theta is the LP value; since no integer solution exceeds it, almost every theta attains
it. The rounded cut, scored exactly, is compared with the LP value: equal (to 1e-9
relative) is a proof of optimality.

Random BFS orders, however many are drawn, can miss the optimum: Theorem 3 of the paper
needs *some* topological order, and BFS orders are a strict subset. On the 6-job DAG
with K = 2 and edges 2->1 (weight 8), 4->0 (9), 4->2 (6), 5->0 (4), 5->3 (8), 5->4 (5),
every BFS order starts 5, {3, 4} and splits into cuts of at most 27, while {5, 4, 2} high
cuts 29 (the doctest of :func:`exact_compress`). Its out-edges of job 5 weigh
differently, so it is a DAG rather than a ``priorities`` instance; the 5-job instance
with priorities (3, 2, 1, 4, 0), intensities (2, 6, 2, 3, 8) and contention
{0,1}, {0,3}, {0,4}, {1,4}, {2,3} is one (BFS orders reach 8, the optimum is 11). Both
are tests.

References
----------
.. [1] J. Cao et al., "Crux", SIGCOMM 2024, §4.3 (the problem and Algorithm 1).
.. [2] A. J. Hoffman and J. B. Kruskal, "Integral boundary points of convex polyhedra",
   1956 (TU matrices give integral polyhedra).
"""

from __future__ import annotations

from fabricopt.errors import InvalidArgument, SolverFailure

from typing import Sequence

import numpy as np
import scipy.sparse as sp

from fabricopt.problems.priorities import PrioritiesInstance, PrioritiesSolution
from fabricopt.problems.tolerances import CERTIFY_RTOL

__all__ = ["longest_path_levels", "exact_compress", "exact_instance", "proves_optimal"]



def longest_path_levels(n: int, edges: Sequence[tuple[int, int, float]]) -> np.ndarray:
    """Each node's number of edges on the longest path from it to a sink.

    Every edge (hi, lo) has ``h[hi] >= h[lo] + 1``, so levelling by h cuts every edge
    when ``max h <= K - 1``.

    Examples
    --------
    >>> longest_path_levels(4, [(0, 1, 1.0), (1, 2, 1.0), (0, 3, 1.0)]).tolist()
    [2, 1, 0, 0]
    """
    h = np.zeros(n, dtype=np.int64)
    if not len(edges):
        return h
    hi = np.array([e[0] for e in edges], dtype=np.int64)
    lo = np.array([e[1] for e in edges], dtype=np.int64)
    # Bellman-Ford-style relaxation, one vectorized pass per path length.
    for _ in range(n):
        new = h.copy()
        np.maximum.at(new, hi, h[lo] + 1)
        if np.array_equal(new, h):
            return h
        h = new
    raise InvalidArgument("edges: the contention graph has a cycle (it must be a DAG)")


def _cut(hi, lo, w, level) -> float:
    return float(w[level[hi] > level[lo]].sum())


def _threshold_round(x: np.ndarray, hi, lo, w, top: int, target: float):
    """The best of a few threshold roundings of x: midpoints of the widest gaps between
    the thresholds where some ``floor(x_v + theta)`` changes."""
    breaks = np.unique(np.concatenate([[0.0, 1.0], (1.0 - (x - np.floor(x))) % 1.0]))
    gaps = np.diff(breaks)
    best_value, best = -1.0, None
    for k in np.argsort(-gaps)[:8]:
        theta = breaks[k] + gaps[k] / 2
        level = np.clip(np.floor(x + theta), 0, top).astype(np.int64)
        value = _cut(hi, lo, w, level)
        if value > best_value:
            best_value, best = value, level
        if value >= target:
            break
    return best_value, best


def exact_compress(n: int, edges: Sequence[tuple[int, int, float]], levels: int
                   ) -> tuple[float, np.ndarray, float]:
    """The maximum-weight valid K-cut of a DAG (see the module docstring for the proof).

    Parameters
    ----------
    n : int
        Jobs (nodes 0..n-1).
    edges : sequence of (high, low, weight)
        The contention DAG (:func:`fabricopt.problems.priorities.dag_edges`), weights >= 0.
    levels : int
        K >= 1.

    Returns
    -------
    value : float
        The cut weight of ``level``.
    level : ndarray of int
        Each job's level, 0..K-1 (higher = served first).
    bound : float
        An upper bound on every valid K-cut (the LP value, or the total weight);
        ``value`` equal to it (1e-9 relative) proves ``level`` optimal.

    Raises
    ------
    ValueError
        If ``levels < 1``, a weight is negative or not finite, or the LP solver fails.

    Examples
    --------
    The 6-job case random BFS orders cannot solve (K = 2; the best of them cuts 27):

    >>> edges = [(2, 1, 8.0), (4, 0, 9.0), (4, 2, 6.0), (5, 0, 4.0), (5, 3, 8.0), (5, 4, 5.0)]
    >>> value, level, bound = exact_compress(6, edges, 2)
    >>> value, bound, level.tolist()
    (29.0, 29.0, [0, 0, 1, 0, 1, 1])
    """
    levels = int(levels)
    if levels < 1:
        raise InvalidArgument(f"levels = {levels}: must be >= 1")
    m = len(edges)
    hi = np.array([e[0] for e in edges], dtype=np.int64)
    lo = np.array([e[1] for e in edges], dtype=np.int64)
    w = np.array([e[2] for e in edges], dtype=float)
    if m and (np.any(w < 0) or not np.all(np.isfinite(w))):
        raise InvalidArgument("edges: weights must be finite and >= 0")
    total = float(w.sum())
    if levels == 1 or m == 0:
        return 0.0, np.zeros(n, dtype=np.int64), 0.0 if levels == 1 else total
    h = longest_path_levels(n, edges)
    if h.max() <= levels - 1:               # every edge can be cut: the bound is attained
        return total, h, total
    # Only jobs on some edge matter; the rest stay at level 0.
    used = np.unique(np.concatenate([hi, lo]))
    index = np.full(n, -1, dtype=np.int64)
    index[used] = np.arange(len(used))
    u, vhi, vlo = len(used), index[hi], index[lo]
    rows = np.repeat(np.arange(m), 3)
    cols = np.column_stack([u + np.arange(m), vlo, vhi]).ravel()
    data = np.tile([1.0, 1.0, -1.0], m)
    a_ub = sp.csr_matrix((data, (rows, cols)), shape=(m, u + m))
    unit = float(w.max()) if w.max() > 0 else 1.0   # weights near 1: HiGHS's tolerances are absolute
    cost = np.concatenate([np.zeros(u), -w / unit])
    bounds = np.concatenate([np.tile([[0.0, levels - 1.0]], (u, 1)), np.tile([[0.0, 1.0]], (m, 1))])
    # Imported here: scipy.optimize costs about a second to import, and every method
    # registry load (a worker process, the command line) would pay it.
    from scipy.optimize import linprog
    res = linprog(cost, A_ub=a_ub, b_ub=np.zeros(m), bounds=bounds, method="highs-ds")
    if res.status != 0:
        raise SolverFailure(f"the priorities LP failed: {res.message}")
    bound = min(total, -float(res.fun) * unit)
    value, level_used = _threshold_round(res.x[:u], vhi, vlo, w, levels - 1, bound)
    level = np.zeros(n, dtype=np.int64)
    level[used] = level_used
    # the LP value in the instance's units is rounded; no upper bound is below a cut
    return value, level, max(bound, value)


def exact_instance(instance: PrioritiesInstance) -> tuple[PrioritiesSolution, float]:
    """:func:`exact_compress` on a ``priorities`` instance: the solution and the bound.

    Examples
    --------
    >>> inst = PrioritiesInstance(2, [{"id": f"J{k}", "priority": 4 - k, "intensity": 4 - k}
    ...                               for k in range(4)], [["J0", "J1"], ["J2", "J3"]])
    >>> solution, bound = exact_instance(inst)
    >>> dict(solution.level), bound
    ({'J0': 1, 'J1': 0, 'J2': 1, 'J3': 0}, 6.0)
    """
    _, level, bound = exact_compress(len(instance.jobs), instance.edges, instance.levels)
    return PrioritiesSolution({name: int(level[j]) for j, name in enumerate(instance.ids)}), bound


def proves_optimal(value: float, bound: float) -> bool:
    """Whether a cut of ``value`` attains the upper ``bound`` (to
    :data:`~fabricopt.problems.tolerances.CERTIFY_RTOL`, relative)."""
    return value >= bound - CERTIFY_RTOL * abs(bound)
