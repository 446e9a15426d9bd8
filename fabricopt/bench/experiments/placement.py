"""Placement: SiP-ML's speed target on a Transformer-scale graph, the MILP-vs-heuristics
gap table, ``sipml`` against the degree-free baseline on the named families, ``sipml``
at scale, and the (k, l) search's candidates.

Sections (every run a task of :mod:`.placement_tasks`; times in CPU seconds of the
run's process, because the machine is shared):

- *Speed*: SiP-ML's Transformer (24 layers) as an op graph, balanced with tau = 10 us on
  64 GPUs with 400 Gbps links, at ``max_peers`` 15 and 7: ``balance`` and ``sipml`` CPU
  time (target: ``sipml`` under 2 s), ``sipml-ls`` within 10 s, the
  ``unconstrained`` baseline and the fast lower bound.
- *Gap*: 30 random instances ``generate(seed, ops=10 + seed % 3, gpus=4,
  max_peers=1 + seed % 2)``; ``milp`` (600 s) against every heuristic (their model
  bounds off: ``bound_milp_s=0``), and the MILP's symmetry-breaking variants without a
  warm start.
- *Families*: ``problems.placement.FAMILIES``, 4 seeds (1 for the 20,000-sub-op
  family): makespans over ``unconstrained``'s.
- *Scaling*: ``sipml`` at 20,000 and 100,000 sub-ops on 64 GPUs.
- *(k, l) search*: ResNet-50 (k <= 64) and the Transformer (k <= 16: its SiP-OCS
  search up to k = 64 did not finish in 11 minutes of wall time on the shared 2-core
  machine) on 1024 GPUs of SiP-OCS and Elect-Flat at 1024 Gbps, every candidate priced.

The quick variant runs each section at a small size (minutes on 2 cores).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from fabricopt.problems.placement import FAMILIES
from fabricopt.problems.tolerances import CERTIFY_RTOL
from fabricopt.bench.metrics import loglog_slope, mean, primal_gap, ratio
from fabricopt.bench.tasks import TaskSpec
from fabricopt.bench.experiments import Experiment, markdown_table, register_experiment, write_csv
from fabricopt.bench.experiments import placement_tasks  # noqa: F401  (registers the tasks)

__all__ = ["HEURISTICS", "SYMMETRY", "gap_sizes"]

#: The heuristics of the gap table, in its order.
HEURISTICS = ("sipml", "sipml-ls", "unconstrained", "round-robin")
#: The MILP's symmetry-breaking settings timed without a warm start.
SYMMETRY = {"full": True, "weak": "weak", "none": False}
_SYMMETRY_NOTE = {"full": "GPUs ordered by their first op", "weak": "op i uses GPUs 0..i "
                  "only; the default", "none": "HiGHS's own symmetry detection"}

# Per variant: gap seeds, MILP limit s; families' seeds (big family's), sipml-ls evals;
# scaling sizes, repeats; Transformer layers, max_peers, repeats, LS budget s; (k, l)
# workloads, GPUs, largest k.
_FULL = {"gap": (range(30), 600.0), "families": (FAMILIES, 4, 1, 2000),
         "scaling": ((20000, 100000), 3), "transformer": (24, (15, 7), 2, 10.0),
         "kl": ((("resnet50", 64), ("transformer", 16)), 1024)}
_QUICK = {"gap": (range(4), 120.0), "families": ({"k16-p3": FAMILIES["k16-p3"]}, 2, 0, 200),
          "scaling": ((2000, 20000), 1), "transformer": (4, (15,), 1, 2.0),
          "kl": ((("resnet50", 8),), 64)}
_KL_FABRICS = ("sip-ocs", "elect-flat")
_KL_GBPS = 1024.0
# SiP-ML's speed target: sipml places at least this many sub-ops in under this time.
_TARGET_OPS, _TARGET_S = 20000, 2.0
_BIG_OPS = 5000          # families above this many sub-ops: 1 seed, a quarter of the evals


def gap_sizes(seed: int) -> dict:
    """The generator sizes of the gap table's instance ``seed``.

    Examples
    --------
    >>> gap_sizes(5)
    {'ops': 12, 'gpus': 4, 'max_peers': 2}
    """
    return {"ops": 10 + seed % 3, "gpus": 4, "max_peers": 1 + seed % 2}


def _plan(suite: str, quick: bool) -> list:
    v = _QUICK if quick else _FULL
    specs = []
    seeds, milp_s = v["gap"]
    for seed in seeds:
        point = f"placement/gap/{seed}"
        runs = [("milp", "milp", {})] + [(m, m, {"bound_milp_s": 0.0}) for m in HEURISTICS]
        runs += [(f"milp/symmetry={name}", "milp",
                  {"warm_start": False, "symmetry_breaking": setting})
                 for name, setting in SYMMETRY.items()]
        for label, method, options in runs:
            exact = method == "milp"
            specs.append(TaskSpec(suite, point, "placement.solve",
                                  {"sizes": gap_sizes(seed), "seed": seed, "method": method,
                                   "options": options,
                                   "time_limit_s": milp_s if exact else None},
                                  method=label, seed=seed,
                                  time_limit_s=milp_s if exact else 120.0))
    families, seeds, big_seeds, evals = v["families"]
    for family, sizes in families.items():
        big = sizes["ops"] > _BIG_OPS
        for seed in range(big_seeds if big else seeds):
            specs.append(TaskSpec(suite, f"placement/family/{family}/{seed}", "placement.family",
                                  {"family": family, "seed": seed,
                                   "ls_evals": evals // 4 if big else evals},
                                  method="sipml", seed=seed, time_limit_s=1800.0))
    sizes, repeats = v["scaling"]
    for ops in sizes:
        specs.append(TaskSpec(suite, f"placement/scaling/{ops}", "placement.scaling",
                              {"ops": ops, "repeats": repeats}, method="sipml",
                              time_limit_s=1800.0))
    layers, peers, repeats, budget = v["transformer"]
    for max_peers in peers:
        specs.append(TaskSpec(suite, f"placement/transformer/{layers}/{max_peers}",
                              "placement.transformer",
                              {"max_peers": max_peers, "layers": layers, "repeats": repeats,
                               "ls_budget_s": budget}, method="sipml", time_limit_s=1800.0))
    workloads, gpus = v["kl"]
    for workload, max_k in workloads:
        for fabric in _KL_FABRICS:
            specs.append(TaskSpec(suite, f"placement/kl/{workload}/{gpus}", "placement.kl",
                                  {"workload": workload, "fabric": fabric, "gpus": gpus,
                                   "max_k": max_k, "gbps": _KL_GBPS},
                                  method=fabric, time_limit_s=3600.0))
    return specs


def _of(rows: list[dict], task: str) -> list[dict]:
    return [r for r in rows if r["kind"] == f"task:{task}" and r["status"] == "feasible"]


def _f(x, digits: int = 4) -> str | None:
    return None if x is None else f"{x:.{digits}f}"


def _ms(seconds) -> str | None:
    return None if seconds is None else f"{seconds * 1e3:.2f}"


def _speed_lines(rows: list[dict], folder: Path) -> list[str]:
    runs = sorted(_of(rows, "placement.transformer"), key=lambda r: -r["info"]["max_peers"])
    if not runs:
        return []
    header = ["sub-ops", "deps", "max_peers", "balance CPU s", "sipml CPU s", "sipml ms",
              "sipml-ls ms (wall s, evals)", "unconstrained ms", "lower bound ms (source)",
              "relocations / moved ops / ring kept"]
    body = []
    for r in runs:
        i = r["info"]
        body.append([i["sub_ops"], i["deps"], i["max_peers"], f"{i['balance_cpu_s']:.2f}",
                     f"{i['sipml_cpu_s']:.2f}", _ms(i["sipml_s"]),
                     f"{_ms(i['sipml_ls_s'])} ({i['sipml_ls_runtime_s']:.1f}, "
                     f"{i['sipml_ls_evals']})", _ms(i["unconstrained_s"]),
                     f"{_ms(i['bound_s'])} ({i['bound_source']})",
                     f"{i['relocations']} / {i['relocated_ops']} / {i['ring_gpus']}"])
    write_csv(folder / "placement-speed.csv", header, body)
    first = runs[0]["info"]
    big = [r["info"]["sipml_cpu_s"] for r in runs if r["info"]["sub_ops"] >= _TARGET_OPS]
    repeats = runs[0]["sizes"].get("repeats")
    target = (f"{'met' if max(big) < _TARGET_S else 'not met'} (at most {max(big):.2f} s CPU "
              f"here)" if big else f"not measured (the graph has fewer than {_TARGET_OPS:,} "
              f"sub-ops)")
    return ["### Speed: a Transformer-scale balanced graph on 64 GPUs", "",
            f"`transformer_op_graph(layers={runs[0]['sizes'].get('layers')})` "
            f"(`fabricopt.bench.experiments.placement_tasks`; SiP-ML's Transformer, "
            f"forward and backward, compute from FLOPs at 100 TFLOP/s and element-wise ops "
            f"at 1.5 TB/s, our assumptions): {first['ops']} ops, {first['edges']} edges, "
            f"balanced with tau = 10 us on k = {first['gpus']} GPUs with 400 Gbps links. "
            f"CPU times best of {repeats}; `sipml-ls` has a wall-clock budget of "
            f"{runs[0]['sizes'].get('ls_budget_s'):g} s (so its evals depend on the load).",
            "", markdown_table(header, body), "",
            f"- SiP-ML's speed target, `sipml` under {_TARGET_S:g} s on at least {_TARGET_OPS:,} "
            f"sub-ops: {target}.",
            "", "CSV: `placement-speed.csv`."]


def _gap_lines(rows: list[dict], folder: Path) -> list[str]:
    by_seed: dict[int, dict[str, dict]] = {}
    for r in _of(rows, "placement.solve"):
        by_seed.setdefault(r["seed"], {})[r["method"]] = r["info"]
    by_seed = {s: runs for s, runs in by_seed.items() if "milp" in runs}
    if not by_seed:
        return []
    count = len(by_seed)
    best = {s: min(i["value"] for i in runs.values()) for s, runs in by_seed.items()}
    proven = sum(runs["milp"]["status"] == "optimal" for runs in by_seed.values())
    milp_limit = max(r["sizes"]["time_limit_s"] or 0 for r in _of(rows, "placement.solve")
                     if r["method"] == "milp")

    def line(name, gaps, cpus):
        gaps = [g for g in gaps if g is not None]
        return [name, _f(mean(gaps)), _f(max(gaps) if gaps else None),
                f"{sum(g <= CERTIFY_RTOL for g in gaps)}/{len(gaps)}", _f(mean(cpus)),
                _f(max(cpus) if cpus else None)]

    header = ["method", "mean gap to optimum", "max gap", "optimal on", "mean CPU s",
              "max CPU s"]
    body = [line("milp", [primal_gap(runs["milp"]["value"], best[s])
                          for s, runs in by_seed.items()],
                 [runs["milp"]["cpu_s"] for runs in by_seed.values()])]
    body[0][3] = f"{proven}/{count} proven"
    for method in HEURISTICS:
        have = {s: runs[method] for s, runs in by_seed.items() if method in runs}
        body.append(line(method, [primal_gap(i["value"], best[s]) for s, i in have.items()],
                         [i["cpu_s"] for i in have.values()]))
    bounds = {s: runs["sipml"]["bound"] for s, runs in by_seed.items() if "sipml" in runs}
    sources = Counter(runs["sipml"]["bound_source"] for runs in by_seed.values()
                      if "sipml" in runs)
    lb = line("lower bound", [primal_gap(b, best[s]) for s, b in bounds.items()], [])
    body.append(lb[:4] + [None, None])
    closed = [ratio(runs["sipml"]["value"] - runs["sipml-ls"]["value"],
                    runs["sipml"]["value"] - best[s])
              for s, runs in by_seed.items()
              if "sipml" in runs and "sipml-ls" in runs and runs["sipml"]["value"] > best[s]]
    closed = [c for c in closed if c is not None]
    csv = [[s, m, i["value"], i["status"], i["cpu_s"], primal_gap(i["value"], best[s])]
           for s, runs in sorted(by_seed.items()) for m, i in sorted(runs.items())]
    write_csv(folder / "placement-gap.csv",
              ["seed", "method", "makespan_s", "status", "cpu_s", "gap_to_best"], csv)
    seeds = sorted(by_seed)
    lines = ["### Gap to the MILP optimum: random 10-12-op instances", "",
             f"{count} instances `generate(seed, ops=10 + seed % 3, gpus=4, max_peers=1 + "
             f"seed % 2)`, seeds {seeds[0]}..{seeds[-1]}; `milp` (warm-started from the best "
             f"heuristic, symmetry breaking \"weak\", limit {milp_limit:g} s) proved "
             f"optimality on {proven}/{count}. Gap = `|p - p*| / max(p, p*)` "
             f"(`metrics.primal_gap`) to the best makespan any run found (the MILP's); "
             f"heuristics at their defaults (method seed 0; `sipml-ls`: 20 restarts) without "
             f"their model bounds (`bound_milp_s=0`: no MILP inside their CPU time, which "
             f"is the whole `solve` call's: method, fast bound, scoring); the lower bound is `sipml`'s envelope bound (sources: "
             f"{', '.join(f'{k} {n}' for k, n in sources.most_common())}).", "",
             markdown_table(header, body), ""]
    if closed:
        lines.append(f"- `sipml-ls` closes on average {mean(closed):.1%} of `sipml`'s gap to "
                     f"the optimum (over the {len(closed)} instances where `sipml` is not "
                     f"optimal).")
    variants = []
    for name in SYMMETRY:
        runs = {s: r[f"milp/symmetry={name}"] for s, r in by_seed.items()
                if f"milp/symmetry={name}" in r}
        if runs:
            cpus = [i["cpu_s"] for i in runs.values()]
            agree = sum(primal_gap(i["value"], best[s]) <= CERTIFY_RTOL for s, i in runs.items())
            variants.append([f"{name} ({_SYMMETRY_NOTE[name]})", len(runs),
                             f"{sum(i['status'] == 'optimal' for i in runs.values())} / "
                             f"{agree}", f"{mean(cpus):.2f}", f"{max(cpus):.2f}"])
    if variants:
        lines += ["", "MILP symmetry breaking on the same instances, no warm start:", "",
                  markdown_table(["symmetry breaking", "instances", "proven / at the optimum",
                                  "mean CPU s", "max CPU s"], variants)]
    return lines + ["", "CSV: `placement-gap.csv`."]


def _families_lines(rows: list[dict], folder: Path) -> list[str]:
    runs = sorted(_of(rows, "placement.family"),
                  key=lambda r: (list(FAMILIES).index(r["sizes"]["family"]), r["seed"]))
    if not runs:
        return []
    header = ["family", "seed", "sub-ops", "gpus", "max_peers", "full ring / unc.",
              "sipml / unc.", "ring kept", "sipml-ls / unc. (evals)", "relocations",
              "moved ops", "max ops on one GPU (full ring)", "sipml CPU s"]
    body, summary = [], {}
    for r in runs:
        i = r["info"]
        ratios = [ratio(i[k], i["unconstrained_s"]) for k in
                  ("full_ring_s", "sipml_s", "sipml_ls_s")]
        summary.setdefault(r["sizes"]["family"], []).append((*ratios, i["sipml_cpu_s"]))
        body.append([r["sizes"]["family"], r["seed"], i["sub_ops"], i["gpus"], i["max_peers"],
                     _f(ratios[0], 3), _f(ratios[1], 3), i["ring_gpus"],
                     f"{_f(ratios[2], 3)} ({i['ls_evals']})", i["relocations"],
                     i["relocated_ops"], i["full_ring_max_ops_per_gpu"],
                     f"{i['sipml_cpu_s']:.2f}"])
    write_csv(folder / "placement-families.csv", header, body)
    totals = []
    for family, values in summary.items():
        ring, ours, ls, cpu = zip(*values)
        totals.append([family, len(values)] + [
            f"{mean(x):.3f} ({max(x):.3f})" for x in (ring, ours, ls)] + [f"{max(cpu):.2f}"])
    return ["### sipml against the degree-free baseline", "",
            "`generate(seed, family=F)` (`problems.placement.FAMILIES`); ratios are makespans "
            "over `unconstrained`'s (Algorithm 1 without the window on the `max_peers + 1` "
            "GPUs that can all talk: SiP-ML's electrical baseline). `sipml` is the default "
            "ring search (the best of the full ring, the ring of `max_peers + 1` GPUs and one "
            "GPU), `full ring` Algorithm 1 on all GPUs; `sipml-ls` seed 0 with the `max_evals` "
            "shown.", "", markdown_table(header, body), "",
            markdown_table(["family", "seeds", "full ring / unc. mean (max)",
                            "sipml / unc. mean (max)", "sipml-ls / unc. mean (max)",
                            "sipml CPU s max"], totals),
            "", "CSV: `placement-families.csv`."]


def _scaling_lines(rows: list[dict], folder: Path) -> list[str]:
    runs = sorted(_of(rows, "placement.scaling"), key=lambda r: r["info"]["sub_ops"])
    if not runs:
        return []
    header = ["sub-ops", "gpus", "max_peers", "sipml CPU s", "full ring alone CPU s",
              "relocations", "ring kept"]
    body = [[r["info"]["sub_ops"], r["info"]["gpus"], r["info"]["max_peers"],
             f"{r['info']['sipml_cpu_s']:.2f}", f"{r['info']['full_ring_cpu_s']:.2f}",
             r["info"]["relocations"], r["info"]["ring_gpus"]] for r in runs]
    write_csv(folder / "placement-scaling.csv", header, body)
    slope = loglog_slope([r["info"]["sub_ops"] for r in runs],
                         [r["info"]["sipml_cpu_s"] for r in runs])
    return ["### Speed at scale", "",
            f"`sipml` on `generate(0, ops=n, gpus=64, max_peers=15)`, the instance's arrays "
            f"built beforehand (the method alone), CPU s best of "
            f"{runs[0]['sizes'].get('repeats')}.", "", markdown_table(header, body), "",
            f"- Log-log slope of CPU time on sub-ops: "
            f"{'-' if slope is None else f'{slope:.2f}'} (`metrics.loglog_slope`).",
            "", "CSV: `placement-scaling.csv`."]


def _kl_lines(rows: list[dict], folder: Path) -> list[str]:
    runs = sorted(_of(rows, "placement.kl"),
                  key=lambda r: (r["sizes"]["workload"], _KL_FABRICS.index(r["method"])
                                 if r["method"] in _KL_FABRICS else 99))
    if not runs:
        return []
    header = ["workload", "fabric", "k x l", "placed", "serial", "group estimate (mp_s)",
              "iteration", "kept"]
    body, choices = [], []
    for r in runs:
        for c in r["info"]["candidates"]:
            body.append([r["sizes"]["workload"], r["info"]["label"], f"{c['k']} x {c['l']}",
                         _ms(c["placed_s"]), _ms(c["serial_s"]),
                         f"{_ms(c['mp_s'])}{' serial' if c['serial'] else ''}",
                         _ms(c["iteration_s"]), "**best**" if c["best"] else ""])
        choices.append(f"{r['sizes']['workload']} {r['info']['k']} x {r['info']['l']} on "
                       f"{r['info']['label']}")
    write_csv(folder / "placement-kl.csv", header, body)
    p = runs[0]["sizes"]
    limits = ", ".join(sorted({f"{r['sizes']['workload']} {r['sizes']['max_k']}" for r in runs}))
    return ["### The (k, l) search: every candidate", "",
            f"`search_iteration_time(w, fabric, {p['gpus']}, max_k=...)` (`fabricopt.fabrics`; "
            f"max_k: {limits}), B = {p['gbps']:g} Gbps per GPU (SiP-OCS: 16 circuits). "
            f"Times in ms; 'placed' is the placement's own makespan at the link estimate, "
            f"'serial' one GPU of the group running every op; `serial` marks a group priced "
            f"as one GPU running every op (`Plan.serial`), because its placement was slower.",
            "", markdown_table(header, body), "", f"- Chosen: {'; '.join(choices)}.",
            "", "CSV: `placement-kl.csv`."]


def _render(rows: list[dict], folder: Path, quick: bool) -> str:
    lines = ["Times are CPU seconds of each run's own process (the machine is shared; wall "
             "time would measure the other jobs too). Makespans, bounds and statuses are "
             "those `fabricopt.solve` scored."]
    for part in (_speed_lines, _gap_lines, _families_lines, _scaling_lines, _kl_lines):
        section = part(rows, folder)
        if section:
            lines += [""] + section
    return "\n".join(lines)


register_experiment(Experiment(
    name="placement", version=1,
    title="Placement: speed, gap to the MILP, the degree-free baseline, scale, (k, l)",
    summary="sipml / sipml-ls / baselines: Transformer-scale speed, gap to the MILP on 30 "
            "small instances (+ symmetry variants), families vs unconstrained, 20k/100k "
            "sub-ops, the (k, l) search",
    plan=_plan, render=_render))
