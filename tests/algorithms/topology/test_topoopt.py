"""TopoOpt's building blocks against the oracles of docs/departures.rst (topoopt-6),
sympy and networkx."""

import math

import networkx as nx
import numpy as np
import pytest
import sympy
from hypothesis import assume, given, strategies as st

import fabricopt
from fabricopt import InfeasibleInstance
from fabricopt.errors import InvalidArgument, InvalidOption
from fabricopt.algorithms.topology.topoopt import (allocate_rings, circulant_diameter,
                                                   circulant_mean_hops, coin_change_mod,
                                                   degree_split, mp_matching, regular_ring,
                                                   select_permutations, topoopt, topoopt_search,
                                                   totient_perms)
from fabricopt.algorithms.topology import topoopt as topoopt_module
from fabricopt.algorithms.topology.baselines import ring, ring_lower_bound
from fabricopt.problems import check, evaluate
from fabricopt.problems.topology import TopologyInstance, generate, link_counts


# --- TotientPerms ---------------------------------------------------------------------

@pytest.mark.parametrize("n", list(range(2, 80)) + [128, 1024])
def test_totient_perms_count_is_eulers_totient(n):
    jumps = totient_perms(n)
    assert len(jumps) == sympy.totient(n)
    assert all(math.gcd(p, n) == 1 for p in jumps)
    # each is one Hamiltonian cycle; p and n-p are the same cycle reversed
    for p in jumps[:3]:
        assert sorted(regular_ring(list(range(n)), p)) == list(range(n))
    assert sorted(jumps) == sorted(n - p for p in jumps)


@pytest.mark.parametrize("n, undirected", [(12, 2), (16, 4), (32, 8), (64, 16), (128, 32),
                                           (1024, 256)])
def test_notes_totient_table(n, undirected):
    assert len({min(p, n - p) for p in totient_perms(n)}) == undirected


def test_totient_perms_rejects_n_below_2():
    with pytest.raises(ValueError, match="n = 1: must be >= 2"):
        totient_perms(1)


# --- SelectPermutations ---------------------------------------------------------------

@pytest.mark.parametrize("n, d, jumps", [
    (12, 4, [1, 5]), (16, 4, [1, 5]), (16, 6, [1, 3, 7]), (32, 4, [1, 7]), (64, 4, [1, 9]),
    (128, 4, [1, 13]), (128, 6, [1, 7, 27]), (128, 8, [1, 5, 13, 39]), (1024, 4, [1, 33]),
])
def test_notes_chosen_jumps_bidirectional(n, d, jumps):
    assert select_permutations(totient_perms(n), d // 2) == jumps
    assert select_permutations(totient_perms(n), d // 2, modulus=n) == jumps


def test_notes_chosen_jumps_unidirectional():
    assert select_permutations(totient_perms(128), 4, bidirectional=False) == [1, 7, 27, 127]
    # the target lands at 15.000000000000002 > 15: the clamp keeps the last candidate
    assert select_permutations(totient_perms(16), 3, bidirectional=False) == [1, 5, 15]


@pytest.mark.parametrize("g, m2, m1", [(64, [2, 18], [2]), (32, [4, 28], [4]), (16, [8, 40], [8]),
                                       (8, [16, 48], [16]), (4, [32, 96], [32])])
def test_notes_subgroup_jumps_for_128(g, m2, m1):
    candidates = [128 // g * k for k in totient_perms(g)]
    assert select_permutations(candidates, 2) == m2
    assert select_permutations(candidates, 1) == m1


def test_select_permutations_guards():
    # more jumps than candidates: all of them (the C++ runs off its array)
    assert select_permutations([64], 3) == [64]
    assert select_permutations(totient_perms(12), 9, bidirectional=False) == [1, 5, 7, 11]
    # mirror-aware: 5 and 7 are one undirected ring of Z_12
    assert select_permutations(totient_perms(12), 3, modulus=12) == [1, 5]
    with pytest.raises(ValueError, match="m = 0: must be >= 1"):
        select_permutations([1, 3], 0)
    with pytest.raises(ValueError, match="candidates = \\[\\]"):
        select_permutations([], 2)


@given(n=st.integers(3, 400), m=st.integers(1, 12), bidirectional=st.booleans())
def test_select_permutations_returns_distinct_candidates(n, m, bidirectional):
    candidates = totient_perms(n)
    chosen = select_permutations(candidates, m, bidirectional=bidirectional)
    assert chosen == sorted(set(chosen)) and set(chosen) <= set(candidates)
    assert len(chosen) == min(m, len(candidates))
    undirected = select_permutations(candidates, m, modulus=n)
    assert len({min(p, n - p) for p in undirected}) == len(undirected)


# --- CoinChangeMod --------------------------------------------------------------------

def test_notes_coin_oracle_128():
    table = coin_change_mod(128, [1, 13, 115, 127], bidirectional=False)
    assert [table.hops[r] for r in (2, 12, 14, 26, 50, 64)] == [2, 2, 2, 2, 6, 6]
    hist = dict(zip(*np.unique(table.hops[1:], return_counts=True)))
    assert {int(k): int(v) for k, v in hist.items()} == {1: 4, 2: 8, 3: 12, 4: 16, 5: 20, 6: 21,
                                                         7: 18, 8: 14, 9: 10, 10: 4}
    assert table.diameter == 10 and round(table.mean_hops, 3) == 5.622
    # g = 64 got no ring of its own: its cheapest candidate jump is 2 = 1 + 1
    costs = [(table.hops[2 * k], 2 * k) for k in totient_perms(64)]
    assert min(costs) == (2, 2) and table.path(2) == [1, 1]
    assert table.path(128 - 2) == [127, 127]


@pytest.mark.parametrize("n, coins, hops", [
    (16, [1, 3, 7, 9, 13, 15], [0, 1, 2, 1, 2, 3, 2, 1, 2, 1, 2, 3, 2, 1, 2, 1]),
    (12, [1, 5, 7, 11], [0, 1, 2, 3, 2, 1, 2, 1, 2, 3, 2, 1]),
])
def test_notes_coin_hop_tables(n, coins, hops):
    assert coin_change_mod(n, coins).hops.tolist() == hops


@pytest.mark.parametrize("n, d, diameter, mean", [
    (128, 2, 64, "32.25"), (128, 4, 10, "5.622"), (128, 6, 6, "3.669"), (128, 8, 5, "2.961"),
    (64, 4, 8, "4.063"), (32, 4, 4, "2.71"), (16, 4, 4, "2.133"), (16, 6, 3, "1.733"),
    (12, 4, 3, "1.818"), (1024, 4, 32, "16.016"),
])
def test_notes_circulant_table(n, d, diameter, mean):
    jumps = select_permutations(totient_perms(n), d // 2)
    assert circulant_diameter(n, jumps) == diameter
    # the table rounds to as many decimals as it prints
    assert round(circulant_mean_hops(n, jumps), len(mean.split(".")[1])) == float(mean)


@st.composite
def coin_sets(draw):
    n = draw(st.integers(2, 90))
    coins = draw(st.lists(st.integers(1, n - 1), min_size=1, max_size=5)) if n > 2 else [1]
    return n, coins


@given(coin_sets(), st.booleans(), st.integers(0, 2**31))
def test_coin_change_equals_bfs_on_the_circulant(case, bidirectional, seed):
    n, coins = case
    assume(math.gcd(n, *coins) == 1)
    table = coin_change_mod(n, coins, bidirectional=bidirectional, seed=seed)
    graph = nx.DiGraph()
    used = {c % n for c in coins} | ({(n - c) % n for c in coins} if bidirectional else set())
    graph.add_edges_from((i, (i + c) % n) for i in range(n) for c in used)
    dist = nx.single_source_shortest_path_length(graph, 0)
    assert table.hops.tolist() == [dist[r] for r in range(n)]
    for r in range(n):
        path = table.path(r)
        assert len(path) == dist[r] and sum(path) % n == r and set(path) <= used
        prefixes = np.cumsum(path) % n
        assert len(set(prefixes.tolist())) == len(path) and 0 not in prefixes[:-1]


def test_coin_change_is_deterministic_for_a_seed():
    coins = [1, 5, 13, 39]
    a, b = coin_change_mod(128, coins, seed=7), coin_change_mod(128, coins, seed=7)
    assert a.last.tolist() == b.last.tolist()
    others = {tuple(coin_change_mod(128, coins, seed=s).last.tolist()) for s in range(5)}
    assert len(others) > 1  # ties really are broken by the seed
    assert all(coin_change_mod(128, coins, seed=s).hops.tolist() == a.hops.tolist() for s in range(5))


@pytest.mark.parametrize("n, coins, message", [
    (8, [2, 4], r"coins = \[2, 4\]: do not generate Z_8 \(every sum is a multiple of gcd 2\)"),
    (12, [3, 9], r"gcd 3"),
    (6, [6], r"6 ≡ 0 \(mod 6\) is not a jump"),
    (6, [], r"coins = \[\]"),
])
def test_coin_change_errors_instead_of_hanging(n, coins, message):
    with pytest.raises(ValueError, match=message):
        coin_change_mod(n, coins)


# --- TopologyFinder -------------------------------------------------------------------

def full_group(n, d, bytes_=4e9, traffic=None):
    traffic = np.zeros((n, n)) if traffic is None else traffic
    return TopologyInstance(n, d, 100.0, [{"members": list(range(n)), "bytes": bytes_}],
                            traffic.tolist())


@pytest.mark.parametrize("n, d", [(12, 4), (16, 6), (128, 8)])
def test_single_group_builds_the_notes_circulant(n, d):
    inst = full_group(n, d)
    solution = topoopt(inst)
    assert check(inst, solution)
    jumps = select_permutations(totient_perms(n), d // 2)
    expected = {(min(i, (i + p) % n), max(i, (i + p) % n)) for i in range(n) for p in jumps}
    assert {(i, j) for i, j, _ in solution.links} == expected
    assert all(c == 1 for *_, c in solution.links)
    # every ring is a regular ring used both ways, one hop per transfer
    assert len(solution.rings) == 2 * len(jumps)
    assert all(len(p.nodes) == 2 for r in solution.routes for p in r.paths)
    # per link direction: 2*(n-1)/n * bytes / (2 * d/2 rings)
    assert evaluate(inst, solution) == pytest.approx(8 * 2 * (n - 1) / n * 4e9 / d / 100e9)


def test_odd_degree_gives_the_spare_interface_to_mp():
    traffic = np.zeros((6, 6))
    traffic[0, 3] = 5e8
    inst = full_group(6, 3, traffic=traffic)
    solution = topoopt(inst)
    assert check(inst, solution)
    counts = link_counts(inst, solution)
    assert counts[0, 3] == 1 and (counts.sum(axis=1) == 3).all()


def test_mp_degree_option_and_its_clear_errors():
    inst = generate(seed=3, servers=8, degree=6)
    artifact = topoopt(inst, mp_degree=0)  # the published artifact: all rings
    assert check(inst, artifact)
    with pytest.raises(ValueError, match="mp_degree = 3: leaves 3 interfaces for AllReduce, "
                                         "but bidirectional rings use them in pairs"):
        topoopt(inst, mp_degree=3)
    with pytest.raises(ValueError, match="mp_degree = 5: must be <= 4"):
        topoopt(inst, mp_degree=5)
    with pytest.raises(ValueError, match="mp_degree = 0: leaves 5"):
        topoopt(generate(seed=3, servers=8, degree=5), mp_degree=0)


@pytest.mark.parametrize("degree, ar, mp, expected", [
    (8, 3.0, 1.0, (6, 2)), (8, 1.0, 0.0, (8, 0)), (8, 0.0, 1.0, (2, 6)), (8, 0.0, 0.0, (8, 0)),
    (5, 1.0, 0.0, (4, 1)), (2, 1.0, 9.0, (2, 0)), (6, 1.0, 1.0, (4, 2)), (4, 1.0, 1.0, (2, 2)),
])
def test_degree_split(degree, ar, mp, expected):
    assert degree_split(degree, ar, mp) == expected


def test_allocation_is_proportional_to_bytes():
    # 8 servers: a big all-server group and a small one on the even servers
    inst = TopologyInstance(8, 8, 100.0, [{"members": list(range(8)), "bytes": 7e9},
                                          {"members": [0, 2, 4, 6], "bytes": 1e9}], [[0] * 8] * 8)
    # per-member bytes 12.25e9 and 1.5e9 through the busiest member's 4 jumps: 3.56 -> 4
    # and 0.44 -> max(1, 0) = 1, but the big class took every interface (TopoOpt §4.2,
    # not one jump per class first): the small group rides the big one's rings
    big, small = allocate_rings(inst, 8)
    assert len(big.jumps) == 4 and small.jumps == ()
    # comparable bytes: 1.75e9 and 1.5e9 per member, 2.15 -> 2 and 1.85 -> 2 jumps
    inst = TopologyInstance(8, 8, 100.0, [{"members": list(range(8)), "bytes": 1e9},
                                          {"members": [0, 2, 4, 6], "bytes": 1e9}], [[0] * 8] * 8)
    big, small = allocate_rings(inst, 8)
    assert len(big.jumps) == 2 and len(small.jumps) == 2
    big, small = allocate_rings(inst, 8, allocation="full")
    assert len(big.jumps) == 4 and small.jumps == ()
    with pytest.raises(ValueError, match="allocation = 'even': must be one of proportional, full"):
        allocate_rings(inst, 8, allocation="even")
    # without an all-server group a connectivity ring comes first
    inst = TopologyInstance(4, 4, 100.0, [{"members": [0, 2], "bytes": 1e9}], [[0] * 4] * 4)
    connect, pair = allocate_rings(inst, 4)
    assert connect.members == (0, 1, 2, 3) and connect.groups == () and connect.jumps == (1,)
    assert pair.members == (0, 2) and pair.jumps == (1,)


def test_group_without_a_ring_is_routed_by_coins():
    # degree 2: the whole AllReduce share goes to the all-server ring; the strided group
    # {0, 4, 8} rides it over CoinChangeMod paths (4 hops each way on a ring of 12)
    inst = TopologyInstance(12, 2, 100.0, [{"members": list(range(12)), "bytes": 1e9},
                                           {"members": [0, 4, 8], "bytes": 1e9}], [[0] * 12] * 12)
    classes = allocate_rings(inst, 2)
    assert classes[1].jumps == ()
    solution = topoopt(inst)
    assert check(inst, solution)
    group1 = [r for r in solution.rings if r.group == 1]
    assert {tuple(r.order) for r in group1} == {(0, 4, 8), (0, 8, 4)}
    assert all(r.share == 0.5 for r in group1)
    route = next(r for r in solution.routes if (r.src, r.dst) == (0, 4))
    assert [p.nodes for p in route.paths] == [(0, 1, 2, 3, 4)]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_reverse_ring_mirrors_the_forward_coin_paths(seed):
    # Regression: the {0, 4} group rides the all-server ring of degree 2.
    # Routing its reverse ring with an independent coin path sent both halves clockwise
    # (0.150 s); mirrored, each half takes one direction and topoopt matches the plain
    # ring, which is optimal here: (0.875e9 + 0.5e9) bytes / 12.5e9 bytes/s = 0.110 s.
    inst = TopologyInstance(8, 2, 100.0, [{"members": list(range(8)), "bytes": 1e9},
                                          {"members": [0, 4], "bytes": 1e9}], [[0] * 8] * 8)
    solution = topoopt(inst, seed=seed)
    assert check(inst, solution)
    assert evaluate(inst, solution) == pytest.approx(0.110, rel=1e-12)
    route = next(r for r in solution.routes if (r.src, r.dst) == (0, 4))
    assert sorted(p.nodes for p in route.paths) == [(0, 1, 2, 3, 4), (0, 7, 6, 5, 4)]


def test_mp_matching_diminishes_repeated_pairs():
    t = np.zeros((4, 4))
    t[0, 1], t[2, 3], t[0, 2] = 9e9, 4e9, 3e9
    counts = mp_matching(t, 2, np.random.default_rng(0))
    # round 1: {0-1, 2-3}; round 2: 0-1 is worth 4.5e9 now, 2-3 2e9, 0-2 3e9:
    # {0-1, 2-3} = 6.5e9 beats {0-2, 1-3} = 3e9
    assert counts[0, 1] == 2 and counts[2, 3] == 2
    counts = mp_matching(t, 3, np.random.default_rng(0))
    # round 3: 0-1 is worth 3e9, 2-3 1.33e9, 0-2 3e9: {0-1, 2-3} = 4.33e9 beats {0-2} = 3e9
    assert counts[0, 1] == 3 and counts[2, 3] == 3
    assert (counts.sum(axis=1) == 3).all()


def test_degree_one_is_a_matching_or_infeasible():
    traffic = np.zeros((4, 4))
    traffic[0, 1] = traffic[3, 2] = 1e9
    inst = TopologyInstance(4, 1, 100.0, [{"members": [1, 0], "bytes": 1e9}], traffic.tolist())
    solution = topoopt(inst)
    assert check(inst, solution)
    assert solution.links == ((0, 1, 1), (2, 3, 1))
    with pytest.raises(InfeasibleInstance, match=r"allreduce\[0\] has 3 members but degree = 1"):
        topoopt(TopologyInstance(4, 1, 100.0, [{"members": [0, 1, 2], "bytes": 1.0}], [[0] * 4] * 4))
    traffic[0, 2] = 1.0
    with pytest.raises(InfeasibleInstance, match="server 0 has demand with servers 1 and 2"):
        topoopt(TopologyInstance(4, 1, 100.0, [], traffic.tolist()))


@st.composite
def instances(draw, max_servers=14):
    n = draw(st.integers(2, max_servers))
    return generate(draw(st.integers(0, 10**6)), servers=n, degree=draw(st.integers(2, 7)),
                    groups=draw(st.integers(0, 3)), mp_peers=draw(st.integers(0, n - 1)))


@given(instances(), st.integers(0, 3))
def test_topoopt_is_feasible_within_degree_and_seeded(inst, seed):
    solution = topoopt(inst, seed=seed)
    assert check(inst, solution)
    assert (link_counts(inst, solution).sum(axis=1) <= inst.degree).all()
    assert topoopt(inst, seed=seed) == solution


@given(instances(max_servers=10), st.integers(0, 2))
def test_topoopt_is_never_worse_than_the_plain_ring(inst, seed):
    # the candidates include the ring baseline's construction, scored by evaluate
    assume(inst.degree > 1)
    best = topoopt(inst, seed=seed)
    assert evaluate(inst, best) <= evaluate(inst, ring(inst, seed=seed))
    assert evaluate(inst, best) <= evaluate(inst, topoopt(inst, seed=seed, candidates=False))


def test_candidates_beat_the_paper_allocation_on_a_quick_suite_instance():
    # quick suite s6-d4 seed 2: a candidate beats the paper's allocation by 22 %
    inst = generate(2, servers=6, degree=4)
    paper = evaluate(inst, topoopt(inst, candidates=False))
    best = evaluate(inst, topoopt(inst))
    assert best < 0.8 * paper


@given(instances(max_servers=12), st.integers(0, 2))
def test_bounding_the_ring_never_changes_the_answer(inst, seed):
    # with a bound of 0 the plain ring is always built and scored by evaluate
    assume(inst.degree > 1)
    solution, info = topoopt_search(inst, seed=seed)
    original = topoopt_module.ring_lower_bound
    topoopt_module.ring_lower_bound = lambda instance: 0.0
    try:
        unbounded, plain = topoopt_search(inst, seed=seed)
    finally:
        topoopt_module.ring_lower_bound = original
    assert solution == unbounded
    assert plain["candidates_bounded"] == 0
    assert info["candidates_scored"] == plain["candidates_scored"]
    if info["candidates_bounded"]:
        assert evaluate(inst, ring(inst, seed=seed)) > evaluate(inst, solution)


@given(instances(max_servers=12), st.integers(0, 2))
def test_ring_lower_bound_is_below_the_ring(inst, seed):
    assume(inst.degree > 1)
    assert ring_lower_bound(inst) <= evaluate(inst, ring(inst, seed=seed)) * (1 + 1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_the_greedy_matching_gives_a_feasible_topology(seed):
    inst = generate(seed=seed, servers=24, degree=6, groups=2, mp_peers=5)
    blossom, greedy = topoopt(inst), topoopt(inst, matching="greedy")
    assert check(inst, greedy) and check(inst, blossom)
    # the plain ring is among both searches' candidates
    assert evaluate(inst, greedy) <= evaluate(inst, ring(inst))


def test_an_unknown_matching_is_named():
    inst = generate(seed=0, servers=8, degree=4)
    with pytest.raises(InvalidArgument, match=r"^matching = 'best': must be one of blossom, greedy$"):
        topoopt(inst, matching="best")
    with pytest.raises(InvalidOption, match=r"matching"):
        fabricopt.solve(inst, "topoopt", matching="best")
