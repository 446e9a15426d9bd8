"""Where runs execute: a local process pool (default) or a Dask cluster.

Both submit :func:`~fabricopt.bench.isolate.run_isolated`, which starts and, at
the hard limit, kills a process of its own for each run; so a worker never hangs and
both executors store the same rows. Dask is an optional extra, imported only here and
only when asked for.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import dataclasses
import logging
import os
import signal
import threading
from pathlib import Path

from fabricopt.errors import InvalidArgument, SolverUnavailable
from fabricopt.bench.isolate import kill_running, mp_context, run_isolated
from fabricopt.bench.lifeline import die_with
from fabricopt.bench.job import RunSpec

__all__ = ["ProcessExecutor", "DaskExecutor", "make_executor", "EXECUTORS"]

EXECUTORS = ("process", "dask")

_log = logging.getLogger(__name__)


def _terminate(signum, frame):
    # A pool worker told to stop kills its runs' processes (in their own process
    # groups, a plain SIGTERM would orphan them) and exits at once.
    kill_running()
    os._exit(128 + signum)


def _init_worker(driver_pid: int | None = None) -> None:
    # Ctrl-C reaches the whole foreground process group; the driver alone handles it
    # and stops the workers with SIGTERM, so that exactly one path cleans up.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _terminate)
    if driver_pid is not None:  # a driver killed with SIGKILL leaves no orphans
        die_with(driver_pid, kill_running)


@contextlib.contextmanager
def _sigint_ignored():
    """Ignore SIGINT while child processes are started, so that they inherit it."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may change signal handlers
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


class ProcessExecutor:
    """``concurrent.futures.ProcessPoolExecutor`` with ``workers`` processes."""

    name = "process"

    def __init__(self, workers: int):
        self.workers = workers
        self.window = workers + 1  # runs handed over at once: one queued keeps all busy
        self._pool = self._new_pool()

    def _new_pool(self) -> cf.ProcessPoolExecutor:
        return cf.ProcessPoolExecutor(max_workers=self.workers, mp_context=mp_context(),
                                      initializer=_init_worker, initargs=(os.getpid(),))

    def submit(self, spec: RunSpec):
        return self._pool.submit(run_isolated, spec)

    def wait(self, futures, timeout: float) -> set:
        done, _ = cf.wait(list(futures), timeout=timeout, return_when=cf.FIRST_COMPLETED)
        return done

    @staticmethod
    def is_broken(exc: BaseException) -> bool:
        """Did a worker die under the pool (its other runs must be resubmitted)?"""
        return isinstance(exc, cf.process.BrokenProcessPool)

    def restart(self) -> None:
        """Replace a broken pool by a fresh one."""
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._pool = self._new_pool()

    def abort(self, futures) -> None:
        """Stop now: cancel queued runs; workers kill their runs' processes and exit."""
        for f in futures:
            f.cancel()
        # ProcessPoolExecutor has no public way to stop busy workers before Python 3.14.
        for process in list(getattr(self._pool, "_processes", {}).values()):
            if process.is_alive():
                os.kill(process.pid, signal.SIGTERM)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


def _on_worker(spec: RunSpec):
    """What a Dask worker runs: the spec with each ``.py`` plug-in that is not at its
    driver path replaced by the copy :meth:`DaskExecutor.ship` uploaded, then the run."""
    from distributed import get_worker

    folder = Path(get_worker().local_directory)
    plugins = []
    for ref in spec.plugins:
        copy = folder / Path(ref).name
        plugins.append(str(copy) if ref.endswith(".py") and not Path(ref).is_file()
                       and copy.is_file() else ref)
    return run_isolated(dataclasses.replace(spec, plugins=tuple(plugins)))


class DaskExecutor:
    """A Dask cluster: the scheduler at ``scheduler``, or a LocalCluster of ``workers``
    one-thread worker processes when no address is given.

    Workers need fabricopt installed (and plug-ins given as module names). Plug-ins
    given as ``.py`` files are uploaded to every worker (``Client.upload_file``), so a
    worker in another folder or on another machine finds them. Runs are isolated in a
    fresh interpreter each when the worker is daemonic (Dask's default), which may not
    fork children.
    """

    name = "dask"
    window = float("inf")  # the scheduler balances all runs over however many workers

    def __init__(self, workers: int, scheduler: str | None = None, plugins=()):
        try:
            import dask
            from distributed import Client, LocalCluster
        except ImportError:
            raise SolverUnavailable("--executor dask: dask.distributed is not installed "
                                    "(pip install 'fabricopt[dask]')") from None
        self._cluster = None
        if scheduler:
            self._client = Client(scheduler)
        else:
            # Non-daemonic workers may start the per-run processes from a forkserver;
            # workers that ignore SIGINT leave Ctrl-C to the driver, as pool workers do.
            with dask.config.set({"distributed.worker.daemon": False}), _sigint_ignored():
                self._cluster = LocalCluster(n_workers=workers, threads_per_worker=1,
                                             processes=True, dashboard_address=None,
                                             silence_logs=logging.ERROR)
            self._client = Client(self._cluster)
        try:
            self.ship(plugins)
        except BaseException:
            self.close()
            raise

    def ship(self, plugins) -> None:
        """Upload every ``.py`` plug-in file to the scheduler and every worker (also to
        workers that join later); module names must be installed on the workers."""
        files = [Path(ref) for ref in plugins if ref.endswith(".py")]
        names = [f.name for f in files]
        clash = next((n for n in names if names.count(n) > 1), None)
        if clash is not None:
            raise InvalidArgument(f"plugin = {clash!r}: two plug-in files of that name cannot be "
                             f"shipped to Dask workers; rename one")
        for path in files:
            _log.info("uploading plug-in %s to the Dask workers", path)
            self._client.upload_file(str(path), load=False)

    def submit(self, spec: RunSpec):
        return self._client.submit(_on_worker, spec, pure=False)

    def wait(self, futures, timeout: float) -> set:
        from distributed import wait

        try:
            done, _ = wait(list(futures), timeout=timeout, return_when="FIRST_COMPLETED")
        except TimeoutError:
            return set()
        return set(done)

    @staticmethod
    def is_broken(exc: BaseException) -> bool:
        return False  # Dask reschedules the runs of a lost worker itself; no restart

    def abort(self, futures) -> None:
        """Cancel queued runs, then kill the running ones on every worker."""
        self._client.cancel(list(futures), force=True)
        try:
            self._client.run(kill_running)
        except Exception:  # a worker already gone has no runs left to kill
            pass

    def close(self) -> None:
        self._client.close()
        if self._cluster is not None:
            self._cluster.close()


def make_executor(name: str, workers: int, scheduler: str | None = None, *, plugins=()):
    """The executor called ``name`` (``"process"`` or ``"dask"``); ``plugins`` are the
    runs' plug-in references (a Dask cluster gets their files uploaded)."""
    if name == "process":
        if scheduler:
            raise InvalidArgument(f"--scheduler = {scheduler!r}: needs --executor dask")
        return ProcessExecutor(workers)
    if name == "dask":
        return DaskExecutor(workers, scheduler, plugins)
    raise InvalidArgument(f"executor = {name!r}: must be one of {', '.join(EXECUTORS)}")
