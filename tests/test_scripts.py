"""The developer scripts under scripts/: each one runs (``--help``), uses the harness's
metrics instead of its own gap or ratio formula, and does not edit sys.path."""

import re
import runpy
import sys
from pathlib import Path

import pytest

SCRIPTS = sorted((Path(__file__).resolve().parents[1] / "scripts").glob("*.py"))

# A primal gap or ratio computed by hand: |a - b| / max(...).
_OWN_GAP = re.compile(r"abs\([^)]*-[^)]*\)\s*/\s*max\(")


def test_there_are_scripts():
    assert SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_script_runs_and_uses_the_shared_metrics(script, monkeypatch, capsys):
    text = script.read_text()
    assert "sys.path.insert" not in text, "scripts run against the installed package"
    assert not _OWN_GAP.search(text), "use fabricopt.bench.metrics.primal_gap / ratio"
    monkeypatch.setattr(sys, "argv", [str(script), "--help"])
    with pytest.raises(SystemExit) as exit_info:
        runpy.run_path(str(script), run_name="__main__")
    assert exit_info.value.code == 0
    assert "usage" in capsys.readouterr().out
