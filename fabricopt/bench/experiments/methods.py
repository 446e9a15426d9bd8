"""Method experiments: how close every method gets to the best known answer, and how
its runtime grows with the instance.

- ``gaps``: every registered method on the ``quick`` suite's rows of every kind
  (the quick variant: their first row per kind): proven-optimal and feasible counts,
  mean/max primal gap to the best known objective, mean primal–dual gap, shifted
  geometric mean runtime — the table ``fabricopt bench`` prints.
- ``paper-suite``: the same table on the ``paper`` suite's rows, the papers' own
  settings (SiP-ML circuits at 1,024 GPUs, SiP-Ring at 128 and 1,024 nodes, placement at
  20,000 sub-ops on 64 GPUs, TopoOpt at 128 servers, Crux compression of 2,000 jobs and
  the §4.4 microbenchmark); the quick variant takes the first row per kind.
- ``scaling``: the fast methods on the ``scale`` suite's rows (4–7 sizes per kind,
  growing geometrically; quick variant: the three smallest): median runtime and peak
  memory per size, the log-log slope of runtime against the kind's size measure, and
  the largest size each method finished within 10 s.
"""

from __future__ import annotations

from pathlib import Path

from fabricopt.bench.metrics import loglog_slope, median, summarize
from fabricopt.bench.report import markdown_tables
from fabricopt.bench.runner import plan as plan_suite
from fabricopt.bench.suites import Row, Suite, TABLES
from fabricopt.bench.experiments import Experiment, markdown_table, register_experiment, write_csv

__all__ = ["SCALING_WITHIN_S"]

#: The runtime under which a size counts as "finished" in the scaling table.
SCALING_WITHIN_S = 10.0


def _rows_of(suite_key: str, per_kind: int | None) -> list[Row]:
    rows = []
    for kind in sorted(TABLES):
        entries = TABLES[kind].get(suite_key, [])
        for entry in entries[:per_kind]:
            rows.append(Row(kind, *entry))
    return rows


def _plan_gaps(suite: str, quick: bool) -> list:
    return plan_suite(Suite(suite, tuple(_rows_of("quick", 1 if quick else None))))


def _plan_paper_suite(suite: str, quick: bool) -> list:
    return plan_suite(Suite(suite, tuple(_rows_of("paper", 1 if quick else None))))


def _render_gaps(rows: list[dict], folder: Path, quick: bool) -> str:
    summaries = summarize(rows)
    write_csv(folder / "gaps.csv",
              ["kind", "method", "instances", "optimal", "feasible", "errors", "mean_gap",
               "max_gap", "mean_pd_gap", "sgm_runtime_s"],
              [[s.kind, s.method, s.instances, s.optimal, s.feasible, s.errors, s.mean_gap,
                s.max_gap, s.mean_pd_gap, s.sgm_runtime_s] for s in summaries])
    return (markdown_tables(summaries, level=3) + "\n\n"
            "Primal gap: to the best objective any run found; PD gap: the envelope's "
            "primal–dual gap (null without a bound). CSV: `gaps.csv`.")


def _heuristic_rows(rows: list[Row]) -> list[Row]:
    """The scale rows without the exact methods (the MILPs do not scale)."""
    from fabricopt.methods import all_methods

    out = []
    for row in rows:
        exact = {m.name for m in all_methods(row.kind) if m.exact or m.bound_only}
        names = [m for m in row.method_names() if m not in exact]
        if names:
            out.append(Row(row.kind, row.name, row.sizes, row.seeds, tuple(names),
                           row.time_limit_s))
    return out


def _plan_scaling(suite: str, quick: bool) -> list:
    rows = _heuristic_rows(_rows_of("scale", 3 if quick else None))
    return plan_suite(Suite(suite, tuple(rows)))


def _render_scaling(rows: list[dict], folder: Path, quick: bool) -> str:
    groups: dict[tuple[str, str], dict[int, list[dict]]] = {}
    for r in rows:
        if r["status"] in ("optimal", "feasible") and r["size"] is not None:
            groups.setdefault((r["kind"], r["method"]), {}).setdefault(r["size"], []).append(r)
    header = ["kind", "method", "sizes", "median runtime (s) per size", "peak RSS (MB) max",
              "log-log slope", f"largest size within {SCALING_WITHIN_S:g} s"]
    body, csv_rows = [], []
    for (kind, method), by_size in sorted(groups.items()):
        sizes = sorted(by_size)
        medians = [median([r["runtime_s"] for r in by_size[s]]) for s in sizes]
        rss = [r["peak_rss_bytes"] for s in sizes for r in by_size[s] if r["peak_rss_bytes"]]
        slope = loglog_slope(sizes, medians)
        within = [s for s, t in zip(sizes, medians) if t is not None and t <= SCALING_WITHIN_S]
        body.append([kind, f"`{method}`", ", ".join(str(s) for s in sizes),
                     ", ".join(f"{t:.3g}" for t in medians),
                     f"{max(rss) / 2**20:.0f}" if rss else None,
                     None if slope is None else f"{slope:.2f}", max(within) if within else None])
        for s, t in zip(sizes, medians):
            csv_rows.append([kind, method, s, t])
    write_csv(folder / "scaling.csv", ["kind", "method", "size", "median_runtime_s"], csv_rows)
    return (markdown_table(header, body) + "\n\n"
            "Sizes are each kind's size measure (`ProblemKind.size`: GPUs, servers, "
            "nodes, ops, jobs); the slope is the least-squares fit of log runtime on log "
            "size. Peak RSS is the run's own process. CSV: `scaling.csv`.")


register_experiment(Experiment(
    name="gaps", version=1, title="Methods: gaps to the best known answer",
    summary="every method on the quick suite's rows: optimal/feasible counts, primal and "
            "primal-dual gaps, runtime",
    plan=_plan_gaps, render=_render_gaps))

register_experiment(Experiment(
    name="paper-suite", version=1, title="Methods at the papers' settings",
    summary="every method on the paper suite's rows (SiP-ML, TopoOpt and Crux sizes): "
            "gaps, primal-dual gaps, runtime",
    plan=_plan_paper_suite, render=_render_gaps))

register_experiment(Experiment(
    name="scaling", version=1, title="Methods: runtime against instance size",
    summary="the fast methods on the scale suite's growing sizes: runtime, memory, "
            "log-log slope",
    plan=_plan_scaling, render=_render_scaling))
