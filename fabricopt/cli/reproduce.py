"""``fabricopt reproduce``: a paper's evaluation or a method experiment, resumable."""

from __future__ import annotations

import sys



def add_parser(sub) -> None:
    p = sub.add_parser("reproduce", help="run a paper's evaluation or a method experiment",
                       description="Run an experiment's runs through the benchmark runner "
                                   "(stored in OUT/bench.sqlite as they finish; --resume "
                                   "goes on after a kill), then write OUT/NAME.md with its "
                                   "tables, CSV files and PNG figures. "
                                   "`fabricopt reproduce --list` lists the experiments.")
    p.add_argument("experiment", nargs="?", default=None, help="sipml, topoopt, crux, ...")
    p.add_argument("--list", action="store_true", help="list the experiments")
    p.add_argument("--quick", action="store_true",
                   help="the small variant (minutes on 2 cores)")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="results folder (default: reproduce-results/NAME[-quick])")
    p.add_argument("--resume", action="store_true", help="skip runs already stored")
    p.add_argument("--render-only", action="store_true",
                   help="re-render the section from the stored runs; run nothing")
    p.add_argument("--update", default=None, metavar="FILE",
                   help="also write the section into FILE (e.g. BENCHMARKS.md) between "
                        "this experiment's markers")
    p.add_argument("--workers", type=int, default=None, metavar="N")
    p.add_argument("--executor", choices=("process", "dask"), default="process")
    p.add_argument("--scheduler", default=None, metavar="ADDR")
    p.add_argument("--no-progress", action="store_true", help="draw no progress bar")


def run(args, extra=()) -> int:
    from fabricopt.bench import experiments as exp

    if args.list or args.experiment is None:
        listed = exp.experiments()
        width = max(len(e.name) for e in listed)
        for e in listed:
            print(f"{e.name:<{width}}  {e.summary}" + (f"  [{e.paper}]" if e.paper else ""))
        return 0
    exp.get_experiment(args.experiment)  # an unknown name is bad input: exit 2
    if args.render_only:
        path = exp.render_experiment(args.experiment, args.out, quick=args.quick)
    else:
        try:
            outcome, path = exp.run_experiment(
                args.experiment, args.out, quick=args.quick, resume=args.resume,
                workers=args.workers, executor=args.executor, scheduler=args.scheduler,
                progress=not args.no_progress)
        except KeyboardInterrupt:
            print("fabricopt: interrupted; finished runs are stored: add --resume to run "
                  "only the rest", file=sys.stderr)
            return 130
        print(f"{args.experiment}: {outcome.planned} runs, {outcome.skipped} already stored, "
              f"{outcome.ran} run now, {outcome.failed} failed", file=sys.stderr)
    print(path.read_text())
    if args.update:
        changed = exp.update_document(args.update, args.experiment, path)
        print(f"{'updated' if changed else 'unchanged'}: {args.update}", file=sys.stderr)
    print(f"wrote {path}", file=sys.stderr)
    return 0
