"""The placement MILP against brute force, the heuristics and a second solver (CBC)."""

import pytest
from hypothesis import given, settings, strategies as st

import fabricopt
from fabricopt.models.placement import build, unordered_pairs
from fabricopt.algorithms.placement.sipml import sipml
from fabricopt.milp import ColumnValues
from fabricopt.problems import check, evaluate
from fabricopt.problems.placement import Dep, PlacementInstance, SubOp, generate
from fabricopt.bounds.placement import lower_bound
from fabricopt.methods.milp_method import cbc_available, run_milp
from milp_helpers import assert_start_satisfies_every_row
from placement_cases import brute_force_optimum, small_instances


BACKENDS = ["highs", pytest.param("cbc", marks=pytest.mark.skipif(
    not cbc_available(), reason="PuLP's CBC binary is not installed"))]


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=15)
@given(small_instances(max_ops=5, max_gpus=3))
def test_milp_equals_brute_force(backend, inst):
    # each backend's proof checked against enumeration, not against the other solver
    result = fabricopt.solve(inst, "milp", warm_start=False, backend=backend)
    assert result.status == "optimal" and check(inst, result.solution)
    assert result.objective == pytest.approx(brute_force_optimum(inst), rel=1e-6, abs=1e-9)


@settings(max_examples=15)
@given(small_instances(max_ops=7, max_gpus=3))
def test_bound_le_milp_le_heuristics(inst):
    milp = fabricopt.solve(inst, "milp")
    assert milp.status == "optimal"
    assert lower_bound(inst) <= milp.objective * (1 + 1e-9)
    for method in ("sipml", "sipml-ls", "unconstrained", "round-robin"):
        result = fabricopt.solve(inst, method)
        assert result.status == "feasible"
        assert milp.objective <= result.objective * (1 + 1e-6)


@pytest.mark.parametrize("symmetry_breaking", [True, "weak", False])
def test_symmetry_breaking_keeps_the_optimum(symmetry_breaking):
    inst = generate(4, ops=8, gpus=3, max_peers=1)
    reference = fabricopt.solve(inst, "milp", warm_start=False, symmetry_breaking=False)
    result = fabricopt.solve(inst, "milp", symmetry_breaking=symmetry_breaking)
    assert result.status == "optimal"
    assert result.objective == pytest.approx(reference.objective, rel=1e-6)


def test_degree_limit_binds():
    # a feeds b, c, d (1 s each, 4 s transfers): three GPUs would save time, but
    # max_peers = 1 lets a's GPU send to one other GPU only
    ops = [SubOp("a", 1.0)] + [SubOp(c, 2.0) for c in "bcd"]
    deps = [Dep("a", c, 0.5e9) for c in "bcd"]           # 0.5 s at 8 Gbps
    free = PlacementInstance(4, 3, 8.0, ops, deps)
    limited = PlacementInstance(4, 1, 8.0, ops, deps)
    assert fabricopt.solve(free, "milp").objective == pytest.approx(3.5)     # b, c, d apart
    assert fabricopt.solve(limited, "milp").objective == pytest.approx(5.0)  # two GPUs


def test_unordered_pairs_skip_paths_and_idle_ops():
    ops = [SubOp("a", 1.0), SubOp("b", 1.0), SubOp("c", 0.0), SubOp("d", 1.0)]
    inst = PlacementInstance(2, 1, 8.0, ops, [Dep("a", "c", 0), Dep("c", "d", 0)])
    assert unordered_pairs(inst) == [(0, 1), (1, 3)]      # a -> c -> d orders a and d


def test_encoded_start_satisfies_every_constraint():
    inst = generate(2, ops=10, gpus=4, max_peers=1)
    start, _ = sipml(inst)
    model = build(inst, upper_bound_s=evaluate(inst, start))
    values = model.encode(start)
    assert_start_satisfies_every_row(model, values)
    values = ColumnValues(model.problem.arrays().names, values)
    assert evaluate(inst, model.decode(values)) <= evaluate(inst, start) * (1 + 1e-9)


def test_time_limited_milp_is_never_worse_than_sipml():
    inst = generate(5, ops=40, gpus=8, max_peers=2)
    heuristic = fabricopt.solve(inst, "sipml")
    result = fabricopt.solve(inst, "milp", time_limit=2.0)
    assert result.status in ("optimal", "feasible") and check(inst, result.solution)
    assert result.objective <= heuristic.objective * (1 + 1e-9)
    assert result.bound is not None and result.bound <= result.objective * (1 + 1e-9)
    assert result.info["warm_start"]["method"] in ("sipml-ls", "unconstrained", "round-robin")


@pytest.mark.skipif(not cbc_available(), reason="PuLP's CBC binary is not installed")
@pytest.mark.parametrize("seed", range(4))
def test_cbc_agrees_with_highs(seed):
    inst = generate(seed, ops=7, gpus=3, max_peers=1)
    highs = fabricopt.solve(inst, "milp", warm_start=False)
    cbc = fabricopt.solve(inst, "milp", backend="cbc", warm_start=False)
    assert highs.status == cbc.status == "optimal"
    assert cbc.info["solver"] == "cbc"
    assert cbc.objective == pytest.approx(highs.objective, rel=1e-6)


def test_run_milp_reports_the_scaled_bound_in_seconds():
    inst = generate(1, ops=6, gpus=2, max_peers=1)
    model = build(inst)
    run = run_milp(model.problem)
    assert run.status == "optimal"
    # HiGHS stops at an absolute gap of 1e-6 in the scaled units (times / horizon)
    bound, objective = model.bound_from_raw(run.bound), evaluate(inst, model.decode(run.values))
    assert bound <= objective * (1 + 1e-9)
    assert bound == pytest.approx(objective, rel=1e-5)


def test_symmetry_breaking_option_is_checked():
    with pytest.raises(ValueError, match="symmetry_breaking = 'full': must be True, False or 'weak'"):
        build(generate(0, ops=4), symmetry_breaking="full")


def test_one_gpu_chain_that_highs_presolve_called_infeasible():
    # Found by hypothesis: HiGHS 1.16's presolve declared this feasible MILP infeasible.
    ops = [SubOp("o0", 0.0, "g0"), SubOp("o1", 0.0, "g0"), SubOp("o2", 0.0, "g1"),
           SubOp("o3", 3.0, "g1"), SubOp("o4", 2.0, "g2")]
    deps = [Dep(u, v, 0.0) for u, v in [("o0", "o1"), ("o0", "o2"), ("o0", "o3"), ("o0", "o4"),
                                        ("o1", "o2"), ("o1", "o3"), ("o1", "o4"), ("o2", "o4")]]
    deps += [Dep("o3", "o4", 5e8), Dep("o2", "o3", 2e9)]
    inst = PlacementInstance(1, 1, 8.0, ops, deps)
    result = fabricopt.solve(inst, "milp", warm_start=False)
    assert result.status == "optimal" and check(inst, result.solution)
    assert result.objective == pytest.approx(brute_force_optimum(inst)) == 5.0


def test_decode_keeps_an_optimum_where_an_op_without_compute_shares_a_gpu():
    # Found by hypothesis: the MILP's optimum 0.5 runs o2 (no compute) at time 0 on o1's
    # GPU; a decode in which o2 waited for o1 made o3 and the makespan end at 1.0.
    ops = [SubOp("o0", 0.0, "g0"), SubOp("o1", 0.5, "g0"), SubOp("o2", 0.0, "g1"),
           SubOp("o3", 0.5, "g1")]
    inst = PlacementInstance(2, 1, 8.0, ops, [Dep("o2", "o3", 0.0)])
    result = fabricopt.solve(inst, "milp", warm_start=False)
    assert result.status == "optimal" and check(inst, result.solution)
    assert result.objective == pytest.approx(brute_force_optimum(inst)) == 0.5
