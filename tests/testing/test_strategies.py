"""The strategies of ``fabricopt.testing``: valid instances of every kind, invalid ones
rejected with a message naming the field, small readable counterexamples."""

import numpy as np
import pytest
from hypothesis import find, given, settings, strategies as st

import fabricopt
from fabricopt import InvalidInstance
from fabricopt.algorithms.circuits import exact_counts
from fabricopt.problems import get_kind, instance_from_dict, kinds
from fabricopt.testing import (InvalidExample, generic_instances, generic_invalid_instances,
                               instances, invalid_instances, register_strategies)
from fabricopt.testing import strategies as strategies_module


@pytest.mark.parametrize("kind", kinds())
@settings(max_examples=15)
@given(data=st.data())
def test_instances_of_every_kind_are_valid(kind, data):
    inst = data.draw(instances(kind))
    assert isinstance(inst, get_kind(kind).instance_type)
    assert instance_from_dict(inst.to_dict()) == inst  # survives its own validation


@pytest.mark.parametrize("kind", kinds())
@settings(max_examples=30)
@given(data=st.data())
def test_invalid_instances_of_every_kind_are_rejected_naming_the_field(kind, data):
    data.draw(invalid_instances(kind)).assert_rejected()


@settings(max_examples=30)
@given(instances("circuits", max_size=6))
def test_circuits_instances_are_feasible(inst):
    demanded = inst.traffic > 0
    assert demanded.sum(axis=1).max() <= inst.switches
    assert demanded.sum(axis=0).max() <= inst.switches
    counts = exact_counts(inst)  # raises InfeasibleInstance otherwise
    assert ((counts > 0) == demanded).all()


@settings(max_examples=30)
@given(instances("circuits", max_size=3, max_switches=2))
def test_circuits_sizes_are_bounded(inst):
    assert 1 <= inst.gpus <= 3 and 1 <= inst.switches <= 2


# The shrinker may stop in a local minimum (relabelling a GPU can merge two demands),
# so these assert "small and readable", not one exact counterexample.
FIND = settings(derandomize=True, database=None)


def test_infeasible_circuits_instances_on_request():
    inst = find(instances("circuits", feasible=False),
                lambda i: (i.traffic > 0).sum(axis=1).max() > i.switches, settings=FIND)
    assert inst.gpus <= 4 and inst.switches == 1 and int((inst.traffic > 0).sum()) == 2


def test_counterexamples_shrink_to_a_few_demands():
    # binding=False: more pairs than switches would be drawn first, and shrink slowly
    inst = find(instances("circuits", binding=False), lambda i: (i.traffic > 0).sum() >= 3,
                settings=FIND)
    assert inst.gpus <= 4 and int((inst.traffic > 0).sum()) == 3
    assert set(np.unique(inst.traffic)) <= {0.0, 1e6}  # round numbers, not noise


@settings(max_examples=15)
@given(generic_instances("circuits", max_size=4))
def test_generic_fallback_draws_from_generate(inst):
    assert 2 <= inst.gpus <= 4 and 1 <= inst.switches <= 4


@settings(max_examples=30)
@given(generic_invalid_instances("circuits", generic_instances("circuits", max_size=4)))
def test_generic_invalid_mutations_are_rejected(example):
    example.assert_rejected()


def test_kind_strategies_can_be_registered(monkeypatch):
    instances("circuits")  # the hand-written ones are registered, and restored after
    monkeypatch.delitem(strategies_module._STRATEGIES, "circuits")
    register_strategies("circuits", lambda max_size: st.just(
        fabricopt.generate("circuits", seed=max_size, gpus=2, switches=1)), max_size=7)
    assert find(instances("circuits"), lambda i: True) == fabricopt.generate(
        "circuits", seed=7, gpus=2, switches=1)


def test_unknown_kind_is_an_invalid_instance():
    with pytest.raises(InvalidInstance, match="problem = 'nope': unknown problem kind"):
        instances("nope")


def test_invalid_example_fails_when_the_instance_is_accepted_or_the_message_is_wrong():
    good = fabricopt.generate("circuits", seed=1, gpus=3, switches=2).to_dict()
    with pytest.raises(AssertionError, match="accepted an invalid instance"):
        InvalidExample(good, "switches", "^switches").assert_rejected()
    bad = dict(good, switches=0)
    with pytest.raises(AssertionError, match="does not match"):
        InvalidExample(bad, "circuit_gbps", "^circuit_gbps").assert_rejected()
    assert "switches = 0: must be >= 1" in str(
        InvalidExample(bad, "switches", "^switches").assert_rejected())
