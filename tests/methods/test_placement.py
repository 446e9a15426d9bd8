"""The placement methods through ``solve`` and the command line."""

import importlib
import json
import subprocess
import sys

import pytest

import fabricopt
from fabricopt.problems import check
from fabricopt.problems.placement import generate
from fabricopt.bounds.placement import lower_bound

METHODS = ["milp", "round-robin", "sipml", "sipml-ls", "unconstrained"]


def test_all_methods_are_registered():
    assert fabricopt.methods("placement") == METHODS


@pytest.mark.parametrize("method", METHODS)
def test_every_method_passes_check_and_reports_the_bound(method):
    inst = generate(11, ops=10, gpus=4, max_peers=1)
    result = fabricopt.solve(inst, method)
    assert result.status in ("optimal", "feasible"), result.info
    assert check(inst, result.solution)
    assert result.bound is not None and result.bound >= lower_bound(inst) * (1 - 1e-12)
    assert result.gap is not None and 0 <= result.gap <= 1


HEURISTICS = ["round-robin", "sipml", "sipml-ls", "unconstrained"]


@pytest.mark.parametrize("method", HEURISTICS)
def test_a_placement_without_its_bound_is_solves_placement(method, monkeypatch):
    inst = generate(seed=3, ops=30, gpus=4, max_peers=2)
    full = fabricopt.solve(inst, method, seed=1)
    assert full.bound is not None

    def never(*args, **kwargs):
        raise AssertionError("the heuristic computed its bound")

    monkeypatch.setattr(importlib.import_module("fabricopt.methods.placement"),
                        "heuristic_bound", never)
    monkeypatch.setattr(importlib.import_module("fabricopt.methods.solve"), "_kind_bound", never)
    quick = fabricopt.solve(inst, method, seed=1, bound=False)
    assert (quick.status, quick.objective, quick.solution, quick.limit) == \
        (full.status, full.objective, full.solution, full.limit)
    assert quick.bound is None and quick.gap is None and quick.bound_source is None
    assert quick.info == {**full.info, "bound": "not computed: solve(..., bound=False)"}


def test_the_milp_without_a_bound_is_feasible_at_most():
    inst = generate(seed=3, ops=6, gpus=2, max_peers=1)
    exact = fabricopt.solve(inst, "milp")
    quick = fabricopt.solve(inst, "milp", bound=False)
    assert exact.status == "optimal" and exact.bound == exact.objective
    assert (quick.status, quick.objective, quick.bound) == ("feasible", exact.objective, None)
    assert "not certified without a bound" in quick.info["optimality"]


def test_heuristics_return_the_lower_bound_themselves():
    from fabricopt.methods import placement as wiring

    inst = generate(3, ops=12)
    for fn in (wiring.sipml, wiring.sipml_ls, wiring.unconstrained, wiring.round_robin):
        fast = fn(inst, bound_milp_s=0)
        assert fast.bound == lower_bound(inst)
        assert fast.bound.source == lower_bound(inst).source
        assert fn(inst).bound >= lower_bound(inst)


def test_sipml_ls_is_deterministic_and_reports_its_search():
    inst = generate(9, ops=30, gpus=8, max_peers=2)
    a = fabricopt.solve(inst, "sipml-ls", seed=4)
    b = fabricopt.solve(inst, "sipml-ls", seed=4)
    assert a.solution == b.solution
    assert {"evals", "improvements", "restarts", "order", "sipml"} <= set(a.info)
    assert a.objective <= fabricopt.solve(inst, "sipml").objective * (1 + 1e-12)
    capped = fabricopt.solve(inst, "sipml-ls", max_evals=60, restarts=0)
    assert capped.info["evals"] <= 60


def test_unknown_option_is_refused():
    with pytest.raises(ValueError, match="budget = 3: not an option of method placement/sipml-ls"):
        fabricopt.solve(generate(0), "sipml-ls", budget=3)


def test_cli_generate_solve_check(tmp_path):
    inst_path, result_path = tmp_path / "inst.json", tmp_path / "result.json"
    run = [sys.executable, "-m", "fabricopt"]
    subprocess.run(run + ["generate", "placement", "--seed", "2", "--ops", "9", "--gpus", "4",
                          "--max-peers", "1", "--out", str(inst_path)], check=True)
    out = subprocess.run(run + ["solve", str(inst_path), "--method", "sipml", "--json",
                                "--out", str(result_path)],
                         check=True, capture_output=True, text=True).stdout
    envelope = json.loads(out)
    assert envelope["problem"] == "placement" and envelope["status"] == "feasible"
    assert envelope["bound"] <= envelope["objective"]
    verdict = subprocess.run(run + ["check", str(inst_path), str(result_path), "--json"],
                             capture_output=True, text=True)
    assert verdict.returncode == 0 and json.loads(verdict.stdout)["feasible"] is True


def test_cli_bad_instance_is_one_line(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"problem": "placement", "gpus": 2, "max_peers": 1,
                                "link_gbps": 1.0, "ops": [{"id": "a", "compute_s": 1}],
                                "deps": [{"src": "a", "dst": "b", "bytes": 1}]}))
    done = subprocess.run([sys.executable, "-m", "fabricopt", "solve", str(path), "--method",
                           "sipml"], capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.splitlines() == ["fabricopt: error: deps[0].dst = 'b': unknown op id"]
