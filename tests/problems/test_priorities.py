"""The priorities format: round trips, validation messages, the DAG, checker rules."""

import functools
import json
import re

import pytest
from hypothesis import given, strategies as st

import fabricopt
from fabricopt import InvalidInstance, InvalidSolution
from fabricopt.problems import check, evaluate, instance_from_dict
from fabricopt.problems.priorities import (PrioritiesInstance, PrioritiesSolution, dag_edges,
                                           generate)
from fabricopt.bounds.priorities import cut_weight_bound

from crux_helpers import brute_force_priorities
from kind_json import assert_file_round_trip, edited, item_edited

BASE = {"problem": "priorities", "levels": 2,
        "jobs": [{"id": "J1", "priority": 4.0, "intensity": 4.0},
                 {"id": "J2", "priority": 3.0, "intensity": 3.0},
                 {"id": "J3", "priority": 2.0, "intensity": 2.0},
                 {"id": "J4", "priority": 1.0, "intensity": 1.0}],
        "contention": [["J1", "J2"], ["J3", "J4"]]}


with_ = functools.partial(edited, BASE)


def jobs_with(k, **changes):
    return item_edited(BASE["jobs"], k, **changes)


def test_round_trip(tmp_path):
    assert_file_round_trip(BASE, tmp_path)


@pytest.mark.parametrize("data, message", [
    (with_(levels=0), r"levels = 0: must be >= 1"),
    (with_(levels=2.5), r"levels = 2.5: must be an integer"),
    (with_(jobs=[]), r"jobs = \[\]: must list at least one job"),
    (with_(jobs="x"), r"jobs = 'x': must be a list"),
    (with_(jobs=[3]), r"jobs\[0\] = 3: must be an object with id, priority, intensity"),
    (with_(jobs=jobs_with(2, id="J1")), r"jobs\[2\].id = 'J1': repeats jobs\[0\].id"),
    (with_(jobs=jobs_with(1, id="")), r"jobs\[1\].id = '': must be a non-empty string"),
    (with_(jobs=jobs_with(1, priority=float("nan"))), r"jobs\[1\].priority = nan: must be finite"),
    (with_(jobs=jobs_with(1, intensity=-1.0)), r"jobs\[1\].intensity = -1.0: must be >= 0"),
    (with_(jobs=jobs_with(0, intensity=float("inf"))), r"jobs\[0\].intensity = inf: must be finite"),
    (with_(jobs=jobs_with(0, colour=1)), r"jobs\[0\].colour: unknown field"),
    (with_(jobs=[{"id": "a", "priority": 1}]), r"jobs\[0\].intensity: missing required field"),
    (with_(contention=[["J1", "J9"]]), r"contention\[0\]\[1\] = 'J9': unknown job"),
    (with_(contention=[["J1", "J1"]]), r"contention\[0\] = \['J1', 'J1'\]: a job cannot contend with itself"),
    (with_(contention=[["J1"]]), r"contention\[0\]: has 1 entries, expected 2"),
    (with_(contention=[["J1", 2]]), r"contention\[0\]\[1\] = 2: must be a non-empty string"),
    (with_(problem="priority"), r"problem = 'priority': unknown problem kind"),
    (with_(extra=1), r"extra: unknown field"),
    ({k: v for k, v in BASE.items() if k != "contention"}, r"contention: missing required field"),
])
def test_invalid_instances_name_field_and_value(data, message):
    with pytest.raises(InvalidInstance, match=message):
        instance_from_dict(data)


def test_dag_has_one_edge_per_pair_from_higher_to_lower():
    inst = instance_from_dict(with_(contention=[["J2", "J1"], ["J1", "J2"], ["J4", "J3"]]))
    assert inst.edges == ((0, 1, 4.0), (2, 3, 2.0))


def test_priority_tie_goes_to_the_smaller_id():
    assert dag_edges(["b", "a"], [1.0, 1.0], [7.0, 9.0], [(0, 1)]) == ((1, 0, 9.0),)


INST = instance_from_dict(BASE)


@pytest.mark.parametrize("level, reason, value", [
    ({"J1": 1, "J2": 0, "J3": 1, "J4": 0}, None, 6.0),     # Crux, Figure 13
    ({"J1": 1, "J2": 0, "J3": 0, "J4": 0}, None, 4.0),     # Sincronia
    ({"J1": 1, "J2": 1, "J3": 0, "J4": 0}, None, 0.0),     # Varys
    ({"J1": 0, "J2": 1, "J3": 1, "J4": 0},
     r"job 'J1' \(priority 4\) outranks 'J2' \(priority 3\), which it contends with, "
     r"but is on level 0 below 1", None),
])
def test_checker_and_cut_weight(level, reason, value):
    sol = PrioritiesSolution(level)
    verdict = check(INST, sol)
    assert verdict.feasible is (reason is None)
    if reason:
        assert re.search(reason, verdict.reason)
    else:
        assert evaluate(INST, sol) == value


@pytest.mark.parametrize("level, message", [
    ({"J1": 1, "J2": 0, "J3": 1}, r"level: job 'J4' has no level"),
    ({"J1": 1, "J2": 0, "J3": 1, "J4": 0, "J5": 0}, r"level\['J5'\] = 0: unknown job"),
    ({"J1": 2, "J2": 0, "J3": 1, "J4": 0}, r"level\['J1'\] = 2: no such level \(levels are 0..1\)"),
])
def test_invalid_solutions_for_the_instance(level, message):
    with pytest.raises(InvalidSolution, match=message):
        check(INST, PrioritiesSolution(level))


@pytest.mark.parametrize("level, message", [
    ({"J1": -1}, r"level\['J1'\] = -1: must be >= 0"),
    ({"J1": 0.5}, r"level\['J1'\] = 0.5: must be an integer"),
    ([1, 0], r"level = \[1, 0\]: must be an object mapping job ids to levels"),
])
def test_malformed_solutions(level, message):
    with pytest.raises(InvalidSolution, match=message):
        PrioritiesSolution(level)


def test_solution_round_trip():
    sol = PrioritiesSolution({"J1": 1, "J2": 0})
    assert PrioritiesSolution.from_dict(json.loads(json.dumps(sol.to_dict()))) == sol


@given(st.integers(0, 10**6), st.integers(1, 6), st.integers(1, 3))
def test_bound_is_valid_and_generator_seeded(seed, jobs, levels):
    inst = generate(seed, jobs=jobs, levels=levels)
    assert inst == generate(seed, jobs=jobs, levels=levels)
    assert instance_from_dict(json.loads(fabricopt.dump(inst))) == inst
    assert brute_force_priorities(inst) <= cut_weight_bound(inst) + 1e-9


def test_bound_is_attained_with_enough_levels():
    inst = instance_from_dict(with_(levels=2))
    assert brute_force_priorities(inst) == cut_weight_bound(inst) == 6.0
    assert cut_weight_bound(instance_from_dict(with_(levels=1))) == 0.0


def test_generator_rejects_bad_sizes():
    with pytest.raises(InvalidInstance, match="jobs = 0: must be >= 1"):
        generate(0, jobs=0)
    with pytest.raises(InvalidInstance, match="links_per_job = 5: must be <= 2"):
        generate(0, jobs=4, links=2, links_per_job=5)
