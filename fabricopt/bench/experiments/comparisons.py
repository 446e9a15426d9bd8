"""Method comparisons on one problem kind: the shared task and table helpers of the
``circuits``, ``wavelengths``, ``topology`` and ``priorities`` experiments.

One ``methods.compare`` task solves the instances of one row (a kind, generator sizes
and seeds) with a reference method (usually ``milp``) and the methods compared, in one
process: small instances cost milliseconds, a process per solve would cost more than
the solve. Every run records what :func:`fabricopt.solve` reported (status, objective,
bound, ``runtime_s`` of the method alone) and the CPU seconds of the whole ``solve``
call (:func:`time.process_time`: method, bound and scoring, every thread of the
process), the least over ``repeats`` calls. CPU seconds, not wall seconds, because the
benchmark machine is shared. Gaps are computed at render time from the stored values
by :mod:`fabricopt.bench.metrics`.
"""

from __future__ import annotations

import statistics
import time
from typing import Any, Callable, Sequence

from fabricopt.bench.metrics import median, primal_gap
from fabricopt.problems.tolerances import CERTIFY_RTOL
from fabricopt.bench.tasks import TaskSpec, register_task

__all__ = ["compare_spec", "compare_task", "BUILDERS", "EXTRAS", "method_stats",
           "records_of", "cpu_timed", "fmt_pct", "fmt_s", "CPU_NOTE"]

#: Instance builders other than the kind's generator: name -> fn(seed, **sizes).
BUILDERS: dict[str, Callable[..., Any]] = {}

#: Extra per-instance measures: name -> fn(instance, repeats) -> dict (JSON values).
EXTRAS: dict[str, Callable[[Any, int], dict]] = {}


def cpu_timed(fn: Callable[[], Any], repeats: int = 1) -> tuple[Any, float]:
    """``fn()``'s last answer and the least CPU seconds of ``repeats`` calls."""
    best, out = None, None
    for _ in range(max(1, repeats)):
        start = time.process_time()
        out = fn()
        spent = time.process_time() - start
        best = spent if best is None else min(best, spent)
    return out, best


def _run(instance, method: str, options: dict, seed: int, repeats: int,
         info_keys: Sequence[str]) -> dict:
    from fabricopt.methods import solve

    runs = []
    for _ in range(max(1, repeats)):
        result, cpu_s = cpu_timed(lambda: solve(instance, method, seed=seed, **options))
        runs.append((cpu_s, result))
    cpu_s = min(c for c, _ in runs)
    result = runs[-1][1]
    value = result.objective if result.objective is not None else result.bound
    out = {"status": result.status, "objective": result.objective, "bound": result.bound,
           "value": value, "gap": result.gap, "cpu_s": cpu_s,
           "runtime_s": min(r.runtime_s for _, r in runs)}
    for key in info_keys:
        if key in result.info:
            out[key] = result.info[key]
    return out


def _cheap_bound(instance, repeats: int) -> dict:
    """The kind's cheap bound (what every solve reports beside a heuristic's answer)."""
    from fabricopt.problems import kind_of

    return {"cheap_bound": float(kind_of(instance).bound(instance))}


EXTRAS["cheap_bound"] = _cheap_bound


def _instance(kind: str, builder: str | None, sizes: dict, seed: int):
    from fabricopt.problems import generate

    if builder is None:
        return generate(kind, seed=seed, **sizes)
    return BUILDERS[builder](seed, **sizes)


@register_task("methods.compare")
def compare_task(kind: str, sizes: dict, seeds: list, methods: list,
                 reference: list | None = None, repeats: int = 1, builder: str | None = None,
                 extras: Sequence[str] = (), info_keys: Sequence[str] = ()) -> dict:
    """Solve each seed's instance with ``reference`` and every one of ``methods``.

    ``methods`` and ``reference`` are ``[label, method, options]`` triples. An extra
    (:data:`EXTRAS`) may return ``{"skip": reason}`` to leave an instance out (an
    instance with an infeasibility proof, say). The value is the number of instances
    measured (not skipped).
    """
    from fabricopt.problems import get_kind

    records = []
    for seed in seeds:
        instance = _instance(kind, builder, sizes, seed)
        size = get_kind(kind).size
        record: dict[str, Any] = {"seed": seed, "size": size(instance) if size else None}
        for name in extras:
            record.update(EXTRAS[name](instance, repeats))
        if "skip" not in record:
            runs = ([reference] if reference else []) + list(methods)
            for i, (label, method, options) in enumerate(runs):
                key = "reference" if reference and i == 0 else label
                record[key] = _run(instance, method, options, seed, repeats, info_keys)
        records.append(record)
    return {"value": float(sum("skip" not in r for r in records)), "records": records}


def compare_spec(suite: str, name: str, kind: str, sizes: dict, seeds, methods,
                 reference=None, *, repeats: int = 1, builder: str | None = None,
                 extras: Sequence[str] = (), info_keys: Sequence[str] = (),
                 time_limit_s: float = 1800.0) -> TaskSpec:
    """The :class:`TaskSpec` of one ``methods.compare`` row called ``name``."""
    params = {"kind": kind, "sizes": sizes, "seeds": list(seeds),
              "methods": [list(m) for m in methods],
              "reference": None if reference is None else list(reference),
              "repeats": repeats, "builder": builder, "extras": list(extras),
              "info_keys": list(info_keys)}
    return TaskSpec(suite, f"{kind}/{name}", "methods.compare", params, method="compare",
                    time_limit_s=time_limit_s)


def records_of(rows: Sequence[dict], kind: str, name: str) -> list[dict] | None:
    """The stored records of row ``name`` (None when it did not run or failed)."""
    for r in rows:
        if r["instance_id"] == f"{kind}/{name}" and r["status"] == "feasible":
            return r["info"]["records"]
    return None


def method_stats(records: Sequence[dict], label: str) -> dict:
    """Statistics of method ``label`` over ``records``: against the reference where the
    reference proved optimality (``gaps``: primal gaps; ``optimal``: gaps of 0),
    ``none``: runs without a value, CPU and runtime medians and maxima."""
    runs = [r for r in records if label in r]
    gaps, none = [], 0
    for r in runs:
        run = r[label]
        if run["value"] is None:
            none += 1
            continue
        ref = r.get("reference")
        if ref is not None and ref["status"] == "optimal":
            gaps.append(primal_gap(run["value"], ref["value"]))
    cpu = [r[label]["cpu_s"] for r in runs]
    wall = [r[label]["runtime_s"] for r in runs]
    return {"n": len(runs), "gaps": gaps, "none": none,
            "mean_gap": statistics.mean(gaps) if gaps else None,
            "max_gap": max(gaps) if gaps else None,
            "optimal": sum(g <= CERTIFY_RTOL for g in gaps),
            "median_cpu_s": median(cpu), "max_cpu_s": max(cpu) if cpu else None,
            "median_runtime_s": median(wall)}


#: The footnote of every comparison section: what its CPU seconds are.
CPU_NOTE = ("CPU s: CPU seconds of the whole `solve` call (method, bound and scoring; the "
            "machine is shared, so CPU time rather than wall time), least of the repeats. "
            "Values are what `solve` scored (`problems.<kind>.evaluate`); gaps are primal "
            "gaps (`metrics.primal_gap`).")


def fmt_pct(x: float | None, digits: int = 2) -> str | None:
    """``x`` as a percentage (None stays None)."""
    return None if x is None else f"{100 * x:.{digits}f} %"


def fmt_s(x: float | None, digits: int = 3) -> str | None:
    """Seconds to ``digits`` significant figures (None stays None)."""
    return None if x is None else f"{x:.{digits}g}"
