"""fabricopt/bench/executors.py: choosing, using, stopping and replacing executors."""

import concurrent.futures as cf
import signal
import sys
import threading
import time

import pytest

from fabricopt import SolverUnavailable
from fabricopt.bench import executors
from fabricopt.bench.executors import DaskExecutor, ProcessExecutor, make_executor
from fabricopt.bench.job import execute
from fabricopt.bench.runner import plan

from .support import gone, hang_pids, tiny_suite


def specs(methods, plugins=(), time_limit_s=10.0):
    return plan(tiny_suite(methods, time_limit_s=time_limit_s), plugins=plugins)


def test_make_executor_rejects_unknown_names_and_a_stray_scheduler():
    with pytest.raises(ValueError, match=r"executor = 'threads': must be one of process, dask"):
        make_executor("threads", 1)
    with pytest.raises(ValueError, match=r"--scheduler = 'tcp://h:8786': needs --executor dask"):
        make_executor("process", 1, "tcp://h:8786")


def test_dask_missing_is_solver_unavailable(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    with pytest.raises(SolverUnavailable, match=r"--executor dask: dask\.distributed is not "
                                                r"installed"):
        DaskExecutor(1)
    assert DaskExecutor.is_broken(cf.process.BrokenProcessPool("x")) is False


def test_process_pool_rows_match_execute_and_survive_a_restart():
    exact, greedy = specs(("exact", "greedy"))
    pool = make_executor("process", 1)
    try:
        assert isinstance(pool, ProcessExecutor) and pool.window == 2
        # Workers ignore SIGINT: Ctrl-C is the driver's alone.
        assert pool._pool.submit(signal.getsignal, signal.SIGINT).result(30) == signal.SIG_IGN
        future = pool.submit(exact)
        assert pool.wait({future}, timeout=60) == {future}
        row = future.result()
        truth = execute(exact)
        assert (row["status"], row["objective"]) == (truth["status"], truth["objective"])
        assert row["run_key"] == exact.key and row["method"] == "exact"
        pool.restart()
        future = pool.submit(greedy)
        assert pool.wait({future}, timeout=60) == {future}
        assert future.result()["objective"] == execute(greedy)["objective"]
    finally:
        pool.close()


def test_is_broken_only_for_a_dead_pool():
    assert ProcessExecutor.is_broken(cf.process.BrokenProcessPool("worker died"))
    assert not ProcessExecutor.is_broken(RuntimeError("a run failed"))


def test_abort_kills_the_running_runs_and_fails_the_handed_over_ones(tmp_path, plugin):
    [hangs] = specs(("hangs",), plugins=[str(plugin)], time_limit_s=600.0)
    [queued] = specs(("greedy",))
    pool = ProcessExecutor(1)
    try:
        # The runner hands over at most ``window`` runs, all taken into the pool's call
        # queue at once (more would also leave pending ones, whose cancellation
        # races with the pool's breakdown on Python 3.11: CPython gh-107219).
        futures = [pool.submit(hangs), pool.submit(queued)]
        assert len(futures) == pool.window
        deadline = time.monotonic() + 30
        while not list((plugin.parent / "pids").iterdir()) and time.monotonic() < deadline:
            time.sleep(0.05)
        [pid] = hang_pids(plugin)
        pool.abort(futures)
        for future in futures:
            with pytest.raises(cf.process.BrokenProcessPool):
                future.result(timeout=30)
        assert gone(pid), "the aborted run's process outlived the abort"
    finally:
        pool.close()


def test_sigint_is_ignored_only_inside_and_only_on_the_main_thread():
    before = signal.getsignal(signal.SIGINT)
    with executors._sigint_ignored():
        assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    assert signal.getsignal(signal.SIGINT) == before
    seen = []

    def elsewhere():  # signal.signal would raise ValueError off the main thread
        with executors._sigint_ignored():
            seen.append(signal.getsignal(signal.SIGINT))

    thread = threading.Thread(target=elsewhere)
    thread.start()
    thread.join()
    assert seen == [before]
