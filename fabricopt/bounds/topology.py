"""Lower bounds on the optimum of a ``topology`` instance: the fast port-load and volume
bound (:func:`lower_bound`), and one that scales past the MILP, the LP relaxation
of max concurrent flow with fractional link counts and free ring successors.

Relax the exact model (``formulations.topology``) three ways: link counts ``x[i,j]``
become real numbers (each server's total still at most ``degree``); every AllReduce
group's ring orders give way to any successor traffic ``r[s,t]`` among its members
in which each member sends and receives ``2*(g-1)/g * bytes`` (every mix of cyclic
orders is such a matrix); and flow stays a multi-commodity flow aggregated by
source. The largest concurrent rate ``θ`` then bounds every solution's time from
below, because a solution of time ``T`` is a point of the relaxation at
``θ = t0 / T`` (its counts, its rings' traffic and its routes' loads scaled).

The model has about ``servers**3`` flow variables (7 s at 32 servers on the shared
2-core machine, BENCHMARKS.md ``## bounds``); merging the sources into fewer commodities
relaxes it further and shrinks it (8 commodities: 21 s at 64 servers, 8 min at 128).
Heuristics solve it by default only on small instances. On the
generated instances measured so far (6 to 32 servers) its value equals the port-load
bound: with fractional links every byte can go one hop and the free ring successors
balance each server's ports. It is tighter where a link's two directions carry
unequal loads (the example below).

References
----------
.. [1] F. Shahrokhi and D. W. Matula, "The maximum concurrent flow problem", J. ACM
   37(2), 1990.
.. [2] W. Wang et al., "TopoOpt", NSDI 2023 (arXiv 2202.00433), §4 (the problem).
"""

from __future__ import annotations

import numpy as np

from fabricopt.problems import NamedBound
from fabricopt.problems.topology import TopologyInstance, ring_bytes_per_member
from fabricopt.problems.tolerances import CERTIFY_RTOL, LP_BOUND_SAFETY_RTOL

__all__ = ["lower_bound", "relaxation_bound", "heuristic_bound", "MAX_RELAXATION_SERVERS"]

def _moore_weighted_hops(row: np.ndarray, degree: int) -> float:
    """A lower bound on ``sum_t row[t] * hops(s, t)`` over every graph of max degree d.

    At most ``d * (d-1)**(k-1)`` servers are k hops from s (the Moore bound), so the
    heaviest d destinations get 1 hop, the next d(d-1) get 2, and so on.
    """
    weights = np.sort(row[row > 0])[::-1]
    if degree < 2:
        return float(weights.sum())  # only hops >= 1 is claimed for degree 1
    total, start, hops, width = 0.0, 0, 1, degree
    while start < len(weights):
        total += hops * float(weights[start:start + width].sum())
        start += width
        hops += 1
        width *= degree - 1
    return total


def lower_bound(instance: TopologyInstance) -> float:
    """A valid lower bound on the optimum, in seconds.

    Two arguments, the larger wins (a :class:`NamedBound` whose ``source`` is
    ``"port-load"`` or ``"volume"``):

    - *Port load.* Server s sends ``E_s = sum_t traffic[s][t] + sum over its groups of
      2*(g-1)/g * bytes`` whatever the ring orders (the shares sum to 1 and a member's
      successor is never itself), over at most ``degree`` links of ``link_gbps``; likewise
      for what it receives.
    - *Volume.* Every byte crosses at least one link and fixed traffic at least as many
      as the Moore bound allows a degree-``degree`` graph; the total directed capacity is
      at most ``servers * degree * link_gbps``.

    Examples
    --------
    >>> inst = TopologyInstance(3, 2, 8.0, [{"members": [0, 1, 2], "bytes": 3e9}],
    ...                         [[0] * 3] * 3)
    >>> b = lower_bound(inst)   # each member sends 4e9 bytes over 2 links of 1e9 bytes/s
    >>> float(b), b.source
    (2.0, 'port-load')
    """
    n, d = instance.servers, instance.degree
    src, dst, nbytes = instance.traffic_pairs  # O(pairs), whichever form was given
    ring = np.zeros(n)
    for group in instance.allreduce:
        ring[list(group.members)] += ring_bytes_per_member(group)
    egress = np.bincount(src, weights=nbytes, minlength=n) + ring
    ingress = np.bincount(dst, weights=nbytes, minlength=n) + ring
    rate = instance.link_bytes_per_s
    port = max(float(egress.max()), float(ingress.max())) / (d * rate)
    # the pairs are ordered by source: one slice of them per sending server
    rows = np.split(nbytes, np.flatnonzero(np.diff(src)) + 1) if src.size else []
    volume = float(ring.sum()) + sum(_moore_weighted_hops(row, d) for row in rows)
    return NamedBound.best({"port-load": port, "volume": volume / (n * d * rate)}, sense="min")




#: Largest instance (servers) whose relaxation the heuristics solve by default.
MAX_RELAXATION_SERVERS = 12

# The LP's optimum is accurate to HiGHS's tolerances; shave this much off so that
# rounding never lifts the bound above a true optimum.
_SAFETY_RTOL = LP_BOUND_SAFETY_RTOL


def _model(instance: TopologyInstance, unit_bytes: float, groups: int | None):
    """``(c, A_ub, b_ub, A_eq, b_eq)`` of the relaxation, demands in ``unit_bytes`` (one
    link carries one unit in the reference time), sources merged into ``groups``
    commodities (default: one each); variable 0 is θ."""
    import scipy.sparse as sp   # here, not at import: it costs every process a second

    n = instance.servers
    traffic = instance.traffic / unit_bytes
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    pair_of = np.full((n, n), -1, dtype=np.int64)
    for k, (i, j) in enumerate(pairs):
        pair_of[i, j] = pair_of[j, i] = k
    arc_i, arc_j = np.nonzero(~np.eye(n, dtype=bool))
    n_arcs = len(arc_i)

    x0 = 1
    ring_src, ring_dst, ring_group = [], [], []
    for g, group in enumerate(instance.allreduce):
        members = np.array(group.members)
        s, t = np.meshgrid(members, members, indexing="ij")
        keep = s != t
        ring_src.append(s[keep]), ring_dst.append(t[keep])
        ring_group.append(np.full(int(keep.sum()), g))
    ring_src = np.concatenate(ring_src) if ring_src else np.zeros(0, np.int64)
    ring_dst = np.concatenate(ring_dst) if ring_dst else np.zeros(0, np.int64)
    ring_group = np.concatenate(ring_group) if ring_group else np.zeros(0, np.int64)
    r0 = x0 + len(pairs)
    sends = traffic.sum(axis=1) > 0
    sends[ring_src] = True
    sources = np.flatnonzero(sends)
    count = len(sources) if groups is None else max(1, min(int(groups), len(sources)))
    # sources dealt in turn to the commodities (merging commodities only relaxes more)
    commodities = [sources[k::count] for k in range(count)]
    f0 = r0 + len(ring_src)
    n_vars = f0 + count * n_arcs

    rows_ub, cols_ub, vals_ub, b_ub = [], [], [], []
    # degree: sum of x over the pairs of v <= degree
    for v in range(n):
        ks = pair_of[v][pair_of[v] >= 0]
        rows_ub.append(np.full(len(ks), v)), cols_ub.append(x0 + ks)
        vals_ub.append(np.ones(len(ks)))
    b_ub += [float(instance.degree)] * n
    # capacity: sum over sources of f[s, arc] - x[pair(arc)] <= 0
    base = n
    for k in range(count):
        rows_ub.append(base + np.arange(n_arcs))
        cols_ub.append(f0 + k * n_arcs + np.arange(n_arcs))
        vals_ub.append(np.ones(n_arcs))
    rows_ub.append(base + np.arange(n_arcs)), cols_ub.append(x0 + pair_of[arc_i, arc_j])
    vals_ub.append(-np.ones(n_arcs))
    b_ub += [0.0] * n_arcs

    rows_eq, cols_eq, vals_eq = [], [], []
    row = 0
    # ring: each member sends and receives theta * 2(g-1)/g * bytes
    for g, group in enumerate(instance.allreduce):
        per_member = ring_bytes_per_member(group) / unit_bytes
        for side in (ring_src, ring_dst):
            for m in group.members:
                idx = np.flatnonzero((ring_group == g) & (side == m))
                rows_eq += [np.full(len(idx) + 1, row)]
                cols_eq += [np.concatenate([r0 + idx, [0]])]
                vals_eq += [np.concatenate([np.ones(len(idx)), [-per_member]])]
                row += 1
    # conservation of commodity k (a set S of sources) at every node v:
    #   in - out - sum_{s in S, s != v} (theta*traffic[s,v] + r[s,v]) + [v in S]*theta*supply[v] = 0
    supply = traffic.sum(axis=1)
    for g, group in enumerate(instance.allreduce):
        supply[list(group.members)] += ring_bytes_per_member(group) / unit_bytes
    ring_idx = np.arange(len(ring_src))
    for k, members in enumerate(commodities):
        node_row = row + np.arange(n)
        in_group = np.zeros(n, dtype=bool)
        in_group[members] = True
        flows = f0 + k * n_arcs + np.arange(n_arcs)
        rows_eq += [node_row[arc_j], node_row[arc_i]]
        cols_eq += [flows, flows]
        vals_eq += [np.ones(n_arcs), -np.ones(n_arcs)]
        demand = traffic[in_group].sum(axis=0) - np.where(in_group, np.diag(traffic), 0.0)
        rows_eq.append(node_row), cols_eq.append(np.zeros(n, np.int64))
        vals_eq.append(np.where(in_group, supply, 0.0) - demand)
        mine = in_group[ring_src]
        rows_eq.append(node_row[ring_dst[mine]]), cols_eq.append(r0 + ring_idx[mine])
        vals_eq.append(-np.ones(int(mine.sum())))
        row += n

    a_ub = sp.csr_matrix((np.concatenate(vals_ub), (np.concatenate(rows_ub),
                                                    np.concatenate(cols_ub))),
                         shape=(len(b_ub), n_vars))
    a_eq = sp.csr_matrix((np.concatenate(vals_eq), (np.concatenate(rows_eq),
                                                    np.concatenate(cols_eq))),
                         shape=(row, n_vars))
    c = np.zeros(n_vars)
    c[0] = -1.0
    return c, a_ub, np.array(b_ub), a_eq, np.zeros(row)


def relaxation_bound(instance: TopologyInstance, *, commodities: int | None = None,
                     time_limit: float | None = None) -> float | None:
    """The time ``t0 / θ*`` of the relaxation of this module's docstring, in seconds.

    ``t0`` is the kind's cheap bound (the port load); the answer is never below it.
    ``commodities`` merges the sources into that many flow commodities (dealt in turn):
    a merged commodity may serve one source's demand from another's supply, a further
    relaxation, still a valid bound, with ``commodities * servers**2`` flow variables
    instead of ``servers**3``. None if HiGHS stops before proving the LP optimum
    (``time_limit``).

    Examples
    --------
    >>> inst = TopologyInstance(3, 2, 8.0, [], [[0, 1e9, 0], [0, 0, 1e9], [1e9, 0, 0]])
    >>> float(lower_bound(inst))     # each server sends 1e9 bytes over two 1e9 B/s ports
    0.5
    >>> round(relaxation_bound(inst), 6)  # but one link leads the wrong way: 2/3 of it direct
    0.666667
    """
    from scipy.optimize import linprog

    t0 = float(lower_bound(instance))
    if t0 <= 0:
        return 0.0
    unit = t0 * instance.link_bytes_per_s
    c, a_ub, b_ub, a_eq, b_eq = _model(instance, unit, commodities)
    options = {"presolve": True}
    if time_limit is not None:
        options["time_limit"] = float(time_limit)
    bounds = [(0, 1)] + [(0, None)] * (len(c) - 1)   # θ <= 1: no solution beats t0
    res = linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, bounds=bounds,
                  method="highs", options=options)
    if res.status != 0:
        return None
    theta = -float(res.fun)
    if theta <= 0:
        return None
    return max(t0, t0 / theta * (1 - _SAFETY_RTOL))


def heuristic_bound(instance: TopologyInstance, *, relaxation: bool | None = None,
                    time_limit: float | None = None) -> NamedBound:
    """The bound a topology heuristic reports: the kind's (``port-load`` or ``volume``)
    and, if ``relaxation`` (default: up to :data:`MAX_RELAXATION_SERVERS` servers), the
    LP relaxation (``flow-relaxation``) when it is tighter."""
    fast = lower_bound(instance)
    found = {fast.source: float(fast)}
    if relaxation is None:
        relaxation = instance.servers <= MAX_RELAXATION_SERVERS
    if relaxation:
        lp = relaxation_bound(instance, time_limit=time_limit)
        if lp is not None and lp > float(fast) * (1 + CERTIFY_RTOL):   # else the same figure
            found["flow-relaxation"] = lp
    return NamedBound.best(found, sense="min")
