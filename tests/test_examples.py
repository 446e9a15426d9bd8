"""The "add your own method" example (examples/, shown by the docs' property-test
tutorial) runs as written (bench aside)."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def run(args, stdin=None, **env):
    environ = dict(os.environ, PYTHONPATH=str(ROOT), **env)
    environ.pop("FABRICOPT_HYPOTHESIS_PROFILE", None)
    return subprocess.run([sys.executable, *args], input=stdin, cwd=ROOT, env=environ,
                          capture_output=True, text=True, timeout=300)


def test_the_tutorial_includes_the_example_files_and_the_readme_points_there():
    tutorial = (ROOT / "docs" / "tutorials" / "property_test.rst").read_text()
    for name in ("mine.py", "test_mine.py"):
        assert f".. literalinclude:: ../../examples/{name}" in tutorial  # cannot go stale
    assert "--plugin examples/mine.py --kinds circuits --methods mine,exact,greedy" in tutorial
    readme = (ROOT / "README.md").read_text()
    assert "docs/tutorials/property_test.rst" in readme and "examples/mine.py" in readme


def test_example_script_compares_mine_with_exact_and_greedy():
    out = run([str(EXAMPLES / "mine.py")])
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert [line.split()[:2] for line in lines] == [
        ["mine", "feasible"], ["exact", "optimal"], ["greedy", "feasible"]]


def test_example_test_file_passes_check_method():
    out = run(["-m", "pytest", "examples/test_mine.py", "-q", "-p", "no:cacheprovider"],
              FABRICOPT_CHECK_EXAMPLES="20")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "1 passed" in out.stdout


def test_plugins_env_var_exposes_the_example_to_the_command():
    listing = run(["-m", "fabricopt", "methods", "circuits"],
                  FABRICOPT_PLUGINS="examples/mine.py")
    assert listing.returncode == 0, listing.stderr
    assert "mine            Example: one circuit per demanded pair" in listing.stdout
    inst = run(["-m", "fabricopt", "generate", "circuits", "--gpus", "8", "--switches", "3"])
    solved = run(["-m", "fabricopt", "solve", "-", "--method", "mine"], stdin=inst.stdout,
                 FABRICOPT_PLUGINS="examples/mine.py")
    assert solved.returncode == 0, solved.stderr
    assert solved.stdout.startswith("circuits / mine: feasible")
