"""fabricopt/testing/checks.py: the envelope rules and check_method's branches that
tests/testing/test_check_method.py leaves out."""

import dataclasses
import itertools
import math

import pytest

import fabricopt
from fabricopt import SolverOutput
from fabricopt.algorithms.circuits import exact
from fabricopt.problems.circuits import CircuitsSolution
from fabricopt.testing import checks
from fabricopt.testing.checks import MethodCheckError, assert_valid, check_method

pytest_plugins = ["fabricopt.testing.pytest_plugin"]

INST = fabricopt.generate("circuits", seed=4, gpus=5, switches=2)


@pytest.mark.parametrize("change, rule", [
    (dict(problem="wavelengths"), "result is for problem 'wavelengths', the instance is circuits"),
    (dict(status="solved"), "status 'solved' is not one of optimal, feasible"),
    (dict(status="no_solution", solution=None, objective=1.0, bound=None, gap=None),
     "objective 1.0 without a solution"),
    (dict(bound=math.nan), "bound is NaN"),
])
def test_assert_valid_catches_the_other_rules(change, rule):
    good = fabricopt.solve(INST, "greedy")
    label = change.get("problem", "circuits")  # the label names the result's own kind
    with pytest.raises(MethodCheckError, match=rf"^{label}/greedy: " + rule):
        assert_valid(INST, dataclasses.replace(good, **change))


def test_tolerances_by_hand():
    assert checks._close(1.0, 1.0 + 1e-10, 1e-9) and not checks._close(1.0, 1.01, 1e-9)
    # relative only, so the same at every scale: 1e-13 s is not 0 s
    assert not checks._close(0.0, 1e-13, 1e-9) and checks._close(1e-13, 1e-13 * (1 + 1e-10), 1e-9)
    # "no better than": above the reference when minimizing, below when maximizing
    assert checks._worse_or_equal("min", 2.0, 1.0, 0.0)
    assert not checks._worse_or_equal("min", 0.9, 1.0, 1e-9)
    assert checks._worse_or_equal("min", 1.0 - 1e-10, 1.0, 1e-9)
    assert checks._worse_or_equal("max", 0.5, 1.0, 0.0)
    assert not checks._worse_or_equal("max", 1.1, 1.0, 1e-9)


def test_a_bound_only_method_may_not_return_a_solution(temporary_method):
    temporary_method("circuits", "leaky-bound", lambda inst: SolverOutput(exact(inst), "feasible"),
                     bound_only=True)
    with pytest.raises(MethodCheckError, match="^circuits/leaky-bound: a bound-only method "
                                               "returned a solution"):
        check_method("circuits", "leaky-bound", examples=3, references=[])


def test_a_reference_that_calls_a_solved_instance_infeasible_is_caught(temporary_method):
    def never(inst):
        raise fabricopt.InfeasibleInstance("no circuits today")

    temporary_method("circuits", "pessimist", never, exact=True)
    with pytest.raises(MethodCheckError, match=r"^circuits/greedy: has a feasible solution but "
                                               r"exact method 'pessimist' reported infeasible "
                                               r"\(no circuits today\)"):
        check_method("circuits", "greedy", examples=3, references=["pessimist"])


_calls = itertools.count()


def rotating(instance, *, time_limit=None, seed=0):
    """A different (equally good) answer on every call."""
    configs = exact(instance).configs
    k = next(_calls) % len(configs)
    return SolverOutput(CircuitsSolution(configs[k:] + configs[:k]), "feasible")


def test_a_time_limited_exact_method_may_answer_differently(temporary_method):
    # Its incumbent depends on the wall clock; a heuristic's may not (test_check_method).
    temporary_method("circuits", "clocked", rotating, exact=True)
    check_method("circuits", "clocked", examples=5, references=[])
    temporary_method("circuits", "clocked-heuristic", rotating)
    with pytest.raises(MethodCheckError, match="gave two different answers"):
        check_method("circuits", "clocked-heuristic", examples=5, references=[])


def test_examples_come_from_the_environment_variable(temporary_method, monkeypatch):
    calls = []

    def counted(instance):
        calls.append(instance)
        return exact(instance)

    temporary_method("circuits", "counted", counted)
    monkeypatch.setenv(checks.EXAMPLES_ENV_VAR, "3")
    check_method("circuits", "counted", references=[])
    assert len(calls) == 2 * 3  # each example is solved twice (the determinism rule)
    calls.clear()
    check_method("circuits", "counted", examples=2, references=[])  # an argument wins
    assert len(calls) == 2 * 2


def refuses_larger_cases(instance):
    """Like crux's enumerate: exact on small cases, SolverUnavailable beyond its limit."""
    if instance.gpus > 3:
        raise fabricopt.SolverUnavailable(f"{instance.gpus} GPUs exceed my limit of 3")
    return SolverOutput(exact(instance), "optimal", bound=fabricopt.evaluate(instance,
                                                                              exact(instance)))


def test_only_exact_methods_may_refuse_an_instance(temporary_method):
    temporary_method("circuits", "small-exact", refuses_larger_cases, exact=True)
    check_method("circuits", "small-exact", examples=10, references=["exact"])
    # ... and as a reference it is compared where it answers, skipped where it refuses.
    check_method("circuits", "greedy", examples=10, references=["small-exact"])
    temporary_method("circuits", "small-heuristic", refuses_larger_cases)
    with pytest.raises(MethodCheckError, match=r"^circuits/small-heuristic: refused an "
                                               r"instance \(only exact methods may\): \d+ GPUs"):
        check_method("circuits", "small-heuristic", examples=20, references=[])
