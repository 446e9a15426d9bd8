"""``fabricopt compare``: a workload's iteration time and cost over fabrics."""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from fabricopt.errors import InvalidArgument



def add_parser(sub) -> None:
    p = sub.add_parser("compare", help="iteration time and cost of a workload over fabrics",
                       description="Sweep per-GPU bandwidth for a workload over fabrics, search "
                                   "the best k x l hybrid parallelism at each point, and write "
                                   "PREFIX.md (table), PREFIX.csv, PREFIX.png and PREFIX.pdf "
                                   "(plot); --json prints the rows as JSON. An option "
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
    _add_simai_options(p)
    p.set_defaults(usage_parser=p)
    p.add_argument("--k", default=None, metavar="K,...",
                   help="model-parallel degrees to try (default all; 1 = pure data parallelism)")
    p.add_argument("--max-k", type=int, default=None, help="largest model-parallel degree to try")
    p.add_argument("--switches", type=int, default=None,
                   help="OCSs of sip-ocs (default 16; for a traffic workload, more if its "
                        "busiest GPU has more peers)")
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
                   help="nothing on stderr (parameters, progress, files written); the table "
                        "or --json still goes to stdout")


def _add_simai_options(p) -> None:
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
    p.add_argument("--rules", choices=("physical", "simai"), default="physical",
                   help="simai: price elect-cluster on its links (physical) or by "
                        "SimAI-Analytical's own rules, to reproduce its figures (simai)")
    p.add_argument("--efficiency", default="simai", metavar="simai|none|DIR",
                   help="simai: collective efficiency tables (default SimAI's own)")
    p.add_argument("--time-unit-s", type=float, default=1e-9,
                   help="simai: seconds per compute tick of the file (default 1e-9)")
    p.add_argument("--max-hops", type=int, default=None,
                   help="simai: lightpath reach of sip-ring (default 16, or the job's "
                        "farthest pair if farther)")
    p.add_argument("--json", action="store_true",
                   help="print the rows as JSON (schema: `fabricopt schema compare`) instead "
                        "of the table; files only with --out")


def _numbers(text: str, name: str, kind=float) -> list:
    try:
        return [kind(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise InvalidArgument(f"--{name} = {text!r}: expected comma-separated numbers") from None


#: ``compare`` options that only traffic (SimAI) workloads read.
_SIMAI_ONLY = ("nvlink_GBps", "nic_GBps", "nics_per_server", "gpus_per_server", "mode", "rules",
               "overlap", "pp_overlap", "efficiency", "time_unit_s", "max_hops")
# What only the op-graph model (SiP-ML's placement and (k, l) search) reads.
_SIPML_ONLY = ("k", "max_k", "gpu_tflops", "gpus_per_node", "tau_us", "seed")


def given_options(parser: argparse.ArgumentParser, argv: Sequence[str]) -> set[str]:
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
            raise InvalidArgument(f"--{dest.replace('_', '-')}: {why}")


def _parameters(args, positional=("workload",), skip=()) -> str:
    """The command line that reproduces this run: every option it reads, defaults
    included (``skip``: options this run does not read)."""
    hidden = (("command", "verbose", "quiet", "usage_parser", "given") + tuple(positional)
              + tuple(skip))
    shown = [str(getattr(args, k)) for k in positional if getattr(args, k, None) is not None]
    shown += [f"--{k.replace('_', '-')} {v}" for k, v in vars(args).items()
              if k not in hidden and v is not None and v is not False]
    return f"parameters: fabricopt {args.command} " + " ".join(shown)


class _Progress:
    """Where ``compare`` reports progress: on a terminal, one bar redrawn in place (points
    done of ``total``, elapsed, ETA, the latest line); elsewhere each line as it comes;
    nothing with ``--quiet``. Result lines of a point start without indent; lines from
    inside a point (each k x l tried) are indented."""

    def __init__(self, total: int, quiet: bool):
        from fabricopt.bench.progress import ProgressBar

        self.quiet, self.done, self.failed = quiet, 0, 0
        self.bar = ProgressBar(total) if sys.stderr.isatty() else None

    def __call__(self, line: str) -> None:
        if self.bar is None:
            print(line, file=sys.stderr)
            return
        if not line.startswith(" "):
            self.done += 1
            self.failed += ": infeasible" in line or ": unavailable" in line
        self.bar.update(done=self.done, failed=self.failed, note=line.strip())

    def callback(self):
        return None if self.quiet else self

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _overlap_option(text: str) -> dict:
    out = {}
    for item in (t.strip() for t in text.split(",")):
        if not item:
            continue
        group, sep, value = item.partition("=")
        try:
            out[group.strip()] = float(value)
        except ValueError:
            raise InvalidArgument(f"--overlap {item!r}: expected GROUP=FRACTION") from None
        if not sep:
            raise InvalidArgument(f"--overlap {item!r}: expected GROUP=FRACTION")
    return out


def _cmd_compare_simai(args, workload) -> int:
    from fabricopt.bench.plots import iteration_vs_bandwidth
    from fabricopt.fabrics.simai import comparison as scmp

    fabrics = [f.strip() for f in (args.fabrics or "elect-cluster").split(",") if f.strip()]
    bandwidths = None if args.bandwidths is None else _numbers(args.bandwidths, "bandwidths")
    progress = _Progress(len(fabrics) * (1 if bandwidths is None else len(bandwidths)),
                         args.quiet)
    rows = scmp.compare_simai(
        workload, args.gpus, bandwidths, fabrics,
        nvlink_GBps=args.nvlink_GBps, nic_GBps=args.nic_GBps,
        nics_per_server=args.nics_per_server, gpus_per_server=args.gpus_per_server,
        mode=args.mode, overlap=_overlap_option(args.overlap), pp_overlap=args.pp_overlap,
        efficiency=args.efficiency, switches=args.switches, degree=args.degree,
        max_hops=args.max_hops, rules=args.rules, progress=progress.callback())
    progress.close()
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
        iteration_vs_bandwidth(rows, f"{prefix}.png")
        if not args.quiet:
            print(f"wrote {prefix}.md, {prefix}.csv, {prefix}.png, {prefix}.pdf",
                  file=sys.stderr)
    return 0


def run(args, extra=()) -> int:
    from fabricopt.bench.plots import iteration_vs_bandwidth
    from fabricopt.fabrics import comparison as cmp
    from fabricopt.fabrics.resolve import is_traffic_workload, resolve_workload
    from fabricopt.fabrics.workloads import A100_MEMORY_BYTES

    workload = resolve_workload(args.workload, time_unit_s=args.time_unit_s)
    traffic = is_traffic_workload(workload)
    if args.model == "simai" and not traffic:
        raise InvalidArgument(f"--model simai prices traffic workloads (AICB/SimAI files); "
                         f"{workload.name} is an op-graph workload: use --model sipml")
    if args.model == "sipml" and traffic:
        raise InvalidArgument(f"--model sipml places op graphs; {workload.name} is a traffic "
                         f"workload (AICB/SimAI): use --model simai")
    if traffic:
        _refuse_unread(args, _SIPML_ONLY, f"{workload.name} is a traffic workload (AICB/SimAI): "
                                          f"its parallelism and compute come from its file")
        return _cmd_compare_simai(args, workload)
    _refuse_unread(args, _SIMAI_ONLY, f"applies to traffic workloads (AICB/SimAI) only; "
                                      f"{workload.name} is an op-graph workload")
    args.bandwidths = args.bandwidths or "128,256,512,1024,2048,4096,8192"
    args.fabrics = args.fabrics or "elect-flat,elect-cluster-400,sip-ocs,sip-ring"
    args.switches = 16 if args.switches is None else args.switches
    per_node = args.gpus_per_node
    if per_node < 1:
        raise InvalidArgument(f"--gpus-per-node = {per_node}: must be >= 1")
    parameters = _parameters(args, skip=_SIMAI_ONLY)
    if not args.quiet:
        print(parameters, file=sys.stderr)
    bandwidths = _numbers(args.bandwidths, "bandwidths")
    fabrics = [f.strip() for f in args.fabrics.split(",") if f.strip()]
    progress = _Progress(len(bandwidths) * len(fabrics), args.quiet)
    rows = cmp.compare(
        args.workload, args.gpus, bandwidths, fabrics,
        k_values=None if args.k is None else _numbers(args.k, "k", int), max_k=args.max_k,
        tau_s=args.tau_us * 1e-6, gpu_flops=args.gpu_tflops * 1e12 * per_node,
        memory_bytes=A100_MEMORY_BYTES * per_node, switches=args.switches, degree=args.degree,
        seed=args.seed, progress=progress.callback())
    progress.close()
    table = cmp.markdown_table(rows, legend=True)
    print(cmp.rows_json(rows) if args.json else table)
    if args.out or not args.json:
        prefix = args.out or f"compare-{args.workload}-{args.gpus}"
        with open(f"{prefix}.md", "w") as f:
            f.write(parameters + "\n\n" + table + "\n")
        cmp.write_csv(rows, f"{prefix}.csv")
        iteration_vs_bandwidth(rows, f"{prefix}.png")
        if not args.quiet:
            print(f"wrote {prefix}.md, {prefix}.csv, {prefix}.png, {prefix}.pdf",
                  file=sys.stderr)
    return 0
