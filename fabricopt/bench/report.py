"""The report of a results folder, rendered from its database alone.

``report.md`` (a table per suite and problem kind, failures, plots), ``summary.csv``
(the tables' numbers), ``runs.csv`` (every run with its primal gap) and
``plots/<suite>-<kind>-{gap-vs-runtime,runtime-vs-size}.{png,pdf}``.
"""

from __future__ import annotations

import csv
import re
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

from fabricopt.bench.claims import with_contradictions
from fabricopt.bench.metrics import SHIFT_S, MethodSummary, summarize, with_primal_gaps
from fabricopt.bench.plots import gap_vs_runtime, runtime_vs_size
from fabricopt.bench.store import COLUMNS, Store

__all__ = ["markdown_tables", "write_report", "ReportFiles"]

_HEADER = ("method", "instances", "optimal", "feasible", "errors", "mean gap", "max gap",
           "mean PD gap (bound: runs)", "sgm runtime (s)")


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100.0 * x:.2f} %"


def _secs(x: float | None) -> str:
    return "-" if x is None else f"{x:.3g}"


def _table(lines: Sequence[MethodSummary]) -> list[str]:
    out = ["| " + " | ".join(_HEADER) + " |",
           "|" + "|".join(["---"] + ["---:"] * (len(_HEADER) - 1)) + "|"]
    for s in lines:
        pd_gap = _pct(s.mean_pd_gap)
        if s.bound_sources and s.mean_pd_gap is not None:
            pd_gap += f" ({s.bound_sources})"
        cells = (s.method, s.instances, s.optimal, s.feasible, s.errors, _pct(s.mean_gap),
                 _pct(s.max_gap), pd_gap, _secs(s.sgm_runtime_s))
        out.append("| " + " | ".join(str(c) for c in cells) + " |")
    return out


def _groups(summaries: Sequence[MethodSummary]) -> dict[tuple[str, str], list[MethodSummary]]:
    out: dict[tuple[str, str], list[MethodSummary]] = {}
    for s in summaries:
        out.setdefault((s.suite, s.kind), []).append(s)
    return out


def markdown_tables(summaries: Sequence[MethodSummary], *, level: int = 3) -> str:
    """A markdown table per (suite, kind): what ``fabricopt bench`` prints.

    Examples
    --------
    >>> s = MethodSummary("quick", "circuits", "greedy", 3, 0, 3, 0, 0.1, 0.25, 0.02, 0.004,
    ...                   "port-load 3")
    >>> print(markdown_tables([s]))
    ### quick: circuits
    <BLANKLINE>
    | method | instances | optimal | feasible | errors | mean gap | max gap | mean PD gap (bound: runs) | sgm runtime (s) |
    |---|---:|---:|---:|---:|---:|---:|---:|---:|
    | greedy | 3 | 0 | 3 | 0 | 10.00 % | 25.00 % | 2.00 % (port-load 3) | 0.004 |
    """
    parts = []
    for (suite, kind), lines in _groups(summaries).items():
        parts.append("\n".join([f"{'#' * level} {suite}: {kind}", ""] + _table(lines)))
    return "\n\n".join(parts)


_NOTES = (f"Gaps are relative, |a - b| / max(|a|, |b|). *gap*: primal gap to the best "
          f"objective any run in this database found for the instance. *PD gap*: the run's "
          f"own primal–dual gap, where it reports a bound; in brackets, the bound each run "
          f"reports (`bound_source`: the argument, `optimal` for a proof) and how many "
          f"runs. *optimal*: proven optimal; "
          f"*feasible*: a checked feasible solution (optimal included); *errors*: the method "
          f"raised, returned an infeasible answer, was killed at the hard limit, or made a "
          f"claim another run in this database refutes (infeasible, optimal or a bound "
          f"beaten by a checked feasible objective). "
          f"*sgm runtime*: shifted geometric mean, shift {SHIFT_S:g} s, runs capped at the "
          f"time limit and errors counted at it.")


@dataclass(frozen=True)
class ReportFiles:
    """Paths of what :func:`write_report` wrote, and the summaries it drew them from."""

    markdown: Path
    summary_csv: Path
    runs_csv: Path
    plots: tuple[Path, ...]
    summaries: tuple[MethodSummary, ...]


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)


def _write_csv(path: Path, rows: Sequence[dict[str, Any]], fields: Sequence[str]) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(fields), extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: ("" if row.get(k) is None else row[k]) for k in fields})


def _failures(rows: Sequence[dict[str, Any]]) -> list[str]:
    first: dict[tuple[str, str, str], tuple[int, str]] = {}
    for r in rows:
        if r["status"] == "error":
            key = (r["suite"], r["kind"], r["method"])
            n, msg = first.get(key, (0, r["message"] or "no message"))
            first[key] = (n + 1, msg)
    return [f"- {s} / {k} / {m}: {n} run(s); first: {msg}"
            for (s, k, m), (n, msg) in sorted(first.items())]


def write_report(out: str | Path, *, plots: bool = True) -> ReportFiles:
    """Render the report of results folder ``out`` from its database alone.

    Raises
    ------
    ValueError
        If ``out`` holds no results database.
    """
    out = Path(out)
    with Store(out, create=False) as store:
        rows = with_primal_gaps(with_contradictions(store.rows()))
        db = store.path
    summaries = summarize(rows)
    folder = db.parent
    summary_csv = folder / "summary.csv"
    runs_csv = folder / "runs.csv"
    _write_csv(summary_csv, [asdict(s) for s in summaries], list(MethodSummary.__dataclass_fields__))
    run_fields = [n for n, _ in COLUMNS] + ["best_objective", "best_bound", "primal_gap"]
    _write_csv(runs_csv, rows, run_fields)

    drawn = []
    lines = ["# fabricopt benchmark report", "",
             f"{len(rows)} runs in `{db.name}`, rendered "
             f"{datetime.now(timezone.utc).isoformat(timespec='seconds')}.", ""]
    versions = code_versions(rows)
    hosts = sorted({r["host"] for r in rows if r["host"]})
    if rows:
        lines += [f"fabricopt {', '.join(versions) or '?'} on {', '.join(hosts) or '?'}.", ""]
    lines += [_NOTES, ""]
    for (suite, kind), group in _groups(summaries).items():
        lines += [markdown_tables(group, level=2), ""]
        if plots:
            subset = [r for r in rows if r["suite"] == suite and r["kind"] == kind]
            (folder / "plots").mkdir(exist_ok=True)
            stem = folder / "plots" / f"{_slug(suite)}-{_slug(kind)}"
            for name, draw in (("gap-vs-runtime", gap_vs_runtime),
                               ("runtime-vs-size", runtime_vs_size)):
                path = draw(subset, Path(f"{stem}-{name}.png"), f"{suite}: {kind}")
                if path is None:
                    lines += [f"({kind} {name}: too few distinct points for a figure.)", ""]
                    continue
                drawn.append(path)
                lines += [f"![{kind} {name}](plots/{path.name})", ""]
    failures = _failures(rows)
    if failures:
        lines += ["## Failures", ""] + failures + [""]
    markdown = folder / "report.md"
    markdown.write_text("\n".join(lines))
    return ReportFiles(markdown, summary_csv, runs_csv, tuple(drawn), tuple(summaries))


def code_versions(rows) -> list[str]:
    """The fabricopt versions the stored ``rows`` ran, each with its git commit when the
    runs came from a checkout (``0.1.0 (commit <hash>)``)."""
    return sorted({str(r["versions"].get("fabricopt"))
                   + (f" (commit {r['versions']['fabricopt_commit']})"
                      if r["versions"].get("fabricopt_commit") else "")
                   for r in rows if r["versions"]})
