"""``fabricopt.testing`` on a kind it has no hand-written strategy for, and one that is
maximized: a toy "pick at most k items" kind registered for these tests only.

This is the path every new problem kind takes until it registers its own strategies.
"""

from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings

import fabricopt
from fabricopt import InvalidSolution, SolverOutput
from fabricopt.problems import _kind
from fabricopt.problems._kind import CheckResult, ProblemKind
from fabricopt.problems._validate import as_float, as_int, as_list, reject_unknown_keys, require
from fabricopt.methods import registry
from fabricopt.testing import (MethodCheckError, check_method, generic_invalid_instances,
                               instances, invalid_instances)

pytest_plugins = ["fabricopt.testing.pytest_plugin"]


@dataclass(frozen=True)
class PickInstance:
    capacity: int
    values: tuple

    def __post_init__(self):
        object.__setattr__(self, "capacity", as_int("capacity", self.capacity, minimum=0))
        values = as_list("values", self.values)
        object.__setattr__(self, "values", tuple(
            as_float(f"values[{i}]", v, minimum=0.0) for i, v in enumerate(values)))

    def to_dict(self):
        return {"problem": "toy-pick", "capacity": self.capacity, "values": list(self.values)}

    @classmethod
    def from_dict(cls, data):
        reject_unknown_keys(data, ("problem", "capacity", "values"))
        return cls(require(data, "capacity"), require(data, "values"))


@dataclass(frozen=True)
class PickSolution:
    chosen: tuple

    def to_dict(self):
        return {"chosen": list(self.chosen)}

    @classmethod
    def from_dict(cls, data):
        return cls(tuple(require(data, "chosen", InvalidSolution)))


def check(instance, solution):
    if any(i >= len(instance.values) for i in solution.chosen):
        raise InvalidSolution("chosen: unknown item")
    if len(set(solution.chosen)) > instance.capacity:
        return CheckResult.violated(f"chose {len(set(solution.chosen))} > capacity")
    return CheckResult.ok()


def evaluate(instance, solution):
    return float(sum(instance.values[i] for i in set(solution.chosen)))


def generate(seed=0, items=6, capacity=3):
    items = as_int("items", items, minimum=1)
    capacity = as_int("capacity", capacity, minimum=1, maximum=items)
    rng = np.random.default_rng(seed)
    return PickInstance(capacity, rng.integers(0, 100, size=items).astype(float).tolist())


def best(instance, *, time_limit=None, seed=0):
    order = np.argsort(instance.values, kind="stable")[::-1][:instance.capacity]
    return SolverOutput(PickSolution(tuple(sorted(int(i) for i in order))), "optimal")


def first(instance, *, time_limit=None, seed=0):
    return PickSolution(tuple(range(min(instance.capacity, len(instance.values)))))


def first_with_low_bound(instance, *, time_limit=None, seed=0):
    solution = first(instance)
    return SolverOutput(solution, "feasible", bound=evaluate(instance, solution))


TOY = ProblemKind("toy-pick", "max", PickInstance, PickSolution, PickInstance.from_dict,
                  PickSolution.from_dict, check, evaluate, generate,
                  bound=lambda inst: float(sum(inst.values)))


@pytest.fixture
def toy(monkeypatch, temporary_method):
    monkeypatch.setitem(_kind._KINDS, "toy-pick", TOY)
    registry.all_methods()
    temporary_method("toy-pick", "best", best, exact=True)
    temporary_method("toy-pick", "first", first)
    return temporary_method


def test_generic_instances_come_from_generate_with_small_sizes(toy):
    @settings(max_examples=20)
    @given(instances("toy-pick", max_size=4))
    def drawn(inst):
        assert isinstance(inst, PickInstance)
        assert 1 <= len(inst.values) <= 4 and 1 <= inst.capacity <= min(3, len(inst.values))

    drawn()


def test_generic_invalid_instances_name_the_field(toy):
    @settings(max_examples=30)
    @given(invalid_instances("toy-pick"))
    def rejected(example):
        example.assert_rejected()

    rejected()


def test_generic_invalid_mutations_cover_every_rule(toy):
    fields = set()

    @settings(max_examples=60, database=None)
    @given(generic_invalid_instances("toy-pick", instances("toy-pick")))
    def collect(example):
        fields.add(example.field)

    collect()
    assert fields == {"bogus_field", "problem", "capacity", "values"}


def test_check_method_on_a_maximized_kind(toy):
    check_method("toy-pick", "best", examples=10)
    check_method("toy-pick", "first", examples=10)


def test_a_bound_below_a_maximum_is_caught(toy):
    toy("toy-pick", "low-bound", first_with_low_bound)
    with pytest.raises(MethodCheckError, match=r"^toy-pick/low-bound: bound .* is below the "
                                               r"optimum .* proven by exact method 'best'"):
        check_method("toy-pick", "low-bound", examples=30)
