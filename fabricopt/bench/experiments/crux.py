"""Crux §4.4 and §5: GPU utilization of ``crux`` against the baselines on a shared
two-tier Clos, the job completion times behind it, and the microbenchmark against the
enumerated optimum.

Scenarios (``fabricopt generate crux`` sizes; every job trains a model of
:data:`fabricopt.problems.crux_clos.MODELS` with a ring AllReduce over its hosts):

- ``testbed``: the paper's 96-GPU testbed in size — 12 hosts of 8 GPUs under 2 ToRs
  and 2 aggregation switches, 5 jobs, 8 levels (Crux §5.1; our job mix, not theirs);
- ``cluster``: a 512-GPU two-tier Clos (8 ToRs of 8 hosts, 4 aggregation switches),
  24 jobs, 8 levels — the shape of the paper's trace-driven Clos simulation (§5.3)
  at a size the fluid simulator scores in seconds;
- ``microbench``: the paper's §4.4 cases (2-4 ToRs, 2 aggregation switches, 5 jobs,
  3 levels), each method against ``enumerate`` where it settles the case.

Per run the task solves the instance with the method, then replays the returned paths
and levels in :func:`fabricopt.problems.contention.simulate` to read every job's
iterations in the measurement window: its mean iteration time is the JCT per
iteration. The utilization is the one :func:`fabricopt.solve` scored.

References
----------
.. [1] J. Cao et al., "Crux", SIGCOMM 2024: §4.4 (microbenchmark: 97.69 / 97.24 /
   97.12 % of the enumerated optimum for path selection, priority assignment and
   compression, measured per mechanism), §5.2 (testbed: +8.3 % to +14.8 % GPU
   utilization; GPT JCT -11 % to -25 %, BERT +0 % to +3 %), §5.3 (trace simulation on
   a two-layer Clos: +13 % to +23 % over Sincronia, TACCL* and CASSINI).
"""

from __future__ import annotations

from pathlib import Path

from fabricopt.problems.crux_clos import GPUS_PER_HOST
from fabricopt.bench.metrics import mean, ratio, relative_change
from fabricopt.bench.tasks import TaskSpec, register_task
from fabricopt.bench.experiments import Experiment, markdown_table, register_experiment, write_csv

__all__ = ["SCENARIOS", "METHODS", "schedule_task"]

#: The mechanisms compared (``enumerate`` joins them on the microbenchmark).
METHODS = ("crux", "ecmp", "sincronia", "varys")

#: scenario -> (generator sizes, seeds of the full variant, seeds of the quick variant,
#: time limit per run in seconds).
SCENARIOS = {
    "testbed": ({"jobs": 5, "tors": 2, "hosts_per_tor": 6, "aggs": 2, "levels": 8},
                range(10), range(3), 300.0),
    "cluster": ({"jobs": 24, "tors": 8, "hosts_per_tor": 8, "aggs": 4, "levels": 8},
                range(5), range(1), 600.0),
    "microbench": ({"jobs": 5, "levels": 3}, range(30), range(4), 300.0),
}

# The paper's figures set beside ours (see References).
PAPER = {
    "testbed": "+8.3 % to +14.8 % (testbed, Crux §5.2)",
    "cluster": "+13 % to +23 % (trace simulation on a Clos, Crux §5.3)",
    "microbench": "97.12-97.69 % of the optimum per mechanism (Crux §4.4)",
}


@register_task("crux.schedule")
def schedule_task(sizes: dict, seed: int, method: str, time_limit_s: float) -> dict:
    """Solve a generated ``crux`` instance with ``method``; report the utilization
    ``solve`` scored and every job's mean iteration time in the measurement window."""
    from fabricopt.problems import generate
    from fabricopt.methods import solve
    from fabricopt.problems.contention import simulate
    from fabricopt.problems.crux import sim_jobs

    instance = generate("crux", seed=seed, **sizes)
    result = solve(instance, method, time_limit=time_limit_s, seed=seed)
    out = {"value": result.objective, "status": result.status, "bound": result.bound,
           "runtime_s": result.runtime_s, "message": result.info.get("message")}
    if result.solution is None:
        return out
    sim = simulate(instance.links, sim_jobs(instance, result.solution.path,
                                            result.solution.level),
                   instance.warmup, instance.window)
    out["jobs"] = [{"id": job.id, "gpus": job.gpus, "level": int(result.solution.level[job.id]),
                    "iterations": int(n),
                    "iteration_s": (sim.window_s / n) if n > 0 else None,
                    "standalone_s": standalone}
                   for job, n, standalone in zip(instance.jobs, sim.iterations,
                                                 instance.standalone_iteration_s)]
    return out


def _plan(suite: str, quick: bool) -> list:
    specs = []
    for scenario, (sizes, full_seeds, quick_seeds, limit) in SCENARIOS.items():
        methods = METHODS + (("enumerate",) if scenario == "microbench" else ())
        for seed in (quick_seeds if quick else full_seeds):
            for method in methods:
                specs.append(TaskSpec(suite, f"crux/{scenario}/{seed}", "crux.schedule",
                                      {"sizes": sizes, "seed": seed, "method": method,
                                       "time_limit_s": limit},
                                      method=method, seed=seed, time_limit_s=limit))
    return specs


def _pct(x: float | None, signed: bool = False) -> str | None:
    if x is None:
        return None
    return f"{x * 100:+.1f} %" if signed else f"{x * 100:.2f} %"


def _scenario_rows(rows, scenario):
    """{seed: {method: row}} for one scenario's runs that have a utilization."""
    out: dict[int, dict[str, dict]] = {}
    for r in rows:
        if r["instance_id"].split("/")[1] == scenario and r["objective"] is not None:
            out.setdefault(r["seed"], {})[r["method"]] = r
    return out


def _jct_changes(by_seed) -> dict[str, list[float]]:
    """Per baseline: relative iteration-time change of the jobs ``crux`` favours (those
    on its highest used level) and of the others, against the same jobs under it."""
    changes: dict[str, list[float]] = {}
    for runs in by_seed.values():
        if "crux" not in runs or "jobs" not in runs["crux"]["info"]:
            continue
        crux_jobs = {j["id"]: j for j in runs["crux"]["info"]["jobs"]}
        top = max(j["level"] for j in crux_jobs.values())
        for base in METHODS[1:]:
            if base not in runs or "jobs" not in runs[base]["info"]:
                continue
            for job in runs[base]["info"]["jobs"]:
                mine = crux_jobs[job["id"]]
                change = relative_change(mine["iteration_s"], job["iteration_s"])
                if change is not None:
                    group = "favoured" if mine["level"] == top else "others"
                    changes.setdefault(f"{base}/{group}", []).append(change)
    return changes


def _render(rows: list[dict], folder: Path, quick: bool) -> str:
    lines = []
    gains_csv = []
    for scenario in ("testbed", "cluster"):
        by_seed = _scenario_rows(rows, scenario)
        if not by_seed:
            continue
        sizes = SCENARIOS[scenario][0]
        gpus = sizes["tors"] * sizes["hosts_per_tor"] * GPUS_PER_HOST
        lines += [f"### {scenario}: {len(by_seed)} instance(s), {sizes['jobs']} jobs on "
                  f"{sizes['tors']} ToRs x {sizes['hosts_per_tor']} hosts x "
                  f"{GPUS_PER_HOST} GPUs ({gpus} GPUs), {sizes['levels']} levels", ""]
        body = []
        crux_u = [runs["crux"]["objective"] for runs in by_seed.values() if "crux" in runs]
        for method in METHODS:
            utils = [runs[method]["objective"] for runs in by_seed.values() if method in runs]
            gains = [relative_change(runs["crux"]["objective"], runs[method]["objective"])
                     for runs in by_seed.values() if "crux" in runs and method in runs]
            gains = [g for g in gains if g is not None]
            body.append([f"`{method}`", len(utils), _pct(mean(utils)),
                         None if method == "crux" else _pct(mean(gains), signed=True),
                         None if method == "crux" or not gains else
                         f"{min(gains) * 100:+.1f} / {max(gains) * 100:+.1f} %"])
            gains_csv.append([scenario, method, len(utils), mean(utils), mean(gains)])
        lines += [markdown_table(["method", "instances", "mean GPU utilization",
                                  "crux's mean gain over it", "min / max gain"], body), ""]
        lines += [f"Paper: {PAPER[scenario]}. Gains are `U_crux / U_method - 1` per "
                  f"instance; {len(crux_u)} `crux` runs. fabricopt's `sincronia` and "
                  f"`varys` are compression baselines on Crux's own paths and priorities, "
                  f"so the gain over them measures compression alone; `ecmp` (hashed "
                  f"paths, one level) is the schedule without Crux. The paper's baselines "
                  f"are whole schedulers.", ""]
        changes = _jct_changes(by_seed)
        if changes:
            jct = [[f"`{key.split('/')[0]}`", key.split('/')[1], len(v), _pct(mean(v), True)]
                   for key, v in sorted(changes.items())]
            lines += ["Iteration time (JCT per iteration) under `crux` against each "
                      "baseline, for the jobs `crux` puts on its highest used level "
                      "(favoured) and the rest:", "",
                      markdown_table(["baseline", "jobs", "job runs", "mean change"], jct), ""]
    micro = _scenario_rows(rows, "microbench")
    if micro:
        settled = {s: runs for s, runs in micro.items()
                   if "enumerate" in runs and runs["enumerate"]["info"].get("status") == "optimal"}
        body = []
        for method in METHODS:
            fractions = [ratio(runs[method]["objective"], runs["enumerate"]["objective"])
                         for runs in settled.values() if method in runs]
            fractions = [f for f in fractions if f is not None]
            body.append([f"`{method}`", len(fractions), _pct(mean(fractions)),
                         _pct(min(fractions)) if fractions else None])
        lines += [f"### microbench: {len(micro)} cases, `enumerate` settled {len(settled)}", "",
                  markdown_table(["method", "cases", "mean % of optimum", "worst"], body), "",
                  f"Paper: {PAPER['microbench']}; ours is end to end (paths, priorities "
                  f"and compression at once), so compare in kind only.", ""]
    write_csv(folder / "crux-utilization.csv",
              ["scenario", "method", "instances", "mean_utilization", "crux_mean_gain"],
              gains_csv)
    figure = _plot(rows, folder)
    if figure is not None:
        lines += [f"![GPU utilization per method]({figure.name})", ""]
    lines += ["CSV: `crux-utilization.csv`."]
    return "\n".join(lines)


def _plot(rows: list[dict], folder: Path) -> Path | None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scenarios = [s for s in SCENARIOS if _scenario_rows(rows, s)]
    if not scenarios:
        return None
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    width = 0.8 / len(METHODS)
    for i, method in enumerate(METHODS):
        means = []
        for s in scenarios:
            utils = [runs[method]["objective"] for runs in _scenario_rows(rows, s).values()
                     if method in runs]
            means.append((mean(utils) or 0.0) * 100)
        ax.bar([x + i * width for x in range(len(scenarios))], means, width, label=method)
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(scenarios))], scenarios)
    ax.set_ylabel("mean GPU utilization (%)")
    ax.set_title("Crux: GPU utilization on a shared two-tier Clos")
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = folder / "crux-utilization.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


register_experiment(Experiment(
    name="crux", version=1, title="Crux: GPU utilization on a shared cluster",
    summary="crux vs ecmp / sincronia / varys on a 96-GPU testbed-size and a 512-GPU Clos; "
            "the microbenchmark vs the enumerated optimum; JCT changes",
    plan=_plan, render=_render, paper="Crux, SIGCOMM 2024, §4.4 and §5 (Figs. 14-24)"))
