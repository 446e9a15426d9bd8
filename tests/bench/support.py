"""Helpers of the benchmark tests: a plug-in of misbehaving methods, tiny suites."""

import os
import time

from fabricopt.bench.suites import Row, Suite

PLUGIN = '''
import os, time
from pathlib import Path

import numpy as np

from fabricopt.algorithms.circuits import greedy
from fabricopt.problems.circuits import CircuitsSolution
from fabricopt.methods import register_method

PIDS = Path({pids!r})


def raises(instance, **_):
    raise RuntimeError("boom")


def hangs(instance, **_):
    """Ignores its time limit (as a solver stuck in C code would)."""
    (PIDS / f"hangs-{{os.getpid()}}").touch()
    time.sleep(3600)


def infeasible(instance, **_):
    return CircuitsSolution([[None] * instance.gpus for _ in range(instance.switches)])


def crashes(instance, **_):
    os._exit(3)


def hogs(instance, **_):
    """Touches 160 MB, then answers."""
    block = np.ones(20_000_000)
    block[::4096] += 1.0
    return greedy(instance)


def kills_worker(instance, **_):
    """Kills the pool worker above this run (parent of its forkserver), then idles."""
    parent = Path(f"/proc/{{os.getppid()}}/stat").read_text()
    os.kill(int(parent.rsplit(")", 1)[1].split()[1]), 9)
    time.sleep(2)


for fn in (raises, hangs, infeasible, crashes, hogs, kills_worker):
    register_method("circuits", fn.__name__.replace("_", "-"), fn, source="test plug-in")
'''

PLUGIN_METHODS = ("raises", "hangs", "infeasible", "crashes", "hogs", "kills-worker")


def hang_pids(plugin_path):
    """Pids of the processes that ran the ``hangs`` method."""
    return [int(p.name.split("-")[1]) for p in (plugin_path.parent / "pids").iterdir()]


def tiny_suite(methods, *, seeds=(0,), time_limit_s=10.0, name="t", gpus=4):
    """One circuits row of ``gpus`` GPUs and 2 switches."""
    return Suite(name, (Row("circuits", "tiny", {"gpus": gpus, "switches": 2}, tuple(seeds),
                            tuple(methods), time_limit_s),))


def gone(pid, wait_s=5.0):
    """Has process ``pid`` ended (within ``wait_s``)?"""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False
