"""``check_method`` and ``assert_valid`` catch every kind of broken method, and pass
correct ones (including a randomized method that honours its seed)."""

import dataclasses
import itertools

import numpy as np
import pytest

import fabricopt
from fabricopt import InfeasibleInstance, SolverOutput
from fabricopt.algorithms.circuits import decompose, exact, require_feasible
from fabricopt.problems.circuits import CircuitsSolution
from fabricopt.testing import MethodCheckError, assert_valid, check_method

pytest_plugins = ["fabricopt.testing.pytest_plugin"]

# Enough examples that a random (dev-profile) run meets an instance that exposes each
# fault; the derandomized CI profile replays the same ones every time.
EXAMPLES = 40


def one_circuit_each(instance) -> CircuitsSolution:
    """Feasible, and not optimal whenever a pair could use a spare port."""
    require_feasible(instance)
    return CircuitsSolution(decompose((instance.traffic > 0).astype(int), instance.switches))


def claims_optimal(instance):
    return SolverOutput(one_circuit_each(instance), "optimal")


def claims_own_objective_as_bound(instance):
    solution = one_circuit_each(instance)
    return SolverOutput(solution, "feasible", bound=fabricopt.evaluate(instance, solution))


def leaves_ports_unused(instance):
    return CircuitsSolution([[None] * instance.gpus for _ in range(instance.switches)])


_calls = itertools.count()


def rotates_switches_every_call(instance, *, seed=0):
    configs = exact(instance).configs
    k = next(_calls) % len(configs)
    return CircuitsSolution(configs[k:] + configs[:k])


def shuffles_with_its_seed(instance, *, seed=0):
    configs = list(exact(instance).configs)
    np.random.default_rng(seed).shuffle(configs)
    return CircuitsSolution(configs)


def raises(instance):
    raise RuntimeError("kaput")


def returns_json(instance):
    return exact(instance).to_dict()


def gives_up(instance):
    raise InfeasibleInstance("too hard for me")


def returns_nothing(instance):
    return None


def one_circuit_each_claimed_optimal(instance, *, time_limit=None, seed=0):
    return SolverOutput(one_circuit_each(instance), "optimal")


@pytest.mark.parametrize("fn, rule", [
    (claims_optimal, r"claimed optimal, which solve rejected: method 'broken' is not "
                     r"declared exact"),
    (claims_own_objective_as_bound, r"bound .* is above the optimum .* proven by exact method"),
    (leaves_ports_unused, r"status error: method 'broken' returned an infeasible solution: "
                          r"traffic_bytes\[\d\]\[\d\] = .* has no circuit"),
    (rotates_switches_every_call, r"seed \d+ gave two different answers"),
    (raises, r"status error: method 'broken' raised RuntimeError: kaput"),
    (returns_json, r"status error: method 'broken' returned a dict, expected a CircuitsSolution"),
    (gives_up, r"reported infeasible \(too hard for me\) but exact method '\w+' found a solution"),
    (returns_nothing, r"returned no solution \(only exact methods may run out of time\)"),
])
def test_broken_method_is_caught(temporary_method, fn, rule):
    temporary_method("circuits", "broken", fn)
    with pytest.raises(MethodCheckError, match=r"^circuits/broken: " + rule):
        # The polynomial exact method is reference enough, and cheap while shrinking.
        check_method("circuits", "broken", examples=EXAMPLES, references=["exact"])


def test_a_milp_reference_catches_a_false_optimality_claim(temporary_method):
    temporary_method("circuits", "broken", claims_optimal, exact=True)
    with pytest.raises(MethodCheckError, match=r"^circuits/broken: .* exact method 'milp'"):
        check_method("circuits", "broken", examples=EXAMPLES, references=["milp"])


def test_better_than_a_proven_optimum_exposes_the_false_proof(temporary_method):
    # A wrong "exact" method: check_method of the real one reports that it beats the
    # optimum the wrong one claims to have proven.
    temporary_method("circuits", "fake-exact", one_circuit_each_claimed_optimal, exact=True)
    with pytest.raises(MethodCheckError, match=r"^circuits/exact: objective .* is better than "
                                               r"the optimum .* proven by exact method "
                                               r"'fake-exact'"):
        check_method("circuits", "exact", examples=EXAMPLES, references=["fake-exact"])


def test_a_failing_reference_is_reported_as_such(temporary_method):
    temporary_method("circuits", "broken-exact", raises, exact=True)
    with pytest.raises(MethodCheckError, match=r"^circuits/greedy: cannot be compared: exact "
                                               r"method 'broken-exact' failed on this instance: "
                                               r"method 'broken-exact' raised RuntimeError"):
        check_method("circuits", "greedy", examples=5, references=["broken-exact"])


def test_correct_methods_pass(temporary_method):
    temporary_method("circuits", "ones", one_circuit_each)
    temporary_method("circuits", "shuffled", shuffles_with_its_seed)
    check_method("circuits", "ones", examples=10)
    check_method("circuits", "shuffled", examples=10)


def test_check_method_fixture_is_check_method(check_method):
    assert check_method is globals()["check_method"]


def test_references_must_be_exact():
    with pytest.raises(ValueError, match="references: 'greedy' is not an exact method"):
        check_method("circuits", "exact", references=["greedy"])
    with pytest.raises(fabricopt.SolverUnavailable, match="method = 'nope'"):
        check_method("circuits", "nope")


INST = fabricopt.generate("circuits", seed=4, gpus=5, switches=2)


@pytest.mark.parametrize("change, rule", [
    (dict(objective=1.0), r"reported objective 1\.0 != evaluate"),
    (dict(bound=1.0), r"bound 1\.0 is above the objective"),
    (dict(status="optimal", bound=1e-5), r"status optimal but bound 1e-05 != objective"),
    (dict(gap=0.5), r"gap 0\.5 != relative_gap"),
    (dict(status="error", info={"message": "boom"}), "status error: boom"),
    (dict(status="no_solution"), "status no_solution with a solution"),
    (dict(solution=None), "status feasible without a solution"),
    (dict(sense="max"), "sense 'max', the kind's is 'min'"),
    (dict(info={"obj": float("nan")}), "the envelope is not JSON"),
    (dict(solution=CircuitsSolution([[None] * 5] * 2)), "the solution is infeasible"),
])
def test_assert_valid_catches_each_broken_rule(change, rule):
    good = fabricopt.solve(INST, "greedy")
    assert_valid(INST, good)
    assert_valid(INST, good.to_dict())  # the JSON envelope works too
    with pytest.raises(MethodCheckError, match=rule):
        assert_valid(INST, dataclasses.replace(good, **change))
