"""The topology wiring: every method registered, scored by ``solve``, mean hops in info."""

import json

import pytest

import fabricopt
from fabricopt.problems.topology import TopologyInstance, generate, mean_hops
from fabricopt.bounds.topology import lower_bound

from cli_helpers import run

METHODS = ["milp", "ocs-reconfig", "random-regular", "ring", "topoopt"]


def test_registered_methods():
    assert fabricopt.methods("topology") == METHODS


@pytest.mark.parametrize("method", METHODS)
def test_solve_scores_and_reports_mean_hops(method):
    inst = generate(seed=4, servers=6, degree=3)
    r = fabricopt.solve(inst, method)
    assert r.status == ("optimal" if method == "milp" else "feasible")
    assert r.info["mean_hops"] == pytest.approx(mean_hops(inst, r.solution)) and r.info["mean_hops"] >= 1
    assert r.bound is not None and lower_bound(inst) <= r.bound * (1 + 1e-12)
    assert r.bound <= r.objective * (1 + 1e-9)


@pytest.mark.parametrize("method", METHODS)
def test_degree_one_infeasible_is_reported_by_every_method(method):
    inst = TopologyInstance(4, 1, 8.0, [{"members": [0, 1, 2], "bytes": 1.0}], [[0] * 4] * 4)
    r = fabricopt.solve(inst, method)
    assert r.status == "infeasible" and r.solution is None


def test_odd_ring_share_option_is_a_clear_error():
    inst = generate(seed=0, servers=6, degree=4)
    with pytest.raises(fabricopt.InvalidOption, match="mp_degree = 1: leaves 3 interfaces "
                                                      "for AllReduce"):
        fabricopt.solve(inst, "topoopt", mp_degree=1)


def test_same_seed_same_answer():
    inst = generate(seed=2, servers=10, degree=4)
    for method in ("topoopt", "random-regular", "ocs-reconfig"):
        a = fabricopt.solve(inst, method, seed=3).solution
        assert a == fabricopt.solve(inst, method, seed=3).solution


def test_cli_generate_pipe_solve_and_check(tmp_path):
    code, inst, err = run("generate", "topology", "--seed", "1", "--servers", "6",
                          "--degree", "3", "--mp-bytes", "2e8")
    assert code == 0, err
    assert json.loads(inst)["servers"] == 6
    code, out, err = run("solve", "-", "--method", "milp", "--json", stdin=inst)
    assert code == 0, err
    envelope = json.loads(out)
    assert envelope["status"] == "optimal" and "mean_hops" in envelope["info"]
    (tmp_path / "i.json").write_text(inst)
    (tmp_path / "r.json").write_text(out)
    code, out, err = run("check", str(tmp_path / "i.json"), str(tmp_path / "r.json"), "--json")
    assert code == 0 and json.loads(out)["feasible"]
    code, out, err = run("solve", "-", "--method", "topoopt", "--option", "mp_degree=0",
                         stdin=inst)
    assert code == 2 and "mp_degree = 0: leaves 3 interfaces for AllReduce" in err


def test_topoopt_honours_a_time_limit_and_says_it_cut_the_search():
    inst = generate(seed=0, servers=16, degree=6)
    from fabricopt.methods.registry import get_method

    assert get_method("topology", "topoopt").honours_time_limit
    cut = fabricopt.solve(inst, "topoopt", time_limit=1e-9)
    free = fabricopt.solve(inst, "topoopt")
    assert free.info["candidates_total"] > 1 and "time_limit_exceeded" not in free.info
    assert free.info["candidates_scored"] == free.info["candidates_total"]
    # a tiny limit still builds the first candidate, the paper's allocation
    assert cut.status == "feasible" and fabricopt.check(inst, cut.solution)
    assert cut.info["candidates_scored"] == 1
    assert cut.info["candidates_total"] == free.info["candidates_total"]
    assert "stopped after 1 of" in cut.info["time_limit_exceeded"]
    paper = fabricopt.solve(inst, "topoopt", candidates=False)
    assert cut.solution == paper.solution
    assert free.objective <= cut.objective * (1 + 1e-12)


def test_topoopt_without_a_limit_is_unchanged():
    from fabricopt.algorithms.topology.topoopt import topoopt

    inst = generate(seed=2, servers=16, degree=8)
    r = fabricopt.solve(inst, "topoopt", time_limit=600.0)
    assert r.solution == topoopt(inst) == topoopt(inst, time_limit=None)
    assert "time_limit_exceeded" not in r.info


def test_milp_warm_start_gets_the_time_limit():
    # the topoopt warm start stops at the deadline too, so a tiny limit returns its
    # first candidate (the paper's allocation) instead of running every candidate
    from fabricopt.algorithms.topology.topoopt import topoopt

    inst = generate(seed=0, servers=16, degree=6)
    r = fabricopt.solve(inst, "milp", time_limit=1e-9)
    assert r.status == "feasible" and "time_limit_exceeded" in r.info
    assert r.solution == topoopt(inst, candidates=False)
