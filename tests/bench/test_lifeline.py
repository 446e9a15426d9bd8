"""``kill -9`` of a ``fabricopt bench`` driver leaves no process behind."""

import os
import select
import signal
import subprocess
import time
from pathlib import Path

import pytest

from fabricopt.bench.lifeline import die_with, is_alive

from .support import gone, hang_pids
from .test_cli_bench import _bench, _toml, _wait_for


def _session(sid):
    """Pids of the live (non-zombie) processes of session ``sid``."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] != "Z":
            out.append(int(entry.name))
    return out


def _read_to_eof(streams, timeout_s):
    """Drain ``streams``; True once every one reached end-of-file within the time."""
    deadline = time.monotonic() + timeout_s
    open_ = list(streams)
    while open_ and time.monotonic() < deadline:
        ready, _, _ = select.select(open_, [], [], max(0.0, deadline - time.monotonic()))
        for stream in ready:
            if not os.read(stream.fileno(), 1 << 16):
                open_.remove(stream)
    return not open_


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
@pytest.mark.parametrize("executor", ["process", "dask"])
def test_kill_9_of_the_driver_ends_every_worker_forkserver_and_run(tmp_path, plugin, executor):
    if executor == "dask":
        pytest.importorskip("distributed", reason="dask.distributed is not installed")
    suite = _toml(tmp_path / "t.toml", ["hangs"], seeds=(0, 1), time_limit_s=120)
    proc = _bench("--suite", suite, "--out", tmp_path / "out", "--workers", 2, "--plugin",
                  plugin, "--executor", executor, "--no-plots", "--no-progress",
                  start_new_session=True)
    try:
        assert _wait_for(lambda: len(hang_pids(plugin)) == 2), proc.stderr
        helpers = [p for p in _session(proc.pid) if p != proc.pid]
        assert len(helpers) >= 4  # two workers, two runs (+ forkservers, resource tracker)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        # the pipes reach end-of-file only when no helper holds them any more
        assert _read_to_eof([proc.stdout, proc.stderr], timeout_s=30)
        assert all(gone(pid, wait_s=10) for pid in hang_pids(plugin))
        assert _wait_for(lambda: not _session(proc.pid), timeout_s=30), _session(proc.pid)
    finally:
        for pid in _session(proc.pid):
            os.kill(pid, signal.SIGKILL)


def test_die_with_runs_the_cleanup_and_exits_when_the_watched_process_ends(tmp_path):
    marker = tmp_path / "cleaned"
    watched = subprocess.Popen(["sleep", "60"])
    pid = os.fork()
    if pid == 0:  # the child watches the sleeper, then idles
        try:
            die_with(watched.pid, lambda: marker.touch(), exit_code=7)
            time.sleep(60)
        finally:
            os._exit(1)
    try:
        assert is_alive(pid)
        watched.kill()  # not reaped yet: a zombie, which counts as dead
        deadline, status = time.monotonic() + 30, None
        while status is None and time.monotonic() < deadline:
            done, code = os.waitpid(pid, os.WNOHANG)
            status = code if done else time.sleep(0.05)
        assert status is not None and os.WEXITSTATUS(status) == 7 and marker.exists()
    finally:
        watched.wait()
        if is_alive(pid):
            os.kill(pid, signal.SIGKILL)
