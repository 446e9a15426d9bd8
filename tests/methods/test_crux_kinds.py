"""The priorities and crux methods through ``solve`` and the command line."""

import json

import pytest

import fabricopt
from fabricopt.cli import main

from cli_helpers import run

FIG13 = {"problem": "priorities", "levels": 2,
         "jobs": [{"id": f"J{k + 1}", "priority": 4 - k, "intensity": 4 - k} for k in range(4)],
         "contention": [["J1", "J2"], ["J3", "J4"]]}


def test_methods_are_registered():
    assert fabricopt.methods("priorities") == ["crux", "exact", "milp", "sincronia", "varys"]
    assert fabricopt.methods("crux") == ["crux", "ecmp", "enumerate", "sincronia",
                                         "sincronia-levels", "varys-levels"]


@pytest.mark.parametrize("method, objective, status", [
    ("sincronia", 4.0, "feasible"), ("varys", 0.0, "feasible"),
    ("crux", 6.0, "feasible"), ("milp", 6.0, "optimal"),
])
def test_figure13_through_solve(method, objective, status):
    result = fabricopt.solve(FIG13, method)
    assert (result.objective, result.status) == (objective, status)
    assert result.bound == 6.0          # all the DAG's weight: the kind's bound


def test_generate_pipe_solve_json():
    code, inst, err = run("generate", "crux", "--seed", "3", "--tors", "2")
    assert code == 0, err
    code, out, err = run("solve", "-", "--method", "crux", "--json", stdin=inst)
    assert code == 0, err
    envelope = json.loads(out)
    assert envelope["problem"] == "crux" and envelope["status"] == "feasible"
    assert 0 < envelope["objective"] <= envelope["bound"] <= 1


def test_bad_crux_instance_exits_2_with_one_line(tmp_path, capsys):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"problem": "crux", "levels": 2, "links": {"a": 1.0},
                                "jobs": [{"id": "x", "gpus": 1, "compute_s": 1.0,
                                          "overlap": 1.0,
                                          "flows": [{"bytes": 1.0, "paths": [["b"]]}]}]}))
    assert main(["solve", str(path), "--method", "crux"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == ("fabricopt: error: jobs[0].flows[0].paths[0][0] = 'b': "
                           "unknown link")


def test_crux_honours_a_time_limit_and_says_what_it_cut():
    from fabricopt.algorithms.crux import crux as heuristics
    from fabricopt.methods.registry import get_method

    assert get_method("crux", "crux").honours_time_limit
    inst = fabricopt.generate("crux", seed=0, jobs=8, tors=4)
    free = fabricopt.solve(inst, "crux")
    assert free.info["corrections"] == free.info["corrections_total"] > 1
    assert free.info["orders_tried"] == 10 and "time_limit_exceeded" not in free.info
    cut = fabricopt.solve(inst, "crux", time_limit=1e-9)
    assert cut.status == "feasible" and fabricopt.check(inst, cut.solution)
    assert cut.info["corrections"] == 0 and cut.info["orders_tried"] == 1
    message = cut.info["time_limit_exceeded"]
    assert "k_j replayed for 0 of" in message and "1 of 10 BFS orders" in message
    # uncorrected jobs are ranked by intensity alone (k_j = 1)
    _, _, intensity = heuristics.crux_plan(inst)
    assert [cut.solution.priority[j] for j in inst.ids] == pytest.approx(intensity.tolist())
    assert cut.solution.path == free.solution.path  # path selection always completes


def test_crux_without_a_limit_is_unchanged():
    from fabricopt.algorithms.crux import crux as heuristics

    inst = fabricopt.generate("crux", seed=3, jobs=8, tors=4)
    r = fabricopt.solve(inst, "crux", time_limit=600.0, seed=5)
    assert r.solution == heuristics.crux(inst, seed=5) == heuristics.crux(inst, seed=5,
                                                                         time_limit=None)
    assert "time_limit_exceeded" not in r.info


@pytest.mark.parametrize("method", ["sincronia-levels", "varys-levels"])
def test_ranked_baselines_honour_a_time_limit(method):
    from fabricopt.methods.registry import get_method

    assert get_method("crux", method).honours_time_limit
    inst = fabricopt.generate("crux", seed=0, jobs=8, tors=4)
    free = fabricopt.solve(inst, method)
    assert free.info["corrections"] == free.info["corrections_total"] > 1
    assert "time_limit_exceeded" not in free.info
    assert fabricopt.solve(inst, method, time_limit=600.0).solution == free.solution
    cut = fabricopt.solve(inst, method, time_limit=1e-9)
    assert cut.status == "feasible" and fabricopt.check(inst, cut.solution)
    assert cut.info["corrections"] == 0 and "k_j replayed for 0 of" in cut.info["time_limit_exceeded"]


def test_priorities_crux_honours_a_time_limit():
    from fabricopt.algorithms.priorities.compression import compress_instance
    from fabricopt.methods.registry import get_method

    assert get_method("priorities", "crux").honours_time_limit
    inst = fabricopt.generate("priorities", seed=1, jobs=30, levels=3)
    free = fabricopt.solve(inst, "crux", seed=4)
    assert free.solution == compress_instance(inst, seed=4) and free.info["orders_tried"] == 10
    assert "time_limit_exceeded" not in free.info
    cut = fabricopt.solve(inst, "crux", seed=4, time_limit=1e-9)
    assert cut.status == "feasible" and fabricopt.check(inst, cut.solution)
    assert cut.info["orders_tried"] == 1 and "1 of 10 BFS orders" in cut.info["time_limit_exceeded"]
    assert cut.solution == compress_instance(inst, seed=4, orders=1)
