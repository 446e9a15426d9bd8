"""Two drivers on one results folder: the second waits for the first, then shares
what it stored (each run is run and stored once)."""

import subprocess
import sys
import time
from pathlib import Path

import pytest

from fabricopt.bench.lock import sweep_lock
from fabricopt.bench.store import Store
from fabricopt.errors import InvalidArgument

ROOT = Path(__file__).resolve().parents[2]

GATED = '''
import time
from pathlib import Path

from fabricopt.algorithms.circuits import greedy
from fabricopt.methods import register_method

GATE = Path({gate!r})


def gated(instance, **_):
    """Says it started, then waits for the test to open the gate."""
    (GATE.parent / "started").touch()
    while not GATE.exists():
        time.sleep(0.05)
    return greedy(instance)


register_method("circuits", "gated", gated, source="test plug-in")
'''


def _wait_for(condition, timeout_s=120.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def test_a_second_sweep_waits_and_runs_only_what_is_left(tmp_path):
    plugin = tmp_path / "gated.py"
    plugin.write_text(GATED.format(gate=str(tmp_path / "gate")))
    suite = tmp_path / "t.toml"
    suite.write_text('[[rows]]\nkind = "circuits"\nname = "tiny"\nsizes = {gpus = 4}\n'
                     'seeds = [0, 1]\nmethods = ["gated", "greedy"]\ntime_limit_s = 60\n')
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "fabricopt", "bench", "--suite", str(suite), "--out",
            str(out), "--workers", "1", "--plugin", str(plugin), "--resume", "--no-plots",
            "--no-progress"]
    logs = [tmp_path / "first.err", tmp_path / "second.err"]
    procs = []
    try:
        with open(logs[0], "w") as err:
            procs.append(subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL,
                                          stderr=err))
        assert _wait_for(lambda: (tmp_path / "started").exists()), logs[0].read_text()
        with open(logs[1], "w") as err:
            procs.append(subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL,
                                          stderr=err))
        assert _wait_for(lambda: "waiting for it to finish" in logs[1].read_text()), \
            logs[1].read_text()
        assert procs[1].poll() is None  # waiting, not running the plan
        (tmp_path / "gate").touch()
        codes = [proc.wait(timeout=300) for proc in procs]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    first, second = (log.read_text() for log in logs)
    assert codes == [0, 0], (first, second)
    assert "4 runs, 0 already stored, 4 run now" in first
    assert "4 runs, 4 already stored, 0 run now" in second
    assert second.splitlines()[0] == (f"fabricopt: note: another sweep (process "
                                      f"{procs[0].pid}) is running on {out}; waiting for "
                                      f"it to finish")
    with Store(out) as store:
        assert len(store.rows(latest=False)) == 4  # every run stored once


def test_refusing_instead_of_waiting_is_one_line(tmp_path):
    database = tmp_path / "bench.sqlite"
    code = ("import sys, time; from pathlib import Path; "
            "from fabricopt.bench.lock import sweep_lock\n"
            f"with sweep_lock(Path({str(database)!r})):\n"
            "    print('held', flush=True); time.sleep(600)\n")
    holder = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        with pytest.raises(InvalidArgument, match=rf"^{tmp_path}: another sweep \(process "
                                                  rf"{holder.pid}\) is running on this "
                                                  r"results folder; wait for it"):
            with sweep_lock(database, wait=False):
                pass
    finally:
        holder.kill()
        holder.wait()
    with sweep_lock(database, wait=False):  # released when its holder died
        pass
