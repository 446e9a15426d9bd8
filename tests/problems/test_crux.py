"""The crux format: round trips, validation, checker rules, evaluation, generator, bound."""

import dataclasses
import functools
import json
import re

import pytest
from hypothesis import given, settings, strategies as st

import fabricopt
from fabricopt import InvalidInstance, InvalidSolution
from fabricopt.problems import check, evaluate, instance_from_dict
from fabricopt.problems.crux import CruxInstance, CruxSolution, contending_pairs, generate
from fabricopt.bounds.crux import utilization_bound

from kind_json import assert_file_round_trip, edited, item_edited

PATHS = [["tor0-agg0", "agg0-tor1"], ["tor0-agg1", "agg1-tor1"]]
BASE = {"problem": "crux", "levels": 2,
        "links": {"tor0-agg0": 8.0, "agg0-tor1": 8.0, "tor0-agg1": 8.0, "agg1-tor1": 8.0},
        "jobs": [{"id": "j1", "gpus": 10, "compute_s": 2.0, "overlap": 1.0,
                  "flows": [{"bytes": 2e9, "paths": PATHS}]},
                 {"id": "j2", "gpus": 10, "compute_s": 1.0, "overlap": 1.0,
                  "flows": [{"bytes": 1e9, "paths": PATHS}]}],
        "warmup_s": 120.0, "window_s": 60.0}


with_ = functools.partial(edited, BASE)


def job_with(k, **changes):
    return item_edited(BASE["jobs"], k, **changes)


def flow_with(**changes):
    return job_with(0, flows=[{**BASE["jobs"][0]["flows"][0], **changes}])


def test_round_trip(tmp_path):
    assert_file_round_trip(BASE, tmp_path)


@pytest.mark.parametrize("data, message", [
    (with_(levels=0), r"levels = 0: must be >= 1"),
    (with_(links=[]), r"links = \[\]: must be an object mapping link names to Gbps"),
    (with_(links={"a": -1.0}), r"links\['a'\] = -1.0: must be > 0"),
    (with_(links={"a": float("nan")}), r"links\['a'\] = nan: must be finite"),
    (with_(jobs=[]), r"jobs = \[\]: must list at least one job"),
    (with_(jobs=job_with(1, id="j1")), r"jobs\[1\].id = 'j1': repeats jobs\[0\].id"),
    (with_(jobs=job_with(0, gpus=0)), r"jobs\[0\].gpus = 0: must be >= 1"),
    (with_(jobs=job_with(0, compute_s=0)), r"jobs\[0\].compute_s = 0.0: must be > 0"),
    (with_(jobs=job_with(0, compute_s=float("nan"))), r"jobs\[0\].compute_s = nan: must be finite"),
    (with_(jobs=job_with(0, overlap=1.5)), r"jobs\[0\].overlap = 1.5: must be <= 1"),
    (with_(jobs=job_with(0, overlap=-0.1)), r"jobs\[0\].overlap = -0.1: must be >= 0"),
    (with_(jobs=job_with(0, flows="x")), r"jobs\[0\].flows = 'x': must be a list"),
    (with_(jobs=job_with(0, speed=1)), r"jobs\[0\].speed: unknown field"),
    (with_(jobs=flow_with(bytes=-5.0)), r"jobs\[0\].flows\[0\].bytes = -5.0: must be > 0"),
    (with_(jobs=flow_with(paths=[])), r"jobs\[0\].flows\[0\].paths = \[\]: must list at least one"),
    (with_(jobs=flow_with(paths=[[]])), r"jobs\[0\].flows\[0\].paths\[0\] = \[\]: a path must name"),
    (with_(jobs=flow_with(paths=[["tor0-agg0", "nowhere"]])),
     r"jobs\[0\].flows\[0\].paths\[0\]\[1\] = 'nowhere': unknown link"),
    (with_(jobs=flow_with(paths=[["tor0-agg0", "tor0-agg0"]])),
     r"jobs\[0\].flows\[0\].paths\[0\]\[1\] = 'tor0-agg0': the path uses this link twice"),
    (with_(jobs=job_with(0, flows=[{"paths": PATHS}])),
     r"jobs\[0\].flows\[0\].bytes: missing required field"),
    (with_(warmup_s=-1.0), r"warmup_s = -1.0: must be >= 0"),
    (with_(window_s=0), r"window_s = 0.0: must be > 0"),
    (with_(extra=1), r"extra: unknown field"),
])
def test_invalid_instances_name_field_and_value(data, message):
    with pytest.raises(InvalidInstance, match=message):
        instance_from_dict(data)


INST = instance_from_dict(BASE)


def sol(path1=0, path2=0, prio=(5.0, 7.5), level=(0, 1)):
    return CruxSolution({"j1": [path1], "j2": [path2]}, {"j1": prio[0], "j2": prio[1]},
                        {"j1": level[0], "j2": level[1]})


@pytest.mark.parametrize("solution, value", [
    (sol(level=(1, 0), prio=(7.5, 5.0)), 0.375),   # Crux Example 1: Job 1 first
    (sol(), 5 / 12),                               # Job 2 first (Crux's choice)
    (sol(level=(0, 0), prio=(0.0, 0.0)), 0.40),    # one shared level
    (sol(path1=1), 0.5),                           # disjoint paths: each alone, 50 %
])
def test_evaluate_example1(solution, value):
    assert check(INST, solution)
    assert evaluate(INST, solution) == pytest.approx(value, abs=1e-12)


def test_levels_must_be_a_valid_compression_of_the_priorities():
    verdict = check(INST, sol(level=(1, 0)))       # j2 has the higher priority
    assert not verdict.feasible
    assert re.search(r"jobs 'j2' \(priority 7.5\) and 'j1' \(priority 5\) share link "
                     r"'agg0-tor1', but 'j2' is on level 0 below 1", verdict.reason)
    assert check(INST, sol(path1=1, level=(1, 0)))  # no shared link, no constraint


def test_equal_priorities_allow_any_levels():
    # The simulator reads only levels; a tie orders nothing (docs/formats.rst, crux).
    assert check(INST, sol(prio=(1.0, 1.0), level=(0, 1)))
    assert check(INST, sol(prio=(1.0, 1.0), level=(1, 0)))


@pytest.mark.parametrize("solution, message", [
    (CruxSolution({"j1": [0]}, {"j1": 1, "j2": 1}, {"j1": 0, "j2": 0}), r"path: job 'j2' is missing"),
    (CruxSolution({"j1": [0], "j2": [0], "j3": [0]}, {"j1": 1, "j2": 1}, {"j1": 0, "j2": 0}),
     r"path\['j3'\] = \(0,\): unknown job"),
    (CruxSolution({"j1": [0], "j2": [0]}, {"j1": 1}, {"j1": 0, "j2": 0}), r"priority: job 'j2' is missing"),
    (CruxSolution({"j1": [0, 1], "j2": [0]}, {"j1": 1, "j2": 1}, {"j1": 0, "j2": 0}),
     r"path\['j1'\]: has 2 entries, the job has 1 flows"),
    (CruxSolution({"j1": [2], "j2": [0]}, {"j1": 1, "j2": 1}, {"j1": 0, "j2": 0}),
     r"path\['j1'\]\[0\] = 2: no such candidate path \(the flow has 2\)"),
    (CruxSolution({"j1": [0], "j2": [0]}, {"j1": 1, "j2": 1}, {"j1": 2, "j2": 0}),
     r"level\['j1'\] = 2: no such level"),
    (CruxSolution({"j1": [0], "j2": [0]}, {"j1": 1, "j2": 1}, {"j1": 0}), r"level: job 'j2' has no level"),
])
def test_invalid_solutions_for_the_instance(solution, message):
    with pytest.raises(InvalidSolution, match=message):
        check(INST, solution)
    with pytest.raises(InvalidSolution, match=message):
        evaluate(INST, solution)


@pytest.mark.parametrize("args, message", [
    (({"j1": [-1]}, {}, {}), r"path\['j1'\]\[0\] = -1: must be >= 0"),
    (({"j1": 0}, {}, {}), r"path\['j1'\] = 0: must be a list"),
    (({}, {"j1": float("nan")}, {}), r"priority\['j1'\] = nan: must be finite"),
    (({}, [], {}), r"priority = \[\]: must be an object keyed by job id"),
    (({}, {}, {"j1": 1.5}), r"level\['j1'\] = 1.5: must be an integer"),
])
def test_malformed_solutions(args, message):
    with pytest.raises(InvalidSolution, match=message):
        CruxSolution(*args)


def test_solution_round_trip():
    s = sol()
    assert CruxSolution.from_dict(json.loads(json.dumps(s.to_dict()))) == s


def test_contending_pairs_follow_the_chosen_paths():
    assert contending_pairs(INST, {"j1": [0], "j2": [0]}) == {(0, 1): "agg0-tor1"}
    assert contending_pairs(INST, {"j1": [0], "j2": [1]}) == {}


def test_default_window_is_set_by_the_longest_standalone_iteration():
    inst = instance_from_dict(with_(warmup_s=None, window_s=None))
    assert inst.standalone_iteration_s == (4.0, 2.0)
    assert (inst.warmup, inst.window) == (40.0, 200.0)


def test_bound_of_example1():
    # standalone 4 s and 2 s iterations: at most ceil(62/4)=16 and ceil(61/2)=31 compute phases
    assert utilization_bound(INST) == pytest.approx((10 * 32 + 10 * 31) / (20 * 60))


@settings(max_examples=10)
@given(st.integers(0, 10**6))
def test_generator_is_seeded_valid_and_bounded(seed):
    inst = generate(seed, jobs=3, tors=2, hosts_per_tor=3)
    assert inst == generate(seed, jobs=3, tors=2, hosts_per_tor=3)
    assert instance_from_dict(json.loads(fabricopt.dump(inst))) == inst
    short = dataclasses.replace(inst, warmup_s=None, window_s=None)
    first = CruxSolution({j.id: [0] * len(j.flows) for j in inst.jobs},
                         {j.id: 0.0 for j in inst.jobs}, {j.id: 0 for j in inst.jobs})
    assert check(short, first)
    assert 0.0 <= evaluate(short, first) <= utilization_bound(short) + 1e-12


def test_generator_defaults_follow_the_paper_microbenchmark():
    inst = generate(7)
    assert len(inst.jobs) == 5 and inst.levels == 3
    tors = {e.split("-")[0] for e in inst.links if e.startswith("tor")}
    aggs = {e.split("-")[0] for e in inst.links if e.startswith("agg")}
    assert 2 <= len(tors) <= 4 and len(aggs) == 2
    assert sum(j.gpus for j in inst.jobs) <= 20 * 8


@pytest.mark.parametrize("kwargs, message", [
    ({"jobs": 30, "tors": 2, "hosts_per_tor": 5}, r"jobs = 30: exceeds the 10 hosts"),
    ({"aggs": 0}, r"aggs = 0: must be >= 1"),
    ({"placement": "spread"}, r"placement = 'spread': must be 'packed' or 'random'"),
    ({"uplink_gbps": 0}, r"uplink_gbps = 0.0: must be > 0"),
])
def test_generator_rejects_bad_sizes(kwargs, message):
    with pytest.raises(InvalidInstance, match=message):
        generate(0, **kwargs)


def test_example_1_with_equal_priorities_checks_feasible():
    # Crux Example 1's best configuration written with priorities 5/5.
    import fabricopt

    inst = fabricopt.problems.instance_from_dict({
        "problem": "crux", "levels": 2, "links": {"L": 100.0},
        "jobs": [{"id": "job1", "gpus": 10, "compute_s": 2.0, "overlap": 1.0,
                  "flows": [{"bytes": 2.5e10, "paths": [["L"]]}]},
                 {"id": "job2", "gpus": 10, "compute_s": 1.0, "overlap": 1.0,
                  "flows": [{"bytes": 1.25e10, "paths": [["L"]]}]}],
        "warmup_s": 120.0, "window_s": 120.0})
    solution = fabricopt.problems.solution_from_dict(
        "crux", {"path": {"job1": [0], "job2": [0]}, "priority": {"job1": 5, "job2": 5},
                 "level": {"job1": 0, "job2": 1}})
    assert fabricopt.check(inst, solution).feasible
    assert fabricopt.evaluate(inst, solution) == pytest.approx(5 / 12, rel=1e-6)
