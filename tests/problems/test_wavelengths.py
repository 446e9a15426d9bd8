"""The wavelengths format: round trips, validation messages, checker rules, evaluation,
the infeasibility proofs, the generator and the fast count bound."""

import functools
import json
import math
import pickle
import re

import numpy as np
import pytest
from hypothesis import given, strategies as st

import fabricopt
from fabricopt import InvalidInstance, InvalidSolution
from fabricopt.problems import check, evaluate, instance_from_dict
from fabricopt.problems.wavelengths import (Lightpath, WavelengthsInstance, WavelengthsSolution,
                                            _generate, _repeats, arc, generate,
                                            infeasibility, lightpath_counts, segment_load)
from fabricopt.bounds.wavelengths import count_bound

from kind_json import assert_file_round_trip, edited

# 6 nodes, W = 2, reach 2: 0->1 (1 hop cw), 1->4 (3 hops either way: out of reach) absent,
# 3->1 (2 hops ccw), 5->0 (1 hop cw).
TRAFFIC = [[0.0] * 6 for _ in range(6)]
TRAFFIC[0][1], TRAFFIC[3][1], TRAFFIC[5][0] = 1e9, 2e9, 3e9
BASE = {"problem": "wavelengths", "nodes": 6, "wavelengths": 2, "wavelength_gbps": 8.0,
        "max_hops": 2, "traffic_bytes": TRAFFIC}
INST = instance_from_dict(BASE)


with_ = functools.partial(edited, BASE)


def lp(*items):
    return WavelengthsSolution([Lightpath(*item) for item in items])


GOOD = lp((0, 1, "cw", 0), (3, 1, "ccw", 0), (5, 0, "cw", 0), (5, 0, "cw", 1))


def test_round_trip(tmp_path):
    assert assert_file_round_trip(BASE, tmp_path) == INST
    sol = WavelengthsSolution.from_dict(json.loads(fabricopt.dump(GOOD)))
    assert sol == GOOD
    assert GOOD.to_dict()["lightpaths"][1] == {"src": 3, "dst": 1, "dir": "ccw", "wavelength": 0}


@pytest.mark.parametrize("data, message", [
    (with_(nodes=1), r"nodes = 1: must be >= 2"),
    (with_(nodes=6.5), r"nodes = 6.5: must be an integer"),
    (with_(wavelengths=0), r"wavelengths = 0: must be >= 1"),
    (with_(wavelengths=True), r"wavelengths = True: must be an integer"),
    (with_(wavelength_gbps=0), r"wavelength_gbps = 0.0: must be > 0"),
    (with_(wavelength_gbps="x"), r"wavelength_gbps = 'x': must be a number"),
    (with_(max_hops=0), r"max_hops = 0: must be >= 1"),
    (with_(max_hops=6), r"max_hops = 6: must be <= 5"),
    (with_(traffic_bytes=[[0] * 6] * 5), r"traffic_bytes: has 5 entries, expected 6"),
    (with_(traffic_bytes=[[0] * 6] * 5 + [[0] * 5]), r"traffic_bytes\[5\]: has 5 entries, expected 6"),
    (with_(traffic_bytes=[[0, -5.0, 0, 0, 0, 0]] + [[0] * 6] * 5),
     r"traffic_bytes\[0\]\[1\] = -5.0: must be >= 0"),
    (with_(traffic_bytes=[[0, float("nan"), 0, 0, 0, 0]] + [[0] * 6] * 5),
     r"traffic_bytes\[0\]\[1\] = nan: must be finite"),
    (with_(traffic_bytes=[[0, float("inf"), 0, 0, 0, 0]] + [[0] * 6] * 5),
     r"traffic_bytes\[0\]\[1\] = inf: must be finite"),
    (with_(traffic_bytes=[[7, 0, 0, 0, 0, 0]] + [[0] * 6] * 5),
     r"traffic_bytes\[0\]\[0\] = 7.0: the diagonal must be 0"),
    (with_(traffic_bytes="x"), r"traffic_bytes = 'x': must be a list"),
    (with_(problem="wavelength"), r"problem = 'wavelength': unknown problem kind"),
    (with_(colour=1), r"colour: unknown field"),
    ({k: v for k, v in BASE.items() if k != "max_hops"}, r"max_hops: missing required field"),
])
def test_invalid_instances_name_field_and_value(data, message):
    with pytest.raises(InvalidInstance, match=message):
        instance_from_dict(data)


@pytest.mark.parametrize("lightpaths, message", [
    ("x", r"lightpaths = 'x': must be a list"),
    ([7], r"lightpaths\[0\] = 7: must be an object"),
    ([{"src": 0, "dst": 1, "dir": "cw"}], r"lightpaths\[0\].wavelength: missing required field"),
    ([{"src": 0, "dst": 1, "dir": "cw", "wavelength": 0, "w": 1}], r"lightpaths\[0\].w: unknown field"),
    ([{"src": 0, "dst": 1, "dir": "left", "wavelength": 0}],
     r"lightpaths\[0\].dir = 'left': must be 'cw' or 'ccw'"),
    ([{"src": -1, "dst": 1, "dir": "cw", "wavelength": 0}], r"lightpaths\[0\].src = -1: must be >= 0"),
    ([{"src": 0, "dst": 1.5, "dir": "cw", "wavelength": 0}],
     r"lightpaths\[0\].dst = 1.5: must be an integer"),
    ([{"src": 0, "dst": 1, "dir": "cw", "wavelength": "a"}],
     r"lightpaths\[0\].wavelength = 'a': must be an integer"),
])
def test_malformed_solutions(lightpaths, message):
    with pytest.raises(InvalidSolution, match=message):
        WavelengthsSolution.from_dict({"lightpaths": lightpaths})


@pytest.mark.parametrize("solution, message", [
    (lp((0, 1, "cw", 0), (0, 6, "cw", 0)), r"lightpaths\[1\].dst = 6: unknown node \(nodes are 0..5\)"),
    (lp((9, 1, "cw", 0)), r"lightpaths\[0\].src = 9: unknown node"),
    (lp((0, 1, "cw", 2)), r"lightpaths\[0\].wavelength = 2: unknown wavelength \(wavelengths are 0..1\)"),
])
def test_solutions_naming_unknown_things(solution, message):
    with pytest.raises(InvalidSolution, match=message):
        check(INST, solution)
    with pytest.raises(InvalidSolution, match=message):
        evaluate(INST, solution)


@pytest.mark.parametrize("solution, reason", [
    (GOOD, None),
    (lp((0, 1, "cw", 0), (3, 1, "ccw", 0), (5, 0, "cw", 0), (2, 2, "cw", 1)),
     r"lightpaths\[3\]: 2->2 has 0 hops \(src and dst must differ\)"),
    (lp((0, 1, "cw", 0), (3, 1, "cw", 0), (5, 0, "cw", 0)),
     r"lightpaths\[1\]: 3->1 cw has 4 hops, more than max_hops = 2"),
    # 5->0 and 4->0 both use cw segment 5 (5->0) on wavelength 0
    (lp((0, 1, "cw", 0), (3, 1, "ccw", 0), (5, 0, "cw", 0), (4, 0, "cw", 0)),
     r"lightpaths\[2\] and lightpaths\[3\] both use cw segment 5 \(5->0\) on wavelength 0"),
    # ccw 3->1 uses ccw segments 3 and 2; ccw 2->0 uses 2 and 1
    (lp((0, 1, "cw", 0), (3, 1, "ccw", 1), (5, 0, "cw", 0), (2, 0, "ccw", 1)),
     r"lightpaths\[1\] and lightpaths\[3\] both use ccw segment 2 \(2->1\) on wavelength 1"),
    (lp((0, 1, "cw", 0), (3, 1, "ccw", 0), (5, 0, "cw", 0), (0, 1, "cw", 1), (0, 5, "ccw", 1)),
     r"node 0 sources 3 lightpaths, more than wavelengths = 2"),
    (lp((0, 1, "cw", 0), (3, 1, "ccw", 0), (5, 0, "cw", 0), (0, 1, "cw", 1), (2, 1, "ccw", 1)),
     r"node 1 sinks 4 lightpaths, more than wavelengths = 2"),
    (lp((0, 1, "cw", 0), (5, 0, "cw", 0)),
     r"traffic_bytes\[3\]\[1\] = 2000000000.0 has no lightpath 3->1"),
])
def test_checker_rules(solution, reason):
    verdict = check(INST, solution)
    assert verdict.feasible is (reason is None), verdict.reason
    if reason:
        assert re.search(reason, verdict.reason), verdict.reason
    # The same lightpaths given as arrays: the same schedule, the same verdict and value.
    again = from_lightpaths(solution.lightpaths)
    assert again == solution and check(INST, again) == verdict
    assert evaluate(INST, again) == evaluate(INST, solution)


def from_lightpaths(paths):
    return WavelengthsSolution.from_arrays([p.src for p in paths], [p.dst for p in paths],
                                           [p.dir == "ccw" for p in paths],
                                           [p.wavelength for p in paths])


@given(st.lists(st.tuples(st.integers(0, 2**31 - 1), st.integers(0, 2**31 - 1),
                          st.sampled_from(["cw", "ccw"]), st.integers(0, 2**31 - 1)),
                max_size=30))
def test_a_schedule_from_arrays_equals_one_from_objects(items):
    solution = lp(*items)
    # Written out from the arrays, then (on another copy) with the objects made first.
    assert from_lightpaths(solution.lightpaths).to_dict() == solution.to_dict()
    again = from_lightpaths(solution.lightpaths)
    assert again == solution and again.lightpaths == solution.lightpaths
    assert again.to_dict() == solution.to_dict()
    assert all(np.array_equal(a, b) for a, b in zip(again.arrays, solution.arrays))
    assert pickle.loads(pickle.dumps(from_lightpaths(solution.lightpaths))) == solution


@pytest.mark.parametrize("columns, message", [
    (([0, -1], [1, 2], [False, True], [0, 0]), r"lightpaths\[1\].src = -1: must be >= 0"),
    (([0], [2**31], [False], [0]), r"lightpaths\[0\].dst = 2147483648: must be <= 2147483647"),
    (([0], [1.5], [False], [0]), r"dst = \[1.5\]: must be a 1-d array of integers"),
    (([0], [1], ["cw"], [0]), r"ccw = \['cw'\]: must be a 1-d array of booleans"),
    (([0], [1], [False], [0, 1]), r"ccw = \[False\]: src, dst, ccw and wavelength must have one"),
])
def test_malformed_solution_arrays(columns, message):
    with pytest.raises(InvalidSolution, match=message):
        WavelengthsSolution.from_arrays(*columns)


def test_evaluate_is_max_transfer_time():
    # 1e9 B on one 8 Gbps wavelength = 1 s; 2e9 on one = 2 s; 3e9 on two = 1.5 s
    assert evaluate(INST, GOOD) == pytest.approx(2.0)
    assert lightpath_counts(INST, GOOD)[5, 0] == 2
    assert math.isinf(evaluate(INST, lp((0, 1, "cw", 0))))
    empty = WavelengthsInstance(3, 1, 1.0, 1, [[0] * 3] * 3)
    assert evaluate(empty, WavelengthsSolution([])) == 0.0
    assert check(empty, WavelengthsSolution([]))
    assert count_bound(empty) == 0.0


def segments_by_definition(n, a, b, direction):
    """docs/formats.rst, wavelengths word for word: the (fiber, segment) pairs a lightpath uses."""
    if direction == "cw":
        return {(a + t) % n for t in range((b - a) % n)}
    return {(a - t) % n for t in range((a - b) % n)}


@given(st.integers(2, 40).flatmap(lambda n: st.tuples(
    st.just(n), st.integers(0, n - 1), st.integers(0, n - 1), st.sampled_from(["cw", "ccw"]))))
def test_arc_matches_the_design_text(case):
    n, a, b, direction = case
    first, hops = arc(n, a, b, direction == "ccw")
    assert {(first + t) % n for t in range(hops)} == segments_by_definition(n, a, b, direction)
    src, dst, ccw = np.array([a]), np.array([b]), np.array([direction == "ccw"])
    assert [int(v[0]) for v in arc(n, src, dst, ccw)] == [first, hops]
    load = segment_load(n, [first], [hops])
    assert set(np.flatnonzero(load)) == segments_by_definition(n, a, b, direction)


def test_demand_beyond_reach_is_infeasible_not_invalid():
    t = [row[:] for row in TRAFFIC]
    t[1][4] = 5e6  # 3 hops either way, max_hops = 2
    inst = WavelengthsInstance(6, 2, 8.0, 2, t)  # constructing it is fine
    assert infeasibility(inst) == ("traffic_bytes[1][4] = 5000000.0: node 4 is 3 hops from node 1 "
                                   "clockwise and 3 counter-clockwise, more than max_hops = 2")
    assert math.isinf(count_bound(inst))
    for method in fabricopt.methods("wavelengths"):
        result = fabricopt.solve(inst, method)
        assert result.status == "infeasible", method
        assert "traffic_bytes[1][4] = 5000000.0: node 4 is 3 hops" in result.info["message"]


def square(n, cells):
    t = [[0.0] * n for _ in range(n)]
    for i, j in cells:
        t[i][j] = 1e6
    return t


@pytest.mark.parametrize("inst, reason", [
    (WavelengthsInstance(6, 2, 25.0, 2, square(6, [(0, 1), (0, 2), (0, 5)])),
     "node 0 sends to 3 nodes but has only 2 transceivers (wavelengths = 2)"),
    (WavelengthsInstance(6, 2, 25.0, 2, square(6, [(1, 0), (2, 0), (5, 0)])),
     "node 0 receives from 3 nodes but has only 2 transceivers (wavelengths = 2)"),
    # 0->2, 1->2 and 1->3 all cross cw segment 1 and are out of reach counter-clockwise
    (WavelengthsInstance(6, 2, 25.0, 2, square(6, [(0, 2), (1, 2), (1, 3)])),
     "cw segment 1 (1->2) is crossed by 3 demanded pairs that can only go cw, more than "
     "wavelengths = 2"),
    # reach 5 of 6: every pair can go both ways; nodes 0..2 send 3 lightpaths out of them
    (WavelengthsInstance(6, 1, 25.0, 5, square(6, [(0, 3), (1, 4), (2, 5)])),
     "nodes 0..2 send to 3 nodes beyond them, more than the 2 x 1 wavelengths leaving them"),
])
def test_infeasibility_proofs(inst, reason):
    assert infeasibility(inst) == reason
    assert fabricopt.solve(inst, "greedy").info["message"] == reason


@given(seed=st.integers(0, 10**6), nodes=st.integers(2, 24), wavelengths=st.integers(1, 8),
       data=st.data())
def test_generator_is_valid_seeded_and_feasible(seed, nodes, wavelengths, data):
    max_hops = data.draw(st.integers(1, nodes - 1))
    inst, witness = _generate(seed, nodes=nodes, wavelengths=wavelengths, max_hops=max_hops)
    assert inst == generate(seed, nodes=nodes, wavelengths=wavelengths, max_hops=max_hops)
    assert check(inst, witness)                     # the schedule that proves it feasible
    assert infeasibility(inst) is None
    assert count_bound(inst) <= evaluate(inst, witness) * (1 + 1e-9)
    assert instance_from_dict(json.loads(fabricopt.dump(inst))) == inst


@given(seed=st.integers(0, 10**6), nodes=st.integers(3, 24), wavelengths=st.integers(1, 8),
       data=st.data())
def test_long_reach_family_is_feasible_and_sits_at_the_reach(seed, nodes, wavelengths, data):
    max_hops = data.draw(st.integers(1, nodes - 1))
    mp_peers = data.draw(st.integers(0, max_hops - 1)) if max_hops > 1 else 0
    inst, witness = _generate(seed, nodes=nodes, wavelengths=wavelengths, max_hops=max_hops,
                              mp_peers=mp_peers, family="long-reach")
    assert check(inst, witness)
    near = max(1, max_hops - max(mp_peers, 1) + 1)
    for i, j in inst.demanded:
        short = min((j - i) % nodes, (i - j) % nodes)
        assert short <= max_hops and max(short, nodes - short) >= near
    # half the wavelengths carry the witness: the rest are room for extra lightpaths
    assert max(lp.wavelength for lp in witness.lightpaths) < max(1, wavelengths // 2)


def test_long_reach_family_separates_the_heuristics_from_the_milp():
    inst = generate(2, nodes=16, wavelengths=8, max_hops=6, mp_peers=4, family="long-reach")
    best = fabricopt.solve(inst, "milp")
    assert best.status == "optimal"
    assert fabricopt.solve(inst, "mcf").objective > best.objective * 1.05
    with pytest.raises(InvalidInstance, match="family = 'flat': must be one of hybrid, long-reach"):
        generate(0, family="flat")


def test_generator_traffic_is_ring_local_with_data_parallel_partners():
    inst = generate(4, nodes=32, wavelengths=32, max_hops=8, group=8, mp_peers=3)
    t = inst.traffic
    for i, j in inst.demanded:
        group_i, group_j = i // 8, j // 8
        assert group_i == group_j or (j - i) % 32 == 8    # model-parallel, or DP partner
    dp = [t[i, (i + 8) % 32] for i in range(32)]
    assert all(v > 0 for v in dp)
    assert np.median(dp) > np.median(t[(t > 0)])          # gradients outweigh activations


def test_generator_rejects_bad_sizes():
    with pytest.raises(InvalidInstance, match="nodes = 1: must be >= 2"):
        generate(0, nodes=1)
    with pytest.raises(InvalidInstance, match="max_hops = 8: must be <= 7"):
        generate(0, nodes=8, max_hops=8)
    with pytest.raises(InvalidInstance, match=r"group = 6: must be <= max_hops = 4 or the whole ring"):
        generate(0, nodes=16, max_hops=4, group=6)
    with pytest.raises(InvalidInstance, match="mp_peers = 4: must be <= 3"):
        generate(0, nodes=16, max_hops=4, mp_peers=4)
    with pytest.raises(ValueError, match="colour: not a size option of the wavelengths generator"):
        fabricopt.generate("wavelengths", colour=3)


def test_count_bound_counts_lightpaths_not_just_pairs():
    # Node 0 sends 3e9 B to node 1 over at most W = 3 wavelengths of 8 Gbps: >= 1 s.
    inst = WavelengthsInstance(3, 3, 8.0, 1, [[0, 3e9, 0], [0, 0, 0], [0, 0, 0]])
    assert count_bound(inst) == pytest.approx(1.0)
    # Two pairs share cw segment 0 (1 wavelength each at best): 2 s for 2e9 B.
    inst = WavelengthsInstance(4, 2, 8.0, 1, [[0, 2e9, 0, 0], [0] * 4, [0] * 4, [2e9, 0, 0, 0]])
    assert count_bound(inst) == pytest.approx(1.0)
    inst = WavelengthsInstance(4, 2, 8.0, 2, [[0, 2e9, 2e9, 0], [0] * 4, [0] * 4, [0] * 4])
    assert count_bound(inst) == pytest.approx(2.0)   # 0->1 and 0->2 share cw segment 0


@given(st.integers(2, 12).flatmap(lambda n: st.lists(
    st.sampled_from([0.0, -0.0, 1.0, 2.5e9, 1e-300, 7.0e12]), min_size=n * n, max_size=n * n)))
def test_an_instance_from_an_array_reads_the_same_traffic_as_from_lists(cells):
    n = math.isqrt(len(cells))
    array = np.array(cells).reshape(n, n)
    np.fill_diagonal(array, 0.0)
    from_array = WavelengthsInstance(n, 2, 25.0, 1, array)
    from_lists = WavelengthsInstance(n, 2, 25.0, 1, array.tolist())
    assert from_array.traffic.tobytes() == from_lists.traffic.tobytes()
    assert from_array.traffic_bytes == from_lists.traffic_bytes
    assert not from_array.traffic.flags.writeable
    array[0, 1] = 5.0                                # the instance holds its own copy
    assert from_array.traffic.tobytes() == from_lists.traffic.tobytes()


@given(st.lists(st.integers(0, 300), max_size=60), st.sampled_from([301, 10**9]))
def test_a_repeated_occupancy_code_is_found_by_tally_and_by_sorting(codes, space):
    # space 301: counted; 10**9: past the tally's size limit, found by sorting
    assert _repeats(np.array(codes, np.int64), space) == (len(set(codes)) < len(codes))


@given(st.integers(2, 9).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1),
                                   st.sampled_from(["cw", "ccw"]), st.integers(0, 2)),
                         max_size=30))))
def test_lightpath_counts_tally_each_lightpath_once(case):
    n, paths = case
    instance = WavelengthsInstance(n, 3, 25.0, n - 1, [[0.0] * n for _ in range(n)])
    counts = lightpath_counts(instance, WavelengthsSolution([Lightpath(*p) for p in paths]))
    expected = np.zeros((n, n), np.int64)
    for i, j, _, _ in paths:
        expected[i, j] += 1
    assert counts.dtype == np.int64 and counts.tolist() == expected.tolist()
