"""Our placement heuristics: round-robin, the peer counter, and the local search."""

import numpy as np
from hypothesis import given, settings, strategies as st

from fabricopt.algorithms.placement.local_search import Peers, local_search, round_robin
from fabricopt.algorithms.placement.sipml import sipml
from fabricopt.problems import check, evaluate
from fabricopt.problems.placement import PlacementInstance, SubOp, generate, peer_sets
from fabricopt.bounds.placement import lower_bound
from placement_cases import brute_force_optimum, small_instances


@given(small_instances(max_ops=10, max_gpus=6))
def test_round_robin_is_feasible(inst):
    solution = round_robin(inst)
    assert check(inst, solution)
    assert set(solution.gpu.values()) <= set(range(min(inst.gpus, inst.max_peers + 1)))


def test_round_robin_deals_in_turn():
    inst = PlacementInstance(3, 2, 8.0, [SubOp(f"x{i}", 1.0) for i in range(5)])
    assert list(round_robin(inst).gpu.values()) == [0, 1, 2, 0, 1]


@settings(max_examples=20)
@given(seed=st.integers(0, 10**6), moves=st.lists(st.tuples(st.integers(0, 39),
                                                           st.integers(0, 7)), max_size=30))
def test_peers_tracks_the_true_degree(seed, moves):
    inst = generate(seed, ops=40, gpus=8, max_peers=2)
    gpu = [0] * inst.size
    peers = Peers(inst, gpu)
    for v, g in moves:
        feasible = peers.move(v, g)
        gpu[v] = g
        sends, receives = peer_sets(inst, gpu)
        assert feasible == (max(map(len, sends + receives)) <= inst.max_peers)
        assert peers.out_peers.tolist() == [len(s) for s in sends]
        assert peers.in_peers.tolist() == [len(r) for r in receives]


def start_gpu(inst):
    solution, _ = sipml(inst)
    return solution, [solution.gpu[op.id] for op in inst.ops]


@given(small_instances(max_ops=8, max_gpus=4), st.integers(0, 3))
def test_local_search_is_feasible_and_never_worse(inst, seed):
    start, gpu = start_gpu(inst)
    solution, info = local_search(inst, gpu, seed=seed, max_evals=300)
    assert check(inst, solution)
    assert evaluate(inst, solution) <= evaluate(inst, start) * (1 + 1e-12)
    assert info["evals"] <= 300


@settings(max_examples=15)
@given(small_instances(max_ops=5, max_gpus=3))
def test_local_search_is_bounded_by_the_optimum(inst):
    _, gpu = start_gpu(inst)
    solution, _ = local_search(inst, gpu, max_evals=300)
    optimum = brute_force_optimum(inst)
    assert lower_bound(inst) <= optimum * (1 + 1e-12)
    assert optimum <= evaluate(inst, solution) * (1 + 1e-12)


def test_local_search_is_deterministic_per_seed():
    inst = generate(7, ops=40, gpus=8, max_peers=2)
    _, gpu = start_gpu(inst)
    runs = [local_search(inst, gpu, seed=s, max_evals=400) for s in (1, 1, 2)]
    assert runs[0][0] == runs[1][0] and runs[0][1] == runs[1][1]
    assert all(check(inst, sol) for sol, _ in runs)


def test_local_search_improves_sipml_on_average():
    gains = []
    for seed in range(8):
        inst = generate(seed, ops=12, gpus=4, max_peers=2)
        start, gpu = start_gpu(inst)
        solution, info = local_search(inst, gpu, seed=seed)
        gains.append(evaluate(inst, start) / evaluate(inst, solution))
        assert info["restarts"] <= 20
    assert min(gains) >= 1.0 and np.mean(gains) > 1.02


def test_local_search_respects_a_time_limit():
    inst = generate(3, ops=300, gpus=16, max_peers=3)
    _, gpu = start_gpu(inst)
    solution, info = local_search(inst, gpu, max_evals=10**6, time_limit=0.3)
    assert check(inst, solution) and info["evals"] < 10**6
