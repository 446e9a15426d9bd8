"""SiP-ML's circuit-assignment MILP (Appendix A.2): one permutation per switch.

Variables ``x[q,i,j]`` in {0,1}: switch q connects GPU i to GPU j (``x[q,i,i] = 1``
marks port i of switch q unused, so every switch is a full permutation), and the
normalized rate ``t >= 0``. With ``T̂ = T / max T`` and ``c_ij = sum_q x[q,i,j]``::

    maximize t   s.t.   sum_j x[q,i,j] = 1,  sum_i x[q,i,j] = 1,
                        c_ij >= t * T̂_ij  and  c_ij >= 1   (T_ij > 0)

which maximizes ``min c_ij / T̂_ij``, i.e. minimizes the longest transfer time
``8 * T_max / (t * circuit_gbps * 1e9)``.

References
----------
.. [1] M. Khani et al., "SiP-ML", SIGCOMM 2021, Appendix A.2; the authors' RostAM
   ``OCSInterconnect::setup_optimal_solver_singleshot`` (notes/sipml.md §3).
"""

from __future__ import annotations

import pulp

from ..problems.circuits import CircuitsInstance, CircuitsSolution
from ._model import MilpModel, new_problem

__all__ = ["build"]


def build(instance: CircuitsInstance, *, symmetry_breaking: bool = True) -> MilpModel:
    """SiP-ML's per-switch permutation MILP for a ``circuits`` instance.

    Parameters
    ----------
    instance : CircuitsInstance
    symmetry_breaking : bool
        Switches are interchangeable: order them by how many circuits they hold
        (ours, not SiP-ML's; it removes equivalent optima without cutting any value).

    Returns
    -------
    MilpModel
        Its objective is the normalized rate ``t``; ``bound_from_raw`` turns a bound
        on ``t`` into a lower bound on the max transfer time in seconds.
    """
    n, Q = instance.gpus, instance.switches
    traffic = instance.traffic
    t_max = float(traffic.max()) if n else 0.0
    rate_bps = instance.circuit_gbps * 1e9
    prob = new_problem("circuits", "max")
    pairs = [(q, i, j) for q in range(Q) for i in range(n) for j in range(n)]
    x = prob.add_variable_dicts("x", pairs, 0, 1, pulp.LpInteger)
    # t <= Q / T̂_min is implied; bounding it keeps the LP relaxation finite without demand.
    t = prob.add_variable("t", 0, Q, pulp.LpContinuous)
    prob += t
    for q in range(Q):
        for i in range(n):
            prob += pulp.lpSum(x[q, i, j] for j in range(n)) == 1, f"out_{q}_{i}"
            prob += pulp.lpSum(x[q, j, i] for j in range(n)) == 1, f"in_{q}_{i}"
    for i in range(n):
        for j in range(n):
            if i != j and traffic[i, j] > 0:
                circuits = pulp.lpSum(x[q, i, j] for q in range(Q))
                prob += circuits >= (traffic[i, j] / t_max) * t, f"rate_{i}_{j}"
                # Implied by the rate row when t > 0, but a pair with T̂_ij below the
                # solver's feasibility tolerance (1e-6) would otherwise get no circuit.
                prob += circuits >= 1, f"demand_{i}_{j}"
    if symmetry_breaking:
        used = [pulp.lpSum(x[q, i, j] for i in range(n) for j in range(n) if i != j)
                for q in range(Q)]
        for q in range(Q - 1):
            prob += used[q] >= used[q + 1], f"order_{q}"

    def decode(values) -> CircuitsSolution:
        configs = []
        for q in range(Q):
            row = [None] * n
            for i in range(n):
                for j in range(n):
                    if i != j and values[x[q, i, j].name] > 0.5:
                        row[i] = j
            configs.append(row)
        return CircuitsSolution(configs)

    def encode(solution: CircuitsSolution) -> dict[str, float]:
        rows = []
        for config in solution.configs:
            row = list(config)
            # Complete the partial permutation: unused ports to themselves where free,
            # the rest to the remaining free targets (never to themselves).
            free_targets = set(range(n)) - {j for j in row if j is not None}
            for i in range(n):
                if row[i] is None and i in free_targets:
                    row[i] = i
                    free_targets.discard(i)
            for i in range(n):
                if row[i] is None:
                    row[i] = min(free_targets)
                    free_targets.discard(row[i])
            rows.append(row)
        rows.sort(key=lambda row: -sum(j != i for i, j in enumerate(row)))
        start = {x[q, i, j].name: float(rows[q][i] == j)
                 for q in range(Q) for i in range(n) for j in range(n)}
        counts = {}
        for row in rows:
            for i, j in enumerate(row):
                counts[i, j] = counts.get((i, j), 0) + 1
        rates = [counts.get((i, j), 0) * t_max / traffic[i, j]
                 for i in range(n) for j in range(n) if i != j and traffic[i, j] > 0]
        start[t.name] = min(rates + [Q])
        return start

    def bound_from_raw(raw_t: float) -> float:
        if t_max == 0:
            return 0.0
        return 8.0 * t_max / (raw_t * rate_bps) if raw_t > 0 else float("inf")

    return MilpModel(prob, decode, bound_from_raw, encode)
