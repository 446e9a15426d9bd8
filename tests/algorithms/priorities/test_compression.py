"""Crux's compression DP against brute force, Figure 13, and the ranking baselines."""

import itertools

import numpy as np
import pytest
from hypothesis import given, strategies as st

from fabricopt.algorithms.priorities.compression import (Dag, best_split, compress,
                                                         compress_instance, cut_value,
                                                         random_topological_order, rank_instance,
                                                         ranking, sincronia_levels, varys_levels)
from fabricopt.algorithms.priorities.compression import (_DensePrefix, _best_split, _monotone_row,
                                                         _SparsePrefix)
from fabricopt.problems import check, evaluate
from fabricopt.problems.priorities import PrioritiesInstance, dag_edges, generate

# Figure 13: J1 > J2 > J3 > J4; J1, J2 share link A; J3, J4 share link B; K = 2.
FIG13 = PrioritiesInstance(2, [{"id": f"J{k + 1}", "priority": 4 - k, "intensity": 4 - k}
                               for k in range(4)], [["J1", "J2"], ["J3", "J4"]])


@pytest.mark.parametrize("method, level, cut", [
    (lambda: rank_instance(FIG13, "sincronia"), [1, 0, 0, 0], 4.0),   # I1
    (lambda: rank_instance(FIG13, "varys"), [1, 1, 0, 0], 0.0),       # nothing
    (lambda: compress_instance(FIG13), [1, 0, 1, 0], 6.0),            # I1 + I3
])
def test_figure13(method, level, cut):
    sol = method()
    assert [sol.level[f"J{k + 1}"] for k in range(4)] == level
    assert check(FIG13, sol) and evaluate(FIG13, sol) == cut


def test_the_priority_order_alone_cannot_reach_the_optimum():
    dag = Dag(4, FIG13.edges)
    assert best_split(dag, np.arange(4), 2)[0] == 4.0   # max(I1, I3) on J1,J2,J3,J4


@st.composite
def dags(draw, max_n=7):
    n = draw(st.integers(1, max_n))
    priority = draw(st.permutations(range(n)))
    intensity = draw(st.lists(st.sampled_from([0.0, 1.0, 2.0, 3.0, 5.0, 8.0]),
                              min_size=n, max_size=n))
    pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=12))
    edges = dag_edges([f"j{k}" for k in range(n)], priority, intensity, pairs)
    return n, edges


def all_splits(order, levels):
    """Every split of ``order`` into at most ``levels`` consecutive non-empty blocks."""
    n = len(order)
    for k in range(1, min(levels, n) + 1):
        for cuts in itertools.combinations(range(1, n), k - 1):
            bounds = list(cuts) + [n]
            level = np.zeros(n, dtype=int)
            start = 0
            for b, end in enumerate(bounds):
                level[order[start:end]] = levels - 1 - b
                start = end
            yield level


def topological_orders(n, edges):
    preds = {j: {hi for hi, lo, _ in edges if lo == j} for j in range(n)}
    for perm in itertools.permutations(range(n)):
        pos = {j: p for p, j in enumerate(perm)}
        if all(pos[hi] < pos[lo] for hi, lo, _ in edges):
            yield np.array(perm)


@given(dags(), st.integers(1, 4), st.sampled_from(["monotone", "dense"]), st.randoms())
def test_dp_equals_brute_force_over_the_splits_of_one_order(case, levels, split, rnd):
    n, edges = case
    dag = Dag(n, edges)
    order = random_topological_order(dag, np.random.default_rng(rnd.randint(0, 999)))
    value, bounds = best_split(dag, order, levels, split=split)
    best = max(cut_value(edges, level) for level in all_splits(order, levels))
    assert value == pytest.approx(best)
    assert bounds[-1] == n and len(bounds) <= levels


@given(dags(max_n=6), st.integers(1, 4))
def test_best_over_all_topological_orders_is_the_best_valid_k_cut(case, levels):
    """Theorems 2 and 3: sequence K-cuts of all topological orders = all valid K-cuts."""
    n, edges = case
    dag = Dag(n, edges)
    via_orders = max(best_split(dag, order, levels)[0] for order in topological_orders(n, edges))
    brute = 0.0
    for level in itertools.product(range(levels), repeat=n):
        if all(level[hi] >= level[lo] for hi, lo, _ in edges):
            brute = max(brute, cut_value(edges, level))
    assert via_orders == pytest.approx(brute)


@st.composite
def float_dags(draw):
    n = draw(st.integers(2, 40))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    pairs = [(a, b) for a in range(n) for b in range(a + 1, n) if rng.random() < 0.3]
    return n, dag_edges([f"j{k:02d}" for k in range(n)], rng.normal(size=n).tolist(),
                        rng.lognormal(size=n).tolist(), pairs)


@given(float_dags(), st.integers(1, 8), st.integers(0, 100))
def test_monotone_equals_dense_and_output_is_valid(case, levels, seed):
    n, edges = case
    v1, l1 = compress(n, edges, levels, seed=seed, split="monotone")
    v2, l2 = compress(n, edges, levels, seed=seed, split="dense")
    assert v1 == pytest.approx(v2, rel=1e-9)
    for level in (l1, l2):
        assert all(level[hi] >= level[lo] for hi, lo, _ in edges)
        assert level.min() >= 0 and level.max() < levels
        assert cut_value(edges, level) == pytest.approx(max(v1, 0.0), rel=1e-9)


def test_compress_is_seeded():
    n, edges = 30, dag_edges([f"j{k}" for k in range(30)], list(range(30)), [1.0] * 30,
                             [(a, (a * 7 + 3) % 30) for a in range(30)])
    a = compress(n, edges, 3, seed=5)[1].tolist()
    assert a == compress(n, edges, 3, seed=5)[1].tolist()


def test_cycles_are_rejected():
    with pytest.raises(ValueError, match="has a cycle"):
        compress(2, [(0, 1, 1.0), (1, 0, 1.0)], 2)


@pytest.mark.parametrize("n, levels, sincronia, varys", [
    (5, 3, [2, 1, 0, 0, 0], [2, 2, 1, 1, 0]),
    (2, 4, [3, 2], [3, 2]),
    (3, 1, [0, 0, 0], [0, 0, 0]),
])
def test_ranking_baselines(n, levels, sincronia, varys):
    rank = list(range(n))
    assert sincronia_levels(rank, levels).tolist() == sincronia
    assert varys_levels(rank, levels).tolist() == varys


def test_ranking_breaks_ties_by_id():
    assert ranking(["b", "a", "c"], [1.0, 1.0, 2.0]) == [2, 1, 0]


@given(st.integers(0, 10**6), st.integers(1, 30), st.integers(1, 5))
def test_every_priorities_heuristic_passes_check(seed, jobs, levels):
    inst = generate(seed, jobs=jobs, levels=levels)
    for sol in (compress_instance(inst, seed=seed), rank_instance(inst, "sincronia"),
                rank_instance(inst, "varys")):
        assert check(inst, sol), check(inst, sol).reason
    assert compress_instance(inst, seed=seed) == compress_instance(inst, seed=seed)


# The near-linear-memory DP against today's: the same divide and conquer reading the
# dense (n+1)^2 prefix-sum matrix (the old implementation, kept as the oracle).


@st.composite
def integer_dags(draw):
    n = draw(st.integers(1, 60))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    density = draw(st.sampled_from([0.02, 0.1, 0.4]))
    pairs = [(a, b) for a in range(n) for b in range(a + 1, n) if rng.random() < density]
    return n, dag_edges([f"j{k:02d}" for k in range(n)], rng.normal(size=n).tolist(),
                        rng.integers(0, 4, size=n).astype(float).tolist(), pairs)


@given(integer_dags(), st.integers(0, 1000))
def test_sparse_prefix_answers_chains_of_runs_like_the_dense_matrix(case, seed):
    n, edges = case
    dag = Dag(n, edges)
    rng = np.random.default_rng(seed)
    order = random_topological_order(dag, rng)
    dense, sparse = _DensePrefix(dag, order), _SparsePrefix(dag, order)
    assert (sparse.diagonal() == dense.diagonal()).all()
    # a chain of runs as the divide and conquer asks: columns i increasing, run starts
    # j_lo non-decreasing, j_lo <= i - 1, runs inside 0..i-1
    cols = np.unique(rng.integers(1, n + 1, size=rng.integers(1, n + 1)))
    j_lo = np.minimum(np.sort(rng.integers(0, n, size=len(cols))), cols - 1)
    j_lo = np.maximum.accumulate(j_lo)
    lengths = np.array([rng.integers(1, c - j + 1) for j, c in zip(j_lo, cols)])
    assert (sparse.entries(j_lo, cols) == dense.S[j_lo, cols]).all()
    shuffled = rng.permutation(len(cols))     # columns() takes the runs in any order
    args = cols[shuffled], j_lo[shuffled], lengths[shuffled]
    assert (sparse.columns(*args) == dense.columns(*args)).all()


@given(integer_dags(), st.integers(1, 9), st.integers(0, 1000))
def test_same_split_as_the_dense_dp_on_integer_weights(case, levels, seed):
    n, edges = case
    dag = Dag(n, edges)
    order = random_topological_order(dag, np.random.default_rng(seed))
    old = _best_split(order, levels, _monotone_row, _DensePrefix(dag, order))
    assert best_split(dag, order, levels) == old          # exact sums: identical


@given(float_dags(), st.integers(1, 8), st.integers(0, 100))
def test_same_value_as_the_dense_dp_on_float_weights(case, levels, seed):
    n, edges = case
    dag = Dag(n, edges)
    order = random_topological_order(dag, np.random.default_rng(seed))
    old_value, _ = _best_split(order, levels, _monotone_row, _DensePrefix(dag, order))
    assert best_split(dag, order, levels)[0] == pytest.approx(old_value, rel=1e-12)


@pytest.mark.parametrize("seed, jobs, levels", [(0, 300, 8), (1, 120, 4), (2, 60, 2)])
def test_same_levels_as_the_dense_dp_on_generated_instances(seed, jobs, levels, monkeypatch):
    inst = generate(seed, jobs=jobs, levels=levels)
    new = compress_instance(inst, seed=seed)
    monkeypatch.setattr("fabricopt.algorithms.priorities.compression._SparsePrefix", _DensePrefix)
    assert compress_instance(inst, seed=seed) == new


def test_compress_search_uncut_is_compress_and_a_passed_deadline_splits_one_order():
    from fabricopt.algorithms.priorities.compression import compress, compress_search

    edges = [(0, 1, 4.0), (0, 2, 1.0), (2, 3, 2.0), (1, 3, 3.0), (4, 5, 1.5)]
    value, level = compress(6, edges, 3, orders=7, seed=2)
    uncut = compress_search(6, edges, 3, orders=7, seed=2, deadline=None)
    assert uncut[0] == value and uncut[1].tolist() == level.tolist() and uncut[2] == 7
    first = compress_search(6, edges, 3, orders=7, seed=2, deadline=0.0)
    assert first[2] == 1
    one_value, one_level = compress(6, edges, 3, orders=1, seed=2)
    assert first[0] == one_value and first[1].tolist() == one_level.tolist()


@given(integer_dags(), st.integers(1, 6), st.integers(0, 1000))
def test_the_last_level_alone_gives_the_full_rows_last_entry(case, levels, seed):
    # _best_split asks only f(n, K) of the last level: it must be the full row's f(n, K)
    # and its largest optimal split (integer weights: the sums are exact)
    n, edges = case
    dag = Dag(n, edges)
    order = random_topological_order(dag, np.random.default_rng(seed))
    prefix = _SparsePrefix(dag, order)
    base = np.full(n + 1, -np.inf)
    base[0] = 0.0
    base = base - prefix.diagonal()
    for k in range(1, min(levels, n) + 1):
        full, full_arg = _monotone_row(base, prefix, k, n)
        last, last_arg = _monotone_row(base, prefix, k, n, only_last=True)
        assert last[n] == full[n] and last_arg[n] == full_arg[n]
        base = full - prefix.diagonal()
