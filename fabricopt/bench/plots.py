"""PNG plots of one kind's runs in one suite, drawn with matplotlib's Agg backend.

The figures are built with :class:`matplotlib.figure.Figure` and an Agg canvas directly,
without pyplot, so that plotting never depends on (or changes) a global backend.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any, Sequence

from fabricopt.bench.metrics import sgm_time_s

__all__ = ["gap_vs_runtime", "runtime_vs_size"]

_MARKERS = "os^Dv<>Pph*X"
_MIN_TIME_S = 1e-4  # runs faster than this are drawn at it (log axes have no 0)


def _figure(title: str, xlabel: str, ylabel: str):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.2), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, which="major", alpha=0.3)
    return fig, ax


def _save(fig, ax, path: Path) -> Path:
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path)
    return path


def _by_method(rows: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        out.setdefault(row["method"], []).append(row)
    return dict(sorted(out.items()))


def gap_vs_runtime(rows: Sequence[dict[str, Any]], path: Path, title: str) -> Path:
    """Scatter of primal gap (%) against runtime (s, log), one marker per method.

    ``rows`` carry ``primal_gap`` (:func:`~fabricopt.bench.metrics.with_primal_gaps`);
    runs without a solution have no gap and are left out.
    """
    fig, ax = _figure(title, "runtime (s, log scale)", "primal gap to best known (%)")
    top = 1.0  # percent: an all-zero plot still shows a readable axis from 0
    for k, (method, runs) in enumerate(_by_method(rows).items()):
        pts = [(max(r["runtime_s"], _MIN_TIME_S), 100.0 * r["primal_gap"]) for r in runs
               if r["primal_gap"] is not None and r["runtime_s"] is not None]
        if pts:
            xs, ys = zip(*pts)
            top = max(top, *ys)
            ax.scatter(xs, ys, marker=_MARKERS[k % len(_MARKERS)], alpha=0.7,
                       label=f"{method} ({len(pts)}/{len(runs)} solved)")
    ax.set_xscale("log")
    ax.set_ylim(-0.04 * top, 1.08 * top)
    return _save(fig, ax, path)


def runtime_vs_size(rows: Sequence[dict[str, Any]], path: Path, title: str) -> Path:
    """Median runtime (s, log; failures at the time limit) against instance size (log),
    one line per method."""
    fig, ax = _figure(title, "instance size (log scale)", "median runtime (s, log scale)")
    for k, (method, runs) in enumerate(_by_method(rows).items()):
        by_size: dict[int, list[float]] = {}
        for r in runs:
            if r["size"] is not None:
                by_size.setdefault(r["size"], []).append(max(sgm_time_s(r), _MIN_TIME_S))
        if by_size:
            sizes = sorted(by_size)
            ax.plot(sizes, [statistics.median(by_size[s]) for s in sizes],
                    marker=_MARKERS[k % len(_MARKERS)], label=method)
    from matplotlib.ticker import LogLocator, NullFormatter, ScalarFormatter

    ax.set_xscale("log", base=2)  # sizes double from row to row; label them plainly
    ax.xaxis.set_major_locator(LogLocator(base=2))
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_yscale("log")
    return _save(fig, ax, path)
