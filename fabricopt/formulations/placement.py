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

import pulp

from ..problems.placement import (PlacementInstance, PlacementSolution, evaluate,
                                  heads_and_tails, lower_bound, schedule)
from ._model import MilpModel, new_problem

__all__ = ["build", "unordered_pairs"]

# Slack on the upper bound H so that a solution of makespan exactly H stays inside the
# start-time bounds despite rounding in the scaled times.
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
        raise ValueError(f"symmetry_breaking = {symmetry_breaking!r}: must be True, False "
                         f"or 'weak'")
    n, k = instance.size, instance.gpus
    compute = instance.compute
    head, tail = heads_and_tails(instance)
    lower = lower_bound(instance)
    horizon = float(compute.sum()) if upper_bound_s is None else float(upper_bound_s)
    horizon = max(horizon, lower) * (1 + _UB_SLACK)
    unit = horizon if horizon > 0 else 1.0
    c = compute / unit
    delay = instance.delay_s / unit
    start_lo = head / unit
    start_hi = [max(start_lo[i], (horizon - tail[i] - compute[i]) / unit) for i in range(n)]

    prob = new_problem("placement", "min")
    gpus = range(k)
    x = prob.add_variable_dicts("x", [(i, g) for i in range(n) for g in gpus], 0, 1,
                                pulp.LpInteger)
    s = prob.add_variable_dicts("s", list(range(n)), 0, None, pulp.LpContinuous)
    for i in range(n):
        s[i].lowBound, s[i].upBound = float(start_lo[i]), float(start_hi[i])
    makespan = prob.add_variable("C", lower / unit, horizon / unit, pulp.LpContinuous)
    prob += makespan

    for i in range(n):
        prob += pulp.lpSum(x[i, g] for g in gpus) == 1, f"assign_{i}"
    if symmetry_breaking:
        for i in range(n):
            for g in range(1, k):
                if g > i:
                    x[i, g].upBound = 0
                elif symmetry_breaking != "weak":
                    prob += x[i, g] <= pulp.lpSum(x[j, g - 1] for j in range(i)), f"sym_{i}_{g}"

    src, dst = instance.dep_src.tolist(), instance.dep_dst.tolist()
    z = {}
    for e, (u, v) in enumerate(zip(src, dst)):
        if delay[e] > 0:
            z[e] = prob.add_variable(f"z_{e}", 0, 1, pulp.LpContinuous)
            for g in gpus:
                prob += z[e] >= x[u, g] - x[v, g], f"apart_{e}_{g}"
            prob += s[v] >= s[u] + float(c[u]) + float(delay[e]) * z[e], f"prec_{e}"
        else:
            prob += s[v] >= s[u] + float(c[u]), f"prec_{e}"

    pairs = unordered_pairs(instance)
    o = {}
    for i, j in pairs:
        o[i, j] = prob.add_variable(f"o_{i}_{j}", 0, 1, pulp.LpInteger)
        o[j, i] = prob.add_variable(f"o_{j}_{i}", 0, 1, pulp.LpInteger)
        prob += o[i, j] + o[j, i] <= 1, f"oneway_{i}_{j}"
        for g in gpus:
            prob += o[i, j] + o[j, i] >= x[i, g] + x[j, g] - 1, f"share_{i}_{j}_{g}"
        for a, b in ((i, j), (j, i)):
            big_m = max(0.0, start_hi[a] + float(c[a]) - float(start_lo[b]))
            prob += s[b] >= s[a] + float(c[a]) - big_m * (1 - o[a, b]), f"before_{a}_{b}"

    comm = [e for e, dep in enumerate(instance.deps) if dep.bytes > 0]
    y = {}
    if comm and instance.max_peers < k - 1:
        y = prob.add_variable_dicts("y", [(g, h) for g in gpus for h in gpus if g != h], 0, 1,
                                    pulp.LpContinuous)
        for e in comm:
            u, v = src[e], dst[e]
            for g, h in y:
                prob += y[g, h] >= x[u, g] + x[v, h] - 1, f"uses_{e}_{g}_{h}"
        for g in gpus:
            prob += pulp.lpSum(y[g, h] for h in gpus if h != g) <= instance.max_peers, f"out_{g}"
            prob += pulp.lpSum(y[h, g] for h in gpus if h != g) <= instance.max_peers, f"in_{g}"

    has_child = set(src)
    for i in range(n):
        if i not in has_child:
            prob += makespan >= s[i] + float(c[i]), f"end_{i}"
    for g in gpus:
        prob += makespan >= pulp.lpSum(float(c[i]) * x[i, g] for i in range(n)), f"load_{g}"

    def decode(values) -> PlacementSolution:
        gpu = [max(gpus, key=lambda g: values[x[i, g].name]) for i in range(n)]
        order = instance.topological_order(priority=[values[s[i].name] for i in range(n)])
        # The MILP lets an op without compute share its GPU's time, as check() does.
        return schedule(instance, gpu, order, zero_holds_gpu=False)

    def encode(solution: PlacementSolution) -> dict[str, float]:
        ids = [op.id for op in instance.ops]
        raw = [solution.gpu[i] for i in ids]
        label = {}
        for g in raw:                     # relabel GPUs by their first op: symmetry order
            label.setdefault(g, len(label))
        gpu = [label[g] for g in raw]
        start = [solution.start_s[i] / unit for i in ids]
        values = {x[i, g].name: float(gpu[i] == g) for i in range(n) for g in gpus}
        values.update({s[i].name: start[i] for i in range(n)})
        values[makespan.name] = max(evaluate(instance, solution) / unit, lower / unit)
        values.update({z[e].name: float(gpu[src[e]] != gpu[dst[e]]) for e in z})
        for (a, b), var in o.items():
            values[var.name] = float(gpu[a] == gpu[b] and start[a] < start[b])
        for (g, h), var in y.items():
            values[var.name] = float(any(gpu[src[e]] == g and gpu[dst[e]] == h for e in comm))
        return values

    return MilpModel(prob, decode, lambda raw: raw * unit, encode)
