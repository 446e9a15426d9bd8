"""The circuits format: round trips, validation messages, checker rules, evaluation."""

import functools
import json
import math
import re

import numpy as np
import pytest
from hypothesis import given, strategies as st

import fabricopt
from fabricopt.algorithms.circuits import decompose, exact, greedy
from fabricopt import InvalidInstance, InvalidSolution
from fabricopt.problems import check, evaluate, instance_from_dict
from fabricopt.problems.circuits import (CircuitsInstance, CircuitsSolution, check_counts,
                                         circuit_counts, evaluate_counts, generate)
from fabricopt.bounds.circuits import port_load_bound

from kind_json import assert_file_round_trip, edited

BASE = {"problem": "circuits", "switches": 2, "circuit_gbps": 8.0,
        "traffic_bytes": [[0, 1e9, 0], [0, 0, 2e9], [3e9, 0, 0]]}


with_ = functools.partial(edited, BASE)


def test_round_trip(tmp_path):
    assert_file_round_trip(BASE, tmp_path)


@pytest.mark.parametrize("data, message", [
    (with_(traffic_bytes=[[0, 1], [0, 0], [0, 0]]), r"traffic_bytes\[0\]: has 2 entries, expected 3"),
    (with_(traffic_bytes=[[0, 1, 0], [0, 0, -5.0], [0, 0, 0]]), r"traffic_bytes\[1\]\[2\] = -5.0: must be >= 0"),
    (with_(traffic_bytes=[[0, float("nan"), 0], [0, 0, 0], [0, 0, 0]]), r"traffic_bytes\[0\]\[1\] = nan: must be finite"),
    (with_(traffic_bytes=[[0, 0, 0], [0, float("inf"), 0], [0, 0, 0]]), r"traffic_bytes\[1\]\[1\] = inf: must be finite"),
    (with_(traffic_bytes=[[1, 0], [0, 0]]), r"traffic_bytes\[0\]\[0\] = 1.0: the diagonal must be 0"),
    (with_(traffic_bytes=[]), r"traffic_bytes = \(\): must have at least one row|traffic_bytes = \[\]"),
    (with_(traffic_bytes="x"), r"traffic_bytes = 'x': must be a list"),
    (with_(switches=0), r"switches = 0: must be >= 1"),
    (with_(traffic_bytes=[[0, 10**400, 0], [0, 0, 0], [0, 0, 0]]), r"traffic_bytes\[0\]\[1\] = <an integer of 401 digits>: must be finite"),
    (with_(traffic_bytes=[[0, "5", 0], [0, 0, 0], [0, 0, 0]]), r"traffic_bytes\[0\]\[1\] = '5': must be a number"),
    (with_(switches=1.5), r"switches = 1.5: must be an integer"),
    (with_(switches=True), r"switches = True: must be an integer"),
    (with_(circuit_gbps=0), r"circuit_gbps = 0.0: must be > 0"),
    (with_(circuit_gbps="fast"), r"circuit_gbps = 'fast': must be a number"),
    (with_(problem="circuit"), r"problem = 'circuit': unknown problem kind"),
    (with_(extra=1), r"extra: unknown field"),
    ({k: v for k, v in BASE.items() if k != "switches"}, r"switches: missing required field"),
])
def test_invalid_instances_name_field_and_value(data, message):
    with pytest.raises(InvalidInstance, match=message):
        instance_from_dict(data)


def test_json_nan_literal_is_rejected(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"problem": "circuits", "switches": 1, "circuit_gbps": NaN, "traffic_bytes": [[0]]}')
    with pytest.raises(InvalidInstance, match="NaN: numbers must be finite"):
        fabricopt.load(path)


def test_not_json(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text("{nope")
    with pytest.raises(InvalidInstance, match="not valid JSON"):
        fabricopt.load(path)


INST = instance_from_dict(BASE)


@pytest.mark.parametrize("configs, reason", [
    ([[1, 2, 0], [None, None, None]], None),
    ([[1, 2, 0], [None, None, 0]], None),
    ([[0, 2, 0], [1, None, None]], r"configs\[0\]\[0\] = 0: a circuit from GPU 0 to itself"),
    ([[2, 2, 0], [None, None, None]], r"configs\[0\]: GPUs 0 and 1 both connect to GPU 2.s port"),
    ([[1, None, 0], [None, None, None]], r"traffic_bytes\[1\]\[2\] = 2000000000.0 has no circuit 1->2"),
])
def test_checker_rules(configs, reason):
    verdict = check(INST, CircuitsSolution(configs))
    assert verdict.feasible is (reason is None)
    if reason:
        assert re.search(reason, verdict.reason)


@pytest.mark.parametrize("configs, message", [
    ([[1, 2, 0]], r"configs: has 1 switches, the instance has 2"),
    ([[1, 2], [None, None]], r"configs\[0\]: has 2 ports, the instance has 3 GPUs"),
    ([[1, 2, 7], [None, None, None]], r"configs\[0\]\[2\] = 7: unknown GPU"),
    ([[1, 2, -1], [None, None, None]], r"configs\[0\]\[2\] = -1: must be >= 0"),
    ([[1, 2, "a"], [None, None, None]], r"configs\[0\]\[2\] = 'a': must be an integer"),
])
def test_invalid_solutions(configs, message):
    with pytest.raises(InvalidSolution, match=message):
        check(INST, CircuitsSolution(configs))


def test_evaluate_is_max_transfer_time():
    # 1e9 B over 1 circuit of 8 Gbps = 1 s; 2e9 B over 1 = 2 s; 3e9 over 2 circuits = 1.5 s
    sol = CircuitsSolution([[1, 2, 0], [None, None, 0]])
    assert check(INST, sol)
    assert evaluate(INST, sol) == pytest.approx(2.0)
    assert circuit_counts(INST, sol)[2, 0] == 2


@pytest.mark.parametrize("counts, reason", [
    ([[0, 1, 0], [0, 0, 1], [2, 0, 0]], None),
    (np.array([[0, 1, 1], [0, 0, 1], [1, 0, 0]], dtype=np.uint8), None),
    ([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]], None),
    ([[1, 1, 0], [0, 0, 1], [1, 0, 0]], r"counts\[0\]\[0\] = 1: circuits from GPU 0 to itself"),
    ([[0, 3, 0], [0, 0, 1], [1, 0, 0]],
     r"counts\[0\]\[1\] = 3: more circuits than GPU 0's 2 ports \(switches = 2\)"),
    ([[0, 2, 1], [0, 0, 1], [1, 0, 0]],
     r"counts\[0\]: GPU 0 sends on 3 circuits but has 2 ports \(switches = 2\)"),
    ([[0, 1, 1], [0, 0, 2], [1, 0, 0]],
     r"counts\[:\]\[2\]: GPU 2 receives on 3 circuits but has 2 ports \(switches = 2\)"),
    ([[0, 1, 0], [0, 0, 0], [1, 0, 0]], r"traffic_bytes\[1\]\[2\] = 2000000000.0 has no circuit 1->2"),
    ([[0, 1, 0], [0, 0, 1], [2**70, 0, 0]], r"counts\[2\]\[0\] = 1.1805916207174113e\+21: more"),
])
def test_counts_checker_rules(counts, reason):
    verdict = check_counts(INST, counts)
    assert verdict.feasible is (reason is None)
    if reason:
        assert re.search(reason, verdict.reason)


@pytest.mark.parametrize("counts, message", [
    ([[0, 1], [1, 0]], r"counts = \[\[0, 1\], \[1, 0\]\]: has shape \(2, 2\), not \(3, 3\): the "
                       r"instance has 3 GPUs"),
    ([[0, 1, 0], [0, 0, 1], [1, 0]], r"counts = .*: must be an N x N matrix of integers \(N = 3 GPUs\)"),
    ([[0, 1.5, 0], [0, 0, 1], [1, 0, 0]], r"counts\[0\]\[1\] = 1.5: must be an integer >= 0"),
    ([[0, 1, 0], [0, 0, -1], [1, 0, 0]], r"counts\[1\]\[2\] = -1: must be an integer >= 0"),
    ([[0, 1, 0], [0, 0, 1], [float("nan"), 0, 0]], r"counts\[2\]\[0\] = nan: must be an integer"),
    ([[0, 1, None], [0, 0, 1], [1, 0, 0]], r"counts\[0\]\[2\] = None: must be an integer >= 0"),
    ([[0, 1, 0], [0, 0, "1"], [1, 0, 0]], r"counts = .*: must be an N x N matrix of integers "
                                          r"\(N = 3 GPUs\), not of <U21"),
    ([[False, True, False]] * 3, r"not of bool"),
    ("x", r"counts = 'x': has shape \(\), not \(3, 3\)"),
])
def test_invalid_counts_name_the_cell(counts, message):
    with pytest.raises(InvalidSolution, match=message):
        check_counts(INST, counts)
    with pytest.raises(InvalidSolution, match=message):
        evaluate_counts(INST, counts)


@st.composite
def partial_permutation_solutions(draw):
    """An instance and a solution whose switches are partial permutations (self-circuits
    allowed), so that ``check`` and ``check_counts`` see the same rules."""
    n, q = draw(st.integers(1, 7)), draw(st.integers(1, 4))
    cells = draw(st.lists(st.sampled_from([0.0, 0.0, 1.0, 3e5, 2e9]), min_size=n * n,
                          max_size=n * n))
    traffic = np.array(cells).reshape(n, n)
    np.fill_diagonal(traffic, 0.0)
    configs = []
    for _ in range(q):
        targets = draw(st.permutations(range(n)))
        configs.append([j if draw(st.booleans()) else None for j in targets])
    return CircuitsInstance(q, draw(st.sampled_from([1.0, 25.0, 400.0])), traffic), \
        CircuitsSolution(configs)


@given(partial_permutation_solutions())
def test_counts_check_and_score_as_any_solution_with_those_counts(case):
    inst, sol = case
    counts = circuit_counts(inst, sol)
    assert check_counts(inst, counts).feasible is check(inst, sol).feasible
    assert evaluate_counts(inst, counts) == evaluate(inst, sol)     # bit-equal


@st.composite
def bounded_counts(draw):
    """Counts with row and column sums <= Q and a zero diagonal, and traffic on a subset
    of the pairs they serve."""
    n, q = draw(st.integers(1, 8)), draw(st.integers(1, 5))
    counts = np.zeros((n, n), dtype=np.int64)
    for i, j in draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)),
                              max_size=4 * n * q)):
        if i != j and counts[i].sum() < q and counts[:, j].sum() < q:
            counts[i, j] += 1
    served = np.argwhere(counts > 0)
    traffic = np.zeros((n, n))
    for i, j in served:
        if draw(st.booleans()):
            traffic[i, j] = draw(st.floats(1.0, 1e10))
    return CircuitsInstance(q, 100.0, traffic), counts


@given(bounded_counts())
def test_counts_that_pass_are_the_counts_of_a_feasible_solution(case):
    # König: decompose splits them into one partial permutation per switch
    inst, counts = case
    assert check_counts(inst, counts)
    sol = CircuitsSolution(decompose(counts, inst.switches))
    assert check(inst, sol)
    assert np.array_equal(circuit_counts(inst, sol), counts)
    assert evaluate_counts(inst, counts) == evaluate(inst, sol)


def test_no_traffic_scores_zero():
    inst = CircuitsInstance(1, 1.0, [[0, 0], [0, 0]])
    assert evaluate(inst, CircuitsSolution([[None, None]])) == 0.0
    assert port_load_bound(inst) == 0.0


def test_infeasible_solution_scores_inf():
    assert math.isinf(evaluate(INST, CircuitsSolution([[None] * 3, [None] * 3])))


@given(seed=st.integers(0, 10**6), gpus=st.integers(2, 12), switches=st.integers(1, 4))
def test_generator_is_valid_seeded_and_feasible(seed, gpus, switches):
    a = generate(seed, gpus=gpus, switches=switches)
    assert a == generate(seed, gpus=gpus, switches=switches)
    assert ((a.traffic > 0).sum(axis=1) <= switches).all()
    assert instance_from_dict(json.loads(fabricopt.dump(a))) == a


def test_skewed_family_spreads_sizes_and_greedy_stays_optimal():
    flat, skewed = (generate(3, gpus=32, switches=8, skew=s) for s in (1.0, 3.0))
    spread = [np.log10(np.percentile(t[t > 0], 99) / np.percentile(t[t > 0], 1))
              for t in (flat.traffic, skewed.traffic)]
    assert spread[1] > 2 * spread[0] and spread[1] > 4
    # greedy is optimal on every instance (heuristics.circuits.greedy's Notes)
    assert evaluate(skewed, greedy(skewed)) == pytest.approx(evaluate(skewed, exact(skewed)))


def test_generator_rejects_bad_sizes():
    with pytest.raises(InvalidInstance, match="gpus = 1: must be >= 2"):
        generate(0, gpus=1)
    with pytest.raises(InvalidInstance, match="skew = 0.0: must be > 0"):
        generate(0, skew=0.0)
    with pytest.raises(ValueError, match="colour: not a size option of the circuits generator"):
        fabricopt.generate("circuits", colour=3)
