"""The wavelengths methods through ``solve`` and the CLI: registry, envelope, bounds, seeds."""

import json

import pytest
from hypothesis import given, settings, strategies as st

import fabricopt
from fabricopt.problems import check
from fabricopt.bounds.wavelengths import count_bound
from fabricopt.methods.registry import get_method

from cli_helpers import run


def test_registered_methods():
    assert fabricopt.methods("wavelengths") == ["count-bound", "greedy", "mcf", "milp"]
    assert get_method("wavelengths", "count-bound").bound_only
    assert get_method("wavelengths", "milp").exact


def test_every_result_carries_the_count_relaxation_bound():
    inst = fabricopt.generate("wavelengths", seed=3, nodes=40, wavelengths=16, max_hops=8)
    expected = count_bound(inst)
    for method in ("greedy", "mcf"):
        result = fabricopt.solve(inst, method)
        assert result.status == "feasible"
        assert result.bound == pytest.approx(expected, rel=1e-12)
        assert result.gap == pytest.approx((result.objective - expected) / result.objective)
    counts = fabricopt.solve(inst, "count-bound")
    assert counts.status == "no_solution" and counts.bound == pytest.approx(expected, rel=1e-9)
    assert counts.to_dict()["solution"] is None


def test_mcf_is_deterministic_per_seed():
    inst = fabricopt.generate("wavelengths", seed=2, nodes=32, wavelengths=16, max_hops=16)
    a = fabricopt.solve(inst, "mcf", seed=7)
    b = fabricopt.solve(inst, "mcf", seed=7)
    assert a.solution == b.solution and a.objective == b.objective


def test_cli_generate_solve_check_pipeline(tmp_path):
    code, inst, err = run("generate", "wavelengths", "--seed", "4", "--nodes", "12",
                          "--wavelengths", "4", "--max-hops", "3")
    assert code == 0, err
    (tmp_path / "i.json").write_text(inst)
    code, out, err = run("solve", "-", "--method", "mcf", "--json", stdin=inst)
    assert code == 0, err
    envelope = json.loads(out)
    assert envelope["problem"] == "wavelengths" and envelope["status"] == "feasible"
    assert set(envelope["solution"]["lightpaths"][0]) == {"src", "dst", "dir", "wavelength"}
    code, out, err = run("check", str(tmp_path / "i.json"), "-", "--json", stdin=out)
    assert code == 0 and json.loads(out)["feasible"] is True
    code, out, _ = run("methods", "wavelengths")
    assert "count-bound" in out and "[bound only, honours time limit]" in out


@settings(max_examples=15)
@given(seed=st.integers(0, 10**6), nodes=st.integers(4, 10), wavelengths=st.integers(2, 5),
       data=st.data())
def test_bound_le_milp_le_heuristics_and_every_answer_checks(seed, nodes, wavelengths, data):
    max_hops = data.draw(st.integers(1, nodes - 1))
    inst = fabricopt.generate("wavelengths", seed=seed, nodes=nodes, wavelengths=wavelengths,
                              max_hops=max_hops, group=nodes,
                              mp_peers=data.draw(st.integers(0, min(max_hops, nodes - 1))))
    milp = fabricopt.solve(inst, "milp", time_limit=30)
    assert milp.status == "optimal"                 # generated instances are feasible
    assert check(inst, milp.solution)
    counts = fabricopt.solve(inst, "count-bound")
    assert counts.bound <= milp.objective * (1 + 1e-9)
    assert count_bound(inst) <= counts.bound * (1 + 1e-9)
    for method in ("mcf", "greedy"):
        result = fabricopt.solve(inst, method, seed=seed)
        assert result.status in ("feasible", "no_solution"), result.info  # never "error"
        if result.status == "feasible":
            assert check(inst, result.solution)
            assert milp.objective <= result.objective * (1 + 1e-9)
