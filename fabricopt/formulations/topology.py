"""An exact MILP for the ``topology`` kind (ours: TopoOpt has none).

Variables, for n servers of degree d:

- ``x[i,j]`` in {0..d}, i < j: parallel links; ``sum_j x[i,j] <= d``.
- ``w[k,r] >= 0``: the rate share of candidate ring r of AllReduce group k, with
  ``sum_r w[k,r] = λ``; ring r sends ``c_k = 2*(g-1)/g * bytes_k`` from each member to
  its successor, so its traffic is linear in w.
- ``f[s,i,j] >= 0``: flow of source s's traffic on the directed link use i -> j
  (multi-commodity flow aggregated by source); at every v != s, inflow - outflow =
  ``λ * traffic[s][v] + sum over rings with v after s of c_k * w[k,r]``.
- ``sum_s f[s,i,j] <= x[i,j]``, all in units of one link's bytes in ``t0`` seconds.

Maximize the concurrent-flow rate λ: the whole demand moves in ``t0 / λ`` seconds,
where ``t0`` is the kind's cheap lower bound, so ``λ <= 1`` is valid and keeps the
numbers near 1. Writing ``w = λ * share`` keeps the model linear. Ring shares are then
``w / λ`` and routes come from decomposing each source's flow into paths.

Candidate rings: every directed Hamiltonian cycle of a group (``(g-1)!`` of them) while
that is at most ``max_ring_orders`` — then the model is exact for docs/formats.rst, topology, which
allows any cyclic order. Beyond that only TopoOpt's regular rings over the sorted
members (TotientPerms, both directions) are offered: the model then solves a restriction
and its optimum is no proof (:func:`is_exact` says which).

References
----------
.. [1] W. Wang et al., "TopoOpt", NSDI 2023 (arXiv 2202.00433), §4 (the problem; mutable
   AllReduce).
.. [2] F. Shahrokhi and D. W. Matula, "The maximum concurrent flow problem", J. ACM
   37(2), 1990.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict

import networkx as nx
import numpy as np
import pulp

from ..problems.topology import (Ring, TopologyInstance, TopologySolution, evaluate,
                                 link_counts, lower_bound, ring_bytes_per_member, ring_traffic)
from ._model import MilpModel, new_problem

__all__ = ["build", "ring_candidates", "is_exact", "MAX_RING_ORDERS"]

#: (g-1)! directed Hamiltonian cycles are enumerated up to this many (g <= 8).
MAX_RING_ORDERS = 5040
# Flows below this (in links) are solver noise; shares below it are dropped.
_EPS = 1e-7


def ring_candidates(members, max_ring_orders: int = MAX_RING_ORDERS) -> list[tuple[int, ...]]:
    """Candidate ring orders of a group, each starting at its smallest member.

    Every directed Hamiltonian cycle when there are at most ``max_ring_orders``;
    otherwise the regular rings ``m_0, m_p, m_2p, ...`` (p coprime to g) over the sorted
    members.

    Examples
    --------
    >>> ring_candidates([2, 0, 1])
    [(0, 1, 2), (0, 2, 1)]
    >>> ring_candidates(range(5), max_ring_orders=4)
    [(0, 1, 2, 3, 4), (0, 2, 4, 1, 3), (0, 3, 1, 4, 2), (0, 4, 3, 2, 1)]
    """
    m = sorted(int(v) for v in members)
    g = len(m)
    if math.factorial(g - 1) <= max_ring_orders:
        return [(m[0],) + rest for rest in itertools.permutations(m[1:])]
    return [tuple(m[(i * p) % g] for i in range(g)) for p in range(1, g) if math.gcd(p, g) == 1]


def is_exact(instance: TopologyInstance, max_ring_orders: int = MAX_RING_ORDERS) -> bool:
    """Does :func:`build` offer every ring order of every group (so its optimum is a proof)?"""
    return all(math.factorial(len(g.members) - 1) <= max_ring_orders for g in instance.allreduce)


def _canonical(order) -> tuple[int, ...]:
    start = order.index(min(order))
    return tuple(order[start:]) + tuple(order[:start])


def _decompose(flow: dict, src: int, sink: dict) -> list[tuple[tuple[int, ...], float]]:
    """Split one source's flow into simple paths src -> v carrying at most ``sink[v]``.

    Depth-first along the largest flows; each path zeroes an arc or a sink, so there are
    at most |arcs| + n of them. Circulations left over are dropped (they only add load).
    """
    out_arcs = defaultdict(list)
    for (i, j) in flow:
        out_arcs[i].append(j)
    paths = []
    while sink:
        stack, seen, path = [[src]], {src}, None
        while stack:
            walk = stack.pop()
            u = walk[-1]
            if u != src and u in sink:
                path = walk
                break
            for v in sorted(out_arcs[u], key=lambda v: flow.get((u, v), 0.0)):
                if v not in seen and flow.get((u, v), 0.0) > _EPS:
                    seen.add(v)
                    stack.append(walk + [v])
        if path is None:
            break
        arcs = list(zip(path, path[1:]))
        amount = min(min(flow[a] for a in arcs), sink[path[-1]])
        for a in arcs:
            flow[a] -= amount
        sink[path[-1]] -= amount
        if sink[path[-1]] <= _EPS:
            del sink[path[-1]]
        paths.append((tuple(path), amount))
    return paths


def build(instance: TopologyInstance, *, max_ring_orders: int = MAX_RING_ORDERS) -> MilpModel:
    """The concurrent-flow MILP of a ``topology`` instance.

    Parameters
    ----------
    instance : TopologyInstance
    max_ring_orders : int
        Enumerate every directed ring of a group while there are at most this many.

    Returns
    -------
    MilpModel
        Objective λ (maximized); ``bound_from_raw`` turns a bound on λ into a lower
        bound ``t0 / λ`` on the busiest link's time in seconds. ``encode`` maps a
        solution whose rings are candidates (e.g. ``topoopt``'s) to a MIP start.
    """
    n, d = instance.servers, instance.degree
    t0 = lower_bound(instance)
    unit = instance.link_bytes_per_s * (t0 if t0 > 0 else 1.0)  # bytes per link per t0
    traffic = instance.traffic / unit
    prob = new_problem("topology", "max")
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    x = prob.add_variable_dicts("x", pairs, 0, d, pulp.LpInteger)
    lam = prob.add_variable("lam", 0, 1, pulp.LpContinuous)
    prob += lam
    for v in range(n):
        prob += pulp.lpSum(x[min(u, v), max(u, v)] for u in range(n) if u != v) <= d, f"deg_{v}"

    candidates, w = [], {}
    ring_in = defaultdict(list)  # (s, t) -> [(c_k, w var)]: ring bytes s -> t
    sources = {int(s) for s in np.flatnonzero(traffic.sum(axis=1) > 0)}
    for k, group in enumerate(instance.allreduce):
        orders = ring_candidates(group.members, max_ring_orders)
        candidates.append(orders)
        c = ring_bytes_per_member(group) / unit
        for r, order in enumerate(orders):
            w[k, r] = prob.add_variable(f"w_{k}_{r}", 0, None, pulp.LpContinuous)
            if c > 0:
                for s, t in zip(order, order[1:] + order[:1]):
                    ring_in[s, t].append((c, w[k, r]))
        prob += pulp.lpSum(w[k, r] for r in range(len(orders))) == lam, f"share_{k}"
        if group.bytes > 0:
            sources |= set(group.members)
    sources = sorted(sources)
    arcs = [(i, j) for i in range(n) for j in range(n) if i != j]
    f = prob.add_variable_dicts("f", [(s, i, j) for s in sources for i, j in arcs if j != s],
                                0, None, pulp.LpContinuous)
    for s in sources:
        for v in range(n):
            if v == s:
                continue
            inflow = pulp.lpSum(f[s, i, v] for i in range(n) if i != v)
            outflow = pulp.lpSum(f[s, v, j] for j in range(n) if j not in (v, s))
            demand = traffic[s, v] * lam + pulp.lpSum(c * var for c, var in ring_in[s, v])
            prob += inflow - outflow == demand, f"flow_{s}_{v}"
    for i, j in arcs:
        prob += (pulp.lpSum(f[s, i, j] for s in sources if j != s)
                 <= x[min(i, j), max(i, j)]), f"cap_{i}_{j}"

    def decode(values) -> TopologySolution:
        counts = np.zeros((n, n), dtype=np.int64)
        for i, j in pairs:
            counts[i, j] = counts[j, i] = int(round(values[x[i, j].name]))
        graph = nx.Graph()
        graph.add_nodes_from(range(n))
        graph.add_edges_from((i, j) for i, j in pairs if counts[i, j] > 0)
        component = {v: c for c, nodes in enumerate(nx.connected_components(graph)) for v in nodes}
        rings = []
        for k, orders in enumerate(candidates):
            # A ring whose pairs the links cannot join carries only solver noise.
            routable = [r for r, order in enumerate(orders)
                        if len({component[v] for v in order}) == 1]
            keep = {r: values[w[k, r].name] for r in routable if values[w[k, r].name] > _EPS}
            if not keep:  # λ = 0 or no routable ring: any will do (check has the last word)
                keep = {(routable or [0])[0]: 1.0}
            total = sum(keep.values())
            rings += [Ring(k, orders[r], v / total) for r, v in keep.items()]
        demand = instance.traffic + ring_traffic(instance, rings)
        routes = []
        for s in range(n):
            targets = [int(t) for t in np.flatnonzero(demand[s] > 0)]
            if not targets:
                continue
            flow = {(i, j): values[f[s, i, j].name] for i, j in arcs
                    if s in sources and j != s and counts[i, j] > 0
                    and values[f[s, i, j].name] > _EPS}
            sink = {}
            for v in range(n):
                net = (sum(a for (i, j), a in flow.items() if j == v)
                       - sum(a for (i, j), a in flow.items() if i == v))
                if v != s and net > _EPS:
                    sink[v] = net
            found = defaultdict(dict)
            for path, amount in _decompose(flow, s, sink):
                found[path[-1]][path] = found[path[-1]].get(path, 0.0) + amount
            for t in targets:
                paths = found.get(t) or {tuple(nx.shortest_path(graph, s, t)): 1.0}
                total = sum(paths.values())
                routes.append({"src": s, "dst": t,
                               "paths": [{"nodes": list(p), "fraction": a / total}
                                         for p, a in sorted(paths.items())]})
        links = [[i, j, int(counts[i, j])] for i, j in pairs if counts[i, j] > 0]
        return TopologySolution(links, [r.to_dict() for r in rings], routes)

    def encode(solution: TopologySolution) -> dict[str, float]:
        time_s = evaluate(instance, solution)
        rate = min(1.0, t0 / time_s) if time_s > 0 else 1.0
        start = {lam.name: rate}
        counts = link_counts(instance, solution)
        for i, j in pairs:
            start[x[i, j].name] = float(counts[i, j])
        index = [{o: r for r, o in enumerate(orders)} for orders in candidates]
        for key in w:
            start[w[key].name] = 0.0
        for ring in solution.rings:
            r = index[ring.group].get(_canonical(ring.order))
            if r is None:
                return {x[i, j].name: float(counts[i, j]) for i, j in pairs}
            start[w[ring.group, r].name] += rate * ring.share
        for var in f.values():
            start[var.name] = 0.0
        demand = (instance.traffic + ring_traffic(instance, solution.rings)) / unit
        for route in solution.routes:
            volume = rate * demand[route.src, route.dst]
            if volume <= 0:
                continue
            for path in route.paths:
                for a, b in zip(path.nodes, path.nodes[1:]):
                    start[f[route.src, a, b].name] += volume * path.fraction
        return start

    def bound_from_raw(raw: float) -> float:
        if t0 == 0:
            return 0.0
        return t0 / raw if raw > 0 else math.inf

    return MilpModel(prob, decode, bound_from_raw, encode)
