"""The compiled list schedule against the pure-Python loops it mirrors: the local
search's evaluation (makespan, total end, ends and binding ops), ``schedule_times`` and
the schedules ``sipml`` and ``unconstrained`` return, bit for bit."""

import numpy as np
from hypothesis import given, settings, strategies as st

from fabricopt.algorithms._budget import Budget
from fabricopt.algorithms.placement._schedule_kernel import (list_schedule, parent_arrays,
                                                             schedule_arrays)
from fabricopt.algorithms.placement.sipml import (RINGS, algorithm1, degree_safe_gpus,
                                                  sipml, unconstrained)
from fabricopt.algorithms.placement.circulant_schedule import longest_work_first
from fabricopt.algorithms.placement.local_search import _Schedule
from fabricopt.problems.placement import generate, schedule, schedule_times
from placement_cases import small_instances


def assert_same_schedules(inst, order, gpu):
    compiled = _Schedule(inst, order, Budget()).run(gpu)
    reference = _Schedule(inst, order, Budget(), compiled=False).run(gpu)
    assert compiled == reference
    start, end, _ = list_schedule(inst.gpus, np.array(order, dtype=np.int64),
                                  np.array(gpu, dtype=np.int64), *parent_arrays(inst),
                                  inst.compute)
    assert (start.tolist(), end.tolist()) == schedule_times(inst, gpu, order)
    (start, end), = schedule_arrays(inst, {0: (gpu, order)}).values()
    assert_bits_equal(start, end, *schedule_times(inst, gpu, order))


def assert_bits_equal(*arrays):
    """Each pair of ``arrays`` holds the same float64 bits (-0.0 and 0.0 apart)."""
    half = len(arrays) // 2
    for got, want in zip(arrays[:half], arrays[half:]):
        assert np.asarray(got, float).tobytes() == np.asarray(want, float).tobytes()


def python_schedule(inst, solution, order):
    """The starts of ``schedule``'s Python loop for the solution's GPUs, by op."""
    gpu = [solution.gpu[op.id] for op in inst.ops]
    return schedule(inst, gpu, order).start_s


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), ops=st.integers(1, 2000), gpus=st.integers(1, 32),
       peers=st.integers(1, 7))
def test_sipml_and_unconstrained_schedule_as_the_python_loop(seed, ops, gpus, peers):
    inst = generate(seed, ops=ops, gpus=gpus, max_peers=min(peers, gpus))
    order = inst.topological_order()        # the placement order of every ring
    for rings in RINGS:
        solution, info = sipml(inst, rings=rings)
        # the placement of the ring kept is algorithm1's on that ring
        ring = info["ring_gpus"]
        placed = [0] * inst.size if ring == 1 else algorithm1(
            inst, **({} if ring == inst.gpus else {"gpus": ring, "degree": ring}))[0]
        assert [solution.gpu[op.id] for op in inst.ops] == placed
        want = python_schedule(inst, solution, order)
        assert list(solution.start_s) == list(want)
        assert_bits_equal(list(solution.start_s.values()), list(want.values()))
    solution = unconstrained(inst)
    safe = degree_safe_gpus(inst)
    assert [solution.gpu[op.id] for op in inst.ops] == algorithm1(inst, gpus=safe,
                                                                  degree=safe)[0]
    want = python_schedule(inst, solution, order)
    assert_bits_equal(list(solution.start_s.values()), list(want.values()))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), ops=st.integers(1, 3000), gpus=st.integers(1, 64),
       critical=st.booleans())
def test_compiled_schedule_matches_the_reference_on_generated_graphs(seed, ops, gpus, critical):
    inst = generate(seed, ops=ops, gpus=gpus, max_peers=min(3, gpus))
    order = longest_work_first(inst) if critical else inst.topological_order()
    gpu = np.random.default_rng(seed).integers(0, gpus, inst.size).tolist()
    assert_same_schedules(inst, order, gpu)


@settings(max_examples=60, deadline=None)
@given(inst=small_instances(max_ops=12, max_gpus=6), data=st.data())
def test_compiled_schedule_matches_the_reference_on_small_dags(inst, data):
    # zero compute, zero-byte deps and ties between parents: the binding op is the
    # first of the parents arriving last, as in the Python loop
    gpu = data.draw(st.lists(st.integers(0, inst.gpus - 1), min_size=inst.size,
                             max_size=inst.size))
    assert_same_schedules(inst, inst.topological_order(), gpu)
