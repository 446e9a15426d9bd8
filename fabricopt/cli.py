"""The ``fabricopt`` command.

Exit codes: 0 success (for ``check``: feasible), 1 a failed outcome (``check``:
infeasible; ``solve``: status ``error``), 2 bad input — printed as one line on stderr, 130 interrupted, 141 the reader of standard
output went away.
"""

from __future__ import annotations

import argparse
import inspect
import json
import logging
import os
import sys
from typing import Sequence

from . import __version__, dump, generate, load, load_solution
from .errors import FabricError, InvalidOption
from .problems import check as check_solution
from .problems import evaluate, get_kind, kind_of, kinds, write_json
from .solvers import Result, all_methods, get_method, solve

__all__ = ["main", "build_parser"]


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors in one line with exit code 2."""

    def error(self, message):
        self.exit(2, f"fabricopt: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="fabricopt", description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", action="version", version=f"fabricopt {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="log diagnostics on stderr (-v: progress, -vv: debug)")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("solve", help="solve an instance with one method")
    p.add_argument("instance", help="instance JSON file, or - for standard input")
    p.add_argument("--method", required=True)
    p.add_argument("--time-limit", type=float, default=None, metavar="S")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--backend", choices=("highs", "cbc"), default=None,
                   help="MILP backend (MILP methods only)")
    p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                   help="a method option (repeatable), parsed by its declared type "
                        "(`fabricopt methods KIND` lists them)")
    p.add_argument("--json", action="store_true", help="print the result envelope alone")
    p.add_argument("--out", default=None, metavar="FILE", help="also write the envelope here")

    p = sub.add_parser("check", help="check a solution (or a result envelope) for an instance")
    p.add_argument("instance")
    p.add_argument("solution", help="solution or result JSON file, or - for standard input")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("methods", help="list the registered methods")
    p.add_argument("kind", nargs="?", default=None)

    p = sub.add_parser("generate", help="write a seeded instance of a problem kind",
                       add_help=False, usage="fabricopt generate KIND [--seed N] "
                                             "[--out FILE] [--SIZE VALUE ...]",
                       description="Write a seeded instance of KIND as JSON. Size options\n"
                                   "depend on the kind; `fabricopt generate KIND --help` lists\n"
                                   "them, e.g. `fabricopt generate circuits --gpus 32 "
                                   "--switches 8`.",
                       epilog=_generate_epilog(),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("kind", nargs="?", default=None, help="a problem kind")
    p.add_argument("-h", "--help", action="store_true",
                   help="show this help, or with KIND its size options, and exit")
    p.add_argument("--seed", type=int, default=0, metavar="N",
                   help="seed of the generator (default 0)")
    p.add_argument("--out", default=None, metavar="FILE", help="write here (default: stdout)")
    p.set_defaults(usage_parser=p)

    p = sub.add_parser("schema", help="print the JSON Schema of a kind's instance, "
                                      "solution or result envelope",
                       description="Print a JSON Schema (draft 2020-12): of KIND's instance "
                                   "(default), its solution, or the result envelope of a "
                                   "solve of KIND.")
    p.add_argument("kind")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--solution", dest="which", action="store_const", const="solution",
                       default="instance", help="the solution's schema")
    which.add_argument("--result", dest="which", action="store_const", const="result",
                       help="the result envelope's schema (fabricopt solve --json)")

    p = sub.add_parser("export", help="write a method's MILP as an MPS or LP file, or map "
                                      "a solver's answer back",
                       description="Write the exact MILP that METHOD solves for INSTANCE to "
                                   "--out (.mps or .lp, by HiGHS's writer) for any MILP "
                                   "solver; with --decode VALUES, turn that solver's column "
                                   "values (a .sol file or a JSON object) into the kind's "
                                   "solution JSON, for `fabricopt check`.")
    p.add_argument("instance", help="instance JSON file, or - for standard input")
    p.add_argument("--method", default="milp", help="an exportable method (default: milp)")
    p.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                   help="a formulation option (repeatable), as given to the export")
    p.add_argument("--out", default=None, metavar="FILE",
                   help="the model file (.mps or .lp); with --decode, the solution JSON "
                        "(default: stdout)")
    p.add_argument("--decode", default=None, metavar="VALUES",
                   help="a solver's column values for the exported model")

    _add_bench_parser(sub)
    _add_reproduce_parser(sub)
    p = sub.add_parser("compare", help="iteration time and cost of a workload over fabrics",
                       description="Sweep per-GPU bandwidth for a workload over fabrics, search "
                                   "the best k x l hybrid parallelism at each point, and write "
                                   "PREFIX.md (table), PREFIX.csv and PREFIX.png (plot). An option "
                                   "only the other model reads (--k for a SimAI file, "
                                   "--nic-GBps for an op graph) is refused.")
    p.add_argument("workload", help="resnet50, vgg16, bert-large, transformer, megatron, "
                                    "gpt3-175b or dlrm; or a traffic workload: simai-moe, "
                                    "simai-micro, or the path of an AICB/SimAI file")
    p.add_argument("--gpus", type=int, default=1024, help="nodes (default 1024)")
    p.add_argument("--bandwidths", default=None, metavar="GBPS,...",
                   help="per-node Gbps (default: SiP-ML's 128 ... 8192; with --model simai "
                        "the SimAI cluster's NIC bandwidth per GPU)")
    p.add_argument("--fabrics", "--fabric", default=None, metavar="NAME,...",
                   help="elect-flat, elect-flat-half, elect-cluster-200, elect-cluster-400, "
                        "fat-tree, sip-ocs, sip-ring, direct-connect, fat-tree-cost-matched; "
                        "with --model simai also elect-cluster (SimAI's cluster) "
                        "(default: elect-flat,elect-cluster-400,sip-ocs,sip-ring; "
                        "with --model simai: elect-cluster)")
    _add_simai_compare_options(p)
    p.set_defaults(usage_parser=p)
    p.add_argument("--k", default=None, metavar="K,...",
                   help="model-parallel degrees to try (default all; 1 = pure data parallelism)")
    p.add_argument("--max-k", type=int, default=None, help="largest model-parallel degree to try")
    p.add_argument("--switches", type=int, default=16, help="OCSs of sip-ocs (default 16)")
    p.add_argument("--degree", type=int, default=4, help="links per node of direct-connect")
    p.add_argument("--gpu-tflops", type=float, default=156.0,
                   help="effective TFLOP/s per GPU (default 156: an A100 at 50%% of peak)")
    p.add_argument("--gpus-per-node", type=int, default=1,
                   help="model each node as this many GPUs merged (TopoOpt's --big-gpu)")
    p.add_argument("--tau-us", type=float, default=10.0, help="sub-op quantum (default 10 us)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=None, metavar="PREFIX",
                   help="output prefix (default compare-WORKLOAD-GPUS)")
    p.add_argument("--quiet", action="store_true",
                   help="no parameter or progress lines on stderr")
    for command in sub.choices.values():  # -v also after the command: `fabricopt solve -v`
        command.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS,
                             help="log diagnostics on stderr (-v: progress, -vv: debug)")
    return parser


def _configure_logging(verbosity: int) -> None:
    """Send the ``fabricopt`` loggers' records to stderr: INFO with -v, DEBUG with -vv."""
    if verbosity <= 0:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("fabricopt: %(levelname)s: %(name)s: %(message)s"))
    logger = logging.getLogger("fabricopt")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO if verbosity == 1 else logging.DEBUG)


def _size_parameters(kind: str) -> list[inspect.Parameter]:
    """The size options of ``kind``'s generator (every keyword but ``seed``)."""
    problem = get_kind(kind)
    params = inspect.signature(problem.generate).parameters if problem.generate else {}
    return [p for name, p in params.items() if name != "seed"]


def _size_flags(kind: str) -> list[str]:
    """``--gpus INT (default 16)``, one per size option of ``kind``."""
    out = []
    for p in _size_parameters(kind):
        kind_name = str(p.annotation).replace("'", "").replace(" | None", "")
        kind_name = kind_name.upper() if kind_name in ("int", "float", "str", "bool") else "VALUE"
        default = "chosen by the generator" if p.default is None else repr(p.default)
        out.append(f"--{p.name.replace('_', '-')} {kind_name} (default {default})")
    return out


def _generate_epilog() -> str:
    lines = ["size options (default: the generator's):"]
    for kind in kinds():
        lines.append(f"  {kind}: " + ", ".join(f.split(" ")[0] for f in _size_flags(kind)))
    return "\n".join(lines)


def _generate_help(kind: str) -> str:
    """``fabricopt generate KIND --help``: the kind's generator and its size options."""
    doc = (inspect.getdoc(get_kind(kind).generate) or "").split("\n\n")[0]
    lines = [f"usage: fabricopt generate {kind} [--seed N] [--out FILE] [--SIZE VALUE ...]",
             "", f"Write a seeded {kind} instance as JSON (to stdout unless --out).",
             "", " ".join(doc.split()), "", "options:",
             "  --seed N     seed of the generator (default 0): same seed, same instance",
             "  --out FILE   write the instance here", "", f"size options of {kind}:"]
    lines += [f"  {flag}" for flag in _size_flags(kind)]
    return "\n".join(lines)


def _add_simai_compare_options(p) -> None:
    """``compare``'s options for traffic (SimAI/AICB) workloads."""
    p.add_argument("--model", choices=("auto", "sipml", "simai"), default="auto",
                   help="sipml places op graphs (k x l search); simai prices traffic "
                        "workloads as SimAI-Analytical does (default: by the workload)")
    p.add_argument("--nvlink-GBps", type=float, default=360.0, metavar="GB/S",
                   help="simai: NVLink bandwidth per GPU, GB = 2^30 bytes (default 360)")
    p.add_argument("--nic-GBps", type=float, default=48.5, metavar="GB/S",
                   help="simai: bandwidth of one NIC (default 48.5)")
    p.add_argument("--nics-per-server", type=int, default=8, help="simai: default 8")
    p.add_argument("--gpus-per-server", type=int, default=8, help="simai: default 8")
    p.add_argument("--mode", choices=("serial", "concurrent"), default="serial",
                   help="simai: collectives one after another (SimAI) or all at once")
    p.add_argument("--overlap", default="", metavar="GROUP=R,...",
                   help="simai: fraction of a group's communication hidden by compute, "
                        "e.g. DP=0.5,TP=0 (groups DP, DP_EP, TP, EP; default 0)")
    p.add_argument("--pp-overlap", type=float, default=1.0,
                   help="simai: the same for pipeline traffic (default 1: none exposed)")
    p.add_argument("--efficiency", default="simai", metavar="simai|none|DIR",
                   help="simai: collective efficiency tables (default SimAI's own)")
    p.add_argument("--time-unit-s", type=float, default=1e-9,
                   help="simai: seconds per compute tick of the file (default 1e-9)")
    p.add_argument("--max-hops", type=int, default=None,
                   help="simai: lightpath reach of sip-ring (default 16)")
    p.add_argument("--json", action="store_true",
                   help="simai: print the rows as JSON (files only with --out)")


def _add_bench_parser(sub) -> None:
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
                   help="a module or .py file that registers extra methods (repeatable)")
    p.add_argument("--no-plots", action="store_true", help="write no PNG plots")
    p.add_argument("--no-progress", action="store_true", help="draw no progress bar")
    reports = p.add_subparsers(dest="bench_command", parser_class=_Parser)
    r = reports.add_parser("report", help="re-render the report of a results folder")
    r.add_argument("dir", help="a results folder (holding bench.sqlite)")
    r.add_argument("--no-plots", action="store_true", help="write no PNG plots")


def _add_reproduce_parser(sub) -> None:
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


def _parse_value(text: str):
    import json

    try:
        return json.loads(text)
    except ValueError:
        return text


def _size_options(kind: str, extra: list[str]) -> dict:
    """Turn ``--gpus 32 --switches 8`` into keyword arguments typed by the generator."""
    problem = get_kind(kind)
    params = inspect.signature(problem.generate).parameters if problem.generate else {}
    out = {}
    i = 0
    while i < len(extra):
        flag = extra[i]
        if not flag.startswith("--") or i + 1 >= len(extra):
            raise InvalidOption(f"{flag}: expected --NAME VALUE size options")
        name = flag[2:].replace("-", "_")
        if name not in params or name == "seed":
            options = ", ".join("--" + n.replace("_", "-") for n in params if n != "seed")
            raise InvalidOption(f"--{flag[2:]}: not a size option of {kind} (options: {options})")
        default = params[name].default
        value = extra[i + 1]
        try:
            if isinstance(default, bool):
                out[name] = value.lower() in ("1", "true", "yes")
            elif isinstance(default, int):
                out[name] = int(value)
            elif isinstance(default, float):
                out[name] = float(value)
            else:
                out[name] = _parse_value(value)
        except ValueError:
            raise InvalidOption(f"--{flag[2:]} = {value!r}: must be a "
                                f"{type(default).__name__}") from None
        i += 2
    return out


def _summary(result: Result) -> str:
    def fmt(x):
        return "-" if x is None else f"{x:.6g}"

    lines = [f"{result.problem} / {result.method}: {result.status}",
             f"  objective ({result.sense}) {fmt(result.objective)}   bound {fmt(result.bound)}"
             f"   gap {fmt(result.gap)}   runtime {result.runtime_s:.3f} s"]
    if "message" in result.info:
        lines.append(f"  {result.info['message']}")
    return "\n".join(lines)


def _cmd_solve(args) -> int:
    instance = load(args.instance)
    if isinstance(instance, Result):
        raise ValueError(f"{args.instance}: is a result envelope, not an instance")
    options = _method_options(kind_of(instance).name, args.method, args.option)
    if args.backend is not None:
        options["backend"] = args.backend
    result = solve(instance, args.method, time_limit=args.time_limit, seed=args.seed, **options)
    if args.out:
        dump(result, args.out)
    if args.json:
        dump(result, "-")
    else:
        print(_summary(result))
    return 1 if result.status == "error" else 0


def _name_values(items: list[str]) -> list[tuple[str, str]]:
    """``--option NAME=VALUE`` items as (name, text) pairs, ``-`` in names read as ``_``."""
    out = []
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise InvalidOption(f"--option {item!r}: expected NAME=VALUE")
        out.append((name.strip().replace("-", "_"), value))
    return out


def _method_options(kind: str, method: str, items: list[str]) -> dict:
    """``--option NAME=VALUE`` items, each parsed by the method's declared type."""
    record = get_method(kind, method)
    options = {}
    for name, value in _name_values(items):
        option = record.option(name)
        if option is None and not record.takes_any:
            record.validate({name: value})  # raises: names the option and lists the known ones
        options[name] = _parse_value(value) if option is None else option.parse(value)
    return options


def _cmd_check(args) -> int:
    instance = load(args.instance)
    if isinstance(instance, Result):
        raise ValueError(f"{args.instance}: is a result envelope, not an instance")
    kind = kind_of(instance)
    solution = load_solution(args.solution, kind.name)
    verdict = check_solution(instance, solution)
    objective = evaluate(instance, solution) if verdict.feasible else None
    if args.json:
        write_json({"feasible": verdict.feasible, "objective": objective,
                    "reason": verdict.reason}, "-")
    elif verdict.feasible:
        print(f"feasible: objective ({kind.sense}) {objective:.6g}")
    else:
        print(f"infeasible: {verdict.reason}")
    return 0 if verdict.feasible else 1


def _cmd_methods(args) -> int:
    selected = [args.kind] if args.kind else kinds()
    for kind in selected:
        get_kind(kind)
        records = all_methods(kind)
        print(f"{kind} ({get_kind(kind).sense}):")
        for m in records:
            tags = [t for t, on in (("exact", m.exact), ("bound only", m.bound_only),
                                    ("honours time limit", m.honours_time_limit)) if on]
            if m.source != "builtin":
                tags.append(m.source)
            tag = f" [{', '.join(tags)}]" if tags else ""
            print(f"  {m.name:<16}{m.summary}{tag}")
            for option in m.options:
                print(f"      --option {option.describe()}")
    return 0


def _cmd_generate(args, extra) -> int:
    if args.help:
        if args.kind is None:
            args.usage_parser.print_help()
        else:
            print(_generate_help(args.kind))
        return 0
    if args.kind is None:
        raise ValueError(f"generate: a problem kind is required ({', '.join(kinds())})")
    instance = generate(args.kind, seed=args.seed, **_size_options(args.kind, extra))
    dump(instance, args.out if args.out else "-")
    return 0


def _cmd_schema(args) -> int:
    from .schemas import schema

    print(json.dumps(schema(args.kind, args.which), indent=2))
    return 0


def _cmd_export(args) -> int:
    from .solvers.export import decode_values, write_model

    instance = load(args.instance)
    if isinstance(instance, Result):
        raise ValueError(f"{args.instance}: is a result envelope, not an instance")
    # formulation options (build's keywords), not the method's: parsed as JSON values
    options = {name: _parse_value(value) for name, value in _name_values(args.option)}
    if args.decode is not None:
        solution = decode_values(instance, args.decode, args.method, **options)
        dump(solution, args.out if args.out else "-")
        return 0
    if args.out is None:
        raise ValueError("export: --out FILE (.mps or .lp) is required")
    path = write_model(instance, args.out, args.method, **options)
    print(f"wrote {path}; map a solver's answer back with `fabricopt export "
          f"{args.instance} --method {args.method} --decode VALUES`", file=sys.stderr)
    return 0


def _print_report(out, plots: bool, suite: str | None = None) -> None:
    from .benchmarks import markdown_tables, write_report

    files = write_report(out, plots=plots)
    shown = [s for s in files.summaries if suite is None or s.suite == suite]
    print(markdown_tables(shown) if shown else "no runs stored")
    print(f"report: {files.markdown}  csv: {files.summary_csv}, {files.runs_csv}"
          + (f"  plots: {files.markdown.parent / 'plots'}" if files.plots else ""),
          file=sys.stderr)


def _cmd_bench(args) -> int:
    from .benchmarks import get_suite, kinds_without_rows, plan, run_sweep

    if args.bench_command == "report":
        _print_report(args.dir, not args.no_plots)
        return 0
    suite = get_suite(args.suite)
    missing = kinds_without_rows()
    if missing and args.suite in ("quick", "paper", "scale"):
        print(f"fabricopt: note: no benchmark rows yet for {', '.join(missing)} "
              f"(fabricopt/benchmarks/suites.py TABLES)", file=sys.stderr)
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


def _cmd_reproduce(args) -> int:
    from .benchmarks import experiments as exp

    if args.list or args.experiment is None:
        for e in exp.experiments():
            print(f"{e.name:<10} {e.summary}" + (f"  [{e.paper}]" if e.paper else ""))
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


def _numbers(text: str, name: str, kind=float) -> list:
    try:
        return [kind(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"--{name} = {text!r}: expected comma-separated numbers") from None


#: ``compare`` options that only traffic (SimAI) workloads read.
_SIMAI_ONLY = ("nvlink_GBps", "nic_GBps", "nics_per_server", "gpus_per_server", "mode",
               "overlap", "pp_overlap", "efficiency", "time_unit_s", "max_hops", "json")
# What only the op-graph model (SiP-ML's placement and (k, l) search) reads.
_SIPML_ONLY = ("k", "max_k", "gpu_tflops", "gpus_per_node", "tau_us", "seed")


def _given_options(parser: argparse.ArgumentParser, argv: Sequence[str]) -> set[str]:
    """The ``dest`` of every option written on the command line ``argv`` (argparse's
    unique-prefix abbreviations included), whatever its value."""
    spelled = {opt: action.dest for action in parser._actions for opt in action.option_strings
               if opt.startswith("--")}
    given = set()
    for token in argv:
        if token == "--":
            break
        if not token.startswith("--"):
            continue
        name = token.split("=", 1)[0]
        dests = ({spelled[name]} if name in spelled
                 else {d for opt, d in spelled.items() if opt.startswith(name)})
        if len(dests) == 1:
            given |= dests
    return given


def _refuse_unread(args, options: Sequence[str], why: str) -> None:
    """A compare option the chosen model would ignore is an error, not a silent no-op."""
    for dest in options:
        if dest in args.given:
            raise ValueError(f"--{dest.replace('_', '-')}: {why}")


def _parameters(args, positional=("workload",), skip=()) -> str:
    """The command line that reproduces this run: every option it reads, defaults
    included (``skip``: options this run does not read)."""
    hidden = (("command", "verbose", "quiet", "usage_parser", "given") + tuple(positional)
              + tuple(skip))
    shown = [str(getattr(args, k)) for k in positional if getattr(args, k, None) is not None]
    shown += [f"--{k.replace('_', '-')} {v}" for k, v in vars(args).items()
              if k not in hidden and v is not None and v is not False]
    return f"parameters: fabricopt {args.command} " + " ".join(shown)


def _overlap_option(text: str) -> dict:
    out = {}
    for item in (t.strip() for t in text.split(",")):
        if not item:
            continue
        group, sep, value = item.partition("=")
        try:
            out[group.strip()] = float(value)
        except ValueError:
            raise ValueError(f"--overlap {item!r}: expected GROUP=FRACTION") from None
        if not sep:
            raise ValueError(f"--overlap {item!r}: expected GROUP=FRACTION")
    return out


def _cmd_compare_simai(args, workload) -> int:
    from .fabrics import comparison as cmp
    from .fabrics import simai_comparison as scmp

    fabrics = [f.strip() for f in (args.fabrics or "elect-cluster").split(",") if f.strip()]
    rows = scmp.compare_simai(
        workload, args.gpus, None if args.bandwidths is None
        else _numbers(args.bandwidths, "bandwidths"), fabrics,
        nvlink_GBps=args.nvlink_GBps, nic_GBps=args.nic_GBps,
        nics_per_server=args.nics_per_server, gpus_per_server=args.gpus_per_server,
        mode=args.mode, overlap=_overlap_option(args.overlap), pp_overlap=args.pp_overlap,
        efficiency=args.efficiency, switches=args.switches, degree=args.degree,
        max_hops=args.max_hops,
        progress=None if args.quiet else lambda line: print(line, file=sys.stderr))
    table = scmp.simai_markdown_table(rows)
    if args.json:
        print(scmp.simai_rows_json(rows))
    else:
        print(table)
    if args.out or not args.json:
        prefix = args.out or f"compare-{workload.name}-{args.gpus}"
        with open(f"{prefix}.md", "w") as f:
            f.write(table + "\n")
        scmp.write_simai_csv(rows, f"{prefix}.csv")
        cmp.plot(rows, f"{prefix}.png")
        print(f"wrote {prefix}.md, {prefix}.csv, {prefix}.png", file=sys.stderr)
    return 0


def _cmd_compare(args) -> int:
    from .fabrics import comparison as cmp
    from .fabrics.resolve import is_traffic_workload, resolve_workload
    from .fabrics.workloads import A100_MEMORY_BYTES

    workload = resolve_workload(args.workload, time_unit_s=args.time_unit_s)
    traffic = is_traffic_workload(workload)
    if args.model == "simai" and not traffic:
        raise ValueError(f"--model simai prices traffic workloads (AICB/SimAI files); "
                         f"{workload.name} is an op-graph workload: use --model sipml")
    if args.model == "sipml" and traffic:
        raise ValueError(f"--model sipml places op graphs; {workload.name} is a traffic "
                         f"workload (AICB/SimAI): use --model simai")
    if traffic:
        _refuse_unread(args, _SIPML_ONLY, f"{workload.name} is a traffic workload (AICB/SimAI): "
                                          f"its parallelism and compute come from its file")
        return _cmd_compare_simai(args, workload)
    _refuse_unread(args, _SIMAI_ONLY, f"applies to traffic workloads (AICB/SimAI) only; "
                                      f"{workload.name} is an op-graph workload")
    args.bandwidths = args.bandwidths or "128,256,512,1024,2048,4096,8192"
    args.fabrics = args.fabrics or "elect-flat,elect-cluster-400,sip-ocs,sip-ring"
    per_node = args.gpus_per_node
    if per_node < 1:
        raise ValueError(f"--gpus-per-node = {per_node}: must be >= 1")
    parameters = _parameters(args, skip=_SIMAI_ONLY)
    if not args.quiet:
        print(parameters, file=sys.stderr)
    rows = cmp.compare(
        args.workload, args.gpus, _numbers(args.bandwidths, "bandwidths"),
        [f.strip() for f in args.fabrics.split(",") if f.strip()],
        k_values=None if args.k is None else _numbers(args.k, "k", int), max_k=args.max_k,
        tau_s=args.tau_us * 1e-6, gpu_flops=args.gpu_tflops * 1e12 * per_node,
        memory_bytes=A100_MEMORY_BYTES * per_node, switches=args.switches, degree=args.degree,
        seed=args.seed, progress=None if args.quiet else lambda line: print(line, file=sys.stderr))
    prefix = args.out or f"compare-{args.workload}-{args.gpus}"
    table = cmp.markdown_table(rows, legend=True)
    with open(f"{prefix}.md", "w") as f:
        f.write(parameters + "\n\n" + table + "\n")
    cmp.write_csv(rows, f"{prefix}.csv")
    cmp.plot(rows, f"{prefix}.png")
    print(table)
    print(f"wrote {prefix}.md, {prefix}.csv, {prefix}.png", file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``fabricopt`` command; returns the exit code."""
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args, extra = parser.parse_known_args(argv)
    if extra and args.command != "generate":
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    _configure_logging(args.verbose)
    if args.command == "compare":
        args.given = _given_options(args.usage_parser, argv)
    try:
        if args.command == "solve":
            return _cmd_solve(args)
        if args.command == "check":
            return _cmd_check(args)
        if args.command == "methods":
            return _cmd_methods(args)
        if args.command == "generate":
            return _cmd_generate(args, extra)
        if args.command == "bench":
            return _cmd_bench(args)
        if args.command == "compare":
            return _cmd_compare(args)
        if args.command == "schema":
            return _cmd_schema(args)
        if args.command == "export":
            return _cmd_export(args)
        if args.command == "reproduce":
            return _cmd_reproduce(args)
    except (FabricError, ValueError) as exc:
        print(f"fabricopt: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("fabricopt: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (``fabricopt schema KIND | head``): stop quietly, as a
        # command killed by SIGPIPE would, and keep Python's exit flush from failing too.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + 13
    parser.error(f"unknown command {args.command!r}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
