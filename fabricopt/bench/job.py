"""One benchmark run: what it is (:class:`RunSpec`) and what runs in its own process.

:func:`execute` runs inside the process that :mod:`.isolate` starts for each run: it
loads the plug-ins that register extra methods, calls :func:`fabricopt.solve` by method
name and returns the scored envelope's fields with the process's peak memory. It never
scores anything itself: objective, bound and gap are the envelope's.

``python -m fabricopt.bench.job SPEC.json RESULT.json`` does the same in a fresh
interpreter (used where the worker may not fork, e.g. a daemonic Dask worker).
"""

from __future__ import annotations

from fabricopt.errors import InvalidArgument

import hashlib
import importlib
import importlib.util
import json
import math
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

__all__ = ["RunSpec", "execute", "load_plugin", "absolute_plugin", "peak_rss_bytes", "run_key",
           "instance_hash"]


def instance_hash(instance_dict: dict) -> str:
    """SHA-256 of an instance's canonical JSON (sorted keys, no spaces).

    Examples
    --------
    >>> instance_hash({"b": 1, "a": [1.0, 2]}) == instance_hash({"a": [1.0, 2], "b": 1})
    True
    """
    text = json.dumps(instance_dict, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


def run_key(suite: str, instance_id: str, instance_hash_: str, method: str, seed: int,
            time_limit_s: float) -> str:
    """What identifies a run in the store: ``--resume`` skips a key already stored."""
    text = json.dumps([suite, instance_id, instance_hash_, method, seed, float(time_limit_s)])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class RunIdentity:
    """What every kind of run derives from its fields: its store key and kill time.

    Needs ``suite``, ``instance_id``, ``instance_hash``, ``method``, ``seed``,
    ``time_limit_s`` and ``grace_s``.
    """

    @property
    def key(self) -> str:
        return run_key(self.suite, self.instance_id, self.instance_hash, self.method,
                       self.seed, self.time_limit_s)

    @property
    def hard_limit_s(self) -> float:
        """When the run is killed: the time limit plus the grace period."""
        grace = 5.0 + 0.1 * self.time_limit_s if self.grace_s is None else self.grace_s
        return self.time_limit_s + grace


@dataclass(frozen=True)
class RunSpec(RunIdentity):
    """Everything a worker needs for one (instance, method) run; plain, picklable data.

    Attributes
    ----------
    suite, instance_id, instance_hash, kind, sense : str
        Where the instance comes from and what it is.
    size : int or None
        ``ProblemKind.size`` of the instance.
    sizes : dict
        The generator's size options (with ``seed`` they regenerate the instance).
    method : str
    seed : int
        The instance's generator seed, also the method's seed.
    time_limit_s : float
        The solver's time limit.
    instance : dict
        The instance's JSON object.
    plugins : tuple of str
        Modules (or ``.py`` files) to import first: they register extra methods.
    grace_s : float or None
        Wall-clock seconds on top of the time limit before the run is killed; None for
        the default ``5 + 0.1 * time_limit_s``.
    """

    suite: str
    instance_id: str
    instance_hash: str
    kind: str
    sense: str
    size: int | None
    sizes: dict
    method: str
    seed: int
    time_limit_s: float
    instance: dict = field(repr=False)
    plugins: tuple[str, ...] = ()
    grace_s: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "RunSpec":
        return cls(**{**data, "plugins": tuple(data.get("plugins", ()))})


def absolute_plugin(ref: str) -> str:
    """A plug-in reference as the driver sends it to workers: a ``.py`` file's absolute
    path (a worker runs in another folder), a module name unchanged.

    Raises
    ------
    ValueError
        If a ``.py`` file does not exist.

    Examples
    --------
    >>> absolute_plugin("fabricopt.algorithms.circuits")
    'fabricopt.algorithms.circuits'
    >>> Path(absolute_plugin(__file__)).is_absolute()
    True
    """
    if not ref.endswith(".py"):
        return ref
    path = Path(ref).expanduser().resolve()
    if not path.is_file():
        raise InvalidArgument(f"plugin = {ref!r}: no such file")
    return str(path)


def load_plugin(ref: str) -> None:
    """Import a module by name, or a ``.py`` file by path, so that its methods register."""
    if ref.endswith(".py"):
        path = Path(ref).resolve()
        name = "fabricopt_plugin_" + hashlib.sha256(str(path).encode()).hexdigest()[:12]
        if name in sys.modules:
            return
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or not path.is_file():
            raise InvalidArgument(f"plugin = {ref!r}: no such file")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        # The module's name is a hash (two files may share a stem); its methods are
        # labelled with the file's name instead, which is what a report should show.
        from fabricopt.methods import registry

        previous, registry._loading_source = registry._loading_source, path.name
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
        finally:
            registry._loading_source = previous
    else:
        try:
            importlib.import_module(ref)
        except ImportError as exc:
            raise InvalidArgument(f"plugin = {ref!r}: cannot import ({exc})") from None


def peak_rss_bytes() -> int | None:
    """Peak resident memory of this process (``getrusage``); None where unavailable."""
    try:
        import resource
    except ImportError:  # not on Windows
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)  # bytes on macOS, KiB else


def cpu_seconds() -> float:
    """CPU seconds of this process plus those of its waited-for children (a solver run
    as a subprocess, such as PuLP's CBC, counts toward the run that started it)."""
    try:
        import resource
    except ImportError:  # not on Windows: this process alone
        return time.process_time()
    child = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + child.ru_utime + child.ru_stime


def _finite(x) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def execute(spec: RunSpec, ready: Callable[[], None] | None = None) -> dict[str, Any]:
    """Run ``spec`` here and now: the envelope's fields plus peak memory.

    A method that raises, returns an infeasible answer or is unknown gives status
    ``error`` with its message; nothing escapes. ``ready()`` is called once the
    imports, plug-ins, the kind's compiled kernels (:func:`fabricopt.bench.warm.warm`)
    and the instance are loaded, just before the method runs: the
    harness starts its hard wall-clock limit there, so that a slow interpreter
    start-up on a loaded machine is not counted against the method.
    """
    from fabricopt.methods import solve
    from fabricopt.problems import instance_from_dict
    from fabricopt.methods.plugins import names_entry_point
    from fabricopt.methods.registry import all_methods, get_method
    from fabricopt.bench.tasks import TaskSpec, execute_task
    from fabricopt.bench.warm import warm

    if isinstance(spec, TaskSpec):  # a measurement task, not a solve call
        return {**execute_task(spec, ready), "peak_rss_bytes": peak_rss_bytes()}
    out: dict[str, Any] = {"status": "error", "objective": None, "bound": None, "gap": None,
                           "runtime_s": None, "message": None, "info": {}}
    try:
        all_methods()  # imports every built-in method's modules and installed plug-ins
        for ref in spec.plugins:
            if not names_entry_point(ref):
                load_plugin(ref)
        _import_solvers()
        warm(spec.kind)   # compiled kernels load before the clock starts
        instance = instance_from_dict(spec.instance)
        if ready is not None:
            ready()
            ready = None
        cpu_start = cpu_seconds()
        result = solve(instance, spec.method,
                       time_limit=spec.time_limit_s, seed=spec.seed)
        # the store keeps the typed fields beside the details, in its info column; cpu_s:
        # CPU seconds of the method and its scoring, solver subprocesses included (a
        # loaded machine stretches wall seconds, not these)
        info = {**result.info, "limit": result.limit, "bound_source": result.bound_source,
                "cpu_s": cpu_seconds() - cpu_start}
        source = get_method(spec.kind, spec.method).source
        if source != "builtin":  # the report lists the plug-ins that ran
            info["method_source"] = source
        out.update(status=result.status, objective=_finite(result.objective),
                   bound=_finite(result.bound), gap=_finite(result.gap),
                   runtime_s=result.runtime_s, message=info.pop("message", None),
                   info=json.loads(json.dumps(info, default=str)))
    except Exception as exc:  # bad plug-in, unknown method, a scoring failure: recorded
        out["message"] = f"{type(exc).__name__}: {exc}"
    if ready is not None:  # failed before the method ran: the answer is ready now
        ready()
    out["peak_rss_bytes"] = peak_rss_bytes()
    return out


def _import_solvers() -> None:
    """Import the MILP solvers' modules now, not inside the timed run."""
    try:
        import highspy  # noqa: F401
    except ImportError:
        pass


def _main(argv: list[str]) -> int:
    """``python -m fabricopt.bench.job SPEC RESULT [READY]``: READY is created
    when the method is about to run."""
    from fabricopt.bench.tasks import spec_from_dict

    spec_path, result_path, *ready_path = argv
    spec = spec_from_dict(json.loads(Path(spec_path).read_text()))
    ready = (lambda: Path(ready_path[0]).touch()) if ready_path else None
    outcome = execute(spec, ready)
    Path(result_path).write_text(json.dumps(outcome))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
