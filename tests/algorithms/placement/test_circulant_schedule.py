"""List scheduling on a circulant peer topology: the topology keeps the degree limit,
every answer is feasible, the search always answers, and sipml-ls is never worse than
either of its starts."""

import pytest
from hypothesis import given, settings, strategies as st

from fabricopt.algorithms.placement import circulant_schedule as circulant
from fabricopt.algorithms.placement.circulant_schedule import (OFFSET_FAMILIES, circulant_masks,
                                                               circulant_offsets,
                                                               circulant_schedule,
                                                               circulant_search)
from fabricopt.algorithms.placement.local_search import sipml_ls
from fabricopt.algorithms.placement.sipml import sipml
from fabricopt.problems import check, evaluate
from fabricopt.problems.placement import (Dep, PlacementInstance, SubOp, generate, peer_sets,
                                          schedule, schedule_times)
from placement_cases import brute_force_optimum, small_instances


def _members(mask):
    return {g for g in range(mask.bit_length()) if mask >> g & 1}


@given(st.sampled_from(OFFSET_FAMILIES), st.integers(1, 20), st.integers(2, 64))
def test_offsets_are_distinct_and_give_every_gpu_max_peers_each_way(family, max_peers, ring):
    offsets = circulant_offsets(family, max_peers)
    assert offsets[0] == 0 and len(set(offsets)) == len(offsets) == max_peers + 1
    masks = circulant_masks(ring, offsets)
    if masks is None:           # only when two offsets meet modulo the ring
        assert len({s % ring for s in offsets}) < len(offsets)
        return
    sends = [_members(m) - {h} for h, m in enumerate(masks)]
    receives = [{h for h in range(ring) if g in sends[h]} for g in range(ring)]
    assert all(h in _members(m) for h, m in enumerate(masks))
    assert {len(s) for s in sends} == {len(r) for r in receives} == {max_peers}


def test_offsets_reject_an_unknown_family():
    with pytest.raises(ValueError, match="unknown offset family 'spiral'"):
        circulant_offsets("spiral", 3)


def _deps_follow(inst, gpu, masks):
    return all(masks[gpu[inst.index[d.src]]] >> gpu[inst.index[d.dst]] & 1
               for d in inst.deps if d.bytes > 0)


@settings(max_examples=60)
@given(small_instances(max_ops=10, max_gpus=6), st.sampled_from(OFFSET_FAMILIES),
       st.integers(0, 4))
def test_a_schedule_follows_its_topology_and_keeps_the_degree_limit(inst, family, extra):
    ring = min(inst.max_peers + 1 + extra, inst.gpus)
    masks = circulant_masks(ring, circulant_offsets(family, inst.max_peers)) \
        if ring > inst.max_peers + 1 else [(1 << ring) - 1] * ring
    if masks is None:
        return
    gpu = circulant_schedule(inst, masks)
    if gpu is None:             # a dead end: allowed, the search moves on
        return
    assert _deps_follow(inst, gpu, masks)
    sends, receives = peer_sets(inst, gpu)
    assert max(map(len, sends + receives), default=0) <= inst.max_peers
    assert check(inst, schedule(inst, gpu))


@settings(max_examples=40)
@given(small_instances(max_ops=7, max_gpus=4))
def test_the_search_always_answers_feasibly_and_above_the_optimum(inst):
    gpu, order, info = circulant_search(inst)
    solution = schedule(inst, gpu, order)
    assert check(inst, solution)
    assert evaluate(inst, solution) == pytest.approx(info["makespan_s"], rel=1e-12)
    if inst.size <= 5:
        assert brute_force_optimum(inst) <= info["makespan_s"] * (1 + 1e-12)


def test_the_clique_never_dead_ends_and_uses_every_gpu_of_it():
    # 12 independent unit ops on a clique of 3 GPUs: 4 rounds, no GPU idle
    inst = PlacementInstance(6, 2, 8.0, [SubOp(f"x{i}", 1.0) for i in range(12)])
    gpu = circulant_schedule(inst, [0b111] * 3)
    assert sorted(gpu.count(g) for g in range(3)) == [4, 4, 4]


def test_a_dead_end_returns_none_and_the_search_goes_on():
    # arc consistency misses some conflicts: on the 500-op family's seed 1 the forward
    # window on 11 GPUs leaves an op with no GPU (none of the small generated instances
    # tried, thousands of them, dead-ends)
    inst = generate(1, family="k16-p3")
    assert circulant_schedule(inst, circulant_masks(11, circulant_offsets("forward", 3))) is None
    gpu, order, info = circulant_search(inst)
    assert info["dead_ends"] >= 1 and check(inst, schedule(inst, gpu, order))


def test_arc_consistency_keeps_a_fan_in_placeable():
    # 8 parents feed one child on a ring of 6 with 2 peers: the parents must stay within
    # one GPU's in-window of 3 GPUs
    ops = [SubOp(f"p{i}", 1.0) for i in range(8)] + [SubOp("c", 1.0)]
    deps = [Dep(f"p{i}", "c", 1e6) for i in range(8)]
    inst = PlacementInstance(6, 2, 8.0, ops, deps)
    masks = circulant_masks(6, circulant_offsets("forward", 2))
    gpu = circulant_schedule(inst, masks)
    assert gpu is not None and _deps_follow(inst, gpu, masks)
    assert len(set(gpu[:8])) <= 3


def test_the_budget_stops_the_search_but_keeps_an_answer(monkeypatch):
    inst = generate(1, family="k16-p3")
    monkeypatch.setattr(circulant, "_MAX_WORK", 1)
    gpu, order, info = circulant_search(inst)
    assert info["ring_gpus"] == inst.max_peers + 1 and info["rings_tried"] <= 2
    assert check(inst, schedule(inst, gpu, order))


def test_rings_beyond_the_clique_pay_on_the_500_op_family():
    # the reason the search exists: a clique of max_peers + 1 GPUs idles the rest
    inst = generate(1, family="k16-p3")
    gpu, order, info = circulant_search(inst)
    clique = circulant_schedule(inst, [(1 << 4) - 1] * 4, order)
    assert info["ring_gpus"] > 4
    assert info["makespan_s"] < 0.9 * max(schedule_times(inst, clique, order)[1])
    assert info["makespan_s"] < evaluate(inst, sipml(inst)[0])


@settings(max_examples=25)
@given(small_instances(max_ops=8, max_gpus=5), st.booleans())
def test_sipml_ls_is_never_worse_than_either_start(inst, use_circulant):
    solution, info = sipml_ls(inst, max_evals=200, circulant=use_circulant)
    assert check(inst, solution)
    value = evaluate(inst, solution)
    assert value <= evaluate(inst, sipml(inst)[0]) * (1 + 1e-12)
    if use_circulant:
        assert value <= info["circulant"]["makespan_s"] * (1 + 1e-12)
        assert info["start"] in ("sipml", "circulant")
    else:
        assert "circulant" not in info and info["start"] == "sipml"


@settings(max_examples=20)
@given(st.integers(0, 10**6), st.integers(65, 130))
def test_the_numpy_clique_schedule_is_the_loop_s_schedule(seed, gpus):
    inst = generate(seed, ops=60, gpus=gpus, max_peers=gpus - 1)
    clique = [(1 << gpus) - 1] * gpus
    fast = circulant_schedule(inst, clique)
    saved = circulant._CLIQUE_FAST
    try:
        circulant._CLIQUE_FAST = 10**9          # the generic loop, one GPU at a time
        assert circulant_schedule(inst, clique) == fast
    finally:
        circulant._CLIQUE_FAST = saved


def test_a_passed_deadline_gives_no_circulant_start_and_sipml_ls_keeps_algorithm_1():
    inst = generate(1, family="k16-p3")
    gpu, _, info = circulant_search(inst, deadline=0.0)
    assert gpu is None and info["makespan_s"] == float("inf")
    solution, info = sipml_ls(inst, time_limit=0.0)
    assert check(inst, solution) and info["start"] == "sipml"


@given(st.sampled_from(OFFSET_FAMILIES), st.integers(1, 6), st.integers(3, 40), st.data())
def test_domain_neighbourhoods_are_the_unions_over_the_domain(family, max_peers, ring, data):
    masks = circulant_masks(ring, circulant_offsets(family, max_peers))
    if masks is None:
        return
    reach, feeds = circulant._neighbourhoods(masks)
    scrambled = masks[::-1]                    # not circulant in GPU order: the union path
    reach_generic, _ = circulant._neighbourhoods(scrambled)
    domain = data.draw(st.integers(1, (1 << ring) - 1))
    members = _members(domain)
    assert reach(domain) == sum(1 << g for g in range(ring)
                                if any(masks[h] >> g & 1 for h in members))
    assert feeds(domain) == sum(1 << h for h in range(ring) if masks[h] & domain)
    assert reach_generic(domain) == sum(1 << g for g in range(ring)
                                        if any(scrambled[h] >> g & 1 for h in members))


def test_many_gpus_try_at_most_48_ring_sizes_per_family():
    inst = generate(0, ops=20, gpus=300, max_peers=1)
    gpu, order, info = circulant_search(inst)
    assert 1 < info["rings_tried"] <= 1 + 48 * len(OFFSET_FAMILIES)
    assert check(inst, schedule(inst, gpu, order))
