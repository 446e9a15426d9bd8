"""The docs' tutorials run: each is a doctest, executed in a fresh interpreter (they
register methods of their own) from the repository root."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = sorted((ROOT / "docs" / "tutorials").glob("*.rst"))


def test_there_are_tutorials():
    names = {p.stem for p in TUTORIALS}
    assert {"solve", "benchmark", "property_test", "compare", "dask"} <= names


@pytest.mark.parametrize("path", TUTORIALS, ids=lambda p: p.stem)
def test_tutorial_runs(path):
    if path.stem == "dask":
        pytest.importorskip("distributed")
    env = dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg")
    env.pop("FABRICOPT_PLUGINS", None)
    proc = subprocess.run([sys.executable, "-m", "doctest", "-o", "ELLIPSIS",
                           "-o", "NORMALIZE_WHITESPACE", str(path)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
