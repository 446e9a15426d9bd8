"""Circuits methods against independent truths: brute force, the MILP, König's theorem."""

import itertools

import numpy as np
import pytest
from hypothesis import assume, given, strategies as st

import fabricopt
from fabricopt import InfeasibleInstance
from fabricopt.algorithms.circuits import decompose, exact, exact_counts, greedy
from fabricopt.problems import check, evaluate
from fabricopt.problems.circuits import CircuitsInstance
from fabricopt.problems._transfer import links_needed, smallest_feasible_load
from fabricopt.testing import instances


def brute_force_optimum(inst):
    """Enumerate every count matrix with row/col sums <= Q (tiny cases only)."""
    n, q = inst.gpus, inst.switches
    pairs = [(i, j) for i in range(n) for j in range(n) if inst.traffic[i, j] > 0]
    if not pairs:
        return 0.0
    best = float("inf")
    for counts in itertools.product(range(1, q + 1), repeat=len(pairs)):
        c = np.zeros((n, n), int)
        for (i, j), k in zip(pairs, counts):
            c[i, j] = k
        if c.sum(axis=1).max() <= q and c.sum(axis=0).max() <= q:
            best = min(best, max(8 * inst.traffic[p] / (c[p] * inst.circuit_gbps * 1e9)
                                for p in pairs))
    return best


@given(instances("circuits", max_size=4, max_switches=3))
def test_exact_equals_brute_force(inst):
    assume(np.count_nonzero(inst.traffic) <= 6)
    sol = exact(inst)
    assert check(inst, sol)
    assert evaluate(inst, sol) == pytest.approx(brute_force_optimum(inst), rel=1e-9)


@given(instances("circuits", max_size=6, max_switches=3))
def test_greedy_equals_exact(inst):
    # greedy is optimal too (see its Notes): two independent exact algorithms agree.
    # Feasibility and bounds of every method: check_method in tests/testing/.
    assert evaluate(inst, greedy(inst)) == pytest.approx(evaluate(inst, exact(inst)), rel=1e-9)


def _dense_exact_counts(inst):
    """exact_counts by its docstring on N x N count matrices: every candidate load's
    counts in full, feasible when no row or column sum passes Q."""
    traffic, q = inst.traffic, inst.switches
    demanded = traffic > 0

    def counts_for(u):
        c = np.zeros(traffic.shape, dtype=np.int64)
        c[demanded] = links_needed(traffic[demanded], u, q)
        return c

    def feasible(u):
        c = counts_for(u)
        return c.sum(axis=1).max() <= q and c.sum(axis=0).max() <= q

    if not demanded.any():
        return np.zeros(traffic.shape, dtype=np.int64)
    return counts_for(smallest_feasible_load(traffic[demanded], q, feasible))


@given(instances("circuits", max_size=12, max_switches=6))
def test_exact_counts_equal_the_dense_bisection(inst):
    # infeasible instances raise before any counting (test_too_many_peers_is_infeasible)
    assume(max((inst.traffic > 0).sum(axis=1).max(), (inst.traffic > 0).sum(axis=0).max())
           <= inst.switches)
    assert np.array_equal(exact_counts(inst), _dense_exact_counts(inst))


@given(st.integers(1, 6), st.integers(1, 5), st.integers(0, 2**32 - 1))
def test_decompose_realizes_counts_exactly(n, q, seed):
    rng = np.random.default_rng(seed)
    counts = np.zeros((n, n), int)
    for _ in range(n * q * 2):  # random counts with row/col sums <= q
        i, j = rng.integers(n), rng.integers(n)
        if i != j and counts[i].sum() < q and counts[:, j].sum() < q:
            counts[i, j] += 1
    configs = decompose(counts, q)
    assert len(configs) == q
    got = np.zeros((n, n), int)
    for row in configs:
        targets = [j for j in row if j is not None]
        assert len(targets) == len(set(targets))          # a partial permutation
        assert all(j != i for i, j in enumerate(row) if j is not None)
        for i, j in enumerate(row):
            if j is not None:
                got[i, j] += 1
    assert (got == counts).all()


def test_decompose_rejects_overfull_rows():
    with pytest.raises(ValueError, match="exceeds switches = 1"):
        decompose(np.array([[0, 1, 1], [0, 0, 0], [0, 0, 0]]), 1)


def test_too_many_peers_is_infeasible():
    inst = CircuitsInstance(1, 100.0, [[0, 1, 1], [0, 0, 0], [0, 0, 0]])
    with pytest.raises(InfeasibleInstance, match="GPU 0 sends to 2 GPUs but has only 1 ports"):
        exact_counts(inst)
    for method in ("exact", "greedy", "milp"):
        assert fabricopt.solve(inst, method).status == "infeasible"


def test_exact_gives_heavier_pairs_more_circuits():
    inst = CircuitsInstance(4, 100.0, [[0, 3e6, 1e6], [0, 0, 0], [0, 0, 0]])
    c = exact_counts(inst)
    assert c[0, 1] == 3 and c[0, 2] == 1


def test_exact_survives_sizes_spanning_twenty_orders_of_magnitude():
    inst = CircuitsInstance(2, 100.0, [[0, 1e3, 3e-20], [0, 0, 0], [0, 0, 0]])
    sol = exact(inst)
    assert check(inst, sol)
    # GPU 0's two ports go one to each peer: 1e3 bytes over one 100 Gbps circuit
    assert evaluate(inst, sol) == pytest.approx(8e3 / 100e9, rel=1e-12)
    assert evaluate(inst, sol) == pytest.approx(brute_force_optimum(inst), rel=1e-12)
