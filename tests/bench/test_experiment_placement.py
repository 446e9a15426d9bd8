"""The placement experiment: its plan, its tasks on tiny inputs, and its gap table
against figures worked out by hand."""

from __future__ import annotations

import pytest

from fabricopt.bench import experiments as exp
from fabricopt.bench.experiments import placement, placement_tasks


def _row(seed, method, value, cpu_s=0.01, status="optimal", bound=None):
    return {"kind": "task:placement.solve", "status": "feasible", "seed": seed,
            "method": method, "sizes": {"time_limit_s": 600.0 if method == "milp" else None},
            "info": {"value": value, "status": status, "cpu_s": cpu_s, "bound": bound,
                     "bound_source": "degree-fan"}}


def test_gap_table_matches_hand_computed_gaps(tmp_path):
    rows = []
    for seed, (opt, heur) in enumerate([(10.0, 12.0), (8.0, 8.0)]):
        rows += [_row(seed, "milp", opt, cpu_s=1.0 + seed),
                 _row(seed, "sipml", heur, status="feasible", bound=opt / 2),
                 _row(seed, "sipml-ls", (opt + heur) / 2, status="feasible")]
    text = "\n".join(placement._gap_lines(rows, tmp_path))
    # sipml: gaps 2/12 and 0 -> mean 1/12; sipml-ls: 1/11 and 0; the bound: 1/2 twice
    assert f"| sipml | {1 / 12:.4f} | {2 / 12:.4f} | 1/2 |" in text
    assert f"| sipml-ls | {1 / 22:.4f} | {1 / 11:.4f} | 1/2 |" in text
    assert "| milp | 0.0000 | 0.0000 | 2/2 proven | 1.5000 | 2.0000 |" in text
    assert "| lower bound | 0.5000 | 0.5000 | 0/2 | - | - |" in text
    assert "closes on average 50.0%" in text and "over the 1 instances" in text
    assert (tmp_path / "placement-gap.csv").read_text().count("\n") == 7


def test_solve_task_reports_the_envelope():
    out = placement_tasks.solve_task(placement.gap_sizes(1), 1, "sipml",
                                     {"bound_milp_s": 0.0})
    assert out["status"] == "feasible" and out["sub_ops"] > 0
    assert out["bound"] <= out["value"] and out["cpu_s"] >= 0.0
    with pytest.raises(Exception, match="bound_milp_s"):
        placement_tasks.solve_task(placement.gap_sizes(1), 1, "sipml", {"bound_milp_s": -1})


def test_scaling_task_on_a_small_instance():
    out = placement_tasks.scaling_task(200, gpus=8, max_peers=3, repeats=1)
    assert out["sub_ops"] == 200 and out["ring_gpus"] in (1, 4, 8)
    assert out["value"] == out["sipml_cpu_s"] >= 0.0


def test_quick_plan_is_small_and_full_plan_has_every_section():
    e = exp.get_experiment("placement")
    full = e.plan(exp.suite_name(e, False), False)
    tasks = {s.task for s in full}
    assert tasks == {"placement.solve", "placement.transformer", "placement.family",
                     "placement.scaling", "placement.kl"}
    gap = [s for s in full if s.task == "placement.solve"]
    assert len({s.seed for s in gap}) == 30 and len(gap) == 30 * 8
    assert len(e.plan(exp.suite_name(e, True), True)) < len(full) / 4
