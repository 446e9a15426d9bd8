"""The exact MILP of priority compression (``priorities``, docs/formats.rst, priorities).

Integer levels ``x_j`` in 0..K-1 and one cut binary ``y_e`` per contention-DAG edge
``e = (high, low, w)``::

    maximize  sum_e w_e y_e
    s.t.      x_high >= x_low            (a valid compression)
              y_e    <= x_high - x_low   (an edge counts only if high is strictly above)

which is exactly the maximum-weight valid K-cut of the DAG. The model is assembled as
sparse matrices (:class:`~fabricopt.milp.SparseModel`).

References
----------
.. [1] J. Cao et al., "Crux", SIGCOMM 2024, §4.3 (the problem; the paper solves it
   heuristically and gives no exact formulation).
"""

from __future__ import annotations

import numpy as np

from fabricopt.milp import MilpModel, SparseModel
from fabricopt.problems.priorities import PrioritiesInstance, PrioritiesSolution

__all__ = ["build"]


def build(instance: PrioritiesInstance) -> MilpModel:
    """The level/cut MILP of a ``priorities`` instance.

    Returns
    -------
    MilpModel
        Its objective is the cut weight in units of the largest edge weight
        (``bound_from_raw`` scales a bound back to the instance's units).

    Examples
    --------
    Figure 13 of the paper: J1 -> J2 (intensity 4), J3 -> J4 (2), K = 2: cut both.

    >>> from fabricopt.milp import run_milp
    >>> inst = PrioritiesInstance(2, [{"id": f"J{k}", "priority": 4 - k, "intensity": 4 - k}
    ...                               for k in range(4)], [["J0", "J1"], ["J2", "J3"]])
    >>> model = build(inst)
    >>> model.bound_from_raw(run_milp(model).objective)
    6.0
    """
    ids = instance.ids
    n, top = len(ids), instance.levels - 1
    edges = instance.edges
    hi = np.array([e[0] for e in edges], dtype=np.int64)
    lo = np.array([e[1] for e in edges], dtype=np.int64)
    w = np.array([e[2] for e in edges], dtype=float)
    E = len(edges)
    m = SparseModel("priorities", "max")
    x = m.variables("level", (n,), 0, top, integer=True)
    y = m.variables("cut", (E,), 0, 1, integer=True)
    # weights in units of the largest, so the solver's gaps and tolerances are relative
    unit = float(w.max()) if E and w.max() > 0 else 1.0
    m.objective(y.ids, w / unit)
    rows = np.repeat(np.arange(E), 2)
    m.rows("order", rows, np.column_stack([x[hi], x[lo]]).ravel(), np.tile([1.0, -1.0], E),
           lower=0.0, count=E)
    m.rows("cut", np.repeat(np.arange(E), 3), np.column_stack([y.ids, x[hi], x[lo]]).ravel(),
           np.tile([1.0, -1.0, 1.0], E), upper=0.0, count=E)
    in_edge = np.zeros(n, dtype=bool)
    in_edge[hi], in_edge[lo] = True, True

    def decode(values) -> PrioritiesSolution:
        # A job in no contention edge is in no row: any level is optimal; take 0.
        level = np.where(in_edge, np.rint(m.value(x, values.col)), 0).astype(int)
        return PrioritiesSolution({ids[j]: int(level[j]) for j in range(n)})

    def encode(solution: PrioritiesSolution) -> np.ndarray:
        level = np.array([solution.level[name] for name in ids], dtype=float)
        start = m.start()
        start[x.ids] = level
        start[y.ids] = (level[hi] > level[lo]).astype(float)
        return start

    return MilpModel(m, decode, lambda raw: raw * unit, encode)
