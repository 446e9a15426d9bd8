"""The topology baselines: ring, random regular multigraph, OCS-reconfig greedy."""

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, strategies as st

from fabricopt import InfeasibleInstance
from fabricopt.algorithms.topology.baselines import (connect_components, ocs_greedy_counts,
                                                     ocs_reconfig, random_regular,
                                                     random_regular_counts, ring)
from fabricopt.problems import check
from fabricopt.problems.topology import TopologyInstance, generate, link_counts

BASELINES = [ring, random_regular, ocs_reconfig]


def connected(counts):
    graph = nx.Graph()
    graph.add_nodes_from(range(len(counts)))
    graph.add_edges_from((int(i), int(j)) for i, j in np.argwhere(counts > 0))
    return nx.is_connected(graph)


def test_ring_links_and_odd_degree():
    inst = generate(seed=1, servers=5, degree=5)
    solution = ring(inst)
    assert check(inst, solution)
    assert solution.links == ((0, 1, 2), (0, 4, 2), (1, 2, 2), (2, 3, 2), (3, 4, 2))
    # the AllReduce over everyone goes one hop both ways, half the bytes each way
    full = [r for r in solution.rings if r.group == 0]
    assert [(r.order, r.share) for r in full] == [((0, 1, 2, 3, 4), 0.5), ((0, 4, 3, 2, 1), 0.5)]


def test_ring_of_two_servers_uses_every_interface_pair():
    inst = generate(seed=0, servers=2, degree=4)
    assert ring(inst).links == ((0, 1, 4),)


@pytest.mark.parametrize("n, d", [(8, 3), (9, 3), (2, 5), (12, 4), (7, 2), (40, 2)])
def test_random_regular_is_regular_connected_and_seeded(n, d):
    counts = random_regular_counts(n, d, np.random.default_rng(5))
    degrees = counts.sum(axis=1)
    assert np.all(np.diag(counts) == 0) and connected(counts)
    assert sorted(degrees.tolist()) == ([d - 1] + [d] * (n - 1) if n * d % 2 else [d] * n)
    again = random_regular_counts(n, d, np.random.default_rng(5))
    assert (again == counts).all()


def test_random_regular_differs_across_seeds():
    inst = generate(seed=0, servers=10, degree=3)
    assert len({random_regular(inst, seed=s).links for s in range(4)}) > 1


def test_connect_components_swaps_links_that_are_not_bridges():
    # Two saturated components (degree 3): double links 0=1 and 4=5 in triangles joined by
    # the bridge 2-3 (and the same on 6..11). The bridges are the cheapest links: swapping
    # both, as the artifact does, would leave two components.
    counts = np.zeros((12, 12), dtype=int)
    for base in (0, 6):
        for i, j, c in ((0, 1, 2), (0, 2, 1), (1, 2, 1), (2, 3, 1), (3, 4, 1), (3, 5, 1), (4, 5, 2)):
            counts[base + i, base + j] = counts[base + j, base + i] = c
    weight = np.full((12, 12), 5.0)
    weight[2, 3] = weight[3, 2] = weight[8, 9] = weight[9, 8] = 0.0
    connect_components(counts, 3, weight)
    assert connected(counts) and (counts.sum(axis=1) == 3).all()
    assert counts[2, 3] == 1 and counts[8, 9] == 1


def test_connect_components_moves_a_singleton_onto_a_link():
    counts = np.zeros((4, 4), dtype=int)
    for i, j in ((0, 1), (1, 2), (0, 2)):
        counts[i, j] = counts[j, i] = 2  # a saturated triangle, server 3 alone
    weight = np.ones((4, 4))
    weight[0, 1] = weight[1, 0] = 0.0
    connect_components(counts, 4, weight)
    assert counts[0, 1] == 1 and counts[3, 0] == 1 and counts[3, 1] == 1
    assert connected(counts) and counts.sum(axis=1).max() == 4


@given(n=st.integers(2, 12), d=st.integers(2, 5), seed=st.integers(0, 10**6),
       density=st.floats(0, 1))
def test_connect_components_always_connects_within_degree(n, d, seed, density):
    rng = np.random.default_rng(seed)
    counts = np.zeros((n, n), dtype=int)
    for i, j in rng.permutation([(i, j) for i in range(n) for j in range(i + 1, n)]):
        if rng.random() < density and counts[i].sum() < d and counts[j].sum() < d:
            counts[i, j] += 1
            counts[j, i] += 1
    connect_components(counts, d, rng.random((n, n)))
    assert connected(counts) and counts.sum(axis=1).max() <= d and not np.diag(counts).any()


def test_ocs_greedy_halves_the_worth_of_each_parallel_link():
    pair = np.array([[0, 8.0], [8.0, 0]])
    assert ocs_greedy_counts(pair, 10)[0, 1] == 4  # worth 8, 4, 2, 1, then 0
    pair = np.array([[0, 9, 5], [9, 0, 4], [5, 4, 0]], dtype=float)
    # 9 -> 0-1; 5 -> 0-2; 4.5 (4) -> 0-1 fills 0... then 4 -> 1-2
    counts = ocs_greedy_counts(pair, 3)
    assert counts.tolist() == [[0, 2, 1], [2, 0, 1], [1, 1, 0]]


def test_ocs_reconfig_repairs_a_disconnected_greedy():
    # demand only inside {0,1,2} and {3,4,5}: the greedy alone gives two components
    traffic = np.zeros((6, 6))
    for a, b in ((0, 1), (1, 2), (2, 0), (3, 4), (4, 5), (5, 3)):
        traffic[a, b] = 1e9
    inst = TopologyInstance(6, 2, 100.0, [], traffic.tolist())
    assert not connected(ocs_greedy_counts(np.maximum(traffic, traffic.T), 2))
    solution = ocs_reconfig(inst)
    assert check(inst, solution) and connected(link_counts(inst, solution))


@pytest.mark.parametrize("method", BASELINES)
def test_degree_one(method):
    traffic = np.zeros((4, 4))
    traffic[2, 1] = 1e9
    inst = TopologyInstance(4, 1, 100.0, [{"members": [0, 3], "bytes": 1e9}], traffic.tolist())
    assert check(inst, method(inst))
    with pytest.raises(InfeasibleInstance, match="degree = 1"):
        method(TopologyInstance(4, 1, 100.0, [{"members": [0, 1, 3], "bytes": 1e9}],
                                traffic.tolist()))


@given(n=st.integers(2, 12), d=st.integers(2, 6), groups=st.integers(0, 3),
       seed=st.integers(0, 10**6), method=st.sampled_from(BASELINES))
def test_baselines_are_feasible_within_degree_and_seeded(n, d, groups, seed, method):
    inst = generate(seed, servers=n, degree=d, groups=groups)
    solution = method(inst, seed=seed)
    assert check(inst, solution)
    assert (link_counts(inst, solution).sum(axis=1) <= d).all()
    assert method(inst, seed=seed) == solution


@given(n=st.integers(3, 30), d=st.integers(2, 5), seed=st.integers(0, 50))
def test_random_regular_links_the_dense_configuration_models_graph(n, d, seed):
    # the method keeps the links sparse and repairs densely only when disconnected
    inst = generate(seed=seed, servers=n, degree=d, groups=1, mp_peers=1)
    expected = random_regular_counts(n, d, np.random.default_rng(seed))
    assert np.array_equal(link_counts(inst, random_regular(inst, seed=seed)), expected)


def dense_ocs_links(inst, seed):
    """ocs_reconfig's links from dense matrices, a row sum per server per repair link
    (the oracle)."""
    from fabricopt.algorithms.topology.routing import plain_rings
    from fabricopt.problems.topology import ring_traffic

    rng = np.random.default_rng(seed)
    demand = inst.traffic + ring_traffic(inst, plain_rings(inst))
    pair = np.maximum(demand, demand.T)
    counts = ocs_greedy_counts(pair, inst.degree)
    n = len(counts)
    unused = rng.permutation([v for v in range(n) if counts[v].sum() == 0]).tolist()
    for u, v in zip(unused, unused[1:]):
        counts[u, v] += 1
        counts[v, u] += 1
    while True:
        free = [v for v in range(n) if counts[v].sum() < inst.degree]
        if len(free) < 2:
            break
        u, v = rng.choice(free, size=2, replace=False)
        counts[u, v] += 1
        counts[v, u] += 1
    connect_components(counts, inst.degree, pair)
    return counts


@given(n=st.integers(3, 24), d=st.integers(2, 5), groups=st.integers(0, 3),
       peers=st.integers(0, 3), seed=st.integers(0, 50))
def test_ocs_reconfig_links_what_the_dense_greedy_and_repairs_link(n, d, groups, peers, seed):
    inst = generate(seed=seed, servers=n, degree=d, groups=groups, mp_peers=min(peers, n - 1))
    expected = dense_ocs_links(inst, seed)
    assert np.array_equal(link_counts(inst, ocs_reconfig(inst, seed=seed)), expected)


@given(n=st.integers(2, 40), d=st.integers(2, 6), groups=st.integers(0, 3),
       peers=st.integers(0, 4), seed=st.integers(0, 50))
def test_the_rings_closed_form_hops_give_the_searched_bound(n, d, groups, peers, seed):
    from fabricopt.algorithms.topology.baselines import _ring_counts, ring_lower_bound
    from fabricopt.algorithms.topology.routing import plain_rings, shortest_routing_bound
    from fabricopt.problems.topology import demand_pairs
    inst = generate(seed=seed, servers=n, degree=d, groups=groups, mp_peers=min(peers, n - 1))
    searched = shortest_routing_bound(_ring_counts(inst), demand_pairs(inst, plain_rings(inst)),
                                      inst.link_bytes_per_s)
    assert ring_lower_bound(inst) == searched
