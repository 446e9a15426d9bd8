"""The ``priorities`` experiment: Crux's priority compression, its speed and its cut
against the exact optimum.

1. ``compress`` (Crux Algorithm 1, the ``crux`` method of ``priorities``) on a
   2,000-job case, K = 8, m = 10 orders (target < 2 s), monotone and dense split scans.
2. The ``crux`` pipeline on a 100-job cluster case (target < 10 s), and the CPU time
   of scoring its answer (``problems.evaluate``: the fluid simulation).
3. Compression alone: ``crux``, ``sincronia`` and ``varys`` on 30-job cases, K = 4,
   over the ``milp`` optimum.
4. ``exact`` (the exact compression) against the ``milp`` and the ``crux`` DP at
   5,000 jobs, K = 8.
5. Inside ``crux``: ``compression="dp"`` against ``"exact"`` on the §4.4
   microbenchmark cases and on 20-job cases with 8 levels (GPU utilization).

The §4.4 microbenchmark against the enumerated optimum is the ``crux`` experiment's.

References
----------
.. [1] J. Cao et al., "Crux", SIGCOMM 2024, §4.3 (Algorithm 1: priority compression
   by the best sequence K-cut over random topological orders), §4.4.
"""

from __future__ import annotations

from pathlib import Path

from fabricopt.bench.metrics import ratio, relative_change
from fabricopt.bench.tasks import TaskSpec, register_task
from fabricopt.bench.experiments import Experiment, markdown_table, register_experiment, write_csv
from fabricopt.bench.experiments.comparisons import (CPU_NOTE, compare_spec, cpu_timed, fmt_pct,
                                                     fmt_s, method_stats, records_of)

KIND = "priorities"
BASELINES = ("crux", "sincronia", "varys")


@register_task("crux.pipeline")
def pipeline_task(sizes: dict, seed: int, repeats: int) -> dict:
    """CPU seconds of ``solve(crux)`` and ``solve(ecmp)`` on a generated ``crux`` case
    (least of ``repeats``), of scoring crux's answer alone (``problems.evaluate``), and
    both utilizations as ``solve`` scored them."""
    from fabricopt.problems import generate
    from fabricopt.methods import solve
    from fabricopt.problems import evaluate

    inst = generate("crux", seed=seed, **sizes)
    crux, crux_cpu_s = cpu_timed(lambda: solve(inst, "crux", seed=seed), repeats)
    ecmp, ecmp_cpu_s = cpu_timed(lambda: solve(inst, "ecmp", seed=seed), 1)
    _, evaluate_cpu_s = cpu_timed(lambda: evaluate(inst, crux.solution), 1)
    return {"value": crux_cpu_s, "flows": sum(len(j.flows) for j in inst.jobs),
            "links": len(inst.links), "crux_cpu_s": crux_cpu_s,
            "crux_runtime_s": crux.runtime_s, "evaluate_cpu_s": evaluate_cpu_s,
            "ecmp_cpu_s": ecmp_cpu_s, "crux_utilization": crux.objective,
            "ecmp_utilization": ecmp.objective, "status": crux.status}


_COMPRESS = ({"jobs": 2000, "levels": 8, "links": 400, "links_per_job": 2},
             {"jobs": 200, "levels": 8, "links": 40, "links_per_job": 2})
_PIPELINE = ({"jobs": 100, "tors": 32, "hosts_per_tor": 16, "aggs": 8, "levels": 8},
             {"jobs": 20, "tors": 8, "hosts_per_tor": 8, "aggs": 4, "levels": 8})
_ALONE = {"jobs": 30, "levels": 4}
_LARGE = ({"jobs": 5000, "levels": 8}, {"jobs": 200, "levels": 8})
_CRUX_CASES = {"microbench": ({"jobs": 5, "levels": 3}, range(10), range(2)),
               "jobs20": ({"jobs": 20, "levels": 8, "hosts_per_tor": 10}, range(5), range(1))}
_SPLITS = [["monotone", "crux", {"split": "monotone"}], ["dense", "crux", {"split": "dense"}]]
_COMPRESSIONS = [["dp", "crux", {"compression": "dp"}],
                 ["exact", "crux", {"compression": "exact"}]]


def _plan(suite: str, quick: bool) -> list:
    pick = 1 if quick else 0
    specs = [compare_spec(suite, "compress", KIND, _COMPRESS[pick], range(1), _SPLITS,
                          repeats=1 if quick else 3),
             TaskSpec(suite, "crux/pipeline", "crux.pipeline",
                      {"sizes": _PIPELINE[pick], "seed": 0, "repeats": 1 if quick else 3},
                      method="crux", time_limit_s=1800.0),
             compare_spec(suite, "alone", KIND, _ALONE, range(10 if quick else 200),
                          [[m, m, {}] for m in BASELINES], ["milp", "milp", {}]),
             compare_spec(suite, "large", KIND, _LARGE[pick], range(1 if quick else 2),
                          [["milp", "milp", {"time_limit": 600.0}], ["crux", "crux", {}]],
                          ["exact", "exact", {}])]
    for name, (sizes, seeds, qseeds) in _CRUX_CASES.items():
        specs.append(compare_spec(suite, f"compression/{name}", "crux", sizes,
                                  qseeds if quick else seeds, _COMPRESSIONS))
    return specs


def _label(sizes: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in sizes.items())


def _compress_lines(rows, quick, csv_rows) -> list[str]:
    records = records_of(rows, KIND, "compress")
    if not records:
        return []
    r = records[0]
    body = [[f"`{label}`", fmt_s(r[label]["cpu_s"]), fmt_s(r[label]["runtime_s"]),
             f"{r[label]['value']:.1f}"] for label, _, _ in _SPLITS]
    csv_rows += [["compress", r["seed"], label, r[label]["value"], r[label]["cpu_s"]]
                 for label, _, _ in _SPLITS]
    return [f"### `compress`: {_label(_COMPRESS[1 if quick else 0])}, m = 10 random BFS orders",
            "", markdown_table(["split scan", "CPU s (least of the repeats)",
                                "method wall s", "cut weight"], body), "",
            "(`monotone` is the default: divide and conquer over monotone split points; "
            "target < 2 s at 2,000 jobs.)", ""]


def _pipeline_lines(rows, quick) -> list[str]:
    found = [r for r in rows if r["instance_id"] == "crux/pipeline" and r["status"] == "feasible"]
    if not found:
        return []
    p = found[0]["info"]
    scoring = p["evaluate_cpu_s"]
    return [f"### `crux` pipeline: {_label(_PIPELINE[1 if quick else 0])}", "",
            f"{p['flows']} flows, {p['links']} links.", "",
            markdown_table(["figure", "value"], [
                ["`solve(crux)`: CPU s (method + scoring)", fmt_s(p["crux_cpu_s"])],
                ["of which scoring (`evaluate`, the fluid simulation), CPU s", fmt_s(scoring)],
                ["the rest (method and bound), CPU s",
                 fmt_s(max(0.0, p["crux_cpu_s"] - scoring))],
                ["utilization: `crux` / `ecmp`",
                 f"{p['crux_utilization']:.4f} / {p['ecmp_utilization']:.4f}"]]), "",
            "(target: the pipeline under 10 s at 100 jobs)", ""]


def _alone_lines(rows, csv_rows) -> list[str]:
    records = records_of(rows, KIND, "alone")
    if not records:
        return []
    proved = [r for r in records if r["reference"]["status"] == "optimal"]
    body = []
    for m in BASELINES:
        fractions = [ratio(r[m]["value"], r["reference"]["value"]) for r in proved]
        fractions = [1.0 if f is None else f for f in fractions]  # 0 / 0: at the optimum
        s = method_stats(proved, m)
        body.append([f"`{m}`", fmt_pct(sum(fractions) / len(fractions)), fmt_pct(min(fractions)),
                     f"{s['optimal']}/{len(proved)}", fmt_s(s["median_cpu_s"])])
        csv_rows += [["alone", r["seed"], m, r[m]["value"], r[m]["cpu_s"]] for r in proved]
    ref = method_stats([{"m": r["reference"]} for r in proved], "m")
    body.append(["`milp`", "100 %", None, f"{len(proved)}/{len(proved)}",
                 fmt_s(ref["median_cpu_s"])])
    return ["### Compression alone against the `milp` optimum", "",
            f"`generate('priorities', seed, {_label(_ALONE)})` for seeds 0-{len(records) - 1}; "
            f"`milp` optimal on {len(proved)}.", "",
            markdown_table(["method", "mean cut / optimum", "min", "at the optimum",
                            "median CPU s"], body), ""]


def _large_lines(rows, quick, csv_rows) -> list[str]:
    records = records_of(rows, KIND, "large")
    if not records:
        return []
    body = []
    for r in records:
        for m in ("reference", "milp", "crux"):
            run = r[m]
            body.append([r["seed"], "`exact`" if m == "reference" else f"`{m}`", run["status"],
                         f"{run['value']:.1f}", fmt_pct(method_stats([r], m)["mean_gap"])
                         if m != "reference" else "0.00 %", fmt_s(run["cpu_s"])])
            csv_rows += [["large", r["seed"], m, run["value"], run["cpu_s"]]]
    return [f"### `exact` against the `milp` and the `crux` DP: "
            f"{_label(_LARGE[1 if quick else 0])}", "",
            markdown_table(["seed", "method", "status", "cut", "gap to exact", "CPU s"], body), ""]


def _crux_lines(rows) -> list[str]:
    body = []
    for name, (sizes, _, _) in _CRUX_CASES.items():
        records = records_of(rows, "crux", f"compression/{name}")
        if not records:
            continue
        dp = [r["dp"]["value"] for r in records]
        exact = [r["exact"]["value"] for r in records]
        diff = [relative_change(e, d) for e, d in zip(exact, dp)]
        diff = [x for x in diff if x is not None]
        body.append([f"{name} ({_label(sizes)})", len(records), fmt_pct(sum(dp) / len(dp), 3),
                     fmt_pct(sum(exact) / len(exact), 3),
                     fmt_pct(sum(diff) / len(diff), 3) if diff else None,
                     f"{fmt_pct(min(diff), 3)} / {fmt_pct(max(diff), 3)}" if diff else None])
    if not body:
        return []
    return ["### Inside `crux`: `compression=\"dp\"` against `\"exact\"`", "",
            markdown_table(["cases", "n", "dp utilization", "exact utilization",
                            "mean exact / dp - 1", "min / max"], body), ""]


def _render(rows: list[dict], folder: Path, quick: bool) -> str:
    csv_rows: list[list] = []
    lines = _compress_lines(rows, quick, csv_rows) + _pipeline_lines(rows, quick)
    lines += _alone_lines(rows, csv_rows) + _large_lines(rows, quick, csv_rows)
    lines += _crux_lines(rows)
    write_csv(folder / "priorities.csv", ["row", "seed", "method", "value", "cpu_s"], csv_rows)
    lines += [CPU_NOTE + " Ratios: `metrics.ratio`. The §4.4 microbenchmark is in the "
              "`crux` experiment. CSV: `priorities.csv`."]
    return "\n".join(lines)


register_experiment(Experiment(
    name="priorities", version=1, title="priorities: Crux's priority compression",
    summary="compress speed at 2,000 jobs, the crux pipeline at 100 jobs, cuts vs the milp "
            "optimum, exact compression at 5,000 jobs, dp vs exact inside crux",
    plan=_plan, render=_render))
