"""The exact placement MILP: assignment, start times, disjunctive order, peer degree.

With ops i, GPUs g, a known upper bound H on the optimal makespan and every time divided
by ``unit = H`` (so times lie in [0, 1] and HiGHS's absolute tolerances stay relative)::

    min C
    sum_g x[i,g] = 1                                         every op on one GPU
    z[u,v] >= x[u,g] - x[v,g]                  (all g)       u, v on different GPUs
    s[v] >= s[u] + c[u] + delay[u,v] * z[u,v]                every dep u -> v
    o[i,j] + o[j,i] >= x[i,g] + x[j,g] - 1     (all g)       same GPU => one goes first
    s[j] >= s[i] + c[i] - M[i,j] (1 - o[i,j])                i before j
    y[g,h] >= x[u,g] + x[v,h] - 1              (g != h)      dep with bytes > 0 uses g -> h
    sum_h y[g,h] <= max_peers,  sum_g y[g,h] <= max_peers    out- and in-peers
    C >= s[i] + c[i] (sinks),  C >= sum_i c[i] x[i,g] (all g),  C >= lower bound

``x``, ``o`` are binary, the rest continuous. Disjunctions are only written for pairs
with compute > 0 that no path orders already. Bounds are tight: ``s[i]`` lies in
``[head_i, H - tail_i - c_i]`` (longest compute-only paths before and after i), so the
big-M of "i before j" is ``M[i,j] = max(0, H - tail_i - head_j)``, the largest value
``s[i] + c[i] - s[j]`` can take. GPUs are interchangeable: op i may use GPUs 0..i only
and, in the full variant, the first op on GPU g must come (by index) after the first op
on GPU g - 1, which keeps one labelling of each placement.

References
----------
.. [1] M. Khani et al., "SiP-ML", SIGCOMM 2021, §3.2: "the problem can be written as an
   integer linear program", which the paper does not spell out; this is ours.
.. [2] A. S. Manne, "On the job-shop scheduling problem", Operations Research 8(2), 1960
   (disjunctive big-M ordering).
"""

from __future__ import annotations

from fabricopt.errors import InvalidOption

import numpy as np

from fabricopt.milp import MilpModel, SparseModel
from fabricopt.problems.placement import PlacementInstance, PlacementSolution, evaluate, schedule
from fabricopt.bounds.placement import lower_bound
from fabricopt.bounds.placement import fan_heads_and_tails

__all__ = ["build", "unordered_pairs", "scaled_times"]

# Slack on the upper bound H so that a solution of makespan exactly H stays inside the
# start-time bounds despite rounding in the scaled times (it widens the model; no
# certificate reads it).
_UB_SLACK = 1e-7


def unordered_pairs(instance: PlacementInstance) -> list[tuple[int, int]]:
    """Pairs ``i < j`` of ops with compute > 0 that no dependency path orders: the only
    pairs whose order on a shared GPU the MILP must choose.

    Examples
    --------
    >>> from fabricopt.problems.placement import SubOp, Dep
    >>> inst = PlacementInstance(2, 1, 8.0, [SubOp(c, 1.0) for c in "abc"], [Dep("a", "b", 0)])
    >>> unordered_pairs(inst)
    [(0, 2), (1, 2)]
    """
    n = instance.size
    below = [0] * n                      # bit j set: j is a descendant
    for u in reversed(instance.topological_order()):
        for v, _, _ in instance.children[u]:
            below[u] |= below[v] | (1 << v)
    busy = instance.compute > 0
    return [(i, j) for i in range(n) for j in range(i + 1, n)
            if busy[i] and busy[j] and not (below[i] >> j) & 1 and not (below[j] >> i) & 1]


def scaled_times(instance: PlacementInstance, upper_bound_s: float | None):
    """The model's time scale: ``(lower, horizon, unit, c, delay, start_lo, start_hi)``.

    ``horizon`` is the upper bound H (default ``sum c``, never below the lower bound,
    with a little slack) and ``unit = H``; compute, delays and the start-time bounds
    ``[head_i, H - tail_i - c_i]`` are given in units of H.
    """
    compute = instance.compute
    head, tail = fan_heads_and_tails(instance)   # valid in every feasible schedule
    lower = lower_bound(instance)
    horizon = float(compute.sum()) if upper_bound_s is None else float(upper_bound_s)
    horizon = max(horizon, lower) * (1 + _UB_SLACK)
    unit = horizon if horizon > 0 else 1.0
    start_lo = head / unit
    start_hi = [max(start_lo[i], (horizon - tail[i] - compute[i]) / unit)
                for i in range(instance.size)]
    return lower, horizon, unit, compute / unit, instance.delay_s / unit, start_lo, start_hi


def build(instance: PlacementInstance, *, upper_bound_s: float | None = None,
          symmetry_breaking: bool | str = "weak") -> MilpModel:
    """The placement MILP of this module's docstring.

    Parameters
    ----------
    instance : PlacementInstance
    upper_bound_s : float, optional
        A makespan some feasible solution reaches (a heuristic's); it tightens every
        bound and big-M. Default: all ops on one GPU in topological order, ``sum c``.
    symmetry_breaking : bool or "weak"
        True: the first op on GPU g comes after the first op on GPU g - 1 (one labelling
        per placement). "weak" (default): only op i may not use a GPU above i, which
        leaves HiGHS's own symmetry detection room and ran fastest on the benchmark
        (BENCHMARKS.md). False: none.

    Returns
    -------
    MilpModel
        ``decode`` re-schedules the assignment as early as possible in the order of the
        MILP's start times (exactly feasible, never later than the MILP's schedule);
        ``encode`` turns a feasible solution of makespan <= ``upper_bound_s`` into a MIP
        start; ``bound_from_raw`` turns the scaled dual bound into seconds.

    Examples
    --------
    >>> from fabricopt.problems.placement import SubOp, Dep
    >>> from fabricopt.milp import run_milp
    >>> inst = PlacementInstance(2, 1, 8.0, [SubOp("a", 1.0), SubOp("b", 1.0), SubOp("c", 1.0)],
    ...                          [Dep("a", "c", 4.0)])
    >>> model = build(inst)
    >>> run = run_milp(model.problem)
    >>> sol = model.decode(run.values)
    >>> run.status, evaluate(inst, sol)
    ('optimal', 2.0)
    """
    if symmetry_breaking not in (True, False, "weak"):
        raise InvalidOption(f"symmetry_breaking = {symmetry_breaking!r}: must be True, False "
                         f"or 'weak'")
    n, k = instance.size, instance.gpus
    lower, horizon, unit, c, delay, start_lo, start_hi = scaled_times(instance, upper_bound_s)

    m = SparseModel("placement", "min")
    x_upper = np.ones((n, k))
    if symmetry_breaking:
        x_upper[np.arange(k)[None, :] > np.arange(n)[:, None]] = 0.0   # op i: GPUs 0..i
    x = m.variables("x", (n, k), 0, x_upper, integer=True)
    s_ = m.variables("s", (n,), start_lo, start_hi)
    makespan = m.variables("C", (), lower / unit, horizon / unit)
    m.objective([makespan.start], [1.0])
    X = x.ids
    m.rows("assign", np.repeat(np.arange(n), k), X.ravel(), 1.0, lower=1.0, upper=1.0,
           count=n)
    if symmetry_breaking and symmetry_breaking != "weak":
        # x[i,g] <= sum_{j<i} x[j,g-1] for 1 <= g <= i
        ig = [(i, g) for i in range(n) for g in range(1, min(i, k - 1) + 1)]
        rows, cols, vals = [], [], []
        for r, (i, g) in enumerate(ig):
            rows += [r] * (i + 1)
            cols += [X[i, g]] + X[:i, g - 1].tolist()
            vals += [1.0] + [-1.0] * i
        m.rows("sym", rows, cols, vals, upper=0.0, count=len(ig))

    src, dst = instance.dep_src, instance.dep_dst
    E = len(src)
    far = np.flatnonzero(delay > 0)                        # deps that may cross GPUs
    z = m.variables("z", (len(far),), 0, 1)
    # apart: z_e - x[u,g] + x[v,g] >= 0 for every g
    r = np.repeat(np.arange(len(far) * k), 3)
    cols = np.stack([np.repeat(z.ids, k), X[src[far]].ravel(), X[dst[far]].ravel()], axis=1)
    m.rows("apart", r, cols.ravel(), np.tile([1.0, -1.0, 1.0], len(far) * k), lower=0.0,
           count=len(far) * k)
    # prec: s_v - s_u - delay_e z_e >= c_u
    zcol = np.full(E, -1)
    zcol[far] = z.ids
    rows, cols, vals = [np.repeat(np.arange(E), 2)], [np.stack([s_[dst], s_[src]], 1).ravel()], \
        [np.tile([1.0, -1.0], E)]
    rows.append(far)
    cols.append(zcol[far])
    vals.append(-delay[far])
    m.rows("prec", np.concatenate(rows), np.concatenate(cols), np.concatenate(vals),
           lower=c[src], count=E)

    pairs = np.array(unordered_pairs(instance), dtype=np.int64).reshape(-1, 2)
    P = len(pairs)
    o = m.variables("o", (P, 2), 0, 1, integer=True)       # o[p, 0] = i before j, o[p, 1] = j before i
    pi, pj = pairs[:, 0], pairs[:, 1]
    m.rows("oneway", np.repeat(np.arange(P), 2), o.ids.ravel(), 1.0, upper=1.0, count=P)
    # share: o_ij + o_ji - x[i,g] - x[j,g] >= -1 for every g
    cols = np.stack([np.repeat(o[:, 0], k), np.repeat(o[:, 1], k), X[pi].ravel(),
                     X[pj].ravel()], axis=1)
    m.rows("share", np.repeat(np.arange(P * k), 4), cols.ravel(),
           np.tile([1.0, 1.0, -1.0, -1.0], P * k), lower=-1.0, count=P * k)
    # before: s_b - s_a - M o_ab >= c_a - M, for (a, b) = (i, j) and (j, i)
    a = np.concatenate([pi, pj])
    b = np.concatenate([pj, pi])
    o_ab = np.concatenate([o[:, 0], o[:, 1]])
    hi = np.asarray(start_hi, dtype=float)
    big_m = np.maximum(0.0, hi[a] + c[a] - start_lo[b])
    m.rows("before", np.repeat(np.arange(2 * P), 3),
           np.stack([s_[b], s_[a], o_ab], 1).ravel(),
           np.stack([np.ones(2 * P), -np.ones(2 * P), -big_m], 1).ravel(),
           lower=c[a] - big_m, count=2 * P)

    comm = np.array([e for e, dep in enumerate(instance.deps) if dep.bytes > 0], dtype=np.int64)
    peers = len(comm) > 0 and instance.max_peers < k - 1
    if peers:
        off = ~np.eye(k, dtype=bool)
        y = m.variables("y", (k, k), 0, off.astype(float))  # the diagonal is fixed at 0
        g, h = np.nonzero(off)
        # uses: y[g,h] - x[u,g] - x[v,h] >= -1 for every comm dep and g != h
        u, v = src[comm], dst[comm]
        cols = np.stack([np.tile(y.ids[g, h], len(comm)), X[u][:, g].ravel(),
                         X[v][:, h].ravel()], axis=1)
        count = len(comm) * len(g)
        m.rows("uses", np.repeat(np.arange(count), 3), cols.ravel(),
               np.tile([1.0, -1.0, -1.0], count), lower=-1.0, count=count)
        m.rows("out", g, y.ids[g, h], 1.0, upper=float(instance.max_peers), count=k)
        m.rows("in", h, y.ids[g, h], 1.0, upper=float(instance.max_peers), count=k)

    sinks = np.setdiff1d(np.arange(n), src)
    m.rows("end", np.repeat(np.arange(len(sinks)), 2),
           np.stack([np.full(len(sinks), makespan.start), s_[sinks]], 1).ravel(),
           np.tile([1.0, -1.0], len(sinks)), lower=c[sinks], count=len(sinks))
    # load: C - sum_i c_i x[i,g] >= 0
    m.rows("load", np.concatenate([np.arange(k), np.repeat(np.arange(k), n)]),
           np.concatenate([np.full(k, makespan.start), X.T.ravel()]),
           np.concatenate([np.ones(k), -np.tile(c, k)]), lower=0.0, count=k)

    def decode(values) -> PlacementSolution:
        col = values.col
        gpu = np.argmax(m.value(x, col), axis=1).tolist()
        order = instance.topological_order(priority=m.value(s_, col).tolist())
        # The MILP lets an op without compute share its GPU's time, as check() does.
        return schedule(instance, gpu, order, zero_holds_gpu=False)

    def encode(solution: PlacementSolution) -> np.ndarray:
        ids = [op.id for op in instance.ops]
        raw = [solution.gpu[i] for i in ids]
        label = {}
        for g_ in raw:                     # relabel GPUs by their first op: symmetry order
            label.setdefault(g_, len(label))
        gpu = np.array([label[g_] for g_ in raw], dtype=np.int64)
        start = np.array([solution.start_s[i] / unit for i in ids])
        values = m.start()
        values[X[np.arange(n), gpu]] = 1.0
        values[s_.ids] = start
        values[makespan.start] = max(evaluate(instance, solution) / unit, lower / unit)
        values[z.ids] = (gpu[src[far]] != gpu[dst[far]]).astype(float)
        same = gpu[pi] == gpu[pj]
        values[o[:, 0]] = (same & (start[pi] < start[pj])).astype(float)
        values[o[:, 1]] = (same & (start[pj] < start[pi])).astype(float)
        if peers:
            used = np.zeros((k, k))
            used[gpu[src[comm]], gpu[dst[comm]]] = 1.0
            np.fill_diagonal(used, 0.0)
            values[y.ids.ravel()] = used.ravel()
        return values

    return MilpModel(m, decode, lambda raw: raw * unit, encode)
