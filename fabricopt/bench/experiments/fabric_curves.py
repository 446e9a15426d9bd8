"""The measurement behind the fabric experiments: one workload's iteration-time curve
over per-node bandwidth on several fabrics, as :func:`fabricopt.fabrics.comparison.compare`
computes it (best k x l per point, placements shared between fabrics and carried to
higher bandwidths).

A curve is one task run, so resuming an interrupted experiment re-runs at most the
curves in flight; :func:`curve_points` reads a stored curve back.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Sequence

from fabricopt.fabrics.workloads import get_workload
from fabricopt.bench import style
from fabricopt.bench.tasks import TaskSpec, register_task

__all__ = ["compare_task", "curve_spec", "curve_points", "plot_curves", "figure_lines"]


@register_task("fabrics.compare")
def compare_task(workload: str, gpus: int, bandwidths: list, fabrics: list,
                 max_k: int | None = None, k_values: list | None = None,
                 gpus_per_node: int = 1, degree: int = 4, switches: int = 16,
                 seed: int = 0, global_batch: int | None = None,
                 gpu_flops: float | None = None, memory_bytes: float | None = None,
                 tau_s: float | None = None) -> dict:
    """Run :func:`~fabricopt.fabrics.comparison.compare`; every row as a dict, with the
    global batch it trained at (``global_batch`` replaces the workload's own).
    ``gpu_flops`` and ``memory_bytes`` are per GPU (default: the A100 of
    :mod:`fabricopt.fabrics.workloads`), ``tau_s`` the compute quantum."""
    import dataclasses

    from fabricopt.fabrics.comparison import compare
    from fabricopt.fabrics.iteration import DEFAULT_TAU_S
    from fabricopt.fabrics.workloads import A100_MEMORY_BYTES, DEFAULT_GPU_FLOPS, get_workload

    job = get_workload(workload)
    if global_batch is not None:
        job = dataclasses.replace(job, global_batch=global_batch)
    flops = DEFAULT_GPU_FLOPS if gpu_flops is None else gpu_flops
    memory = A100_MEMORY_BYTES if memory_bytes is None else memory_bytes
    rows = compare(job, gpus, bandwidths, fabrics, max_k=max_k, k_values=k_values,
                   gpu_flops=flops * gpus_per_node, memory_bytes=memory * gpus_per_node,
                   tau_s=DEFAULT_TAU_S if tau_s is None else tau_s, degree=degree,
                   switches=switches, seed=seed)
    return {"value": None, "rows": [{**asdict(r), "global_batch": job.global_batch}
                                    for r in rows]}


def curve_spec(suite: str, experiment: str, workload: str, gpus: int,
               bandwidths: Sequence[float], fabrics: Sequence[str], *,
               time_limit_s: float = 3600.0, **options) -> TaskSpec:
    """The task run of one workload's curve."""
    params = {"workload": workload, "gpus": gpus, "bandwidths": [float(b) for b in bandwidths],
              "fabrics": list(fabrics), **options}
    batch, k_values = options.get("global_batch"), options.get("k_values")
    point = f"{experiment}/{workload}/{gpus}" + ("" if batch is None else f"/batch{batch}") + (
        "" if k_values is None else "/k" + "-".join(str(k) for k in k_values))
    return TaskSpec(suite, point, "fabrics.compare", params, method="compare",
                    time_limit_s=time_limit_s)


def curve_points(rows: Sequence[dict], *, batches: bool = False) -> dict:
    """Per workload: ``{(fabric, gbps): point}`` of every stored curve at the workload's
    own batch; with ``batches``, ``{(fabric, gbps, global_batch): point}`` of all."""
    out: dict[str, dict] = {}
    for row in rows:
        if row["status"] != "feasible":
            continue
        if not batches and row["sizes"].get("global_batch") is not None:
            continue
        for point in row["info"].get("rows", []):
            batch = point.get("global_batch") or get_workload(point["workload"]).global_batch
            key = (point["fabric"], point["gbps"]) + ((batch,) if batches else ())
            out.setdefault(point["workload"], {})[key] = point
    return out


def plot_curves(curves: dict[str, dict], fabrics: Sequence[str], path: Path, title: str,
                labels: dict[str, str] | None = None, xlabel: str = "per-GPU bandwidth (Gbps)"
                ) -> Path | None:
    """One panel per workload: iteration time (ms, log) against bandwidth (log, ticks at
    the swept values), a line per fabric, as in SiP-ML Fig. 5 and TopoOpt Fig. 12; points
    without an iteration time (infeasible) are marked on the panel's bottom edge. Writes
    ``path`` (PNG) and its PDF twin; returns ``path``, or None without curves."""
    if not curves:
        return None
    labels = labels or {}
    n = len(curves)
    fig, axes = style.figure("iteration time (ms)", xlabel, title=title, ncols=n,
                             width_in=style.COLUMN_IN if n == 1 else max(style.PAGE_IN, 2.4 * n))
    axes = axes if n > 1 else [axes]
    for ax, (workload, points) in zip(axes, sorted(curves.items())):
        times = []
        for k, fabric in enumerate(fabrics):
            name = labels.get(fabric, fabric)
            mine = sorted((b, p) for (f, b), p in points.items() if f == fabric)
            xy = [(b, p["iteration_s"] * 1e3) for b, p in mine if p["iteration_s"] is not None]
            if xy:
                times += [y for _, y in xy]
                ax.plot([x for x, _ in xy], [y for _, y in xy], label=name,
                        **style.line_style(k))
            missing = [b for b, p in mine if p["iteration_s"] is None]
            reason = next((p.get("note", "").split(":")[0] for b, p in mine
                           if p["iteration_s"] is None and p.get("note")), "") or "infeasible"
            style.mark_missing(ax, missing, k, f"{name}: {reason}")
        style.log_axis(ax, "x", [b for (_, b) in points], ticks="data", most=5)
        style.log_axis(ax, "y", times, ticks="round")
        ax.set_title(workload, fontsize=style.FONT_PT)
    style.legend_outside(fig if n > 1 else axes[0], where="below" if n > 1 else "right")
    return style.save(fig, path)[0]


def figure_lines(curves: dict[str, dict], fabrics: Sequence[str], folder: Path, stem: str,
                 title: str, labels: dict[str, str], **plot_options) -> list[str]:
    """Draw ``folder/STEM.png`` and return the section's closing lines (figure, CSV)."""
    figure = plot_curves(curves, fabrics, folder / f"{stem}.png", title, labels,
                         **plot_options)
    lines = ["", f"![{title}]({figure.name})"] if figure is not None else []
    return lines + ["", f"CSV: `{stem}.csv`."]
