"""fabricopt/algorithms/topology/routing.py against networkx and hand computations."""

import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import assume, given, strategies as st

from fabricopt import InfeasibleInstance
from fabricopt.algorithms.topology import routing as tr
from fabricopt.algorithms.topology.routing import (RouteBook, ShortestPaths, add_links, assemble,
                                                   degree_one_solution, plain_rings,
                                                   route_shortest)
from fabricopt.problems import check, evaluate
from fabricopt.problems.topology import Ring, TopologyInstance, ring_traffic


@st.composite
def count_matrices(draw, max_n=8):
    """Symmetric parallel-link counts 0..2 with a zero diagonal (often disconnected)."""
    n = draw(st.integers(2, max_n))
    upper = draw(st.lists(st.integers(0, 2), min_size=n * (n - 1) // 2,
                          max_size=n * (n - 1) // 2))
    counts = np.zeros((n, n), dtype=np.int64)
    counts[np.triu_indices(n, 1)] = upper
    return counts + counts.T


def graph_of(counts):
    g = nx.Graph()
    g.add_nodes_from(range(len(counts)))
    g.add_edges_from(map(tuple, np.argwhere(counts > 0)))
    return g


@given(count_matrices(), st.integers(0, 2**32 - 1), st.integers(1, 6))
def test_shortest_paths_agree_with_networkx(counts, seed, k):
    g = graph_of(counts)
    sp = ShortestPaths(counts, np.random.default_rng(seed))
    n = len(counts)
    for s in range(n):
        lengths = nx.single_source_shortest_path_length(g, s)
        assert sp.distances(s).tolist() == [lengths.get(t, -1) for t in range(n)]
        for t in range(n):
            if t == s:
                continue
            found = sp.paths(s, t, k)
            if t not in lengths:
                assert found == []
                continue
            every = {tuple(p) for p in nx.all_shortest_paths(g, s, t)}
            assert len(found) == len(set(found)) == min(k, len(every))
            assert set(found) <= every
    first, again = (ShortestPaths(counts, np.random.default_rng(seed)) for _ in range(2))
    assert [again.paths(0, t, k) for t in range(n)] == [first.paths(0, t, k) for t in range(n)]


def test_route_book_splits_evenly_and_accumulates():
    book = RouteBook()
    book.add(2, 0, [(2, 1, 0)], 4.0)
    book.add(0, 2, [(0, 1, 2), (0, 3, 2)], 3.0)      # 1.5 on each
    book.add(0, 2, [(0, 1, 2)], 1.0)                 # 2.5 on 0-1-2 in all
    book.add(1, 3, [(1, 3)], 0.0)                    # no bytes, no route
    assert book.routes() == [
        {"src": 0, "dst": 2, "paths": [{"nodes": [0, 1, 2], "fraction": 2.5 / 4.0},
                                       {"nodes": [0, 3, 2], "fraction": 1.5 / 4.0}]},
        {"src": 2, "dst": 0, "paths": [{"nodes": [2, 1, 0], "fraction": 1.0}]}]
    with pytest.raises(ValueError, match="no path from 1 to 3"):
        book.add(1, 3, [], 5.0)


@given(count_matrices(max_n=7), st.integers(0, 10), st.integers(1, 3))
def test_route_shortest_routes_every_demand_over_shortest_paths(counts, seed, k):
    g = graph_of(counts)
    n = len(counts)
    rng = np.random.default_rng(seed)
    demand = np.where(rng.random((n, n)) < 0.4, rng.integers(1, 10, (n, n)), 0).astype(float)
    np.fill_diagonal(demand, 0.0)
    connected = all(nx.has_path(g, s, t) for s, t in np.argwhere(demand > 0))
    book = RouteBook()
    if not connected:
        with pytest.raises(InfeasibleInstance, match="have demand but are not connected"):
            route_shortest(book, counts, demand, paths=k, rng=rng)
        return
    route_shortest(book, counts, demand, paths=k, rng=rng)
    routes = {(r["src"], r["dst"]): r["paths"] for r in book.routes()}
    assert set(routes) == {(int(s), int(t)) for s, t in np.argwhere(demand > 0)}
    for (s, t), paths in routes.items():
        hops = nx.shortest_path_length(g, s, t)
        assert 1 <= len(paths) <= k
        assert all(len(p["nodes"]) == hops + 1 and nx.is_path(g, p["nodes"]) for p in paths)
        assert all(p["fraction"] == pytest.approx(1 / len(paths)) for p in paths)


def test_plain_rings_and_assemble_merge_rotations():
    inst = TopologyInstance(4, 3, 100.0, [{"members": [3, 0, 2], "bytes": 6e9}], [[0] * 4] * 4)
    assert plain_rings(inst) == [Ring(0, [0, 2, 3], 0.5), Ring(0, [3, 2, 0], 0.5)]
    counts = np.zeros((4, 4), dtype=np.int64)
    add_links(counts, 2, 0)
    add_links(counts, 0, 3, copies=2)
    add_links(counts, 2, 3)
    assert (counts == counts.T).all() and counts.sum() == 2 * 4
    rings = [Ring(0, [2, 3, 0], 0.25), Ring(0, [0, 2, 3], 0.25), Ring(0, [3, 2, 0], 0.5)]
    book = RouteBook()
    for s, t in ((0, 2), (2, 3), (3, 0), (0, 3), (3, 2), (2, 0)):
        book.add(s, t, [(s, t)], 1.0)
    solution = assemble(counts, rings, book)
    # [2, 3, 0] is [0, 2, 3] rotated: one ring of share 0.5; [3, 2, 0] is the other way.
    assert [r.to_dict() for r in solution.rings] == [
        {"group": 0, "order": [0, 2, 3], "share": 0.5},
        {"group": 0, "order": [0, 3, 2], "share": 0.5}]
    assert [list(link) for link in solution.links] == [[0, 2, 1], [0, 3, 2], [2, 3, 1]]
    assert check(inst, solution)
    # Ring bytes 2*(3-1)/3 * 6e9 = 8e9 per member, half each way; link 0-2 carries 4e9.
    assert evaluate(inst, solution) == pytest.approx(8 * 4e9 / 100e9)


@st.composite
def degree_one_instances(draw):
    n = draw(st.integers(2, 6))
    pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1))
                          .filter(lambda p: p[0] != p[1]), max_size=3))
    traffic = np.zeros((n, n))
    for s, t in pairs:
        traffic[s, t] = draw(st.sampled_from([1e6, 3e9]))
    groups = draw(st.lists(st.fixed_dictionaries({
        "members": st.lists(st.integers(0, n - 1), min_size=2, max_size=min(n, 3), unique=True),
        "bytes": st.sampled_from([0.0, 2e9])}), max_size=2))
    return TopologyInstance(n, 1, 100.0, groups, traffic.tolist())


@given(degree_one_instances())
def test_degree_one_solution_exists_iff_demand_is_a_matching(inst):
    # The truth without the module: every demanded pair must be one link, so the demand
    # graph (traffic, and each 2-member ring with bytes) must be a matching, and no
    # ring of 3+ members may carry bytes.
    demand = nx.Graph()
    demand.add_edges_from(map(tuple, np.argwhere(inst.traffic > 0)))
    big_ring = False
    for group in inst.allreduce:
        if group.bytes > 0:
            big_ring |= len(group.members) > 2
            if len(group.members) == 2:
                demand.add_edge(*group.members)
    feasible = not big_ring and max((d for _, d in demand.degree), default=0) <= 1
    if not feasible:
        with pytest.raises(InfeasibleInstance, match="degree = 1"):
            degree_one_solution(inst)
        return
    solution = degree_one_solution(inst)
    assert check(inst, solution)
    assert {(a, b) for a, b, _ in solution.links} == {tuple(sorted(e)) for e in demand.edges}
    ring_bytes = {}  # a 2-member ring sends its bytes each way (2(g-1)/g = 1)
    for g in inst.allreduce:
        key = tuple(sorted(g.members))
        ring_bytes[key] = ring_bytes.get(key, 0.0) + g.bytes
    worst = max([8 * (inst.traffic[s, t] + ring_bytes.get(tuple(sorted((s, t))), 0.0))
                 / 100e9 for s, t in demand.edges for s, t in ((s, t), (t, s))], default=0.0)
    assert evaluate(inst, solution) == pytest.approx(worst)


def test_canonical_rotation_starts_at_the_smallest_member():
    assert tr._canonical([5, 2, 7, 3]) == (2, 7, 3, 5)
    assert tr._canonical((1, 0)) == (0, 1)


@given(count_matrices(max_n=8), st.integers(0, 10), st.integers(1, 3), st.integers(0, 2))
def test_assembled_score_is_evaluate_of_the_assembled_solution(counts, seed, k, groups):
    # the same float, not a close one: topoopt keeps the first of equal candidates
    n = len(counts)
    assume(graph_of(counts).number_of_edges() and nx.is_connected(graph_of(counts)))
    rng = np.random.default_rng(seed)
    traffic = np.where(rng.random((n, n)) < 0.4, rng.lognormal(0, 1, (n, n)), 0.0)
    np.fill_diagonal(traffic, 0.0)
    allreduce = [{"members": sorted(rng.choice(n, size=int(rng.integers(2, n + 1)),
                                               replace=False).tolist()),
                  "bytes": float(rng.lognormal(0, 1))} for _ in range(groups)]
    inst = TopologyInstance(n, int(counts.sum(axis=1).max()), 3.0, allreduce, traffic.tolist())
    rings = tr.plain_rings(inst)
    rings += [Ring(r.group, r.order, r.share) for r in rings[:1]]   # merged with its twin
    rings = [Ring(r.group, r.order, r.share / 1.5 if i in (0, len(rings) - 1) else r.share)
             for i, r in enumerate(rings)]
    book = RouteBook()
    route_shortest(book, counts, inst.traffic + ring_traffic(inst, rings), paths=k, rng=rng)
    solution = assemble(counts, rings, book)
    assert tr.assembled_score(inst, counts, rings, book) == evaluate(inst, solution)


@given(count_matrices(max_n=8), st.integers(0, 10))
def test_shortest_routing_bound_is_below_every_shortest_routing(counts, seed):
    n = len(counts)
    g = graph_of(counts)
    rng = np.random.default_rng(seed)
    demand = np.where(rng.random((n, n)) < 0.5, rng.lognormal(0, 1, (n, n)), 0.0)
    np.fill_diagonal(demand, 0.0)
    inst = TopologyInstance(n, max(1, int(counts.sum(axis=1).max())), 16.0, [], demand.tolist())
    bound = tr.shortest_routing_bound(counts, demand, inst.link_bytes_per_s)
    if not all(nx.has_path(g, s, t) for s, t in np.argwhere(demand > 0)):
        assert bound == math.inf
        return
    book = RouteBook()
    route_shortest(book, counts, demand, paths=3, rng=rng)
    assert bound <= evaluate(inst, assemble(counts, [], book)) * (1 + 1e-12)


@pytest.mark.parametrize("n", [5, 30, 61])
def test_hop_counts_past_the_frontier_levels_match_scipy(n):
    # a path graph: its diameter passes _FRONTIER_LEVELS from n = 26 on
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import shortest_path
    step = np.eye(n, k=1, dtype=bool)
    graph = csr_matrix(step | step.T)
    expected = shortest_path(graph, unweighted=True, indices=[0, n // 2, n - 1])
    assert tr.hop_counts(graph, [0, n // 2, n - 1]).tolist() == expected.astype(int).tolist()


def _loop_link_loads(instance, solution):
    """problems.topology.link_loads as a Python addition per hop (the oracle)."""
    from fabricopt.problems.topology import demand_matrix
    demand = demand_matrix(instance, solution)
    loads = np.zeros_like(demand)
    for route in solution.routes:
        volume = demand[route.src, route.dst]
        if volume <= 0:
            continue
        for path in route.paths:
            for a, b in zip(path.nodes, path.nodes[1:]):
                loads[a, b] += path.fraction * volume
    return loads


@pytest.mark.parametrize("seed", range(4))
def test_link_loads_add_in_the_loops_order(seed):
    # bincount sums each link's amounts in the order given: the same floats as the loop
    from fabricopt.algorithms.topology.baselines import random_regular
    from fabricopt.algorithms.topology.topoopt import topoopt
    from fabricopt.problems.topology import generate, link_loads
    inst = generate(seed, servers=24, degree=5, groups=3, mp_peers=6)
    for solution in (topoopt(inst), random_regular(inst, seed=seed)):
        assert np.array_equal(link_loads(inst, solution), _loop_link_loads(inst, solution))
