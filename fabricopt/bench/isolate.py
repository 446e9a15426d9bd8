"""Run one benchmark job in its own process and kill it at a hard wall-clock limit.

HiGHS can overrun its time limit and a plug-in method can hang in C code where no
signal reaches Python, so every run gets a fresh process that is killed (SIGKILL, with
its whole process group) at ``time_limit + grace`` after it is ready to run the method
(imports and plug-ins loaded: start-up on a loaded machine is not the method's time). A fresh process per run also makes
the peak-memory figure that run's own. Processes are forked from a forkserver that has
already imported fabricopt, so a run starts in milliseconds. Where the caller may not
have children of that kind (a daemonic Dask worker), a fresh interpreter is started
with ``python -m fabricopt.bench.job`` instead.

:func:`run_isolated` is what every executor (process pool, Dask) calls; it returns the
complete row of the store.
"""

from __future__ import annotations

from fabricopt.errors import InvalidArgument

import functools
import json
import multiprocessing
import os
import platform
import signal
import socket
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

from fabricopt.bench.job import RunSpec, execute
from fabricopt.bench.lifeline import die_with, set_parent_death_signal

__all__ = ["run_isolated", "kill_running", "package_versions", "mp_context", "LAUNCHERS"]

LAUNCHERS = ("process", "subprocess")

# One thread per solve: numeric libraries read these when they are first imported.
_ONE_THREAD = {name: "1" for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                      "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS")}

# Runs this process has started and not yet reaped: each pid leads its process group.
_RUNNING: set[int] = set()

# Seconds a run's process may take to start (interpreter, imports, plug-ins) before the
# hard limit's clock starts: a cold `import fabricopt` takes seconds on a loaded machine.
STARTUP_LIMIT_S = 120.0

# What the forkserver imports once, so that each run's process starts warm
# (scipy.optimize: the priorities ``exact`` LP imports it on first use, ~1-2 s; the
# compiled kernels: loading them takes ~1 s, compiling them up to a minute).
_PRELOAD = ["fabricopt.bench.job", "fabricopt.methods.registry", "highspy", "pulp",
            "scipy.optimize", "fabricopt.bench._warm_forkserver"]


@functools.lru_cache(maxsize=1)
def mp_context():
    """The multiprocessing context for workers and runs: a forkserver where there is one
    (no fork of a threaded process), spawn elsewhere."""
    for name, value in _ONE_THREAD.items():
        os.environ.setdefault(name, value)
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        from fabricopt.methods.registry import _BUILTIN_MODULES

        ctx.set_forkserver_preload(_PRELOAD + list(_BUILTIN_MODULES))
        return ctx
    return multiprocessing.get_context("spawn")


@functools.lru_cache(maxsize=1)
def package_versions() -> dict[str, str]:
    """Versions of Python, fabricopt and the libraries a run's figures depend on."""
    from fabricopt._version import __version__

    out = {"python": platform.python_version(), "fabricopt": __version__}
    commit = source_commit()
    if commit is not None:
        out["fabricopt_commit"] = commit
    for name in ("numpy", "pulp", "highspy", "networkx", "scipy", "rustworkx"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "absent"
    return out


@functools.lru_cache(maxsize=1)
def source_commit() -> str | None:
    """The git commit fabricopt runs from (short hash, ``+dirty`` if its files differ),
    or None when it is not a git checkout (an installed package): a version number alone
    does not say which code made a figure between releases."""
    package = Path(__file__).resolve().parents[1]
    try:
        head = subprocess.run(["git", "-C", str(package), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=10)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", str(package), "status", "--porcelain",
                                "--untracked-files=no", "--", "."],
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def _child(spec: RunSpec, conn, owner_pid: int | None = None) -> None:
    """Body of a run's process: own process group (so the kill takes any helpers it
    starts, e.g. CBC), exit if ``owner_pid`` (the process that asked for the run)
    dies, quiet stdout/stderr, then :func:`execute`."""
    try:
        os.setpgrp()
    except (AttributeError, OSError):
        pass
    if owner_pid is not None:
        die_with(owner_pid, lambda: _kill_group(os.getpid()))
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    outcome = execute(spec, lambda: conn.send("ready"))
    conn.send(outcome)
    conn.close()


def kill_running() -> int:
    """Kill every run this process has started and not yet reaped; return how many.

    Called when a sweep is interrupted: by a pool worker's SIGTERM handler, or on each
    Dask worker through ``Client.run``.
    """
    pids = list(_RUNNING)
    for pid in pids:
        _kill_group(pid)
    return len(pids)


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (AttributeError, ProcessLookupError, PermissionError):
        pass
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _run_forked(spec: RunSpec) -> tuple[dict | None, str | None]:
    ctx = mp_context()
    receiver, sender = ctx.Pipe(duplex=False)
    process = ctx.Process(target=_child, args=(spec, sender, os.getpid()),
                          name=f"run {spec.instance_id}")
    process.start()
    _RUNNING.add(process.pid)
    sender.close()
    try:
        try:
            # The hard limit counts from "ready": the method is about to run.
            if not receiver.poll(STARTUP_LIMIT_S):
                return None, "startup"
            receiver.recv()
            if not receiver.poll(spec.hard_limit_s):
                return None, "timeout"
            return receiver.recv(), None
        except EOFError:  # the process died without an answer
            process.join(5)
            return None, f"exit code {process.exitcode}"
    finally:
        if process.is_alive():
            _kill_group(process.pid)
        process.join()
        _RUNNING.discard(process.pid)
        receiver.close()


def _run_subprocess(spec: RunSpec) -> tuple[dict | None, str | None]:
    with tempfile.TemporaryDirectory(prefix="fabricopt-run-") as tmp:
        spec_path, result_path = Path(tmp, "spec.json"), Path(tmp, "result.json")
        ready_path = Path(tmp, "ready")
        spec_path.write_text(json.dumps(spec.to_dict()))
        proc = subprocess.Popen([sys.executable, "-m", "fabricopt.bench.job",
                                 str(spec_path), str(result_path), str(ready_path)],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True,
                                preexec_fn=set_parent_death_signal,
                                env={**os.environ, **_ONE_THREAD})
        _RUNNING.add(proc.pid)
        try:
            if not _wait_ready(proc, ready_path):
                return None, "startup"
            proc.wait(timeout=spec.hard_limit_s)  # counted from "ready", not from start-up
        except subprocess.TimeoutExpired:
            return None, "timeout"
        finally:
            if proc.poll() is None:
                _kill_group(proc.pid)
            proc.wait()
            _RUNNING.discard(proc.pid)
        if proc.returncode != 0 or not result_path.exists():
            return None, f"exit code {proc.returncode}"
        return json.loads(result_path.read_text()), None


def _wait_ready(proc: subprocess.Popen, ready_path: Path) -> bool:
    """Wait until the child is about to run the method (or has exited)."""
    deadline = time.monotonic() + STARTUP_LIMIT_S
    while not ready_path.exists() and proc.poll() is None:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def _default_launcher() -> str:
    # A daemonic process (a Dask worker by default) may not start multiprocessing children.
    return "subprocess" if multiprocessing.current_process().daemon else "process"


def run_isolated(spec: RunSpec, launcher: str | None = None) -> dict[str, Any]:
    """Run ``spec`` in a process of its own, killed at ``spec.hard_limit_s``.

    Parameters
    ----------
    spec : RunSpec
    launcher : {"process", "subprocess"}, optional
        ``process``: a process from a warm forkserver; ``subprocess``: a fresh interpreter.
        Default: ``process`` unless this process is daemonic.

    Returns
    -------
    dict
        The store's row: the spec's identity, the envelope's status, objective, bound,
        gap and runtime, the message of a failure, peak memory, wall time, package
        versions, host. A killed or crashed run has status ``"error"``.

    Notes
    -----
    An exception here (e.g. KeyboardInterrupt) kills the run's process before it
    propagates; :func:`kill_running` kills it from a signal handler or another thread.
    """
    launcher = launcher or _default_launcher()
    if launcher not in LAUNCHERS:
        raise InvalidArgument(f"launcher = {launcher!r}: must be one of {', '.join(LAUNCHERS)}")
    start = time.perf_counter()
    outcome, failure = (_run_forked if launcher == "process" else _run_subprocess)(spec)
    wall_s = time.perf_counter() - start
    if outcome is None:
        if failure == "timeout":
            message = (f"killed after {wall_s:.1f} s: over the hard wall-clock limit of "
                       f"{spec.hard_limit_s:g} s (time limit {spec.time_limit_s:g} s + grace)")
        elif failure == "startup":
            message = (f"killed after {wall_s:.1f} s: the run's process did not start within "
                       f"{STARTUP_LIMIT_S:g} s")
        else:
            message = f"the run's process died without an answer ({failure})"
        outcome = {"status": "error", "objective": None, "bound": None, "gap": None,
                   "runtime_s": wall_s, "message": message, "info": {},
                   "peak_rss_bytes": None}
    return {
        "run_key": spec.key, "suite": spec.suite, "instance_id": spec.instance_id,
        "instance_hash": spec.instance_hash, "kind": spec.kind, "sense": spec.sense,
        "size": spec.size, "sizes": spec.sizes, "method": spec.method, "seed": spec.seed,
        "time_limit_s": spec.time_limit_s, **outcome, "wall_s": wall_s,
        "versions": package_versions(), "host": socket.gethostname(),
        "finished_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
