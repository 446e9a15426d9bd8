"""SiP-ML §4.3 (Fig. 5): training time to accuracy against per-GPU bandwidth for
ResNet-50, the Transformer and Megatron on SiP-OCS, SiP-Ring, Elect-Flat at B and at
B/2, and Elect-Cluster with 200 and 400 Gbps per server, on 1,024 GPUs.

The setup is the scenario ``sipml/fig5`` (:mod:`fabricopt.bench.scenario`): every
number with its source, printed at the head of the section. At every point each
fabric searches the best k-way model x l-way data parallelism (SiP-ML §4.2) on
fabricopt's shared cost model (:mod:`fabricopt.fabrics`), at each global batch the
scenario lists; time to accuracy is the iteration time times the steps that batch
needs (the scenario's steps curves), at the batch that minimizes it per fabric and
point, as SiP-ML §4.1 does. Beside the search, each model also runs the artifact's
fixed strategy (``dp:mp:bs``). The claims set beside the figures: SiP-OCS at B is as
fast as or faster than Elect-Flat at B/2, and trains 1.3-9.1x faster than
Elect-Cluster (SiP-ML §1 and §4.3). A closing list says, model by model and from the
stored points, where the reproduction lands and why.

References
----------
.. [1] M. Khani et al., "SiP-ML", SIGCOMM 2021, §4.1 (fabrics, models, time to
   accuracy), §4.2 (the search), §4.3 and Fig. 5 (N = 1024, B = 128 ... 8192 Gbps;
   1.3-9.1x; "B vs B/2").
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from fabricopt.bench.experiments import Experiment, markdown_table, register_experiment, write_csv
from fabricopt.bench.experiments.fabric_curves import curve_spec, figure_lines
from fabricopt.bench.experiments.sipml_rings import rings_lines, rings_specs
from fabricopt.bench.metrics import ratio
from fabricopt.bench.scenario import Scenario, load_scenario
from fabricopt.fabrics.accuracy import (STEPS_TO_TARGET, StepsToTarget, critical_batch_table,
                                        steps_to_target)

__all__ = ["FABRICS", "WORKLOADS", "SCENARIO", "scenario", "steps_tables", "time_to_accuracy",
           "read_points"]

FABRICS = ("elect-flat", "elect-flat-half", "elect-cluster-200", "elect-cluster-400",
           "sip-ocs", "sip-ring")
WORKLOADS = ("resnet50", "transformer", "megatron")
LABELS = {"elect-flat": "Elect-Flat B", "elect-flat-half": "Elect-Flat B/2",
          "elect-cluster-200": "Elect-Cluster 200", "elect-cluster-400": "Elect-Cluster 400",
          "sip-ocs": "SiP-OCS", "sip-ring": "SiP-Ring"}
#: The scenario file the experiment runs: ``fabricopt/bench/scenarios/sipml/fig5.json``.
SCENARIO = ("sipml", "fig5")
# Batches the steps curves are tabulated at (log-log interpolation in between).
_TABULATED = tuple(2 ** e for e in range(4, 18))


def scenario() -> Scenario:
    """The shipped setup of SiP-ML's Fig. 5, validated."""
    return load_scenario(*SCENARIO)


def steps_tables(setup: Scenario | None = None) -> dict[str, StepsToTarget]:
    """Per model, its steps-to-target table from the scenario's ``steps`` entry:
    a critical-batch curve tabulated at powers of 2, or one fixed (batch, steps)."""
    setup = setup or scenario()
    out = {}
    for i, model in enumerate(setup["models"]):
        steps, name = model["steps"], model["name"]
        where = f"models[{i}].steps"
        source = "; ".join(setup.source(f"{where}.{key}") for key in
                           ("baseline_steps", "critical_batch") if key in steps)
        if steps["form"] == "critical-batch":
            out[name] = critical_batch_table(
                name, baseline_batch=steps["baseline_batch"],
                baseline_steps=steps["baseline_steps"],
                critical_batch=steps["critical_batch"], batches=_TABULATED,
                target=f"the steps of batch {steps['baseline_batch']} at that batch",
                source=source)
        else:
            out[name] = StepsToTarget(name, "the paper's run",
                                      ((steps["baseline_batch"], steps["baseline_steps"]),),
                                      source)
    return out


def _plan(suite: str, quick: bool) -> list:
    setup = scenario()
    v = setup.values
    gpus = v["quick"]["gpus"] if quick else v["gpus"]
    bandwidths = v["quick"]["bandwidths_gbps"] if quick else v["bandwidths_gbps"]
    max_k = v["quick"]["max_k"] if quick else v["max_k"]
    common = dict(gpu_flops=v["gpu"]["flops"], memory_bytes=v["gpu"]["memory_bytes"],
                  tau_s=v["tau_s"], switches=v["sip_ocs"]["switches"])
    specs = _rings_plan(suite, v, quick)
    for model in v["models"]:
        name = model["name"]
        for batch in model["quick_batches" if quick else "batches"]:
            specs += _curve(suite, name, gpus, bandwidths, not quick, max_k=max_k,
                            global_batch=batch, **common)
        fixed = model["artifact_strategy"]
        specs += _curve(suite, name, gpus, bandwidths, not quick, k_values=[fixed["mp"]],
                        global_batch=fixed["batch"], **common)
    return specs


def _curve(suite: str, workload: str, gpus: int, bandwidths: list, per_point: bool,
           **options) -> list:
    """One task for the curve, or with ``per_point`` one per bandwidth: a kill then
    loses only the points in flight, and two workers share the sweep evenly. A point
    run alone searches without the placements a curve carries up from its lower
    bandwidths."""
    spec = curve_spec(suite, "sipml", workload, gpus, bandwidths, FABRICS, **options)
    if not per_point:
        return [spec]
    return [replace(spec, instance_id=f"{spec.instance_id}/{b:g}gbps",
                    params={**spec.params, "bandwidths": [float(b)]}) for b in bandwidths]


def _rings_plan(suite: str, v: dict, quick: bool) -> list:
    """Which ring Algorithm 1's search keeps: generated families and the models' graphs
    at k GPUs, D = switches (one circuit for the data-parallel ring), local batch of
    the artifact's batch over l = gpus / k."""
    from fabricopt.problems.placement import FAMILIES

    seeds = v["rings"]["seeds"] // (4 if quick else 1)
    families = {f: range(max(1, seeds // 4) if f == "k64-p15" else seeds) for f in FAMILIES}
    k, l = v["rings"]["k"], v["gpus"] // v["rings"]["k"]
    models = [(m["name"], k, v["sip_ocs"]["switches"] - 1, m["artifact_strategy"]["batch"] // l,
               v["gpu"]["flops"], v["tau_s"], v["rings"]["link_gbps"]) for m in v["models"]]
    return rings_specs(suite, families, models)


def read_points(rows) -> tuple[dict, dict]:
    """The stored curves: ``(searched, fixed)``, each ``{workload: {(fabric, gbps, batch):
    point}}``; ``fixed`` holds the artifact strategies' curves (a fixed k)."""
    searched: dict = {}
    fixed: dict = {}
    for row in rows:
        if row["status"] != "feasible" or row.get("kind") != "task:fabrics.compare":
            continue
        into = fixed if row["sizes"].get("k_values") else searched
        for point in row["info"].get("rows", []):
            key = (point["fabric"], point["gbps"], point["global_batch"])
            into.setdefault(point["workload"], {})[key] = point
    return searched, fixed


def time_to_accuracy(curves: dict, tables: dict | None = None) -> dict:
    """Per workload with a steps table: ``{(fabric, gbps): (seconds, batch, point)}``, the
    batch with the least ``iteration_s * steps_to_target(batch)`` among those priced
    (``tables`` default: :data:`~fabricopt.fabrics.accuracy.STEPS_TO_TARGET`)."""
    tables = STEPS_TO_TARGET if tables is None else tables
    out: dict[str, dict] = {}
    for workload, points in curves.items():
        table = tables.get(workload)
        if table is None:
            continue
        lo, hi = table.points[0][0], table.points[-1][0]
        for (fabric, gbps, batch), p in points.items():
            if p["iteration_s"] is None or not lo <= batch <= hi:
                continue
            tta = p["iteration_s"] * steps_to_target(table, batch)
            best = out.setdefault(workload, {}).get((fabric, gbps))
            if best is None or tta < best[0]:
                out[workload][(fabric, gbps)] = (tta, batch, p)
    return out


def _shape(cell) -> str | None:
    """``k x l`` and the batch, with ``pN`` when a GPU exchanges model-parallel bytes
    with N peers (the degree search may keep fewer than the fabric's limit)."""
    if cell is None:
        return None
    point = cell[2]
    peers = point.get("mp_peers")
    return f"{point['k']}x{point['l']} b{cell[1]}" + (f" p{peers}" if peers else "")


def _hours(cell) -> str | None:
    return None if cell is None else f"{cell[0] / 3600:.3g}"


def _fmt(r) -> str | None:
    return None if r is None else f"{r:.2f}"


def _tta_table(tta: dict, own_batch: dict, searched: dict, folder: Path, v: dict) -> tuple:
    """The time-to-accuracy table, with each point's iteration ratio at the model's own
    batch and the B vs B/2 check; returns (lines, per-model summaries)."""
    header = ["model", "B (Gbps)"] + [f"{LABELS[f]} h" for f in FABRICS] + [
        "TTA Cluster-400 / OCS", "TTA Cluster-200 / OCS", "iter Cluster-400 / OCS",
        "iter Cluster-200 / OCS", "OCS(B) <= Flat(B/2)", "(k x l, batch) OCS",
        "(k x l, batch) Cluster-400"]
    body, summary = [], {}
    for workload in WORKLOADS:
        cells = tta.get(workload, {})
        own = own_batch[workload]
        stats = summary.setdefault(workload, {"tta": [], "iter": [], "half": [0, 0],
                                              "beats_flat": [0, 0], "tta400": [],
                                              "tta200": [], "iter400": [], "iter200": []})
        for b in sorted({g for (_, g) in cells}):
            c = {f: cells.get((f, b)) for f in FABRICS}
            ocs = c["sip-ocs"]
            tta_r = [ratio(c[f] and c[f][0], ocs and ocs[0])
                     for f in ("elect-cluster-400", "elect-cluster-200")]
            points = searched.get(workload, {})
            at_own = {f: points.get((f, b, own)) for f in FABRICS}
            iter_r = [ratio(at_own[f] and at_own[f]["iteration_s"],
                            at_own["sip-ocs"] and at_own["sip-ocs"]["iteration_s"])
                      for f in ("elect-cluster-400", "elect-cluster-200")]
            half = None
            if ocs is not None and c["elect-flat-half"] is not None:
                half = ocs[0] <= c["elect-flat-half"][0] * (1 + 1e-9)
                stats["half"][0] += half
                stats["half"][1] += 1
            if ocs is not None and c["elect-flat"] is not None:
                stats["beats_flat"][0] += ocs[0] < c["elect-flat"][0] * (1 - 1e-9)
                stats["beats_flat"][1] += 1
            stats["tta"] += [r for r in tta_r if r is not None]
            stats["iter"] += [r for r in iter_r if r is not None]
            for key, r in zip(("tta400", "tta200", "iter400", "iter200"), tta_r + iter_r):
                if r is not None:
                    stats[key].append(r)
            body.append([workload, f"{b:g}"] + [_hours(c[f]) for f in FABRICS]
                        + [_fmt(r) for r in tta_r + iter_r]
                        + [None if half is None else ("yes" if half else "NO"),
                           _shape(ocs), _shape(c["elect-cluster-400"])])
    write_csv(folder / "sipml-time-to-accuracy.csv", header, body)
    lo, hi = v["headline"]["min_speedup"], v["headline"]["max_speedup"]
    lines = ["### Time to accuracy", "",
             "Hours to the target per fabric at its best (k, l) and global batch; `TTA` "
             "ratios divide Elect-Cluster's time by SiP-OCS's (> 1 favours SiP-ML), `iter` "
             "ratios the iteration times at the model's own batch (the artifact's), "
             f"SiP-ML's headline is {lo:g}-{hi:g}x in time to accuracy (§1, §4.3, Fig. 5). "
             "`OCS(B) <= Flat(B/2)` is the §4.3 claim at that point.", "",
             markdown_table(header, body), "", "CSV: `sipml-time-to-accuracy.csv`."]
    return lines, summary


def _shapes_table(tta: dict, folder: Path) -> list[str]:
    """The (k x l, batch) each fabric chose at every point."""
    header = ["model", "B (Gbps)"] + [LABELS[f] for f in FABRICS]
    body = []
    for workload in WORKLOADS:
        cells = tta.get(workload, {})
        for b in sorted({g for (_, g) in cells}):
            body.append([workload, f"{b:g}"] + [_shape(cells.get((f, b))) for f in FABRICS])
    if not body:
        return []
    write_csv(folder / "sipml-chosen-strategies.csv", header, body)
    return ["", "### The strategy each fabric chose", "",
            "k-way model x l-way data parallelism and the global batch with the least time "
            "to accuracy, per fabric and point; `pN`: each GPU exchanges model-parallel "
            "bytes with at most N others (SiP-OCS and SiP-Ring search the degree limit: "
            "fewer peers get more circuits each).", "", markdown_table(header, body), "",
            "CSV: `sipml-chosen-strategies.csv`."]


def _fixed_table(fixed: dict, v: dict, folder: Path) -> list[str]:
    header = ["model", "dp:mp:bs", "B (Gbps)"] + [f"{LABELS[f]} ms" for f in FABRICS] + [
        "Cluster-400 / OCS", "Cluster-200 / OCS"]
    body = []
    for model in v["models"]:
        s = model["artifact_strategy"]
        points = fixed.get(model["name"], {})
        for b in sorted({g for (_, g, _) in points}):
            p = {f: points.get((f, b, s["batch"])) for f in FABRICS}
            ms = {f: None if p[f] is None or p[f]["iteration_s"] is None
                  else p[f]["iteration_s"] for f in FABRICS}
            body.append([model["name"], f"{s['dp']}:{s['mp']}:{s['batch']}", f"{b:g}"]
                        + [None if ms[f] is None else f"{ms[f] * 1e3:.3g}" for f in FABRICS]
                        + [_fmt(ratio(ms[c], ms["sip-ocs"]))
                           for c in ("elect-cluster-400", "elect-cluster-200")])
    if not body:
        return []
    write_csv(folder / "sipml-artifact-strategies.csv", header, body)
    notes = [f"- {model['name']} at {model['artifact_strategy']['mp']}-way model "
             f"parallelism: {points_note}" for model in v["models"]
             for points_note in [_infeasible_note(fixed.get(model["name"], {}))]
             if points_note]
    return ["", "### The artifact's fixed strategies", "",
            "Iteration time (ms) with the strategy `dp:mp:bs` of the authors' "
            "`paper/run.py` (k = mp; at fewer GPUs dp shrinks to GPUs / mp).", "",
            markdown_table(header, body)] + ([""] + notes if notes else []) + [
            "", "CSV: `sipml-artifact-strategies.csv`."]


def _infeasible_note(points: dict) -> str:
    notes = sorted({p.get("note", "") for p in points.values() if p["iteration_s"] is None})
    return notes[0][:240] if notes else ""


def _span(values: list) -> str | None:
    return f"{min(values):.2f}-{max(values):.2f}" if values else None


def _against_paper(summary: dict, v: dict) -> list[str]:
    """Per model, the ratios' ranges beside the paper's, and the §4.3 checks."""
    lo, hi = v["headline"]["min_speedup"], v["headline"]["max_speedup"]
    header = ["model", "TTA Cluster-400 / OCS", "TTA Cluster-200 / OCS",
              "iter Cluster-400 / OCS", "iter Cluster-200 / OCS", "SiP-ML (§1, §4.3)",
              "TTA ratios inside", "OCS(B) <= Flat(B/2)", "OCS(B) < Flat(B)"]
    body = []
    for workload in WORKLOADS:
        stats = summary.get(workload)
        if not stats:
            continue
        inside = sum(lo - 1e-9 <= r <= hi + 1e-9 for r in stats["tta"])
        body.append([workload, _span(stats["tta400"]), _span(stats["tta200"]),
                     _span(stats["iter400"]), _span(stats["iter200"]), f"{lo:g}-{hi:g}x",
                     f"{inside} of {len(stats['tta'])}",
                     "{} of {}".format(*stats["half"]), "{} of {}".format(*stats["beats_flat"])])
    if not body:
        return []
    return ["", "### Against the paper, model by model", "",
            "Ranges over the bandwidths above (`TTA`: at each fabric's best batch; `iter`: "
            "at the model's own batch); the paper's headline beside them; the count of "
            "points where SiP-OCS at B is at least as fast as Elect-Flat at B/2 (§4.3's "
            "claim) and where it is faster than Elect-Flat at B.", "",
            markdown_table(header, body)]


def _landing_lines(summary: dict, searched: dict, tta: dict, v: dict) -> list[str]:
    """Where the reproduction lands, model by model, from the stored points."""
    lo, hi = v["headline"]["min_speedup"], v["headline"]["max_speedup"]
    lines = ["", "### Where the reproduction lands, model by model", ""]
    for workload in WORKLOADS:
        stats = summary.get(workload)
        if not stats or not stats["tta"]:
            lines.append(f"- {workload}: no comparable SiP-OCS and Elect-Cluster points.")
            continue
        t_lo, t_hi = min(stats["tta"]), max(stats["tta"])
        inside = sum(lo - 1e-9 <= r <= hi + 1e-9 for r in stats["tta"])
        held, total = stats["half"]
        cells = tta.get(workload, {})
        shapes = sorted({(_shape(cells[("sip-ocs", b)]), _shape(cells[(c, b)]))
                         for (f, b) in cells if f == "sip-ocs"
                         for c in ("elect-cluster-400",) if (c, b) in cells})
        it = (f"{min(stats['iter']):.2f}-{max(stats['iter']):.2f}x per iteration at its own "
              f"batch" if stats["iter"] else "no per-iteration ratio at its own batch")
        lines.append(
            f"- {workload}: SiP-OCS over Elect-Cluster {t_lo:.2f}-{t_hi:.2f}x in time to "
            f"accuracy ({inside} of {len(stats['tta'])} ratios inside SiP-ML's "
            f"{lo:g}-{hi:g}x), {it}; SiP-OCS at B at least as fast as Elect-Flat at B/2 at "
            f"{held} of {total} points; chosen (k x l, batch) SiP-OCS against "
            f"Elect-Cluster 400: " + "; ".join(f"{a} vs {b}" for a, b in shapes) + ".")
        beats, points = stats.get("beats_flat", (0, 0))
        if beats:
            lines.append(
                f"  SiP-OCS is faster than Elect-Flat at equal B at {beats} of {points} "
                f"points. Both share their links max-min fairly among the transfers in "
                f"progress (Elect-Flat its ports, SiP-OCS each pair's circuits); fair "
                f"sharing does not know the critical path, and the circuits, sized for the "
                f"iteration's whole traffic and placed by `sipml` rather than "
                f"`unconstrained`, can leave a critical transfer more of a GPU's bandwidth "
                f"than an even split of its port among the transfers in flight.")
    return lines


def _planned(rows: list[dict], quick: bool) -> list[dict]:
    """The stored rows of runs the current plan holds (same point, same parameters):
    a store resumed after the scenario changed keeps its other rows out of the section."""
    planned = {(s.instance_id, json.dumps(s.params, sort_keys=True))
               for s in _plan("", quick)}
    return [r for r in rows
            if (r["instance_id"], json.dumps(r["sizes"], sort_keys=True)) in planned]


def _render(rows: list[dict], folder: Path, quick: bool) -> str:
    setup = scenario()
    v = setup.values
    rows = _planned(rows, quick)
    searched, fixed = read_points(rows)
    tables = steps_tables(setup)
    tta = time_to_accuracy(searched, tables)
    own_batch = {m["name"]: m["artifact_strategy"]["batch"] for m in v["models"]}
    gpus = v["quick"]["gpus"] if quick else v["gpus"]
    lines = [f"{gpus} GPUs" + (" (the --quick variant; the paper runs "
                                f"{v['gpus']})" if quick else "") + ". " +
             "Every number of the setup, with its source:", "", setup.table(), ""]
    tta_lines, summary = _tta_table(tta, own_batch, searched, folder, v)
    lines += tta_lines
    lines += _against_paper(summary, v)
    lines += _shapes_table(tta, folder)
    lines += _fixed_table(fixed, v, folder)
    own_curves = {w: {(f, g): p for (f, g, b), p in pts.items() if b == own_batch[w]}
                  for w, pts in searched.items()}
    lines += figure_lines(own_curves, FABRICS, folder, "sipml-iteration",
                          "SiP-ML Fig. 5 setup: iteration time at each model's own batch",
                          LABELS)
    lines += _landing_lines(summary, searched, tta, v)
    lines += rings_lines(rows)
    return "\n".join(lines)


register_experiment(Experiment(
    name="sipml", version=3, title="SiP-ML: time to accuracy against per-GPU bandwidth",
    summary="ResNet-50 / Transformer / Megatron on SiP-OCS, SiP-Ring, Elect-Flat B and B/2, "
            "Elect-Cluster 200/400 (scenario sipml/fig5: 1024 GPUs, 128-8192 Gbps)",
    plan=_plan, render=_render, paper="SiP-ML, SIGCOMM 2021, §4.3, Fig. 5"))
