"""The exact MILP of priority compression (``priorities``, docs/formats.rst, priorities).

Integer levels ``x_j`` in 0..K-1 and one cut binary ``y_e`` per contention-DAG edge
``e = (high, low, w)``::

    maximize  sum_e w_e y_e
    s.t.      x_high >= x_low            (a valid compression)
              y_e    <= x_high - x_low   (an edge counts only if high is strictly above)

which is exactly the maximum-weight valid K-cut of the DAG.

References
----------
.. [1] J. Cao et al., "Crux", SIGCOMM 2024, §4.3 (the problem; the paper solves it
   heuristically and gives no exact formulation).
"""

from __future__ import annotations

import pulp

from ..problems.priorities import PrioritiesInstance, PrioritiesSolution
from ._model import MilpModel, new_problem

__all__ = ["build"]


def build(instance: PrioritiesInstance) -> MilpModel:
    """The level/cut MILP of a ``priorities`` instance.

    Returns
    -------
    MilpModel
        Its objective is the cut weight itself (``bound_from_raw`` is the identity).
    """
    ids = instance.ids
    n, top = len(ids), instance.levels - 1
    edges = instance.edges
    prob = new_problem("priorities", "max")
    x = prob.add_variable_dicts("level", range(n), 0, top, pulp.LpInteger)
    y = prob.add_variable_dicts("cut", range(len(edges)), 0, 1, pulp.LpInteger)
    prob += pulp.lpSum(w * y[e] for e, (_, _, w) in enumerate(edges))
    for e, (hi, lo, _) in enumerate(edges):
        prob += x[hi] >= x[lo], f"order_{e}"
        prob += y[e] <= x[hi] - x[lo], f"cut_{e}"

    def decode(values) -> PrioritiesSolution:
        # A job in no contention edge is in no row, so PuLP leaves its level out of the
        # model (with no edges at all the model is empty): any level is optimal; take 0.
        return PrioritiesSolution({ids[j]: int(round(values.get(x[j].name, 0.0)))
                                   for j in range(n)})

    def encode(solution: PrioritiesSolution) -> dict[str, float]:
        level = [solution.level[name] for name in ids]
        start = {x[j].name: float(level[j]) for j in range(n)}
        start.update({y[e].name: float(level[hi] > level[lo])
                      for e, (hi, lo, _) in enumerate(edges)})
        return start

    return MilpModel(prob, decode, lambda raw: raw, encode)
