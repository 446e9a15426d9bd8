"""A sweep on a real Dask cluster: ``dask scheduler`` and two ``dask worker`` processes
on 127.0.0.1, each worker in a folder of its own, running a plug-in method from a
``.py`` file given by a relative path (docs: the Dask tutorial)."""

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("distributed")

from distributed import Client  # noqa: E402

from fabricopt.bench.executors import make_executor  # noqa: E402
from fabricopt.bench.runner import plan  # noqa: E402
from fabricopt.bench.suites import Row, Suite  # noqa: E402
from fabricopt.methods.registry import _METHODS  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
START_S = 90  # bound on the cluster's start-up (a loaded 2-core machine is slow)

PLUGIN = '''
import fabricopt
from fabricopt.algorithms.circuits import greedy


@fabricopt.register_method("circuits", "shipped")
def shipped(instance, *, time_limit=None, seed=0):
    """The greedy heuristic under another name, loaded from this file."""
    return greedy(instance)
'''

SUITE = """
[[rows]]
kind = "circuits"
name = "small"
sizes = {gpus = 6, switches = 2}
seeds = [0, 1, 2]
methods = ["shipped", "exact"]
time_limit_s = 30
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("FABRICOPT_PLUGINS", None)
    return env


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """``tcp://127.0.0.1:PORT`` of a scheduler with two one-thread workers."""
    base = tmp_path_factory.mktemp("dask")
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    dask = [sys.executable, "-m", "dask"]
    procs = [subprocess.Popen(dask + ["scheduler", "--host", "127.0.0.1", "--port", str(port),
                                      "--no-dashboard"],
                              cwd=base, env=_env(), stdout=subprocess.DEVNULL,
                              stderr=open(base / "scheduler.log", "w"))]
    try:
        for k in range(2):
            folder = base / f"worker{k}"
            folder.mkdir()
            procs.append(subprocess.Popen(
                dask + ["worker", address, "--nthreads", "1", "--nworkers", "1",
                        "--no-dashboard", "--host", "127.0.0.1", "--local-directory",
                        str(folder)],
                cwd=folder, env=_env(), stdout=subprocess.DEVNULL,
                stderr=open(base / f"worker{k}.log", "w")))
        deadline = time.monotonic() + START_S
        while True:
            try:
                with Client(address, timeout=5) as client:
                    client.wait_for_workers(2, timeout=max(1, deadline - time.monotonic()))
                break
            except OSError:
                if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                    logs = {p.name: p.read_text()[-500:] for p in base.glob("*.log")}
                    pytest.fail(f"the Dask cluster did not start: {logs}")
                time.sleep(0.5)
        yield address
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in reversed(procs):
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def _worker_folders(address):
    with Client(address, timeout=10) as client:
        return client.run(lambda dask_worker: dask_worker.local_directory)


def test_bench_on_the_cluster_ships_a_relative_plugin(cluster, tmp_path):
    (tmp_path / "mine.py").write_text(PLUGIN)
    (tmp_path / "small.toml").write_text(SUITE)
    out = tmp_path / "results"
    proc = subprocess.run(
        [sys.executable, "-m", "fabricopt", "bench", "--executor", "dask", "--scheduler",
         cluster, "--plugin", "mine.py", "--suite", "small.toml", "--out", str(out),
         "--no-plots", "--no-progress"],
        cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "failed" in proc.stderr and ", 0 failed" in proc.stderr, proc.stderr
    import sqlite3

    with sqlite3.connect(out / "bench.sqlite") as db:
        rows = db.execute("SELECT method, status, message, host FROM runs").fetchall()
    assert len(rows) == 6 and {m for m, *_ in rows} == {"shipped", "exact"}
    assert all(status in ("optimal", "feasible") for _, status, _, _ in rows), rows
    assert all(Path(folder).parent != tmp_path for folder in _worker_folders(cluster).values())


@pytest.fixture
def unregister_uploaded():
    """The plug-in loads in this process too (``plan`` imports it): forget it after."""
    before = set(sys.modules)
    yield
    _METHODS.pop(("circuits", "uploaded"), None)
    for name in set(sys.modules) - before:
        if name.startswith("fabricopt_plugin_"):
            del sys.modules[name]


def test_a_plugin_file_absent_on_the_workers_is_uploaded(cluster, tmp_path, unregister_uploaded):
    """The driver's file is deleted after the upload: the workers use their copies."""
    path = tmp_path / "gone_after_upload.py"
    path.write_text(PLUGIN.replace('"shipped"', '"uploaded"'))
    suite = Suite("dask-test", (Row("circuits", "tiny", {"gpus": 6, "switches": 2}, (0, 1),
                                    ("uploaded", "greedy")),))
    specs = plan(suite, plugins=[str(path)])
    assert all(Path(spec.plugins[0]).is_absolute() for spec in specs)
    executor = make_executor("dask", 2, cluster, plugins=specs[0].plugins)
    try:
        path.unlink()
        futures = {executor.submit(spec): spec for spec in specs}
        rows = [f.result(timeout=300) for f in futures]
    finally:
        executor.close()
    by_method = {}
    for row in rows:
        assert row["status"] == "feasible", row["message"]
        by_method.setdefault(row["method"], []).append(row["objective"])
    assert by_method["uploaded"] == by_method["greedy"]  # the same heuristic, shipped
