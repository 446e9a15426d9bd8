"""The placement kind's array paths: instances built from trusted parts, solutions from
lists and the vectorized checker agree with the validating constructors and with the
checker's rules written as plain loops."""

import dataclasses
import json
import pickle
from types import MappingProxyType

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fabricopt import InvalidInstance, InvalidSolution
from fabricopt.problems.opgraph import OpGraph
from fabricopt.problems.placement import (FEASIBILITY_RTOL, Dep, PlacementInstance,
                                          PlacementSolution, SubOp, check, evaluate,
                                          generate, peer_sets, solution_arrays,
                                          split_op_graph)
from fabricopt.problems.placement import _busy_order, _distinct
from fabricopt.problems._array_mapping import ArrayMapping

from placement_cases import small_instances


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10 ** 6), st.integers(1, 60), st.integers(1, 8), st.integers(1, 8))
def test_a_split_graph_equals_the_validating_constructor(seed, ops, gpus, peers):
    inst = generate(seed=seed, ops=ops, gpus=gpus, max_peers=peers)
    again = PlacementInstance(inst.gpus, inst.max_peers, inst.link_gbps, inst.ops, inst.deps)
    assert inst == again and dict(inst.index) == dict(again.index)
    assert inst.compute.tolist() == again.compute.tolist()
    assert inst.topological_order() == again.topological_order()
    for name in ("compute", "_dep_bytes", "dep_src", "dep_dst"):
        mine, theirs = getattr(inst, name), getattr(again, name)
        assert mine.dtype == theirs.dtype and mine.tobytes() == theirs.tobytes()
        assert not mine.flags.writeable
    assert inst._ids == again._ids and list(inst.index.items()) == list(again.index.items())
    other = inst._with_scalars(inst.gpus, 1, 3.5)
    fresh = PlacementInstance(inst.gpus, 1, 3.5, inst.ops, inst.deps)
    assert other == fresh and other.ops is inst.ops
    assert other.delay_s.tolist() == fresh.delay_s.tolist() and other.parents == fresh.parents


def test_a_split_graph_with_a_bad_number_names_it_as_the_constructor_does():
    tiny = OpGraph([{"id": "a", "compute_s": 1e-300}])
    with pytest.raises(InvalidInstance, match=r"^ops\[0\]\.compute_s = 2\.5e-301: too small"):
        split_op_graph(tiny, {"a": 4}, gpus=4, max_peers=1, link_gbps=1.0)
    inst = split_op_graph(OpGraph([{"id": "a", "compute_s": 1.0}]), {"a": 2}, gpus=2,
                          max_peers=1, link_gbps=1.0)
    with pytest.raises(InvalidInstance, match=r"^link_gbps = 0\.0: must be > 0"):
        inst._with_scalars(2, 1, 0.0)
    with pytest.raises(InvalidInstance, match=r"^max_peers = 0: must be >= 1"):
        inst._with_scalars(2, 0, 1.0)


def test_a_solution_from_lists_equals_the_validating_constructor():
    sol = PlacementSolution._from_lists(["a", "b"], [0, 1], [0.0, 1.5])
    assert sol == PlacementSolution({"a": 0, "b": 1}, {"a": 0.0, "b": 1.5})
    assert type(sol.gpu["a"]) is int and type(sol.start_s["b"]) is float
    with pytest.raises(InvalidSolution, match=r"^gpu\['b'\] = -1: must be >= 0"):
        PlacementSolution._from_lists(["a", "b"], [0, -1], [0.0, 1.0])
    with pytest.raises(InvalidSolution, match=r"^start_s\['a'\] = inf: must be finite"):
        PlacementSolution._from_lists(["a", "b"], [0, 1], [float("inf"), 1.0])


def reference_reason(instance, gpu, start):
    """The checker's dep, overlap and degree rules as loops (None: all hold)."""
    end = start + instance.compute
    for k, dep in enumerate(instance.deps):
        u, v = instance.dep_src[k], instance.dep_dst[k]
        delay = float(instance.delay_s[k]) if gpu[u] != gpu[v] else 0.0
        ready = end[u] + delay
        if start[v] < ready - FEASIBILITY_RTOL * abs(ready):
            via = f" + transfer {delay:.6g}" if delay else ""
            return (f"dep {dep.src} -> {dep.dst}: {dep.dst!r} starts at {start[v]:.6g} "
                    f"before {dep.src!r} ends at {end[u]:.6g}{via} = {ready:.6g}")
    ids = [op.id for op in instance.ops]
    busy = np.flatnonzero(instance.compute > 0)
    order = busy[np.lexsort((end[busy], start[busy], gpu[busy]))]
    for a, b in zip(order[:-1], order[1:]):
        if gpu[a] == gpu[b] and start[b] < end[a] - FEASIBILITY_RTOL * abs(end[a]):
            return (f"GPU {gpu[a]}: ops {ids[a]!r} [{start[a]:.6g}, {end[a]:.6g}) and "
                    f"{ids[b]!r} [{start[b]:.6g}, {end[b]:.6g}) overlap")
    sends, receives = peer_sets(instance, gpu)
    for g in range(instance.gpus):
        for what, peers in (("sends to", sends[g]), ("receives from", receives[g])):
            if len(peers) > instance.max_peers:
                return (f"GPU {g} {what} {len(peers)} GPUs {sorted(peers)}, more than "
                        f"max_peers = {instance.max_peers}")
    return None


@settings(max_examples=150, deadline=None)
@given(small_instances(max_ops=9, max_gpus=4), st.data())
def test_the_checker_gives_the_first_broken_rule_of_the_loops(inst, data):
    gpu = np.array(data.draw(st.lists(st.integers(0, inst.gpus - 1), min_size=inst.size,
                                      max_size=inst.size)), dtype=np.int64)
    # starts one after another in topological order, some pulled earlier
    start = np.zeros(inst.size)
    t = 0.0
    for k in inst.topological_order():
        start[k] = t
        t += float(inst.compute[k]) + data.draw(st.sampled_from([0.0, 1.0, 1e9]))
    if data.draw(st.booleans()) and inst.size:
        start[data.draw(st.integers(0, inst.size - 1))] *= 0.5
    ids = [op.id for op in inst.ops]
    solution = PlacementSolution(dict(zip(ids, gpu.tolist())), dict(zip(ids, start.tolist())))
    verdict = check(inst, solution)
    expected = reference_reason(inst, gpu, start)
    assert verdict.feasible == (expected is None)
    assert verdict.reason == expected or expected is None
    # the same solution carrying its arrays gets the same verdict and makespan
    carried = PlacementSolution._of_instance(inst, gpu, start)
    assert carried == solution and check(inst, carried) == verdict
    assert evaluate(inst, carried) == evaluate(inst, solution)


def random_placement(seed, ops, gpus):
    """A generated instance and seeded random GPUs and start times for its ops."""
    inst = generate(seed=seed, ops=ops, gpus=gpus, max_peers=min(3, gpus))
    rng = np.random.default_rng(seed)
    return inst, rng.integers(0, gpus, inst.size), rng.uniform(0.0, 1.0, inst.size)


def carried_and_plain(inst, gpu, start):
    carried = PlacementSolution._of_instance(inst, gpu, start)
    return carried, PlacementSolution(dict(carried.gpu), dict(carried.start_s))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10 ** 6), st.integers(1, 400), st.integers(1, 16))
def test_a_solution_carries_the_arrays_of_its_mappings(seed, ops, gpus):
    inst, gpu, start = random_placement(seed, ops, gpus)
    carried, plain = carried_and_plain(inst, gpu, start)
    assert carried == plain and "_aligned" not in plain.__dict__
    for got, want in zip(solution_arrays(inst, carried), solution_arrays(inst, plain)):
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
        assert not got.flags.writeable
    assert check(inst, carried) == check(inst, plain)
    assert evaluate(inst, carried) == evaluate(inst, plain)
    # another instance of the same ids in another order reads the mappings, not the arrays
    flipped = PlacementInstance(inst.gpus, inst.max_peers, inst.link_gbps, inst.ops[::-1])
    again = solution_arrays(flipped, carried)
    assert again[0].tolist() == gpu[::-1].tolist() and again[1].tolist() == start[::-1].tolist()
    # the carried arrays are copies: changing the inputs changes nothing
    gpu[:] = 0
    start[:] = -1.0
    assert solution_arrays(inst, carried)[1].tolist() == list(carried.start_s.values())


def test_carried_arrays_are_checked_against_the_instance_read():
    inst = PlacementInstance(3, 1, 8.0, [SubOp("a", 1.0), SubOp("b", 2.0)])
    carried = PlacementSolution._of_instance(inst, [0, 2], [0.0, 1.0])
    fewer = inst._with_scalars(2, 1, 8.0)       # the same ops, two GPUs
    assert fewer.ops is inst.ops
    with pytest.raises(InvalidSolution, match=r"^gpu\['b'\] = 2: unknown GPU \(GPUs are 0\.\.1\)"):
        check(fewer, carried)
    with pytest.raises(InvalidSolution, match=r"^gpu\['b'\] = 2: unknown GPU"):
        evaluate(fewer, carried)
    other = PlacementInstance(3, 1, 8.0, [SubOp("a", 1.0), SubOp("c", 2.0)])
    with pytest.raises(InvalidSolution, match=r"^gpu\['b'\] = 2: unknown op id"):
        check(other, carried)
    with pytest.raises(InvalidSolution, match=r"^start_s\['a'\] = inf: must be finite"):
        PlacementSolution._of_instance(inst, [0, 1], [float("inf"), 1.0])


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10 ** 6), st.integers(1, 300),
       st.floats(1e-3, 1e6, allow_nan=False, allow_infinity=False))
def test_the_transfer_times_are_the_scalar_formula_dep_by_dep(seed, ops, link_gbps):
    inst = generate(seed=seed, ops=ops, gpus=8, max_peers=3)._with_scalars(8, 3, link_gbps)
    expected = [8.0 * d.bytes / (link_gbps * 1e9) for d in inst.deps]
    assert inst.delay_s.tobytes() == np.array(expected, dtype=float).tobytes()


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10 ** 6), st.integers(1, 200), st.integers(1, 16))
def test_a_carried_solution_s_mappings_read_as_the_proxies_of_their_dicts(seed, ops, gpus):
    inst, gpu, start = random_placement(seed, ops, gpus)
    carried = PlacementSolution._of_instance(inst, gpu, start)
    # checking and scoring read the arrays: no dict is made
    check(inst, carried), evaluate(inst, carried)
    assert carried.gpu._dict is None and carried.start_s._dict is None
    assert len(carried.gpu) == inst.size and carried.gpu._dict is None
    ids = [op.id for op in inst.ops]
    for lazy, values in ((carried.gpu, gpu.tolist()), (carried.start_s, start.tolist())):
        eager = MappingProxyType(dict(zip(ids, values)))
        assert isinstance(lazy, ArrayMapping)
        assert list(lazy.items()) == list(eager.items()) and list(lazy) == ids
        assert [type(v) for v in lazy.values()] == [type(v) for v in eager.values()]
        assert lazy == eager and eager == lazy and not (lazy != eager)
        assert lazy == dict(eager) and dict(eager) == lazy and lazy != {}
        assert repr(lazy) == repr(eager) and ids[-1] in lazy and "nope" not in lazy
        assert lazy.get("nope", 7) == 7 and lazy[ids[0]] == eager[ids[0]]
        assert list(reversed(lazy)) == list(reversed(eager))
        assert (lazy | {"x": 1}) == (eager | {"x": 1}) and ({"x": 1} | lazy) == ({"x": 1} | eager)
        copied = lazy.copy()
        assert type(copied) is dict and copied == eager
        copied[ids[0]] = -1                     # a copy: the mapping keeps its value
        assert lazy[ids[0]] == eager[ids[0]]
        with pytest.raises(TypeError):
            hash(lazy)
        with pytest.raises(TypeError):
            lazy[ids[0]] = 0
        with pytest.raises(TypeError):
            del lazy[ids[0]]
        assert pickle.loads(pickle.dumps(lazy)) == eager
    plain = PlacementSolution(dict(zip(ids, gpu.tolist())), dict(zip(ids, start.tolist())))
    assert carried == plain and plain == carried and repr(carried) == repr(plain)
    assert carried.to_dict() == plain.to_dict()
    assert json.dumps(carried.to_dict()) == json.dumps(plain.to_dict())
    again = pickle.loads(pickle.dumps(carried))
    assert again == plain and type(again.gpu) is MappingProxyType
    with pytest.raises(TypeError):
        hash(carried)
    with pytest.raises(dataclasses.FrozenInstanceError):
        carried.gpu = {}
    # the inputs changed after: the mappings made later keep the values given
    fresh = PlacementSolution._of_instance(inst, gpu, start)
    gpu[:], start[:] = 0, -1.0
    assert fresh == plain


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 40), st.integers(1, 5), st.data())
def test_the_overlap_order_is_the_lexsort_by_gpu_start_end(n, gpus, data):
    draw = data.draw
    gpu = np.array(draw(st.lists(st.integers(0, gpus - 1), min_size=n, max_size=n)), dtype=np.int64)
    # few distinct starts: equal starts on one GPU (and -0.0 against 0.0) are common
    start = np.array(draw(st.lists(st.sampled_from([0.0, -0.0, 1.0, 1.5, 2.0, 3.25]),
                                   min_size=n, max_size=n)))
    compute = np.array(draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0]), min_size=n,
                                     max_size=n)))
    end = start + compute
    busy = np.flatnonzero(compute > 0)
    expected = busy[np.lexsort((end[busy], start[busy], gpu[busy]))]
    assert _busy_order(gpu, start, end, compute).tolist() == expected.tolist()


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 64), st.lists(st.integers(0, 10 ** 6), max_size=200))
def test_the_distinct_codes_are_numpy_s_unique(size, raw):
    codes = np.array([c % size for c in raw], dtype=np.int64)
    got, want = _distinct(codes, size), np.unique(codes)
    assert got.dtype == want.dtype and got.tolist() == want.tolist()


@settings(max_examples=150, deadline=None)
@given(small_instances(max_ops=9, max_gpus=4), st.data())
def test_the_checker_on_tied_starts_gives_the_first_broken_rule_of_the_loops(inst, data):
    # starts from a few values: overlaps and equal starts on one GPU are common
    gpu = np.array(data.draw(st.lists(st.integers(0, inst.gpus - 1), min_size=inst.size,
                                      max_size=inst.size)), dtype=np.int64)
    start = np.array(data.draw(st.lists(st.sampled_from([0.0, 1.0, 2.0, 4.0, 1e9]),
                                        min_size=inst.size, max_size=inst.size)))
    carried = PlacementSolution._of_instance(inst, gpu, start)
    verdict, expected = check(inst, carried), reference_reason(inst, gpu, start)
    assert verdict.feasible == (expected is None)
    assert verdict.reason == expected or expected is None


@settings(max_examples=150, deadline=None)
@given(small_instances(max_ops=9, max_gpus=2), st.data())
def test_the_default_topological_order_is_the_heap_s_with_deps_any_way(inst, data):
    # the ops listed in a drawn order: deps forward (the positions' order) or not (the heap)
    listed = data.draw(st.permutations(range(inst.size)))
    shuffled = PlacementInstance(inst.gpus, inst.max_peers, inst.link_gbps,
                                 [inst.ops[k] for k in listed], inst.deps)
    for case in (inst, shuffled):
        assert case.topological_order() == case._order(None)
        assert case._order_array.tolist() == case._order(None)
