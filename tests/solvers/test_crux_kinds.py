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
    assert fabricopt.methods("crux") == ["crux", "ecmp", "enumerate", "sincronia", "varys"]


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
