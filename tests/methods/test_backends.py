"""A backend that cannot run is never offered: ``fabricopt methods`` says why, and
choosing it is one line of ``SolverUnavailable`` before any work."""

import importlib
import os

import pulp
import pytest

import fabricopt
from fabricopt.errors import SolverUnavailable
from fabricopt.milp import cbc as cbc_module
from fabricopt.milp import unavailable_backends
from cli_helpers import run_in_process

MISSING = "PuLP's CBC binary is missing ('/nowhere/cbc')"


@pytest.fixture
def no_cbc(monkeypatch):
    monkeypatch.setattr(cbc_module, "cbc_unavailable", lambda: MISSING)


def test_the_probe_says_why_cbc_cannot_run(monkeypatch, tmp_path):
    binary = tmp_path / "cbc"
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o644)
    monkeypatch.setattr(pulp.PULP_CBC_CMD, "pulp_cbc_path", str(binary))
    assert cbc_module.cbc_unavailable() == f"PuLP's CBC binary is not executable ({str(binary)!r})"
    assert not cbc_module.cbc_available()
    binary.chmod(0o755)
    assert cbc_module.cbc_unavailable() is None and cbc_module.cbc_available()
    missing = tmp_path / "gone" / "cbc"
    monkeypatch.setattr(pulp.PULP_CBC_CMD, "pulp_cbc_path", str(missing))
    assert cbc_module.cbc_unavailable() == f"PuLP's CBC binary is missing ({str(missing)!r})"
    monkeypatch.delattr(pulp.PULP_CBC_CMD, "pulp_cbc_path")
    assert cbc_module.cbc_unavailable().endswith("ships no CBC binary")


def test_solve_refuses_a_missing_cbc_in_one_line_before_the_method_runs(no_cbc, monkeypatch):
    inst = fabricopt.generate("topology", seed=0, servers=4, degree=2)
    assert fabricopt.solve(inst, "milp").status == "optimal"   # HiGHS still runs
    ran = []
    monkeypatch.setattr(importlib.import_module("fabricopt.methods.milp_method"), "run_milp",
                        lambda *a, **k: ran.append(1))
    with pytest.raises(SolverUnavailable, match=r"^backend = 'cbc': PuLP's CBC binary is "
                                                r"missing \('/nowhere/cbc'\)$"):
        fabricopt.solve(inst, "milp", backend="cbc")
    assert not ran
    assert unavailable_backends() == {"cbc": MISSING}


@pytest.mark.parametrize("kind", ["circuits", "topology", "wavelengths"])
def test_methods_lists_cbc_only_where_it_runs(kind, no_cbc):
    code, out, err = run_in_process(["methods", kind], timeout_s=60)
    assert code == 0, err
    lines = [line for line in out.splitlines() if "--option backend=" in line]
    assert lines
    for line in lines:
        assert f"(one of highs; cbc unavailable here: {MISSING})" in line


def test_methods_lists_cbc_where_it_runs(monkeypatch):
    monkeypatch.setattr(cbc_module, "cbc_unavailable", lambda: None)
    code, out, _ = run_in_process(["methods", "topology"], timeout_s=60)
    assert code == 0 and "--option backend=highs  (one of highs, cbc)" in out


def test_the_command_line_refuses_a_missing_cbc_with_exit_2(no_cbc, tmp_path):
    path = tmp_path / "inst.json"
    fabricopt.dump(fabricopt.generate("topology", seed=0, servers=4, degree=2), path)
    code, out, err = run_in_process(["solve", str(path), "--method", "milp", "--backend", "cbc"],
                                    timeout_s=60)
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [f"fabricopt: error: backend = 'cbc': {MISSING}"]
