"""The MILP adapter reads truth from highspy, not from PuLP's status."""

import time

import pulp
import pytest

from fabricopt import SolverUnavailable
from fabricopt.milp.model import new_problem
from fabricopt.methods.milp_method import cbc_available, run_milp


def knapsack(n=60, sense="max"):
    p = new_problem("knap", sense)
    x = p.add_variable_dicts("x", range(n), 0, 1, pulp.LpInteger)
    w = [((7 * i) % 23) + 5 for i in range(n)]
    v = [((11 * i) % 29) + 3 for i in range(n)]
    p += pulp.lpSum(v[i] * x[i] for i in range(n)) * (1 if sense == "max" else -1)
    p += pulp.lpSum(w[i] * x[i] for i in range(n)) <= sum(w) // 3
    return p


def test_maximization_objective_and_bound_are_not_negated():
    run = run_milp(knapsack(20))
    assert run.status == "optimal"
    assert run.objective > 0 and run.bound == pytest.approx(run.objective)


def test_objective_constant_is_kept():
    p = new_problem("c", "min")
    x = p.add_variable("x", 1, 5, pulp.LpInteger)
    p += x + 10
    run = run_milp(p)
    assert run.objective == pytest.approx(11.0) and run.values["x"] == pytest.approx(1)


def test_infeasible_is_reported():
    p = new_problem("inf", "min")
    x = p.add_variable("x", 0, 1, pulp.LpInteger)
    p += x
    p += x >= 2
    assert run_milp(p).status == "infeasible"


def _hard_knapsack():
    p = new_problem("hard", "max")
    n = 120
    x = p.add_variable_dicts("x", range(n), 0, 1, pulp.LpInteger)
    w = [(i * 7919) % 1009 + 1000 for i in range(n)]
    p += pulp.lpSum((w[i] + (i % 7)) * x[i] for i in range(n))
    p += pulp.lpSum(w[i] * x[i] for i in range(n)) <= sum(w) // 2 + 1
    return p


def test_time_limit_is_not_reported_optimal():
    # A hard equality knapsack that HiGHS cannot close in 0.05 s.
    run = run_milp(_hard_knapsack(), time_limit=0.05)
    assert run.status in ("feasible", "no_solution", "optimal")
    if run.status == "feasible":
        assert run.bound >= run.objective


def test_a_node_budget_stops_the_search_with_a_valid_bound_and_repeats_itself():
    runs = [run_milp(_hard_knapsack(), max_nodes=20, time_limit=60.0) for _ in range(2)]
    for run in runs:
        assert run.status in ("feasible", "no_solution") and run.nodes <= 21
        if run.status == "feasible":
            assert run.bound >= run.objective
    assert (runs[0].bound, runs[0].objective) == (runs[1].bound, runs[1].objective)


def test_a_node_budget_is_refused_for_cbc():
    with pytest.raises(SolverUnavailable, match="max_nodes = 20: only the highs backend"):
        run_milp(_hard_knapsack(), backend="cbc", max_nodes=20)


def test_warm_start_is_used():
    p = knapsack(30)
    start = {f"x_{i}": 0.0 for i in range(30)}
    run = run_milp(p, warm_start=start, time_limit=5)
    assert run.status == "optimal"


def test_unknown_backend():
    with pytest.raises(SolverUnavailable, match="backend = 'gurobi'"):
        run_milp(knapsack(3), backend="gurobi")


@pytest.mark.skipif(not cbc_available(), reason="PuLP's CBC binary is not installed")
def test_cbc_agrees_with_highs():
    assert run_milp(knapsack(25), backend="cbc").objective == pytest.approx(
        run_milp(knapsack(25)).objective)


def constant_model(sense, constant, rows=()):
    """A model without variables: objective ``constant``, rows ``0 (<=|>=|==) rhs``."""
    p = new_problem("empty", sense)
    p += pulp.LpAffineExpression(constant=constant)
    for k, (op, rhs) in enumerate(rows):
        empty = pulp.lpSum([])
        p += (empty <= rhs if op == "<=" else empty >= rhs if op == ">=" else empty == rhs), f"r{k}"
    return p


@pytest.mark.parametrize("sense", ["min", "max"])
@pytest.mark.parametrize("backend", ["highs", "cbc"])
def test_empty_model_is_solved_with_its_constant(sense, backend):
    if backend == "cbc" and not cbc_available():
        pytest.skip("PuLP's CBC binary is not installed")
    p = constant_model(sense, 3.5, rows=[("<=", 1.0), (">=", -2.0), ("==", 0.0)])
    assert p.variables() == []
    run = run_milp(p, backend=backend)
    assert (run.status, run.objective, run.bound, run.values) == ("optimal", 3.5, 3.5, {})


def test_empty_model_without_objective_scores_zero():
    run = run_milp(new_problem("bare", "min"))
    assert (run.status, run.objective, run.bound, run.values) == ("optimal", 0.0, 0.0, {})


@pytest.mark.parametrize("row", [(">=", 1.0), ("<=", -0.5), ("==", 2.0)])
def test_empty_model_with_a_false_constant_row_is_infeasible(row):
    run = run_milp(constant_model("min", 1.0, rows=[("<=", 5.0), row]))
    assert run.status == "infeasible" and run.values is None and run.objective is None


def test_empty_model_through_milp_method():
    from fabricopt.milp.model import MilpModel
    from fabricopt.methods.milp_method import milp_method

    method = milp_method(lambda instance: MilpModel(constant_model("max", 2.0),
                                                    decode=lambda values: dict(values)))
    out = method(None)
    assert (out.status, out.solution, out.bound) == ("optimal", {}, 2.0)


def presolve_trap():
    """A feasible 13-column MILP (the scaled placement MILP of 5 ops on 1 GPU) that
    HiGHS 1.16's presolve declares infeasible; optimum C = 5 / (5 (1 + 1e-7))."""
    p = new_problem("trap", "min")
    c3, c4, d8 = 0.59999994000000589, 0.39999996000000398, 0.099999990000000996
    C = p.add_variable("C", 0.99999990000000993, 1.0)
    s = [p.add_variable(f"s{i}", 0.0, 9.9999990102796619e-08) for i in range(4)]
    s.append(p.add_variable("s4", c3, 0.60000003999999607))
    x = [p.add_variable(f"x{i}", 0, 1, pulp.LpInteger) for i in range(5)]
    z8, z9 = p.add_variable("z8", 0, 1), p.add_variable("z9", 0, 1)
    p += C
    for i in range(5):
        p += x[i] == 1
    for u, v in [(0, 1), (0, 2), (0, 3), (0, 4), (1, 2), (1, 3), (1, 4), (2, 4)]:
        p += s[v] - s[u] >= 0
    p += x[4] - x[3] + z8 >= 0
    p += x[3] - x[2] + z9 >= 0
    p += s[4] - s[3] - d8 * z8 >= c3
    p += s[3] - s[2] - c4 * z9 >= 0
    p += C - s[4] >= c4
    p += C - c3 * x[3] - c4 * x[4] >= 0
    return p


@pytest.mark.parametrize("backend", ["highs", "cbc"])
def test_presolve_infeasibility_is_not_reported(backend):
    if backend == "cbc" and not cbc_available():
        pytest.skip("PuLP's CBC binary is not installed")
    run = run_milp(presolve_trap(), backend=backend)
    assert run.status == "optimal"
    assert run.objective == pytest.approx(1 / (1 + 1e-7), abs=1e-7)


def test_unconfirmed_infeasibility_without_time_left_is_a_time_out():
    import highspy

    from fabricopt.milp.highs import _confirm_infeasible

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    spent = time.monotonic() - 0.5  # a deadline half a second ago
    assert _confirm_infeasible(h, spent) == highspy.HighsModelStatus.kTimeLimit


def test_highs_returning_its_unchanged_mip_start_is_not_an_optimum():
    # HiGHS 1.16 reports Optimal at 4497.638 here but hands back the MIP start (4437.911).
    import fabricopt

    inst = fabricopt.generate("priorities", seed=4, jobs=40, levels=2)
    r = fabricopt.solve(inst, "milp")
    if r.status == "optimal":
        assert r.objective == pytest.approx(4497.638, rel=1e-9)
    else:
        assert r.status == "feasible" and r.bound >= 4497.638 - 1e-6
    assert fabricopt.solve(inst, "milp", warm_start=False).objective == pytest.approx(4497.638)


def test_a_milp_runs_after_another_highs_model_took_default_threads():
    import highspy
    import numpy as np

    import fabricopt

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 2)  # the scheduler's first user fixes its thread count
    h.addVar(0, 10)
    h.changeColCost(0, 1.0)
    h.changeColIntegrality(0, highspy.HighsVarType.kInteger)
    h.addRow(2.5, 10, 1, np.array([0], np.int32), np.array([1.0]))
    highspy.Highs.resetGlobalScheduler(True)
    h.run()
    r = fabricopt.solve(fabricopt.generate("circuits", seed=0, gpus=4, switches=2), "milp")
    assert r.status == "optimal", r.info


def test_milp_reports_where_the_time_went():
    import fabricopt

    r = fabricopt.solve(fabricopt.generate("circuits", seed=0, gpus=4, switches=2), "milp")
    assert {"model_build_s", "warm_start_s", "solver_s"} <= set(r.info)
    assert all(r.info[k] >= 0 for k in ("model_build_s", "warm_start_s", "solver_s"))
