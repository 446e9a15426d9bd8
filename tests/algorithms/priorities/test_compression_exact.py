"""The exact priority compression against brute force, the MILP, a min-cost flow
(networkx), and the 6-job case that Crux's random BFS orders cannot solve."""

import itertools

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, strategies as st

import fabricopt
from fabricopt.algorithms.priorities.compression import (Dag, best_split, cut_value,
                                                         random_topological_order)
from fabricopt.algorithms.priorities.compression_exact import (_threshold_round, exact_compress,
                                                               exact_instance,
                                                               longest_path_levels)
from fabricopt.problems import check, evaluate
from fabricopt.problems.priorities import PrioritiesInstance, generate

from crux_helpers import brute_force_priorities
from .test_compression import dags

# A counterexample to the DP, K = 2: the optimum 29 puts {5, 4, 2} high.
SIX = [(2, 1, 8.0), (4, 0, 9.0), (4, 2, 6.0), (5, 0, 4.0), (5, 3, 8.0), (5, 4, 5.0)]


def brute_force(n, edges, levels):
    best = 0.0
    for level in itertools.product(range(levels), repeat=n):
        if all(level[hi] >= level[lo] for hi, lo, _ in edges):
            best = max(best, cut_value(edges, level))
    return best


def bfs_orders(n, edges):
    """Every order :func:`random_topological_order` can return: any order of the
    sources, then of each batch of nodes one node's removal releases."""
    children = {v: [lo for hi, lo, _ in edges if hi == v] for v in range(n)}
    indeg0 = [sum(1 for _, lo, _ in edges if lo == v) for v in range(n)]

    def extend(order, head, indeg):
        if head == len(order):
            if len(order) == n:
                yield tuple(order)
            return
        indeg = list(indeg)
        released = []
        for c in children[order[head]]:
            indeg[c] -= 1
            if indeg[c] == 0:
                released.append(c)
        for batch in itertools.permutations(released):
            yield from extend(order + list(batch), head + 1, indeg)

    sources = [v for v in range(n) if indeg0[v] == 0]
    for start in itertools.permutations(sources):
        yield from extend(list(start), 0, indeg0)


def test_random_bfs_orders_cannot_reach_the_optimum_of_the_six_job_case():
    orders = set(bfs_orders(6, SIX))
    dag = Dag(6, SIX)
    best_bfs = max(best_split(dag, np.array(order), 2)[0] for order in orders)
    assert len(orders) == 4 and best_bfs == 27.0
    # the enumeration covers what the sampler draws
    drawn = {tuple(random_topological_order(dag, np.random.default_rng(s)).tolist())
             for s in range(100)}
    assert drawn == orders
    value, level, bound = exact_compress(6, SIX, 2)
    assert value == bound == brute_force(6, SIX, 2) == 29.0
    assert {v for v in range(6) if level[v] == 1} == {2, 4, 5}


def test_crux_stays_below_the_optimum_of_a_five_job_instance_however_many_orders():
    # SIX gives one job out-edges of different weights; a priorities instance weighs
    # them all by the job's intensity. This one (found by search) is a real instance:
    # the best BFS order cuts 8, the optimum 11.
    priority, intensity = [3, 2, 1, 4, 0], [2, 6, 2, 3, 8]
    inst = PrioritiesInstance(2, [{"id": f"j{k}", "priority": priority[k],
                                   "intensity": intensity[k]} for k in range(5)],
                              [["j0", "j1"], ["j0", "j3"], ["j0", "j4"], ["j1", "j4"],
                               ["j2", "j3"]])
    dag = Dag(5, inst.edges)
    assert max(best_split(dag, np.array(o), 2)[0] for o in bfs_orders(5, inst.edges)) == 8.0
    assert fabricopt.solve(inst, "crux", orders=200).objective == 8.0
    exact = fabricopt.solve(inst, "exact")
    assert exact.status == "optimal" and exact.objective == 11.0 == brute_force_priorities(inst)


@given(dags(), st.integers(1, 4))
def test_exact_equals_brute_force_and_proves_it(case, levels):
    n, edges = case
    value, level, bound = exact_compress(n, edges, levels)
    assert value == pytest.approx(brute_force(n, edges, levels))
    assert bound == pytest.approx(value)
    assert all(level[hi] >= level[lo] for hi, lo, _ in edges)
    assert level.min() >= 0 and level.max() < levels
    assert cut_value(edges, level) == value


def min_cost_flow_optimum(n, edges, levels):
    """W + the min-cost flow of the dual network (module docstring), by networkx."""
    g = nx.DiGraph()
    for v in range(n):
        g.add_edge("s", ("in", v), weight=levels - 1)
        g.add_edge(("in", v), v, weight=0)
        g.add_edge(v, "t", weight=0)
    for e, (hi, lo, w) in enumerate(edges):
        g.add_edge(hi, ("e", e), weight=-1, capacity=int(w))   # recovers w_e at most
        g.add_edge(("e", e), lo, weight=0)
        g.add_edge(hi, ("free", e), weight=0)
        g.add_edge(("free", e), lo, weight=0)
    g.add_edge("t", "s", weight=0)
    return sum(w for _, _, w in edges) + nx.network_simplex(g)[0]


@given(dags(), st.integers(1, 4))
def test_exact_equals_total_weight_plus_a_min_cost_flow(case, levels):
    n, edges = case
    assert exact_compress(n, edges, levels)[0] == pytest.approx(
        min_cost_flow_optimum(n, edges, levels))


@pytest.mark.parametrize("seed, jobs, levels", [(0, 12, 3), (1, 30, 4), (2, 60, 2), (3, 200, 8)])
def test_exact_equals_the_milp(seed, jobs, levels):
    inst = generate(seed, jobs=jobs, levels=levels)
    exact = fabricopt.solve(inst, "exact")
    milp = fabricopt.solve(inst, "milp")
    assert exact.status == milp.status == "optimal"
    assert exact.objective == pytest.approx(milp.objective, rel=1e-9)
    assert check(inst, exact.solution)


@pytest.mark.parametrize("seed", [0, 1])
def test_exact_equals_brute_force_on_generated_instances(seed):
    inst = generate(seed, jobs=7, levels=3, links=3)
    solution, bound = exact_instance(inst)
    assert evaluate(inst, solution) == pytest.approx(brute_force_priorities(inst)) == bound


@given(dags(max_n=6), st.integers(2, 4))
def test_threshold_rounding_of_a_fractional_optimum_is_optimal(case, levels):
    # the midpoint of two optimal level vectors is an optimal LP point (the LP
    # objective is concave and equals the integer optimum); rounding it loses nothing
    n, edges = case
    if not edges:
        return
    best = brute_force(n, edges, levels)
    optima = [np.array(level) for level in itertools.product(range(levels), repeat=n)
              if all(level[hi] >= level[lo] for hi, lo, _ in edges)
              and cut_value(edges, level) == best]
    x = (optima[0] + optima[-1]) / 2.0
    hi = np.array([e[0] for e in edges], dtype=np.int64)
    lo = np.array([e[1] for e in edges], dtype=np.int64)
    w = np.array([e[2] for e in edges])
    got, rounded = _threshold_round(x, hi, lo, w, levels - 1, best)
    assert got == pytest.approx(best)
    assert (rounded[hi] >= rounded[lo]).all() and rounded.max() < levels


def test_threshold_rounding_of_a_midpoint():
    # chain 0 -> 1 -> 2, K = 2: levels (1, 0, 0) and (1, 1, 0) both cut 1; their midpoint
    # (1, 0.5, 0) cuts 0.5 + 0.5 = 1 in the LP, and every threshold rounds it to one of them
    edges = [(0, 1, 1.0), (1, 2, 1.0)]
    hi, lo, w = np.array([0, 1]), np.array([1, 2]), np.array([1.0, 1.0])
    value, level = _threshold_round(np.array([1.0, 0.5, 0.0]), hi, lo, w, 1, 1.0)
    assert value == 1.0 and cut_value(edges, level) == 1.0
    assert exact_compress(3, edges, 2)[0] == 1.0


def test_edge_cases():
    assert exact_compress(3, [], 4)[0] == 0.0
    value, level, bound = exact_compress(2, [(0, 1, 3.0)], 1)
    assert (value, bound, level.tolist()) == (0.0, 0.0, [0, 0])
    # a chain of 3 nodes on 3 levels: the longest-path levels cut everything
    value, level, bound = exact_compress(3, [(0, 1, 2.0), (1, 2, 1.0)], 3)
    assert (value, bound, level.tolist()) == (3.0, 3.0, [2, 1, 0])
    with pytest.raises(ValueError, match="levels = 0: must be >= 1"):
        exact_compress(2, [(0, 1, 1.0)], 0)
    with pytest.raises(ValueError, match="weights must be finite and >= 0"):
        exact_compress(2, [(0, 1, -1.0)], 2)
    with pytest.raises(ValueError, match="has a cycle"):
        longest_path_levels(2, [(0, 1, 1.0), (1, 0, 1.0)])
