"""The sweep driver: plan the runs of a suite, execute them, store each as it finishes.

:func:`plan` turns a :class:`~fabricopt.bench.suites.Suite` into
:class:`~fabricopt.bench.job.RunSpec` s (one per instance, seed and method);
:func:`run_sweep` sends them to an executor and writes every finished run to the store
at once, so Ctrl-C loses no finished run and ``resume`` skips what is stored.

Scripts that call :func:`run_sweep` must guard their top level with
``if __name__ == "__main__":``, as for any use of :mod:`multiprocessing`.
"""

from __future__ import annotations

from fabricopt.errors import InvalidArgument

import logging
import os
import uuid
from collections import deque
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable, Sequence

from fabricopt.problems import generate
from fabricopt.problems import get_kind
from fabricopt.problems._validate import as_float
from fabricopt.bench.executors import make_executor
from fabricopt.bench.job import RunSpec, absolute_plugin, instance_hash, load_plugin
from fabricopt.bench.progress import ProgressBar
from fabricopt.bench.lock import sweep_lock
from fabricopt.bench.store import Store, database_path
from fabricopt.bench.suites import Suite

__all__ = ["plan", "run_sweep", "SweepOutcome"]

_log = logging.getLogger(__name__)


def _split(names: Iterable[str] | str | None) -> list[str] | None:
    if names is None:
        return None
    if isinstance(names, str):
        names = names.split(",")
    out = [n.strip() for n in names if n.strip()]
    return out or None


def plan(suite: Suite, *, methods: Iterable[str] | str | None = None,
         kinds: Iterable[str] | str | None = None, time_limit_s: float | None = None,
         plugins: Sequence[str] = (), grace_s: float | None = None) -> list[RunSpec]:
    """The runs of ``suite``: every row's seeds × its methods, instances generated here.

    Parameters
    ----------
    suite : Suite
    methods : list of str or comma-separated str, optional
        Run only these methods (where a row has them).
    kinds : list of str or comma-separated str, optional
        Run only these problem kinds.
    time_limit_s : float, optional
        Replaces every row's time limit.
    plugins : sequence of str
        Modules or ``.py`` files that register extra methods (loaded here and in every
        run's process).
    grace_s : float, optional
        Seconds past the time limit before a run is killed (default ``5 + 0.1*limit``).

    Raises
    ------
    ValueError
        If a method or kind filter names nothing in the suite, or a limit is not > 0.

    Examples
    --------
    >>> from fabricopt.bench.suites import Row, Suite
    >>> suite = Suite("demo", (Row("circuits", "tiny", {"gpus": 4}, (0, 1)),))
    >>> [s.instance_id + " " + s.method for s in plan(suite, methods="exact,greedy")]
    ['circuits/tiny/0 exact', 'circuits/tiny/0 greedy', 'circuits/tiny/1 exact', 'circuits/tiny/1 greedy']
    """
    plugins = tuple(absolute_plugin(ref) for ref in plugins)  # workers run elsewhere
    for ref in plugins:
        load_plugin(ref)
    methods, kinds = _split(methods), _split(kinds)
    if time_limit_s is not None:
        time_limit_s = as_float("time_limit_s", time_limit_s, positive=True, error=InvalidArgument)
    if grace_s is not None:
        grace_s = as_float("grace_s", grace_s, minimum=0.0, error=InvalidArgument)
    rows = list(suite.rows)
    if kinds is not None:
        unknown = [k for k in kinds if k not in suite.kinds()]
        if unknown:
            raise InvalidArgument(f"--kinds {unknown[0]}: not in suite {suite.name!r} "
                             f"(kinds: {', '.join(suite.kinds())})")
        rows = [row for row in rows if row.kind in kinds]
    if methods is not None:
        available = {m for row in rows for m in row.method_names()}
        unknown = [m for m in methods if m not in available]
        if unknown:
            raise InvalidArgument(f"--methods {unknown[0]}: no row of suite {suite.name!r} runs it "
                             f"(methods: {', '.join(sorted(available))})")
    specs = []
    for row in rows:
        names = [m for m in row.method_names() if methods is None or m in methods]
        if not names:
            continue
        kind = get_kind(row.kind)
        limit = time_limit_s if time_limit_s is not None else row.time_limit_s
        for seed in row.seeds:
            instance = generate(row.kind, seed=seed, **row.sizes)
            data = instance.to_dict()
            digest = instance_hash(data)
            size = int(kind.size(instance)) if kind.size is not None else None
            for name in names:
                specs.append(RunSpec(suite.name, row.instance_id(seed), digest, row.kind,
                                     kind.sense, size, dict(row.sizes), name, seed, limit,
                                     data, plugins, grace_s))
    return specs


@dataclass(frozen=True)
class SweepOutcome:
    """What a sweep did: runs planned, skipped as already stored, run now, failed."""

    sweep: str
    planned: int
    skipped: int
    ran: int
    failed: int
    database: Path


def _failed_row(spec: RunSpec, exc: BaseException) -> dict:
    """The row of a run whose worker itself failed (not the method: that is an envelope)."""
    return {"run_key": spec.key, "suite": spec.suite, "instance_id": spec.instance_id,
            "instance_hash": spec.instance_hash, "kind": spec.kind, "sense": spec.sense,
            "size": spec.size, "sizes": spec.sizes, "method": spec.method, "seed": spec.seed,
            "time_limit_s": spec.time_limit_s, "status": "error",
            "message": f"the worker failed: {type(exc).__name__}: {exc}",
            "finished_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}


def run_sweep(specs: Sequence[RunSpec], out: str | Path, *, workers: int | None = None,
              executor: str = "process", scheduler: str | None = None, resume: bool = False,
              progress: bool = True, stream=None) -> SweepOutcome:
    """Run ``specs`` and store every finished run in ``out``'s database.

    Parameters
    ----------
    specs : sequence of RunSpec
        From :func:`plan`.
    out : str or Path
        The results folder (created if absent); the database is ``out/bench.sqlite``.
    workers : int, optional
        Runs at once; default the machine's CPU count.
    executor : {"process", "dask"}
    scheduler : str, optional
        A Dask scheduler address (``tcp://host:8786``); without one, ``dask`` starts a
        LocalCluster of ``workers`` processes.
    resume : bool
        Skip runs whose key is already stored.
    progress : bool
        Draw a progress bar on ``stream`` (default stderr).

    Returns
    -------
    SweepOutcome

    Raises
    ------
    KeyboardInterrupt
        After cancelling queued runs and killing running ones; finished runs are stored.
    InvalidArgument
        If ``out``'s database cannot be opened or written
        (:class:`~fabricopt.bench.store.Store`): one line, and the runs stored stay.

    Notes
    -----
    One sweep at a time writes to a results folder: a sweep started while another runs
    on ``out`` waits for it (:func:`fabricopt.bench.lock.sweep_lock`, a note on
    ``stream``) and then reads what it stored, so with ``resume`` it runs only the rest.
    """
    workers = workers if workers is not None else (os.cpu_count() or 1)
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InvalidArgument(f"workers = {workers!r}: must be an integer >= 1")
    sweep = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ-") + uuid.uuid4().hex[:6]
    with sweep_lock(database_path(out), stream=stream), Store(out) as store:
        stored = store.keys() if resume else set()
        todo = [s for s in specs if s.key not in stored]
        skipped = len(specs) - len(todo)
        _log.info("sweep %s: %d runs (%d already stored) on %s with %d workers -> %s",
                  sweep, len(todo), skipped, executor if scheduler is None else scheduler,
                  workers, store.path)
        ran = failed = 0
        if todo:
            ran, failed = _execute(todo, store, sweep, workers, executor, scheduler,
                                   ProgressBar(len(todo), stream=stream, enabled=progress))
        return SweepOutcome(sweep, len(specs), skipped, ran, failed, store.path)


def _execute(todo, store, sweep, workers, executor_name, scheduler, bar) -> tuple[int, int]:
    """Submit ``todo`` through a window of ``executor.window`` runs, store each result.

    If a pool worker dies, every run in flight fails with it and nobody knows which run
    killed it; those runs are then retried one at a time ("quarantine"), so that only
    a run that breaks the pool when alone is recorded as an error.
    """
    plugins = sorted({ref for spec in todo for ref in spec.plugins})
    executor = make_executor(executor_name, workers, scheduler, plugins=plugins)
    pending, quarantine = deque(todo), deque()
    inflight: dict = {}  # future -> (spec, ran alone)
    done = failed = 0

    def record(row):
        nonlocal done, failed
        store.add(row, sweep)
        _log.debug("run %s %s: %s %s", row["instance_id"], row["method"], row["status"],
                   row.get("message") or "")
        done += 1
        failed += row["status"] == "error"
        bar.update(done=done, failed=failed, note=f"{row['instance_id']} {row['method']}")

    try:
        bar.update(done=0, failed=0)
        while pending or quarantine or inflight:
            if quarantine:
                if not inflight:
                    spec = quarantine.popleft()
                    inflight[executor.submit(spec)] = (spec, True)
            else:
                while pending and len(inflight) < executor.window:
                    spec = pending.popleft()
                    inflight[executor.submit(spec)] = (spec, False)
            finished = executor.wait(inflight, timeout=1.0)
            if not finished:
                bar.update(done=done, failed=failed)
            broken = False
            for future in finished:
                spec, alone = inflight.pop(future)
                try:
                    row = future.result()
                except Exception as exc:
                    broken = broken or executor.is_broken(exc)
                    if executor.is_broken(exc) and not alone:
                        quarantine.append(spec)
                        continue
                    row = _failed_row(spec, exc)  # alone, it broke the pool itself
                record(row)
            if broken:  # the rest in flight died with the pool, unless already done
                for future, (spec, _) in inflight.items():
                    if future.done() and future.exception() is None:
                        record(future.result())
                    else:
                        quarantine.append(spec)
                inflight.clear()
                executor.restart()
    except KeyboardInterrupt:
        executor.abort(list(inflight))
        for future in inflight:  # runs that finished while we stopped
            if future.done() and not future.cancelled() and future.exception() is None:
                record(future.result())
        raise
    finally:
        bar.close()
        executor.close()
    return done, failed
