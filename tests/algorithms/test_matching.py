"""Compiled matching kernels against networkx (independent pure-Python implementations)."""

from fractions import Fraction

import networkx as nx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fabricopt.algorithms._matching import (greedy_weight_matching, integer_weights,
                                            max_weight_matching, perfect_bipartite_matching)


def _random_graph(seed, n, p):
    rng = np.random.default_rng(seed)
    edges = [(i, j) for i in range(n) for j in range(i + 1, n) if rng.random() < p]
    # floats of very different exponents, and integer divisors (diminished weights)
    values = [float(rng.choice([1.0, 1e-3, 1e6])) * float(rng.random() + 1e-9) for _ in edges]
    divisors = [int(rng.integers(1, 6)) for _ in edges]
    return edges, values, divisors


def _is_matching(pairs):
    nodes = [v for e in pairs for v in e]
    return len(nodes) == len(set(nodes))


@given(st.integers(0, 2**32 - 1), st.integers(2, 12), st.floats(0.2, 1.0))
def test_equal_matched_weight_as_networkx(seed, n, p):
    edges, values, divisors = _random_graph(seed, n, p)
    exact = {e: Fraction(v) / d for e, v, d in zip(edges, values, divisors)}
    got = max_weight_matching(n, edges, integer_weights(values, divisors))
    assert _is_matching(got) and all(e in exact for e in got)
    graph = nx.Graph()
    graph.add_weighted_edges_from((u, v, w) for (u, v), w in exact.items())
    want = nx.max_weight_matching(graph)  # exact arithmetic on Fractions
    assert sum(exact[e] for e in got) == sum(exact[(min(e), max(e))] for e in want)


@given(st.integers(0, 2**32 - 1), st.integers(2, 14), st.floats(0.1, 1.0))
def test_greedy_matching_is_maximal_heaviest_first_and_half_the_maximum(seed, n, p):
    edges, values, divisors = _random_graph(seed, n, p)
    weights = integer_weights(values, divisors)
    weight = dict(zip(edges, weights))
    got = greedy_weight_matching(n, edges, weights)
    assert _is_matching(got) and all(e in weight for e in got) and got == sorted(got)
    # maximal, and every edge left out meets a chosen edge at least as heavy
    for (u, v), w in weight.items():
        if (u, v) in got:
            continue
        blockers = [weight[e] for e in got if u in e or v in e]
        assert blockers and max(blockers) >= w, (u, v)
    best = sum(weight[e] for e in max_weight_matching(n, edges, weights))
    assert 2 * sum(weight[e] for e in got) >= best


def test_greedy_matching_keeps_the_first_of_equal_weights():
    assert greedy_weight_matching(4, [(2, 3), (0, 1), (1, 2)], [5, 5, 5]) == [(0, 1), (2, 3)]
    assert greedy_weight_matching(3, [(1, 2), (0, 1)], [5, 5]) == [(1, 2)]


def test_integer_weights_are_exactly_proportional():
    values, divisors = [0.1, 3e-7, 2.5e6, 1.0], [3, 1, 7, 2]
    scaled = integer_weights(values, divisors)
    ratios = {Fraction(w) / (Fraction(v) / d) for w, v, d in zip(scaled, values, divisors)}
    assert len(ratios) == 1


def test_integer_weights_round_when_exponents_span_too_far():
    values = [1e-300, 1e300, 3e299]
    scaled = integer_weights(values, [1, 1, 1])
    assert max(scaled) < 2**63 and min(scaled) == 1
    assert scaled[2] / scaled[1] == pytest.approx(0.3, rel=1e-12)


@given(st.integers(0, 2**32 - 1), st.integers(1, 9), st.floats(0.1, 1.0))
def test_bipartite_matching_is_maximum(seed, n, p):
    rng = np.random.default_rng(seed)
    mask = rng.random((n, n)) < p
    rows, cols = np.nonzero(mask)
    partner = perfect_bipartite_matching(rows, cols, n)
    matched = [(i, int(k)) for i, k in enumerate(partner) if k >= 0]
    assert all(mask[i, k] for i, k in matched)
    assert len({k for _, k in matched}) == len(matched)
    graph = nx.Graph()
    graph.add_nodes_from(("o", i) for i in range(n))
    graph.add_edges_from((("o", int(i)), ("i", int(k))) for i, k in zip(rows, cols))
    want = nx.bipartite.hopcroft_karp_matching(graph, top_nodes=[("o", i) for i in range(n)])
    assert len(matched) == len(want) // 2


def _matching_size_networkx(n, rows, cols):
    graph = nx.Graph()
    graph.add_nodes_from(("o", i) for i in range(n))
    graph.add_edges_from((("o", int(i)), ("i", int(k))) for i, k in zip(rows, cols))
    want = nx.bipartite.hopcroft_karp_matching(graph, top_nodes=[("o", i) for i in range(n)])
    return len(want) // 2


def _matching_size_scipy(n, rows, cols):
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_bipartite_matching

    graph = csr_matrix((np.ones(len(rows), dtype=np.int32), (rows, cols)), shape=(n, n))
    return int((maximum_bipartite_matching(graph, perm_type="column") >= 0).sum())


def _assert_maximum(n, rows, cols):
    partner = perfect_bipartite_matching(rows, cols, n)
    edges = set(zip(np.asarray(rows).tolist(), np.asarray(cols).tolist()))
    matched = [(i, int(k)) for i, k in enumerate(partner) if k >= 0]
    assert all(e in edges for e in matched) and len({k for _, k in matched}) == len(matched)
    assert len(matched) == _matching_size_networkx(n, rows, cols)
    assert len(matched) == _matching_size_scipy(n, rows, cols)


def _circulant_rows_cols(n, offsets):
    i = np.arange(n)
    return (np.concatenate([i for _ in offsets]),
            np.concatenate([(i + d) % n for d in offsets]))


@given(st.integers(0, 2**32 - 1), st.integers(1, 40), st.floats(0.01, 0.3))
def test_bipartite_matching_equals_scipy_and_networkx_on_sparse_random_graphs(seed, n, p):
    rng = np.random.default_rng(seed)
    rows, cols = np.nonzero(rng.random((n, n)) < p)
    _assert_maximum(n, rows, cols)


@given(st.integers(0, 2**32 - 1), st.integers(4, 48), st.integers(1, 6), st.floats(0.0, 0.5))
def test_bipartite_matching_is_maximum_on_banded_circulants(seed, n, band, drop):
    # the layered shape a ring plan's circuit counts give: forward offsets 1..band and
    # the half-ring offset, with some edges gone (deficient, long augmenting paths)
    rows, cols = _circulant_rows_cols(n, sorted({*range(1, band + 1), n // 2}))
    keep = np.random.default_rng(seed).random(len(rows)) >= drop
    _assert_maximum(n, rows[keep], cols[keep])


def test_decomposing_a_banded_circulant_of_1024_gpus_stays_within_hopcroft_karp_bounds(
        monkeypatch):
    # forward offsets 1..15 and 512 on 1,024 GPUs, 16 switches: from the second
    # switch on, scipy's maximum_bipartite_matching runs for minutes on these graphs
    import fabricopt.algorithms.circuits as circuits
    from fabricopt.algorithms._matching import hopcroft_karp

    n, switches = 1024, 16
    rows, cols = _circulant_rows_cols(n, [*range(1, 16), n // 2])
    counts = np.zeros((n, n), dtype=np.int64)
    counts[rows, cols] = 1
    reads = []

    def counted(r, c, size):
        key = np.unique(np.asarray(r) * size + np.asarray(c))
        ptr = np.searchsorted(key, np.arange(size + 1) * size).tolist()
        partner, edge_reads = hopcroft_karp(ptr, (key % size).tolist(), size)
        reads.append((edge_reads, len(key)))
        return np.array(partner)

    monkeypatch.setattr(circuits, "perfect_bipartite_matching", counted)
    configs = circuits.decompose(counts, switches)
    assert len(reads) == switches
    for edge_reads, edges in reads:
        assert edge_reads <= (2 * np.sqrt(n) + 2) * (2 * edges + n)
    got = np.zeros_like(counts)
    for config in configs:
        assert len({j for j in config if j is not None}) == sum(j is not None for j in config)
        for i, j in enumerate(config):
            if j is not None:
                got[i, j] += 1
    assert (got == counts).all()


def test_repeated_weighted_matchings_come_from_the_cache_as_fresh_lists():
    from fabricopt.algorithms import _matching

    _matching._max_weight_matching.cache_clear()
    edges, weights = [(0, 1), (1, 2), (2, 3)], [2, 3, 2]
    first = max_weight_matching(4, edges, weights)
    first.append((9, 9))                     # a caller may extend its answer
    again = max_weight_matching(4, [(0, 1), (1, 2), (2, 3)], [2, 3, 2])
    assert again == [(0, 1), (2, 3)]
    assert _matching._max_weight_matching.cache_info().hits == 1
    assert max_weight_matching(4, edges, [2, 5, 2]) == [(1, 2)]


# --- LP pruning before the blossom -------------------------------------------------

def _all_maximum_matchings(n, edges, weights):
    """Every maximum-weight matching, by enumeration (graphs of a few nodes)."""
    best, found = 0, [frozenset()]

    def extend(k, chosen, used, weight):
        nonlocal best, found
        if k == len(edges):
            if weight > best:
                best, found = weight, [frozenset(chosen)]
            elif weight == best:
                found.append(frozenset(chosen))
            return
        extend(k + 1, chosen, used, weight)
        u, v = edges[k]
        if u not in used and v not in used:
            extend(k + 1, chosen + [k], used | {u, v}, weight + weights[k])

    extend(0, [], frozenset(), 0)
    return best, found


def _networkx_weight(n, edges, weights):
    graph = nx.Graph()
    graph.add_nodes_from(range(n))
    graph.add_weighted_edges_from((u, v, w) for (u, v), w in zip(edges, weights))
    return sum(graph[u][v]["weight"] for u, v in nx.max_weight_matching(graph))


@pytest.fixture
def pruned_always(monkeypatch):
    """Send every graph through the LP pruning, whatever its size."""
    from fabricopt.algorithms import _matching

    monkeypatch.setattr(_matching, "PRUNE_MIN_EDGES", 0)
    _matching._max_weight_matching.cache_clear()
    yield
    _matching._max_weight_matching.cache_clear()


_small_weighted_graphs = st.integers(2, 8).flatmap(lambda n: st.tuples(
    st.just(n),
    st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), min_size=1,
             max_size=20),
    st.lists(st.integers(1, 6), min_size=20, max_size=20),   # few values: many ties
    st.sampled_from([1, 3, 2**40, 10**12, 2**90])))


@given(_small_weighted_graphs)
def test_pruning_keeps_every_edge_of_every_maximum_matching(graph):
    from fabricopt.algorithms._matching import maximum_matching_edges

    n, pairs, values, scale = graph
    edges = sorted({(min(u, v), max(u, v)) for u, v in pairs if u != v})
    weights = [w * scale for w in values[:len(edges)]]
    if not edges:
        return
    keep = set(maximum_matching_edges(n, edges, weights))
    best, optima = _all_maximum_matchings(n, edges, weights)
    for optimum in optima:
        assert optimum <= keep, (sorted(optimum - keep), best)


def _pruned_matching(n, edges, weights):
    """The path :func:`max_weight_matching` takes on graphs of many edges."""
    from fabricopt.algorithms import _matching

    keep = _matching.maximum_matching_edges(n, edges, weights)
    return list(_matching._blossom_by_component(n, [edges[k] for k in keep],
                                                [weights[k] for k in keep]))


@given(st.integers(0, 2**32 - 1), st.integers(2, 14), st.floats(0.2, 1.0))
def test_pruned_matching_has_networkx_weight(seed, n, p):
    edges, values, divisors = _random_graph(seed, n, p)
    if not edges:
        return
    weights = integer_weights(values, divisors)
    got = _pruned_matching(n, edges, weights)
    weight = dict(zip(edges, weights))
    assert _is_matching(got) and all(e in weight for e in got)
    assert sum(weight[e] for e in got) == _networkx_weight(n, edges, weights)


@pytest.mark.parametrize("name, graph", [
    ("petersen", nx.petersen_graph()),
    ("complete 7", nx.complete_graph(7)),
    ("complete 8", nx.complete_graph(8)),
    ("odd cycles joined", nx.disjoint_union_all([nx.cycle_graph(5), nx.cycle_graph(3),
                                                 nx.cycle_graph(7)])),
    ("odd wheel", nx.wheel_graph(8)),
])
@pytest.mark.parametrize("base", [0, 2**95])
def test_pruned_matching_on_graphs_whose_lp_is_fractional(pruned_always, name, graph, base):
    # unit weights leave the matching LP fractional on odd cycles; a base of 2**95
    # makes weights equal in a float but not as integers (the proof must still hold)
    edges = sorted((min(u, v), max(u, v)) for u, v in graph.edges)
    weights = [base + 1 + (k % 3) for k in range(len(edges))]
    n = graph.number_of_nodes()
    got = max_weight_matching(n, edges, weights)
    weight = dict(zip(edges, weights))
    assert _is_matching(got)
    assert sum(weight[e] for e in got) == _networkx_weight(n, edges, weights)


@pytest.mark.parametrize("scale", [1, 2**40, 2**80])
def test_mp_matching_is_the_same_pruned_or_whole(monkeypatch, scale):
    # the shape topoopt's rounds produce: a generated instance's MP traffic, whose
    # weights are all distinct, so the maximum-weight matching is unique
    from fabricopt.algorithms import _matching
    from fabricopt.algorithms.topology.topoopt import mp_matching
    from fabricopt.problems.topology import generate

    traffic = generate(seed=3, servers=128, degree=8, groups=1, mp_peers=4).traffic_csr
    traffic = traffic * scale
    answers = []
    for threshold in (10**9, 0):
        monkeypatch.setattr(_matching, "PRUNE_MIN_EDGES", threshold)
        _matching._max_weight_matching.cache_clear()
        answers.append(mp_matching(traffic, 4, np.random.default_rng(0)).toarray())
    _matching._max_weight_matching.cache_clear()
    assert (answers[0] == answers[1]).all()
