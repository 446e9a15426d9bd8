"""The formulations written with PuLP's object layer: test oracles for the sparse models.

Each converted formulation must keep the optimum of its PuLP original (same instances,
HiGHS and CBC): ``tests/formulations/test_sparse_models.py``.
"""

import pulp


from fabricopt.milp import MilpModel, new_problem
from fabricopt.problems.circuits import CircuitsInstance, CircuitsSolution
import math
from collections import defaultdict

import networkx as nx
import numpy as np

from fabricopt.models.circuits import full_permutations
from fabricopt.models.placement import scaled_times, unordered_pairs
from fabricopt.models.wavelengths import _bound_from_raw
from fabricopt.models.topology import (MAX_RING_ORDERS, _EPS, _canonical, ring_candidates,
                                       routes_from_flows)
from fabricopt.problems.topology import (Ring, TopologyInstance, TopologySolution, link_counts,
                                         ring_bytes_per_member, ring_traffic)
from fabricopt.problems.topology import evaluate as topology_evaluate
from fabricopt.bounds.topology import lower_bound as topology_lower_bound
from fabricopt.problems.placement import PlacementInstance, PlacementSolution, evaluate, schedule
from fabricopt.bounds.placement import lower_bound
from fabricopt.problems.priorities import PrioritiesInstance, PrioritiesSolution
from fabricopt.problems.wavelengths import (DIRECTIONS, Lightpath, WavelengthsInstance,
                                            WavelengthsSolution, arc, require_feasible)


def circuits(instance: CircuitsInstance, *, symmetry_breaking: bool = True) -> MilpModel:
    """SiP-ML's per-switch permutation MILP for a ``circuits`` instance (the PuLP original)."""
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
        rows = full_permutations(solution, n)
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


def priorities(instance: PrioritiesInstance) -> MilpModel:
    """The level/cut MILP of a ``priorities`` instance (the PuLP original)."""
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


def _arcs(instance: WavelengthsInstance) -> list[tuple[int, int, str, tuple[int, ...]]]:
    """(src, dst, direction, segments) of every demanded pair's arcs within reach."""
    n = instance.nodes
    out = []
    for i, j in instance.demanded:
        for ccw, direction in enumerate(DIRECTIONS):
            first, hops = arc(n, i, j, bool(ccw))
            if hops <= instance.max_hops:
                out.append((i, j, direction, tuple((first + s) % n for s in range(hops))))
    return out


def _common(prob: pulp.LpProblem, instance: WavelengthsInstance, terms: dict, t) -> None:
    """Rate, service and transceiver rows on ``terms[(i, j)]`` = list of (variable, weight)."""
    w = instance.wavelengths
    t_max = float(instance.traffic.max())
    out: dict[int, list] = {}
    into: dict[int, list] = {}
    for (i, j), vars_ in terms.items():
        n_ij = pulp.lpSum(vars_)
        prob += n_ij >= 1, f"serve_{i}_{j}"
        prob += n_ij >= (instance.traffic[i, j] / t_max) * t, f"rate_{i}_{j}"
        out.setdefault(i, []).extend(vars_)
        into.setdefault(j, []).extend(vars_)
    for name, ends in (("tx", out), ("rx", into)):
        for node, vars_ in ends.items():
            prob += pulp.lpSum(vars_) <= w, f"{name}_{node}"


def wavelengths(instance: WavelengthsInstance, *, symmetry_breaking: bool = True) -> MilpModel:
    """The wavelength-scheduling MILP with wavelength continuity (the PuLP original)."""
    require_feasible(instance)
    w = instance.wavelengths
    prob = new_problem("wavelengths", "max")
    arcs = _arcs(instance)
    keys = [(i, j, d, c) for i, j, d, _ in arcs for c in range(w)]
    x = prob.add_variable_dicts("x", keys, 0, 1, pulp.LpInteger)
    t = prob.add_variable("t", 0, w, pulp.LpContinuous)  # n_ij <= W bounds t where T̂ = 1
    prob += t
    on_segment: dict[tuple, list] = {}
    terms: dict[tuple, list] = {}
    usage: dict[tuple, list] = {}
    for i, j, d, segs in arcs:
        for c in range(w):
            var = x[i, j, d, c]
            terms.setdefault((i, j), []).append(var)
            usage.setdefault((d, c), []).append(len(segs) * var)
            for s in segs:
                on_segment.setdefault((d, s, c), []).append(var)
    for (d, s, c), vars_ in on_segment.items():
        if len(vars_) > 1:
            prob += pulp.lpSum(vars_) <= 1, f"seg_{d}_{s}_{c}"
    _common(prob, instance, terms, t)
    if symmetry_breaking:
        for d in DIRECTIONS:
            for c in range(w - 1):
                prob += (pulp.lpSum(usage.get((d, c), [])) >= pulp.lpSum(usage.get((d, c + 1), []))
                         ), f"order_{d}_{c}"
    t_max = float(instance.traffic.max())

    def decode(values) -> WavelengthsSolution:
        return WavelengthsSolution([Lightpath(i, j, d, c) for (i, j, d, c), var in x.items()
                                    if values[var.name] > 0.5])

    def encode(solution: WavelengthsSolution) -> dict[str, float]:
        # Relabel each fiber's wavelengths by occupied segments, as the ordering rows want.
        hops = {}
        for p in solution.lightpaths:
            h = arc(instance.nodes, p.src, p.dst, p.dir == "ccw")[1]
            hops[p.dir, p.wavelength] = hops.get((p.dir, p.wavelength), 0) + h
        relabel = {}
        for d in DIRECTIONS:
            ranked = sorted(range(w), key=lambda c: (-hops.get((d, c), 0), c))
            relabel.update({(d, c): new for new, c in enumerate(ranked)})
        start = {var.name: 0.0 for var in x.values()}
        counts: dict[tuple, int] = {}
        for p in solution.lightpaths:
            key = (p.src, p.dst, p.dir, relabel[p.dir, p.wavelength])
            if key in x:
                start[x[key].name] = 1.0
                counts[p.src, p.dst] = counts.get((p.src, p.dst), 0) + 1
        rates = [counts.get((i, j), 0) * t_max / instance.traffic[i, j]
                 for i, j in instance.demanded]
        start[t.name] = min(rates + [w])
        return start

    return MilpModel(prob, decode, _bound_from_raw(instance), encode)


def wavelength_counts(instance: WavelengthsInstance, *, integer: bool = True,
                min_rate: float | None = None) -> MilpModel:
    """SiP-ML's count ILP: lightpaths per pair and direction, no wavelength continuity (the PuLP original)."""
    require_feasible(instance)
    w = instance.wavelengths
    prob = new_problem("wavelength_counts", "max")
    arcs = _arcs(instance)
    y = prob.add_variable_dicts("y", [(i, j, d) for i, j, d, _ in arcs], 0, w,
                                pulp.LpInteger if integer else pulp.LpContinuous)
    t = prob.add_variable("t", 0, w, pulp.LpContinuous)
    if min_rate is None:
        prob += t
    else:
        prob.sense = pulp.LpMinimize
        prob += pulp.lpSum(len(segs) * y[i, j, d] for i, j, d, segs in arcs)
        prob += t >= min_rate, "min_rate"
    on_segment: dict[tuple, list] = {}
    terms: dict[tuple, list] = {}
    for i, j, d, segs in arcs:
        terms.setdefault((i, j), []).append(y[i, j, d])
        for s in segs:
            on_segment.setdefault((d, s), []).append(y[i, j, d])
    for (d, s), vars_ in on_segment.items():
        prob += pulp.lpSum(vars_) <= w, f"seg_{d}_{s}"
    _common(prob, instance, terms, t)

    def decode(values) -> dict[tuple, float]:
        return {key: float(values[var.name]) for key, var in y.items()}

    return MilpModel(prob, decode, _bound_from_raw(instance))


def placement(instance: PlacementInstance, *, upper_bound_s: float | None = None,
          symmetry_breaking: bool | str = "weak") -> MilpModel:
    """The placement MILP of this module's docstring (the PuLP original)."""
    if symmetry_breaking not in (True, False, "weak"):
        raise ValueError(f"symmetry_breaking = {symmetry_breaking!r}: must be True, False "
                         f"or 'weak'")
    n, k = instance.size, instance.gpus
    lower, horizon, unit, c, delay, start_lo, start_hi = scaled_times(instance, upper_bound_s)

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



def topology(instance: TopologyInstance, *, max_ring_orders: int = MAX_RING_ORDERS) -> MilpModel:
    """The concurrent-flow MILP of a ``topology`` instance (the PuLP original)."""
    n, d = instance.servers, instance.degree
    t0 = topology_lower_bound(instance)
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
        def flow_of(s):
            return {(i, j): values[f[s, i, j].name] for i, j in arcs
                    if s in sources and j != s and counts[i, j] > 0
                    and values[f[s, i, j].name] > _EPS}

        routes = routes_from_flows(instance, graph, rings, flow_of)
        links = [[i, j, int(counts[i, j])] for i, j in pairs if counts[i, j] > 0]
        return TopologySolution(links, [r.to_dict() for r in rings], routes)

    def encode(solution: TopologySolution) -> dict[str, float]:
        time_s = topology_evaluate(instance, solution)
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
