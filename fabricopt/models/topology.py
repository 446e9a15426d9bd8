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

from fabricopt.milp import MilpModel, SparseModel
from fabricopt.problems.topology import (Ring, TopologyInstance, TopologySolution, evaluate,
                                         link_counts, ring_bytes_per_member, ring_traffic)
from fabricopt.bounds.topology import lower_bound

__all__ = ["build", "reach_targets", "ring_candidates", "is_exact", "routes_from_flows", "MAX_RING_ORDERS"]

#: (g-1)! directed Hamiltonian cycles are enumerated up to this many (g <= 8).
MAX_RING_ORDERS = 5040
# Flows and shares at or below this (in links, near 1 by scaling) are dropped as solver
# noise. It sits far below the solver's tolerances: a 3 kB ring beside 10 GB flows at
# about 1e-7, and keeping noise costs at most noise on a link, while dropping a real
# flow reroutes its demand whole.
_EPS = 1e-12


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


def routes_from_flows(instance: TopologyInstance, graph: nx.Graph, rings: list[Ring],
                      flow_of) -> list[dict]:
    """The routes of every demanded pair, from each source's arc flows.

    ``flow_of(s)`` gives source s's flow ``{(i, j): amount}`` on the links (amounts above
    solver noise); it is split into paths (:func:`_decompose`), and a demanded pair that
    got none takes a shortest path of ``graph``.
    """
    demand = instance.traffic + ring_traffic(instance, rings)
    routes = []
    for s in range(instance.servers):
        targets = [int(t) for t in np.flatnonzero(demand[s] > 0)]
        if not targets:
            continue
        flow = flow_of(s)
        sink = {}
        for v in range(instance.servers):
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
    return routes


def reach_targets(instance: TopologyInstance) -> dict[int, set[int]]:
    """Which servers each root must reach in every feasible topology.

    A pair with fixed traffic needs a path; a group that reduces bytes needs all its
    members in one component (every ring order visits them all), so its smallest
    member must reach the others.

    Examples
    --------
    >>> inst = TopologyInstance(4, 2, 100.0, [{"members": [3, 1], "bytes": 1e3}],
    ...                         [[0, 5e9, 0, 0], [0] * 4, [0] * 4, [0] * 4])
    >>> reach_targets(inst)
    {0: {1}, 1: {3}}
    """
    targets = defaultdict(set)
    for s, t in zip(*np.nonzero(instance.traffic > 0)):
        targets[int(s)].add(int(t))
    for group in instance.allreduce:
        if group.bytes > 0:
            root = min(group.members)
            targets[root] |= set(group.members) - {root}
    return dict(sorted(targets.items()))


def _connect(m: SparseModel, instance: TopologyInstance, pair_col: np.ndarray) -> dict:
    """Connectivity rows: each root sends one unit to each of its targets over the
    chosen links (at most as many units as targets per link).

    The flow rows in link units cannot do this alone: a demand many orders of magnitude
    below the largest (a 3 kB ring beside 10 GB of traffic) is below any solver's
    feasibility tolerance there, and the solver may leave it unrouted. Here every
    required path carries a whole unit, whatever the bytes. Returns ``{root: (column
    ids of its flow, targets)}``.
    """
    n = instance.servers
    others = ~np.eye(n, dtype=bool)
    ai, aj = np.nonzero(others)
    blocks = {}
    for root, targets in reach_targets(instance).items():
        reach = float(len(targets))
        upper = np.where(others, reach, 0.0)
        upper[:, root] = 0.0
        g = m.variables(f"reach_{root}", (n, n), 0, upper).ids
        rows, cols, vals = [], [], []
        for v in range(n):
            if v == root:
                continue
            into = [i for i in range(n) if i != v]
            out = [j for j in range(n) if j not in (v, root)]
            rows += [v] * (len(into) + len(out))
            cols += g[into, v].tolist() + g[v, out].tolist()
            vals += [1.0] * len(into) + [-1.0] * len(out)
        need = np.array([1.0 if v in targets else 0.0 for v in range(n)])
        m.rows(f"reach_flow_{root}", rows, cols, vals, lower=need, upper=need, count=n)
        arcs = np.flatnonzero(aj != root)
        k = np.arange(len(arcs))
        m.rows(f"reach_cap_{root}", np.concatenate([k, k]),
               np.concatenate([g[ai[arcs], aj[arcs]], pair_col[ai[arcs], aj[arcs]]]),
               np.concatenate([np.ones(len(arcs)), np.full(len(arcs), -reach)]),
               upper=0.0, count=len(arcs))
        blocks[root] = (g, targets)
    return blocks


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
    m = SparseModel("topology", "max")
    iu, ju = np.triu_indices(n, 1)
    pairs = list(zip(iu.tolist(), ju.tolist()))
    x = m.variables("x", (len(pairs),), 0, d, integer=True)
    pair_col = np.full((n, n), -1, dtype=np.int64)        # column of x{i, j}, both ways
    pair_col[iu, ju] = pair_col[ju, iu] = x.ids
    lam = m.variables("lam", (), 0, 1)
    m.objective([lam.start], [1.0])
    others = ~np.eye(n, dtype=bool)
    m.rows("deg", np.repeat(np.arange(n), n - 1), pair_col[others], 1.0, upper=float(d),
           count=n)

    candidates, w = [], []
    ring_in = defaultdict(list)  # (s, t) -> [(c_k, w column)]: ring bytes s -> t
    sources = {int(s) for s in np.flatnonzero(traffic.sum(axis=1) > 0)}
    for k, group in enumerate(instance.allreduce):
        orders = ring_candidates(group.members, max_ring_orders)
        candidates.append(orders)
        c = ring_bytes_per_member(group) / unit
        block = m.variables(f"w_{k}", (len(orders),), 0, np.inf)
        w.append(block)
        if c > 0:
            for r, order in enumerate(orders):
                for s, t in zip(order, order[1:] + order[:1]):
                    ring_in[s, t].append((c, int(block[r])))
        m.rows(f"share_{k}", np.zeros(len(orders) + 1), np.append(block.ids, lam.start),
               np.append(np.ones(len(orders)), -1.0), lower=0.0, upper=0.0, count=1)
        if group.bytes > 0:
            sources |= set(group.members)
    sources = sorted(sources)
    S = len(sources)
    # f[q, i, j]: source sources[q] on arc i -> j; fixed at 0 where i == j or j is the source
    f_upper = np.where(others, np.inf, 0.0)[None].repeat(S, axis=0)
    f_upper[np.arange(S), :, sources] = 0.0
    f = m.variables("f", (S, n, n), 0, f_upper)
    F = f.ids
    # flow: inflow - outflow - traffic[s, v] lam - sum c w = 0 at every v != s
    rows, cols, vals = [], [], []
    for q, s in enumerate(sources):
        for v in range(n):
            if v == s:
                continue
            r = q * n + v
            into = [i for i in range(n) if i != v]
            out = [j for j in range(n) if j not in (v, s)]
            rows += [r] * (len(into) + len(out) + 1 + len(ring_in[s, v]))
            cols += F[q, into, v].tolist() + F[q, v, out].tolist() + [lam.start]
            cols += [col for _, col in ring_in[s, v]]
            vals += [1.0] * len(into) + [-1.0] * len(out) + [-float(traffic[s, v])]
            vals += [-c for c, _ in ring_in[s, v]]
    lo = np.zeros(S * n)
    m.rows("flow", rows, cols, vals, lower=lo, upper=lo, count=S * n)   # rows v == s are empty
    # cap: sum_s f[s, i, j] - x{i, j} <= 0 on every arc
    ai, aj = np.nonzero(others)
    arc_row = np.arange(len(ai))
    qq, aa = np.nonzero(aj[None, :] != np.array(sources, dtype=np.int64).reshape(-1, 1))
    m.rows("cap", np.concatenate([arc_row[aa], arc_row]),
           np.concatenate([F[qq, ai[aa], aj[aa]], pair_col[ai, aj]]),
           np.concatenate([np.ones(len(qq)), -np.ones(len(ai))]), upper=0.0, count=len(ai))
    reach = _connect(m, instance, pair_col)
    source_index = {s: q for q, s in enumerate(sources)}

    def decode(values) -> TopologySolution:
        col = values.col
        counts = np.zeros((n, n), dtype=np.int64)
        counts[iu, ju] = np.rint(m.value(x, col)).astype(np.int64)
        counts += counts.T
        flows = m.value(f, col)
        graph = nx.Graph()
        graph.add_nodes_from(range(n))
        graph.add_edges_from((i, j) for i, j in pairs if counts[i, j] > 0)
        component = {v: c for c, nodes in enumerate(nx.connected_components(graph)) for v in nodes}
        rings = []
        for k, orders in enumerate(candidates):
            share = m.value(w[k], col)
            # A ring whose pairs the links cannot join carries only solver noise.
            routable = [r for r, order in enumerate(orders)
                        if len({component[v] for v in order}) == 1]
            keep = {r: float(share[r]) for r in routable if share[r] > _EPS}
            if not keep:  # λ = 0 or no routable ring: any will do (check has the last word)
                keep = {(routable or [0])[0]: 1.0}
            total = sum(keep.values())
            rings += [Ring(k, orders[r], v / total) for r, v in keep.items()]
        def flow_of(s: int) -> dict:
            if s not in source_index:
                return {}
            on = flows[source_index[s]]
            return {(int(i), int(j)): float(on[i, j]) for i, j in zip(ai, aj)
                    if j != s and counts[i, j] > 0 and on[i, j] > _EPS}

        routes = routes_from_flows(instance, graph, rings, flow_of)
        links = [[i, j, int(counts[i, j])] for i, j in pairs if counts[i, j] > 0]
        return TopologySolution(links, [r.to_dict() for r in rings], routes)

    def encode(solution: TopologySolution):
        time_s = evaluate(instance, solution)
        rate = min(1.0, t0 / time_s) if time_s > 0 else 1.0
        counts = link_counts(instance, solution)
        start = m.start()
        start[x.ids] = counts[iu, ju].astype(float)
        start[lam.start] = rate
        index = [{o: r for r, o in enumerate(orders)} for orders in candidates]
        for ring in solution.rings:
            r = index[ring.group].get(_canonical(ring.order))
            if r is None:   # a ring the model does not offer: start from the links only
                names = m.arrays().names
                return {names[int(c)]: float(v) for c, v in zip(x.ids, counts[iu, ju])}
            start[w[ring.group][r]] += rate * ring.share
        graph = nx.Graph()
        graph.add_nodes_from(range(n))
        graph.add_edges_from(zip(*np.nonzero(np.triu(counts > 0))))
        for root, (g, targets) in reach.items():
            paths = nx.single_source_shortest_path(graph, root)
            for t in targets:
                for a, b in zip(paths[t], paths[t][1:]):
                    start[g[a, b]] += 1.0
        demand = (instance.traffic + ring_traffic(instance, solution.rings)) / unit
        for route in solution.routes:
            volume = rate * demand[route.src, route.dst]
            if volume <= 0:
                continue
            q = source_index[route.src]
            for path in route.paths:
                for a, b in zip(path.nodes, path.nodes[1:]):
                    start[F[q, a, b]] += volume * path.fraction
        return start

    def bound_from_raw(raw: float) -> float:
        if t0 == 0:
            return 0.0
        return t0 / raw if raw > 0 else math.inf

    return MilpModel(m, decode, bound_from_raw, encode)
