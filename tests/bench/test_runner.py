"""The runner survives misbehaving methods, kills at the hard limit, resumes exactly."""

import os
import sqlite3
from pathlib import Path

import pytest

from fabricopt.bench import Store, plan, run_sweep
from fabricopt.bench.isolate import run_isolated

from .support import gone, hang_pids, tiny_suite


def _by_method(out):
    with Store(out) as store:
        return {r["method"]: r for r in store.rows()}


def test_sweep_records_every_failure_and_aborts_nothing(tmp_path, plugin):
    # Only the hung run meets its limit; the runs that must finish get one no loaded
    # machine misses, so the outcome never depends on the wall clock.
    specs = (plan(tiny_suite(("hangs",), time_limit_s=0.5), plugins=[str(plugin)], grace_s=0.5)
             + plan(tiny_suite(("exact", "raises", "infeasible", "crashes", "hogs"),
                               time_limit_s=120.0), plugins=[str(plugin)]))
    outcome = run_sweep(specs, tmp_path / "out", workers=2, progress=False)
    assert (outcome.planned, outcome.ran, outcome.failed) == (6, 6, 4)
    rows = _by_method(tmp_path / "out")
    assert rows["exact"]["status"] == "optimal"
    assert rows["raises"]["status"] == "error"
    assert "raised RuntimeError: boom" in rows["raises"]["message"]
    assert rows["infeasible"]["status"] == "error"
    assert "returned an infeasible solution" in rows["infeasible"]["message"]
    assert rows["crashes"]["status"] == "error"
    assert "died without an answer (exit code 3)" in rows["crashes"]["message"]
    hang = rows["hangs"]
    assert hang["status"] == "error" and hang["message"].startswith("killed after")
    assert hang["wall_s"] >= 1.0  # killed at time limit 0.5 + grace 0.5, not before
    [pid] = hang_pids(plugin)
    assert gone(pid), "the hung run's process outlived its kill"
    # Peak memory is each run's own: the 160 MB run shows it, the others do not.
    assert rows["hogs"]["status"] == "feasible"
    assert rows["hogs"]["peak_rss_bytes"] > rows["exact"]["peak_rss_bytes"] + 120e6
    for row in rows.values():
        assert row["versions"]["fabricopt"] and row["host"] and row["size"] == 4


def test_subprocess_launcher_gives_the_same_outcomes(tmp_path, plugin):
    # A fresh interpreter takes over a second to start on a loaded machine: the run
    # that must finish gets a limit no machine misses; the hung one is killed early.
    specs = (plan(tiny_suite(("raises", "hangs"), time_limit_s=0.5), plugins=[str(plugin)],
                  grace_s=0.5)
             + plan(tiny_suite(("exact",), time_limit_s=60.0), plugins=[str(plugin)]))
    got = {s.method: run_isolated(s, launcher="subprocess") for s in specs}
    want = {s.method: run_isolated(s, launcher="process") for s in specs}
    for method in got:
        assert got[method]["status"] == want[method]["status"]
        assert got[method]["objective"] == want[method]["objective"]
    assert got["hangs"]["message"].startswith("killed after")
    assert all(gone(pid) for pid in hang_pids(plugin))


def test_resume_runs_nothing_twice(tmp_path):
    out = tmp_path / "out"
    specs = plan(tiny_suite(("exact", "greedy"), seeds=(0, 1)))
    first = run_sweep(specs, out, workers=2, progress=False)
    assert (first.ran, first.skipped) == (4, 0)
    again = run_sweep(specs, out, workers=2, progress=False, resume=True)
    assert (again.ran, again.skipped) == (0, 4)
    with sqlite3.connect(out / "bench.sqlite") as db:  # lose one run
        db.execute("DELETE FROM runs WHERE id = (SELECT MAX(id) FROM runs)")
    partial = run_sweep(specs, out, workers=2, progress=False, resume=True)
    assert (partial.ran, partial.skipped) == (1, 3)
    with Store(out) as store:
        assert store.count() == 4 and store.keys() == {s.key for s in specs}
    # Without --resume the sweep measures again; the report counts each run once.
    run_sweep(specs, out, workers=2, progress=False)
    with Store(out) as store:
        assert store.count() == 8 and len(store.rows()) == 4


def test_a_dead_pool_worker_costs_one_run_not_the_sweep(tmp_path, plugin):
    if not os.path.exists(f"/proc/{os.getpid()}/stat"):
        pytest.skip("the plug-in finds the pool worker through /proc")
    specs = plan(tiny_suite(("exact", "kills-worker", "greedy"), seeds=(0, 1)),
                 plugins=[str(plugin)])
    outcome = run_sweep(specs, tmp_path / "out", workers=2, progress=False)
    assert outcome.ran == 6
    with Store(tmp_path / "out") as store:
        rows = store.rows()
    for row in rows:
        if row["method"] == "kills-worker":
            assert row["status"] == "error" and "BrokenProcessPool" in row["message"]
        else:
            assert row["status"] in ("optimal", "feasible"), row["message"]


def test_dask_executor_gives_the_same_rows_as_the_process_pool(tmp_path):
    pytest.importorskip("distributed", reason="dask.distributed is not installed "
                                              "(pip install 'fabricopt[dask]')")
    specs = plan(tiny_suite(("exact", "greedy", "milp"), seeds=(0, 1), gpus=6))
    run_sweep(specs, tmp_path / "pool", workers=2, progress=False)
    run_sweep(specs, tmp_path / "dask", workers=2, executor="dask", progress=False)

    def rows(out):
        with Store(out) as store:
            return sorted((r["run_key"], r["instance_hash"], r["method"], r["status"],
                           r["objective"], r["bound"], r["size"]) for r in store.rows())

    assert rows(tmp_path / "pool") == rows(tmp_path / "dask")
    assert len(rows(tmp_path / "dask")) == 6


def test_rows_name_the_commit_they_ran_from_in_a_checkout(tmp_path):
    import shutil
    import subprocess

    from fabricopt.bench import isolate
    from fabricopt.bench.report import code_versions

    package = Path(isolate.__file__).resolve().parents[1]
    git = shutil.which("git")
    inside = git and subprocess.run([git, "-C", str(package), "rev-parse", "HEAD"],
                                    capture_output=True).returncode == 0
    commit = isolate.source_commit()
    if not inside:  # an installed package or a copy without .git (CI's)
        assert commit is None
        return
    head = subprocess.run([git, "-C", str(package), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
    assert commit.split("+")[0] == head and commit in (head, head + "+dirty")
    rows = [{"versions": {"fabricopt": "0.1.0", "fabricopt_commit": commit}},
            {"versions": {"fabricopt": "0.1.0"}}, {"versions": {}}]
    assert code_versions(rows) == ["0.1.0", f"0.1.0 (commit {commit})"]
