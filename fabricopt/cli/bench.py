"""``fabricopt bench``: every method on a suite, stored as it runs, then the report."""

from __future__ import annotations

import sys

from fabricopt.cli._args import Parser



def add_parser(sub) -> None:
    p = sub.add_parser("bench", help="benchmark every method on a suite (default: quick)",
                       description="Run a suite's (instance, method) runs, store each in "
                                   "OUT/bench.sqlite as it finishes, then print the tables "
                                   "and write OUT/report.md, CSV and plots. "
                                   "`fabricopt bench report DIR` re-renders from a database.")
    p.add_argument("--suite", default="quick",
                   help="quick, paper, scale, or a suite .toml file (default: quick)")
    p.add_argument("--methods", default=None, metavar="A,B", help="run only these methods")
    p.add_argument("--kinds", default=None, metavar="A,B", help="run only these problem kinds")
    p.add_argument("--time-limit", type=float, default=None, metavar="S",
                   help="replace every row's time limit")
    p.add_argument("--grace", type=float, default=None, metavar="S",
                   help="seconds past the time limit before a run is killed "
                        "(default: 5 + 10%% of the limit)")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="runs at once (default: CPU count); a --scheduler's cluster "
                        "runs as many as it has worker threads")
    p.add_argument("--executor", choices=("process", "dask"), default="process")
    p.add_argument("--scheduler", default=None, metavar="ADDR",
                   help="Dask scheduler, e.g. tcp://host:8786 (default: a LocalCluster)")
    p.add_argument("--out", default="bench-results", metavar="DIR",
                   help="results folder (default: bench-results)")
    p.add_argument("--resume", action="store_true", help="skip runs already stored")
    p.add_argument("--plugin", action="append", default=[], metavar="MODULE",
                   help="a module or .py file that registers extra methods (repeatable); "
                        "an installed plug-in (entry point) joins a suite's 'all' methods "
                        "only when named here by its module")
    p.add_argument("--no-plots", action="store_true", help="write no plots (PNG and PDF)")
    p.add_argument("--no-progress", action="store_true", help="draw no progress bar")
    reports = p.add_subparsers(dest="bench_command", parser_class=Parser)
    r = reports.add_parser("report", help="re-render the report of a results folder")
    r.add_argument("dir", help="a results folder (holding bench.sqlite)")
    r.add_argument("--no-plots", action="store_true", help="write no PNG plots")


def _print_report(out, plots: bool, suite: str | None = None) -> None:
    from fabricopt.bench import markdown_tables, write_report

    files = write_report(out, plots=plots)
    shown = [s for s in files.summaries if suite is None or s.suite == suite]
    print(markdown_tables(shown) if shown else "no runs stored")
    print(f"report: {files.markdown}  csv: {files.summary_csv}, {files.runs_csv}"
          + (f"  plots: {files.markdown.parent / 'plots'}" if files.plots else ""),
          file=sys.stderr)


def run(args, extra=()) -> int:
    from fabricopt.bench import get_suite, kinds_without_rows, plan, run_sweep

    if args.bench_command == "report":
        _print_report(args.dir, not args.no_plots)
        return 0
    suite = get_suite(args.suite)
    missing = kinds_without_rows()
    if missing and args.suite in ("quick", "paper", "scale"):
        print(f"fabricopt: note: no benchmark rows yet for {', '.join(missing)} "
              f"(fabricopt/bench/suites.py TABLES)", file=sys.stderr)
    specs = plan(suite, methods=args.methods, kinds=args.kinds, time_limit_s=args.time_limit,
                 plugins=args.plugin, grace_s=args.grace)
    try:
        outcome = run_sweep(specs, args.out, workers=args.workers, executor=args.executor,
                            scheduler=args.scheduler, resume=args.resume,
                            progress=not args.no_progress)
    except KeyboardInterrupt:
        print(f"fabricopt: interrupted; finished runs are stored in {args.out}: "
              f"add --resume to run only the rest", file=sys.stderr)
        return 130
    print(f"suite {suite.name}: {outcome.planned} runs, {outcome.skipped} already stored, "
          f"{outcome.ran} run now, {outcome.failed} failed", file=sys.stderr)
    _print_report(args.out, not args.no_plots, suite.name)
    return 0
