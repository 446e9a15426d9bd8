"""SiP-ML's circuit-assignment MILP (Appendix A.2): one permutation per switch.

Variables ``x[q,i,j]`` in {0,1}: switch q connects GPU i to GPU j (``x[q,i,i] = 1``
marks port i of switch q unused, so every switch is a full permutation), and the
normalized rate ``t >= 0``. With ``T̂ = T / max T`` and ``c_ij = sum_q x[q,i,j]``::

    maximize t   s.t.   sum_j x[q,i,j] = 1,  sum_i x[q,i,j] = 1,
                        c_ij >= t * T̂_ij  and  c_ij >= 1   (T_ij > 0)

which maximizes ``min c_ij / T̂_ij``, i.e. minimizes the longest transfer time
``8 * T_max / (t * circuit_gbps * 1e9)``. The model is assembled as sparse matrices
(:class:`~fabricopt.milp.SparseModel`): a million variables in a fraction of a second.

References
----------
.. [1] M. Khani et al., "SiP-ML", SIGCOMM 2021, Appendix A.2; the authors' RostAM
   ``OCSInterconnect::setup_optimal_solver_singleshot`` (fabricopt docs, *Departures*,
   sipml-3).
"""

from __future__ import annotations

import numpy as np

from fabricopt.milp import MilpModel, SparseModel
from fabricopt.problems.circuits import CircuitsInstance, CircuitsSolution

__all__ = ["build", "full_permutations"]


def full_permutations(solution: CircuitsSolution, n: int) -> list[list[int]]:
    """Each switch's partial permutation completed to a full one, busiest switch first
    (the order the symmetry rows want): unused ports to themselves where free, the rest
    to the remaining free targets (never to themselves).

    Examples
    --------
    >>> full_permutations(CircuitsSolution([[None, None, None], [1, None, None]]), 3)
    [[1, 0, 2], [0, 1, 2]]
    """
    rows = []
    for config in solution.configs:
        row = list(config)
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
    return rows


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

    Examples
    --------
    >>> from fabricopt.milp import run_milp
    >>> inst = CircuitsInstance(2, 8.0, [[0, 3e9, 1e9], [0, 0, 0], [0, 0, 0]])
    >>> model = build(inst)
    >>> run = run_milp(model)
    >>> run.status, model.bound_from_raw(run.bound)
    ('optimal', 3.0)
    """
    n, Q = instance.gpus, instance.switches
    traffic = instance.traffic
    t_max = float(traffic.max()) if n else 0.0
    rate_bps = instance.circuit_gbps * 1e9
    m = SparseModel("circuits", "max")
    x = m.variables("x", (Q, n, n), 0, 1, integer=True)
    # t <= Q / T̂_min is implied; bounding it keeps the LP relaxation finite without demand.
    t = m.variables("t", (), 0, Q)
    m.objective([t.start], [1.0])
    ids = x.ids
    ports = np.repeat(np.arange(Q * n), n)
    m.rows("out", ports, ids.ravel(), 1.0, lower=1.0, upper=1.0, count=Q * n)
    m.rows("in", ports, ids.transpose(0, 2, 1).ravel(), 1.0, lower=1.0, upper=1.0,
           count=Q * n)
    pi, pj = np.nonzero((traffic > 0) & ~np.eye(n, dtype=bool))
    pairs = len(pi)
    circuits = ids[:, pi, pj].T                              # (pairs, Q)
    # demand: every pair with traffic gets a circuit, whatever its bytes
    m.rows("demand", np.repeat(np.arange(pairs), Q), circuits.ravel(), 1.0, lower=1.0,
           count=pairs)
    # rate: c_ij - T̂_ij t >= 0, i.e. c_ij >= t T̂_ij. Only where T̂_ij > 1/Q: elsewhere
    # c_ij >= 1 >= Q T̂_ij >= t T̂_ij already holds, and a coefficient of 1e-9 (3 bytes
    # beside 1 GB) is one HiGHS's presolve mishandles (an optimum of t = 1 reported as
    # 1 - 2e-8, with that as its bound).
    binding = traffic[pi, pj] / t_max * Q > 1.0 if pairs else np.zeros(0, bool)
    bi, bj, rated = pi[binding], pj[binding], circuits[binding]
    m.rows("rate", np.repeat(np.arange(len(bi)), Q + 1),
           np.column_stack([rated, np.full(len(bi), t.start)]).ravel(),
           np.column_stack([np.ones((len(bi), Q)), -(traffic[bi, bj] / t_max)]).ravel()
           if len(bi) else 0.0, lower=0.0, count=len(bi))
    if symmetry_breaking and Q > 1:
        used = ids[:, ~np.eye(n, dtype=bool)]               # (Q, n(n-1)) circuits per switch
        k = used.shape[1]
        m.rows("order", np.repeat(np.arange(Q - 1), 2 * k),
               np.concatenate([used[:-1], used[1:]], axis=1).ravel(),
               np.tile(np.concatenate([np.ones(k), -np.ones(k)]), Q - 1), lower=0.0,
               count=Q - 1)

    def decode(values) -> CircuitsSolution:
        on = m.value(x, values.col) > 0.5
        on[:, np.arange(n), np.arange(n)] = False
        configs = []
        for q in range(Q):
            row: list[int | None] = [None] * n
            for i, j in zip(*np.nonzero(on[q])):
                row[int(i)] = int(j)
            configs.append(row)
        return CircuitsSolution(configs)

    def encode(solution: CircuitsSolution) -> np.ndarray:
        rows = full_permutations(solution, n)
        start = m.start()
        perm = np.array(rows, dtype=np.int64).reshape(Q, n)
        chosen = np.zeros((Q, n, n))
        chosen[np.repeat(np.arange(Q), n), np.tile(np.arange(n), Q), perm.ravel()] = 1.0
        start[x.ids.ravel()] = chosen.ravel()
        counts = chosen.sum(axis=0)
        rates = counts[pi, pj] * t_max / traffic[pi, pj]
        start[t.start] = min(rates.min(initial=Q), Q)
        return start

    def bound_from_raw(raw_t: float) -> float:
        if t_max == 0:
            return 0.0
        return 8.0 * t_max / (raw_t * rate_bps) if raw_t > 0 else float("inf")

    return MilpModel(m, decode, bound_from_raw, encode)
