"""Every result names the bound it reports (``Result.bound_source``), and ``solve`` keeps
rejecting a bound on the wrong side of a checked objective, wherever it comes from."""

import dataclasses

import pytest

import fabricopt
from fabricopt import SolverOutput
from fabricopt.problems import NamedBound, get_kind
from fabricopt.problems import _kind as kinds_module
from fabricopt.problems.placement import generate
from fabricopt.bounds.placement import lower_bound
from fabricopt.methods import register_method
from fabricopt.methods.placement_bound import heuristic_bound, milp_dual_bound
from fabricopt.methods.registry import _METHODS

from placement_cases import brute_force_optimum


@pytest.fixture
def temp_method():
    added = []

    def add(kind, name, fn):
        added.append((kind, name))
        register_method(kind, name, fn)

    yield add
    for key in added:
        _METHODS.pop(key, None)


def test_heuristics_name_the_fast_bound():
    inst = generate(seed=0, ops=40, gpus=8, max_peers=3)
    r = fabricopt.solve(inst, "sipml")
    assert r.bound_source == lower_bound(inst).source
    assert r.bound == pytest.approx(float(lower_bound(inst)))


def test_milp_dual_bound_closes_a_tiny_gap_the_fast_bounds_leave():
    inst = generate(seed=1, ops=8, gpus=3, max_peers=1)
    optimum = brute_force_optimum(inst)
    assert float(lower_bound(inst)) < optimum * (1 - 1e-6)
    dual = milp_dual_bound(inst, time_limit=30.0)
    assert dual == pytest.approx(optimum, rel=1e-6)
    r = fabricopt.solve(inst, "sipml-ls", bound_milp_s=30.0)
    assert r.bound_source == "milp-dual" and r.gap == pytest.approx(0.0, abs=1e-6)


def test_the_default_model_bound_is_a_node_budget_not_a_clock(monkeypatch):
    # small/2 of the quick suite, whose 2 s bound moved with the machine's load: 500
    # nodes prove it, and stretching the wall-clock safety net changes nothing
    from fabricopt.methods import placement_bound as placement_bounds

    inst = generate(seed=2, ops=12, gpus=4, max_peers=2)
    # both safety nets far beyond what 500 nodes take on any machine: only nodes count
    monkeypatch.setattr(placement_bounds, "_AUTO_MILP_S", 1000.0)
    first = heuristic_bound(inst, None)
    monkeypatch.setattr(placement_bounds, "_AUTO_MILP_S", 2000.0)
    assert float(heuristic_bound(inst, None)) == float(first)
    assert first.source == "milp-dual"
    assert float(first) == pytest.approx(fabricopt.solve(inst, "milp").objective, rel=1e-9)


def test_bound_option_is_validated():
    inst = generate(seed=1, ops=8, gpus=3, max_peers=1)
    with pytest.raises(ValueError, match="bound_milp_s = -1: must be a number >= 0"):
        heuristic_bound(inst, None, milp_s=-1)


def test_optimal_results_name_the_proof():
    inst = generate(seed=0, ops=8, gpus=3, max_peers=1)
    r = fabricopt.solve(inst, "milp")
    assert r.status == "optimal" and r.bound_source == "optimal"


def test_a_method_bound_on_the_wrong_side_is_rejected(temp_method):
    inst = generate(seed=0, ops=12, gpus=4, max_peers=2)

    def overclaims(instance, **_):
        out = fabricopt.solve(instance, "round-robin")
        return SolverOutput(out.solution, "feasible", out.objective * 1.5)

    temp_method("placement", "overclaims", overclaims)
    r = fabricopt.solve(inst, "overclaims")
    assert r.status == "error" and "wrong side" in r.info["message"]


def test_a_kind_bound_on_the_wrong_side_is_rejected(monkeypatch):
    inst = generate(seed=0, ops=12, gpus=4, max_peers=2)
    kind = get_kind("placement")
    false = dataclasses.replace(kind, bound=lambda i: NamedBound(1.0, "false"))
    monkeypatch.setitem(kinds_module._KINDS, "placement", false)
    r = fabricopt.solve(inst, "round-robin", bound_milp_s=0)
    assert r.status == "error" and "wrong side" in r.info["message"]


@pytest.mark.parametrize("kind, name", [("circuits", "port-load"),
                                        ("wavelengths", "count-relaxation"),
                                        ("priorities", "cut-weight"), ("crux", "utilization")])
def test_every_kind_names_its_bound(kind, name):
    k = get_kind(kind)
    assert k.bound_name == name
    inst = k.generate(seed=0)
    heuristic = next(m for m in fabricopt.methods(kind)
                     if not _METHODS[kind, m].exact and not _METHODS[kind, m].bound_only)
    r = fabricopt.solve(inst, heuristic)
    assert r.status == "feasible" and r.bound_source in (name, heuristic)
