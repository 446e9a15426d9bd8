"""Compiled matching kernels against networkx (independent pure-Python implementations)."""

from fractions import Fraction

import networkx as nx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fabricopt.algorithms._matching import (integer_weights, max_weight_matching,
                                            perfect_bipartite_matching)


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
