"""The pytest plugin loads from its ``pytest11`` entry point, with or without a
``pytest_plugins`` line."""

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _declared_entry_point() -> str:
    text = (ROOT / "pyproject.toml").read_text()
    section = text.split("[project.entry-points.pytest11]", 1)[1].split("\n[", 1)[0]
    (line,) = [ln for ln in section.splitlines() if "=" in ln and not ln.startswith("#")]
    return line.strip()


def test_the_fixture_works_from_the_entry_point_alone(tmp_path):
    # An installed distribution whose metadata declares pyproject's pytest11 entry point.
    site = tmp_path / "site"
    info = site / "fabricopt_entry_point_probe-0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fabricopt-entry-point-probe\n"
                                   "Version: 0\n")
    name, _, value = _declared_entry_point().partition("=")
    (info / "entry_points.txt").write_text(
        f"[pytest11]\n{name.strip().strip(chr(34))} = {value.strip().strip(chr(34))}\n")
    tests = tmp_path / "t"
    tests.mkdir()
    (tests / "test_bare.py").write_text(
        'def test_bare(check_method):\n    check_method("circuits", "greedy", examples=2)\n')
    (tests / "test_with_line.py").write_text(
        'pytest_plugins = ["fabricopt.testing.pytest_plugin"]\n\n'
        'def test_line(check_method):\n    check_method("circuits", "exact", examples=2)\n')
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), str(ROOT)]))
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           str(tests)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"2 passed", proc.stdout)
