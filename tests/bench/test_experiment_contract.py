"""The solver-contract experiment: its false-optimum verdicts and its tasks."""

import csv

import pytest

from fabricopt.bench.experiments import contract
from fabricopt.milp import cbc_available


def _row(seed, claim_status, claim, cold, cbc):
    def env(status, objective):
        return {"status": status, "objective": objective, "runtime_s": 0.1}

    return {"kind": "task:contract.false_optimum", "status": "feasible",
            "info": {"seed": seed, "jobs": 20 + seed,
                     "runs": {"milp": env(claim_status, claim),
                              "milp-cold": env("optimal", cold),
                              "milp-cbc": env("optimal", cbc)}}}


def test_a_claimed_optimum_beaten_by_a_second_solve_is_counted_false(tmp_path):
    rows = [_row(0, "optimal", 10.0, 10.0, 10.0),        # agreed
            _row(1, "optimal", 10.0, 10.5, None),        # cold beats it: false
            _row(2, "feasible", 10.0, 12.0, 12.0),       # no claim, nothing false
            _row(3, "optimal", 10.0, 10.0 * (1 + 1e-9), 10.0)]  # within rounding
    lines = contract._false_optima(rows, tmp_path)
    assert "| 4 | 3 | 1 |" in "\n".join(lines)
    assert "- seed 1, 21 jobs: claimed 10.000, best 10.500" in lines
    with open(tmp_path / "false-optima.csv") as f:
        verdicts = [r["false_optimum"] for r in csv.DictReader(f)]
    assert verdicts == ["False", "True", "False", "False"]


@pytest.mark.skipif(not cbc_available(), reason="PuLP's CBC binary is not available")
def test_the_false_optimum_task_reports_three_agreeing_envelopes():
    out = contract.false_optimum_task(seed=0, jobs=8)
    runs = out["runs"]
    assert set(runs) == {"milp", "milp-cold", "milp-cbc"}
    assert all(r["status"] == "optimal" for r in runs.values())
    assert runs["milp-cold"]["objective"] == pytest.approx(runs["milp"]["objective"])
    assert runs["milp-cbc"]["objective"] == pytest.approx(runs["milp"]["objective"], rel=1e-6)
    assert out["value"] == runs["milp"]["objective"]


def test_without_cbc_the_false_optimum_task_compares_the_two_highs_runs(monkeypatch, tmp_path):
    monkeypatch.setattr("fabricopt.milp.cbc.cbc_available", lambda: False)
    out = contract.false_optimum_task(seed=0, jobs=8)
    assert set(out["runs"]) == {"milp", "milp-cold"}
    row = {"kind": "task:contract.false_optimum", "status": "feasible", "info": out}
    lines = contract._false_optima([row], tmp_path)
    assert "| 1 | 1 | 0 |" in "\n".join(lines)  # one claim, checked, not beaten


def test_the_heuristic_task_reports_the_methods_work_counts():
    out = contract.heuristic_task("topoopt", {"seed": 0, "servers": 8, "degree": 2,
                                              "groups": 1, "mp_peers": 2})
    assert out["status"] == "feasible" and out["kind"] == "topology"
    assert set(out["work"]) == {"candidates_scored", "candidates_total"}
    assert out["work"]["candidates_scored"] >= 1
