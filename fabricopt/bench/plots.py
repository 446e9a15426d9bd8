"""The harness's figures, in the house style (:mod:`fabricopt.bench.style`): one kind's
runs in one suite, and a fabric comparison's sweep.

Each function writes ``PATH.png`` and ``PATH.pdf`` (vector) and returns the PNG's path, or
None when the data hold nothing worth a figure (a line over a single size).
"""

from __future__ import annotations

import math
import statistics
from pathlib import Path
from typing import Any, Sequence

from fabricopt.bench import style
from fabricopt.bench.metrics import sgm_time_s

__all__ = ["gap_vs_runtime", "runtime_vs_size", "iteration_vs_bandwidth", "SIZE_UNITS"]

_MIN_TIME_S = 1e-4  # runs faster than this are drawn at it (log axes have no 0)

#: What ``ProblemKind.size`` counts for each built-in kind (the x axis of
#: :func:`runtime_vs_size`).
SIZE_UNITS = {"circuits": "GPUs", "wavelengths": "ring nodes", "topology": "servers",
              "placement": "operators", "priorities": "jobs", "crux": "jobs"}


def _by_method(rows: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        out.setdefault(row["method"], []).append(row)
    return dict(sorted(out.items()))


def _size_label(rows: Sequence[dict[str, Any]]) -> str:
    kinds = sorted({r["kind"] for r in rows})
    unit = SIZE_UNITS.get(kinds[0]) if len(kinds) == 1 else None
    return style.axis_label("instance size", unit or "kind's size measure")


def gap_vs_runtime(rows: Sequence[dict[str, Any]], path: Path, title: str) -> Path | None:
    """Primal gap (%) against runtime (s, log), one marker per method; runs without a
    solution are marked along the bottom edge at their runtime.

    ``rows`` carry ``primal_gap`` (:func:`~fabricopt.bench.metrics.with_primal_gaps`).
    Returns None if no run has a runtime.
    """
    fig, ax = style.figure("primal gap to best known (%)", "runtime (s)", title=title)
    top, times = 1.0, []  # percent: an all-zero plot still shows a readable axis from 0
    for k, (method, runs) in enumerate(_by_method(rows).items()):
        timed = [r for r in runs if r["runtime_s"] is not None]
        pts = [(max(r["runtime_s"], _MIN_TIME_S), 100.0 * r["primal_gap"]) for r in timed
               if r["primal_gap"] is not None]
        missing = [max(r["runtime_s"], _MIN_TIME_S) for r in timed if r["primal_gap"] is None]
        times += [x for x, _ in pts] + missing
        if pts:
            xs, ys = zip(*pts)
            top = max(top, *ys)
            ax.plot(xs, ys, label=f"{method} ({len(pts)}/{len(runs)} solved)",
                    alpha=0.8, **style.line_style(k, line=False))
        style.mark_missing(ax, missing, k, f"{method}: no solution ({len(missing)})")
    if not times:
        return None
    style.log_axis(ax, "x", times, ticks="round")
    ax.set_ylim(-0.04 * top, 1.08 * top)
    style.legend_outside(ax)
    return style.save(fig, path)[0]


def runtime_vs_size(rows: Sequence[dict[str, Any]], path: Path, title: str) -> Path | None:
    """Median runtime (s, log; failures at the time limit) against instance size (log),
    one line per method. Returns None if the runs span fewer than two sizes."""
    sizes_seen = [r["size"] for r in rows if r["size"] is not None]
    if not style.enough_points(sizes_seen):
        return None
    fig, ax = style.figure("median runtime (s)", _size_label(rows), title=title)
    times = []
    for k, (method, runs) in enumerate(_by_method(rows).items()):
        by_size: dict[int, list[float]] = {}
        for r in runs:
            if r["size"] is not None:
                by_size.setdefault(r["size"], []).append(max(sgm_time_s(r), _MIN_TIME_S))
        if by_size:
            sizes = sorted(by_size)
            medians = [statistics.median(by_size[s]) for s in sizes]
            times += medians
            ax.plot(sizes, medians, label=method, **style.line_style(k))
    style.log_axis(ax, "x", sizes_seen, ticks="data")
    style.log_axis(ax, "y", times, ticks="round")
    style.legend_outside(ax)
    return style.save(fig, path)[0]


def iteration_vs_bandwidth(rows: Sequence[Any], path: Path, title: str | None = None
                           ) -> Path | None:
    """Iteration time (ms, log) against per-GPU bandwidth (Gbps, log, ticks at the swept
    values), one line per fabric, of :func:`fabricopt.fabrics.comparison.compare` or
    :func:`fabricopt.fabrics.simai.compare_simai` rows. A fabric's points without an
    iteration time (infeasible, unavailable) are marked along the bottom edge and named in
    the legend. Returns None if there are no rows.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from fabricopt.fabrics.comparison import compare
    >>> rows = compare("resnet50", 8, [100.0, 200.0], ["elect-flat", "fat-tree"], k_values=[1])
    >>> iteration_vs_bandwidth(rows, pathlib.Path(tempfile.mkdtemp()) / "sweep.png").suffix
    '.png'
    """
    if not rows:
        return None
    fig, ax = style.figure("iteration time (ms)", "per-GPU bandwidth (Gbps)",
                           title=title or f"{rows[0].workload} on {rows[0].gpus} GPUs")
    times = []
    for k, name in enumerate(dict.fromkeys(r.fabric for r in rows)):
        mine = [r for r in rows if r.fabric == name]
        points = [(r.gbps, r.iteration_s * 1e3) for r in mine
                  if r.iteration_s is not None and math.isfinite(r.iteration_s)]
        missing = [r.gbps for r in mine if r.iteration_s is None]
        if points:
            xs, ys = zip(*points)
            times += ys
            ax.plot(xs, ys, label=name, **style.line_style(k))
        reason = next((r.note.split(":")[0] for r in mine if r.iteration_s is None and r.note),
                      "no value")
        style.mark_missing(ax, missing, k, f"{name}: {reason}")
    style.log_axis(ax, "x", [r.gbps for r in rows], ticks="data")
    style.log_axis(ax, "y", times, ticks="round")
    style.legend_outside(ax)
    return style.save(fig, path)[0]
