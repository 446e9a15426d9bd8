"""Measurement tasks: benchmark runs that are not one ``solve`` call.

An experiment (:mod:`fabricopt.bench.experiments`) is made of runs. Most are
(instance, method) runs (:class:`~fabricopt.bench.job.RunSpec`); the others measure
something a single solve does not give — the iteration time of a workload on a fabric,
the job completion times behind a utilization figure. Such a run is a
:class:`TaskSpec`: the name of a registered task function and its JSON parameters. It
goes through the same executors, per-run process, hard kill, store and ``--resume`` as
every other run, so a killed experiment loses nothing it finished.

A task function takes its parameters as keyword arguments and returns a JSON-able
dict of measures with a float ``"value"``, its headline figure (stored as the row's
``objective``); the whole dict is stored in the row's ``info``. Tasks never score
solutions themselves: they call :func:`fabricopt.solve`, ``problems.<kind>.evaluate``
and the fabric models, and report what those return.
"""

from __future__ import annotations

from fabricopt.errors import InvalidArgument

import hashlib
import json
import math
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

from fabricopt.bench.job import RunIdentity

__all__ = ["TaskSpec", "register_task", "get_task", "execute_task", "spec_from_dict"]

_TASKS: dict[str, Callable[..., dict]] = {}



def register_task(name: str):
    """Decorator: register ``fn`` as the task ``name``.

    Examples
    --------
    >>> @register_task("demo.square")
    ... def square(x: float) -> dict:
    ...     return {"value": x * x}
    >>> get_task("demo.square")(x=3.0)
    {'value': 9.0}
    """
    def decorate(fn: Callable[..., dict]) -> Callable[..., dict]:
        if name in _TASKS and _TASKS[name] is not fn:
            raise InvalidArgument(f"task {name!r} is already registered")
        _TASKS[name] = fn
        return fn

    return decorate


def get_task(name: str) -> Callable[..., dict]:
    """The task function registered as ``name``.

    Raises
    ------
    ValueError
        If no task has that name.
    """
    if name not in _TASKS:  # the built-in tasks register when their experiments load
        from fabricopt.bench.experiments import experiments

        experiments()
    if name not in _TASKS:
        raise InvalidArgument(f"task = {name!r}: unknown task (known: {', '.join(sorted(_TASKS))})")
    return _TASKS[name]


@dataclass(frozen=True)
class TaskSpec(RunIdentity):
    """One task run: plain, picklable data with the attributes the runner and store use.

    Attributes
    ----------
    suite : str
        The experiment's suite name (``"crux@1"``, ``"crux-quick@1"``).
    instance_id : str
        What point this is, e.g. ``"sipml/resnet50/1024gbps"``.
    task : str
        A name registered with :func:`register_task`.
    params : dict
        The task's keyword arguments (JSON values).
    method : str
        A label for the report (the fabric, the method); part of the run's identity.
    seed : int
    time_limit_s : float
        The task's budget; the run is killed at ``time_limit_s + grace``.
    plugins : tuple of str
    grace_s : float or None
    """

    suite: str
    instance_id: str
    task: str
    params: dict = field(repr=False)
    method: str = ""
    seed: int = 0
    time_limit_s: float = 600.0
    plugins: tuple[str, ...] = ()
    grace_s: float | None = None

    # The store's identity columns, derived so that a task row reads like a solve row.
    @property
    def kind(self) -> str:
        return "task:" + self.task

    sense = "min"
    size = None

    @property
    def sizes(self) -> dict:
        return self.params

    @property
    def instance_hash(self) -> str:
        text = json.dumps([self.task, self.params], sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()

    def to_dict(self) -> dict[str, Any]:
        return {"spec_type": "task", **asdict(self)}


def spec_from_dict(data: dict):
    """A :class:`TaskSpec` or :class:`~fabricopt.bench.job.RunSpec` from ``to_dict``."""
    from fabricopt.bench.job import RunSpec

    data = dict(data)
    if data.pop("spec_type", None) == "task":
        return TaskSpec(**{**data, "plugins": tuple(data.get("plugins", ()))})
    return RunSpec.from_dict(data)


def execute_task(spec: TaskSpec, ready: Callable[[], None] | None = None) -> dict[str, Any]:
    """Run ``spec``'s task here: the row's outcome fields (status ``feasible`` with the
    task's ``value`` as objective, or ``error`` with the exception's message).

    ``ready()`` is called once the plug-ins and the task are loaded, just before the task
    runs (the harness starts its hard limit there)."""
    import time

    from fabricopt.bench.job import cpu_seconds, load_plugin

    out: dict[str, Any] = {"status": "error", "objective": None, "bound": None, "gap": None,
                           "runtime_s": None, "message": None, "info": {}}
    start, cpu_start = time.perf_counter(), cpu_seconds()
    try:
        for ref in spec.plugins:
            load_plugin(ref)
        task = get_task(spec.task)
        if ready is not None:
            ready()
            ready = None
        start, cpu_start = time.perf_counter(), cpu_seconds()
        measures = task(**spec.params)
        value = measures.get("value")
        if value is not None and not (isinstance(value, (int, float)) and math.isfinite(value)):
            raise InvalidArgument(f"task {spec.task!r} returned value = {value!r}: not a finite number")
        out.update(status="feasible", objective=None if value is None else float(value),
                   info=json.loads(json.dumps(measures, default=str)))
    except Exception as exc:  # recorded as the run's error, the sweep goes on
        out["message"] = f"{type(exc).__name__}: {exc}"
    if ready is not None:  # failed before the task ran: the answer is ready now
        ready()
    out["runtime_s"] = time.perf_counter() - start
    # what the run cost in CPU seconds, subprocesses included (a task's own cpu_s, if it
    # returns one, is its measurement and stays as it is)
    out["info"]["run_cpu_s"] = cpu_seconds() - cpu_start
    return out
