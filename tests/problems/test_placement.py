"""The placement format: round trips, validation messages, checker rules, evaluation,
the lower bound, the balanced-graph split and the generator."""

import functools
import json
import math
import re

import pytest
from hypothesis import given, strategies as st

import fabricopt
from fabricopt import InvalidInstance, InvalidSolution
from fabricopt.problems import check, evaluate, instance_from_dict
from fabricopt.problems.opgraph import OpGraph
from fabricopt.problems.placement import (Dep, PlacementInstance, PlacementSolution, SubOp,
                                          generate, peer_sets, schedule, split_op_graph)
from fabricopt.bounds.placement import heads_and_tails, lower_bound

from kind_json import assert_file_round_trip, edited, item_edited
from placement_cases import small_instances

# 8 bytes at 8 Gbps take 8e-9 s; 1e9 bytes take 1 s.
BASE = {"problem": "placement", "gpus": 3, "max_peers": 1, "link_gbps": 8.0,
        "ops": [{"id": "a", "compute_s": 1.0, "group": "A"}, {"id": "b", "compute_s": 2.0},
                {"id": "c", "compute_s": 1.0}, {"id": "d", "compute_s": 0.0}],
        "deps": [{"src": "a", "dst": "b", "bytes": 1e9}, {"src": "a", "dst": "c", "bytes": 0.0},
                 {"src": "b", "dst": "d", "bytes": 1e9}]}


with_ = functools.partial(edited, BASE)


def ops_with(k, **changes):
    return with_(ops=item_edited(BASE["ops"], k, **changes))


def deps_with(k, **changes):
    return with_(deps=item_edited(BASE["deps"], k, **changes))


def test_round_trip(tmp_path):
    assert_file_round_trip(BASE, tmp_path)
    sol = PlacementSolution({"a": 0, "b": 1, "c": 0, "d": 1}, {"a": 0, "b": 2, "c": 1, "d": 5})
    again = fabricopt.problems.solution_from_dict("placement", json.loads(fabricopt.dump(sol)))
    assert again == sol


@pytest.mark.parametrize("data, message", [
    (deps_with(0, dst="z"), r"deps\[0\].dst = 'z': unknown op id"),
    (deps_with(1, src=["a"]), r"deps\[1\].src = \['a'\]: unknown op id"),
    (with_(deps=BASE["deps"] + [{"src": "d", "dst": "a", "bytes": 1}]),
     r"deps: contain the cycle a -> b -> d -> a|cycle"),
    (with_(deps=[{"src": "a", "dst": "a", "bytes": 1}]),
     r"deps\[0\] = 'a -> a': an op cannot wait for itself"),
    (with_(deps=BASE["deps"] + [{"src": "a", "dst": "b", "bytes": 5}]),
     r"deps\[3\] = 'a -> b': repeats an earlier dep"),
    (ops_with(2, id="a"), r"ops\[2\].id = 'a': repeats an earlier op id"),
    (ops_with(1, compute_s=float("nan")), r"ops\[1\].compute_s = nan: must be finite"),
    (ops_with(1, compute_s=-1), r"ops\[1\].compute_s = -1.0: must be >= 0"),
    (ops_with(0, group=3), r"ops\[0\].group = 3: must be a non-empty string"),
    (ops_with(0, id=""), r"ops\[0\].id = '': must be a non-empty string"),
    (ops_with(0, colour="red"), r"ops\[0\].colour: unknown field"),
    (deps_with(0, bytes=-5), r"deps\[0\].bytes = -5.0: must be >= 0"),
    (deps_with(0, bytes=float("inf")), r"deps\[0\].bytes = inf: must be finite"),
    (with_(gpus=0), r"gpus = 0: must be >= 1"),
    (with_(max_peers=0), r"max_peers = 0: must be >= 1"),
    (with_(max_peers=1.5), r"max_peers = 1.5: must be an integer"),
    (with_(link_gbps=0), r"link_gbps = 0.0: must be > 0"),
    (with_(link_gbps=float("inf")), r"link_gbps = inf: must be finite"),
    (with_(ops="x"), r"ops = 'x': must be a list"),
    (with_(ops=[3]), r"ops\[0\] = 3: must be an object"),
    (with_(extra=1), r"extra: unknown field"),
    ({k: v for k, v in BASE.items() if k != "ops"}, r"ops: missing required field"),
    (with_(problem="placements"), r"problem = 'placements': unknown problem kind"),
])
def test_invalid_instances_name_field_and_value(data, message):
    with pytest.raises(InvalidInstance, match=message):
        instance_from_dict(data)


def test_messages_are_one_line():
    with pytest.raises(InvalidInstance) as err:
        instance_from_dict(deps_with(0, dst="z"))
    assert "\n" not in str(err.value)


INST = instance_from_dict(BASE)
GOOD = {"gpu": {"a": 0, "b": 1, "c": 0, "d": 2}, "start_s": {"a": 0, "b": 2, "c": 1, "d": 5}}


def sol(**changes):
    gpu, start = dict(GOOD["gpu"]), dict(GOOD["start_s"])
    for key, (g, t) in changes.items():
        gpu[key], start[key] = g, t
    return PlacementSolution(gpu, start)


@pytest.mark.parametrize("solution, reason", [
    (sol(), None),
    (sol(d=(1, 4)), None),                          # same GPU as b: no transfer
    (sol(b=(0, 1), c=(1, 1), d=(0, 3)), None),      # a, b, d on GPU 0 back to back
    (sol(c=(2, 1)), None),                          # a -> c carries no bytes: no transfer
    (sol(a=(0, -1.0)), r"start_s\['a'\] = -1.0: starts before time 0"),
    (sol(b=(1, 1.5)), r"dep a -> b: 'b' starts at 1.5 before 'a' ends at 1 \+ transfer 1 = 2"),
    (sol(b=(0, 0.5)), r"dep a -> b: 'b' starts at 0.5 before 'a' ends at 1 = 1"),
    (sol(d=(2, 4.5)), r"dep b -> d: 'd' starts at 4.5 before 'b' ends at 4 \+ transfer 1 = 5"),
    (sol(c=(1, 2.5)), r"GPU 1: ops 'b' \[2, 4\) and 'c' \[2.5, 3.5\) overlap"),
    (sol(b=(0, 1), c=(0, 2.5)), r"GPU 0: ops 'b' \[1, 3\) and 'c' \[2.5, 3.5\) overlap"),
])
def test_checker_rules(solution, reason):
    verdict = check(INST, solution)
    assert verdict.feasible is (reason is None), verdict.reason
    if reason:
        assert re.search(reason, verdict.reason)


def test_degree_rule_counts_distinct_peers_with_bytes():
    ops = [SubOp(c, 1.0) for c in "abcd"]
    inst = PlacementInstance(3, 1, 8.0, ops, [Dep("a", "b", 8), Dep("a", "c", 8), Dep("a", "d", 0)])
    starts = {"a": 0, "b": 2, "c": 3, "d": 2}
    # a sends to b and c on GPU 1 (one peer) and to d on GPU 2 without bytes: fine
    assert check(inst, PlacementSolution({"a": 0, "b": 1, "c": 1, "d": 2}, starts))
    verdict = check(inst, PlacementSolution({"a": 0, "b": 1, "c": 2, "d": 2}, starts))
    assert verdict.reason == "GPU 0 sends to 2 GPUs [1, 2], more than max_peers = 1"
    inst2 = PlacementInstance(3, 1, 8.0, ops, [Dep("b", "a", 8), Dep("c", "a", 8)])
    verdict = check(inst2, PlacementSolution({"a": 0, "b": 1, "c": 2, "d": 0},
                                             {"a": 2, "b": 0, "c": 0, "d": 3}))
    assert verdict.reason == "GPU 0 receives from 2 GPUs [1, 2], more than max_peers = 1"


def test_zero_compute_ops_never_overlap():
    inst = PlacementInstance(1, 1, 8.0, [SubOp("a", 1.0), SubOp("z", 0.0)])
    assert check(inst, PlacementSolution({"a": 0, "z": 0}, {"a": 0.0, "z": 0.5}))


def test_tolerance_is_relative():
    ok = sol(b=(1, 2 * (1 - 1e-12)))
    bad = sol(b=(1, 2 * (1 - 1e-7)))
    assert check(INST, ok) and not check(INST, bad)


@pytest.mark.parametrize("gpu, start, message", [
    ({**GOOD["gpu"], "zz": 0}, GOOD["start_s"], r"gpu\['zz'\] = 0: unknown op id"),
    ({k: v for k, v in GOOD["gpu"].items() if k != "c"}, GOOD["start_s"],
     r"gpu: op 'c' is missing"),
    (GOOD["gpu"], {k: v for k, v in GOOD["start_s"].items() if k != "a"},
     r"start_s: op 'a' is missing"),
    ({**GOOD["gpu"], "a": 3}, GOOD["start_s"], r"gpu\['a'\] = 3: unknown GPU \(GPUs are 0..2\)"),
])
def test_invalid_solutions(gpu, start, message):
    with pytest.raises(InvalidSolution, match=message):
        check(INST, PlacementSolution(gpu, start))
    with pytest.raises(InvalidSolution, match=message):
        evaluate(INST, PlacementSolution(gpu, start))


@pytest.mark.parametrize("gpu, start, message", [
    ({"a": -1}, {"a": 0}, r"gpu\['a'\] = -1: must be >= 0"),
    ({"a": 0.5}, {"a": 0}, r"gpu\['a'\] = 0.5: must be an integer"),
    ({"a": 0}, {"a": float("nan")}, r"start_s\['a'\] = nan: must be finite"),
    ({"a": 0}, [0.0], r"start_s = \[0.0\]: must be an object"),
])
def test_malformed_solutions(gpu, start, message):
    with pytest.raises(InvalidSolution, match=message):
        PlacementSolution(gpu, start)


def test_solution_from_dict_rejects_unknown_fields():
    with pytest.raises(InvalidSolution, match="order: unknown field"):
        PlacementSolution.from_dict({**GOOD, "order": []})


def test_evaluate_is_the_makespan():
    assert evaluate(INST, sol()) == 5.0
    assert evaluate(PlacementInstance(2, 1, 1.0, []), PlacementSolution({}, {})) == 0.0


def test_lower_bound_is_critical_path_or_load():
    assert lower_bound(INST) == 3.0                  # a (1) + b (2); load is 4 / 3
    wide = PlacementInstance(2, 1, 1.0, [SubOp(c, 1.0) for c in "abcde"])
    assert lower_bound(wide) == 2.5
    head, tail = heads_and_tails(INST)
    assert head.tolist() == [0, 1, 1, 3] and tail.tolist() == [2, 0, 0, 0]


def test_schedule_is_feasible_and_waits_for_transfers():
    solution = schedule(INST, [0, 1, 0, 2])
    assert check(INST, solution)
    assert dict(solution.start_s) == {"a": 0.0, "b": 2.0, "c": 1.0, "d": 5.0}
    sends, receives = peer_sets(INST, [0, 1, 0, 2])
    assert sends == [{1}, {2}, set()] and receives == [set(), {0}, {1}]


@given(small_instances(max_ops=7, max_gpus=3), st.data())
def test_ops_without_compute_may_share_their_gpu_and_never_start_later(inst, data):
    gpu = data.draw(st.lists(st.integers(0, inst.gpus - 1), min_size=inst.size,
                             max_size=inst.size))
    order = inst.topological_order(priority=data.draw(st.permutations(range(inst.size))))
    holding = schedule(inst, gpu, order)
    sharing = schedule(inst, gpu, order, zero_holds_gpu=False)
    for solution in (holding, sharing):  # feasible but for the degree rule
        verdict = check(inst, solution)
        assert verdict.feasible or "max_peers" in verdict.reason
    assert all(sharing.start_s[op.id] <= holding.start_s[op.id] for op in inst.ops)
    busy = [op.id for op in inst.ops if op.compute_s > 0]
    if len(busy) == inst.size:  # nothing to share: the same schedule
        assert sharing == holding


def test_split_block_mapping_and_bytes():
    g = OpGraph([{"id": "u", "compute_s": 4.0}, {"id": "v", "compute_s": 2.0},
                 {"id": "w", "compute_s": 3.0}],
                [{"src": "u", "dst": "v", "bytes": 40.0}, {"src": "v", "dst": "w", "bytes": 6.0}])
    inst = split_op_graph(g, {"u": 4, "v": 2, "w": 3}, gpus=4, max_peers=2, link_gbps=1.0)
    assert [o.id for o in inst.ops] == ["u/0", "u/1", "u/2", "u/3", "v/0", "v/1",
                                        "w/0", "w/1", "w/2"]
    assert {o.group for o in inst.ops} == {"u", "v", "w"}
    assert [o.compute_s for o in inst.ops[:6]] == [1.0] * 6
    edges = [(d.src, d.dst, d.bytes) for d in inst.deps]
    # 4 -> 2: blocks of two, each sub-edge the source's share 40/4
    assert edges[:4] == [("u/0", "v/0", 10.0), ("u/1", "v/0", 10.0),
                         ("u/2", "v/1", 10.0), ("u/3", "v/1", 10.0)]
    # 2 -> 3 (not a power of two): w/b reads from v/floor(b*2/3), the share 6/2 each
    assert edges[4:] == [("v/0", "w/0", 3.0), ("v/0", "w/1", 3.0), ("v/1", "w/2", 3.0)]


def test_split_rejects_missing_and_bad_counts():
    g = OpGraph([{"id": "u", "compute_s": 1.0}])
    with pytest.raises(InvalidInstance, match="splits: op 'u' has no split count"):
        split_op_graph(g, {}, gpus=2, max_peers=1, link_gbps=1.0)
    with pytest.raises(InvalidInstance, match=r"splits\['u'\] = 0: must be >= 1"):
        split_op_graph(g, {"u": 0}, gpus=2, max_peers=1, link_gbps=1.0)


@given(seed=st.integers(0, 10**6), ops=st.integers(1, 40), gpus=st.integers(1, 16),
       max_peers=st.integers(1, 4))
def test_generator_is_valid_seeded_and_sized(seed, ops, gpus, max_peers):
    inst = generate(seed, ops=ops, gpus=gpus, max_peers=max_peers)
    assert inst.size == ops and inst.gpus == gpus and inst == generate(seed, ops=ops, gpus=gpus,
                                                                        max_peers=max_peers)
    assert instance_from_dict(json.loads(fabricopt.dump(inst))) == inst
    counts = {}
    for op in inst.ops:
        counts[op.group] = counts.get(op.group, 0) + 1
    assert all(n <= gpus and n & (n - 1) == 0 for n in counts.values())   # powers of two
    assert all(d.bytes > 0 for d in inst.deps)
    assert 0 < lower_bound(inst) <= float(inst.compute.sum())
    # everything on one GPU is always feasible, and no better than the bound
    serial = schedule(inst, [0] * inst.size)
    assert check(inst, serial) and lower_bound(inst) <= evaluate(inst, serial) * (1 + 1e-12)


def test_generator_rejects_bad_sizes():
    with pytest.raises(InvalidInstance, match="ops = 0: must be >= 1"):
        generate(0, ops=0)
    with pytest.raises(InvalidInstance, match="comm_ratio = -1.0: must be > 0"):
        generate(0, comm_ratio=-1.0)
    with pytest.raises(ValueError, match="colour: not a size option of the placement generator"):
        fabricopt.generate("placement", colour=3)


def test_cycle_message_names_the_cycle():
    with pytest.raises(InvalidInstance) as err:
        PlacementInstance(1, 1, 1.0, [SubOp("a", 1), SubOp("b", 1)],
                          [Dep("a", "b", 0), Dep("b", "a", 0)])
    assert re.fullmatch(r"deps: contain the cycle (a -> b -> a|b -> a -> b)", str(err.value))
    assert not math.isnan(lower_bound(PlacementInstance(1, 1, 1.0, [SubOp("a", 1)])))


def test_instances_and_solutions_pickle():
    # the benchmark harness hands them to worker processes
    import pickle

    inst = generate(3, ops=20)
    solution = schedule(inst, [0] * inst.size)
    assert pickle.loads(pickle.dumps(inst)) == inst
    assert pickle.loads(pickle.dumps(solution)) == solution
    assert check(pickle.loads(pickle.dumps(inst)), solution)
