"""The default strategies draw instances whose constraints bind."""

import numpy as np
from hypothesis import given, settings

from fabricopt.testing import instances


@settings(max_examples=15)
@given(instances("placement"))
def test_placement_degree_limit_binds(inst):
    assert inst.max_peers < inst.gpus - 1 and len(inst.ops) > inst.gpus


@settings(max_examples=15)
@given(instances("circuits"))
def test_circuits_demand_more_pairs_than_switches(inst):
    assert inst.gpus >= 3 and np.count_nonzero(inst.traffic) > inst.switches


@settings(max_examples=15)
@given(instances("wavelengths"))
def test_wavelengths_reach_and_transceivers_are_short(inst):
    assert inst.max_hops <= inst.nodes // 2 and inst.wavelengths <= 3


@settings(max_examples=15)
@given(instances("topology"))
def test_topology_degree_binds(inst):
    assert inst.degree <= inst.servers - 2


@settings(max_examples=15)
@given(instances("priorities"))
def test_priorities_have_more_jobs_than_levels(inst):
    assert len(inst.ids) > inst.levels


@settings(max_examples=15)
@given(instances("crux"))
def test_crux_has_more_jobs_than_levels(inst):
    assert len(inst.jobs) > inst.levels >= 2
