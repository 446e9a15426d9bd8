"""The papers' fabric comparisons on the shared cost model (BENCHMARKS.md ``## fabrics``).

1. SiP-ML: SiP-OCS and SiP-Ring at per-GPU bandwidth B against Elect-Flat at B/2, and
   SiP-ML's speed-up over Elect-Cluster (200 / 400 Gbps per server), for ResNet-50, the
   Transformer and Megatron (GPT, 18.4B) on 1024 GPUs, B = 128 ... 8192 Gbps.
2. TopoOpt: direct-connect (degree 4) against the Fat-tree of the same $ cost, on 128
   servers of 4 GPUs each (modelled as one 4x GPU, TopoOpt's ``--big-gpu 4``).
3. SimAI: the real 9,216-GPU MoE workload (AICB format) read, turned into per-iteration
   traffic at a few GPU counts, and priced on fabrics beside its compute time.

Run from the repository root::

    python benchmarks/bench_fabrics.py --section sipml --max-k 64 --out bench-out
    python benchmarks/bench_fabrics.py --section topoopt --out bench-out
    python benchmarks/bench_fabrics.py --section simai

Each section writes one table and one plot per workload into ``--out`` and prints the
summary tables that BENCHMARKS.md records, with the wall time of each run.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fabricopt.fabrics.comparison import (SIPML_BANDWIDTHS, compare, markdown_table,  # noqa: E402
                                          plot, write_csv)
from fabricopt.fabrics.workloads import A100_MEMORY_BYTES, DEFAULT_GPU_FLOPS  # noqa: E402

SIPML_FABRICS = ("elect-flat", "elect-flat-half", "elect-cluster-200", "elect-cluster-400",
                 "sip-ocs", "sip-ring")
SIPML_WORKLOADS = ("resnet50", "transformer", "megatron")
TOPOOPT_FABRICS = ("direct-connect", "fat-tree-cost-matched", "elect-flat")
TOPOOPT_WORKLOADS = ("vgg16", "resnet50", "bert-large", "dlrm")


def _ratio(a, b):
    return "-" if a is None or b is None else f"{a / b:.2f}"


def _run(workload, gpus, bandwidths, fabrics, out: Path, args, **kw):
    start = time.perf_counter()
    rows = compare(workload, gpus, bandwidths, fabrics, max_k=args.max_k, seed=args.seed,
                   progress=(lambda line: print(f"  {workload}: {line}", file=sys.stderr,
                                                flush=True)), **kw)
    wall = time.perf_counter() - start
    stem = out / f"{workload}-{gpus}"
    (stem.with_suffix(".md")).write_text(markdown_table(rows) + "\n")
    write_csv(rows, stem.with_suffix(".csv"))
    plot(rows, stem.with_suffix(".png"))
    return rows, wall


def sipml(args, out: Path) -> None:
    print(f"### SiP-ML: iteration time (ms) on {args.gpus} GPUs; ratios > 1 favour SiP-ML\n")
    print("| workload | B Gbps | Elect-Flat B | Elect-Flat B/2 | SiP-OCS B | SiP-Ring B "
          "| Cluster-200 | Cluster-400 | Flat(B/2) / OCS | Flat(B/2) / Ring "
          "| Cluster-400 / OCS | Cluster-200 / OCS | best k x l (OCS) |")
    print("|" + "---|" * 13)
    walls = []
    for workload in args.workloads or SIPML_WORKLOADS:
        rows, wall = _run(workload, args.gpus, args.bandwidths, SIPML_FABRICS, out, args)
        walls.append((workload, wall))
        t = {(r.fabric, r.gbps): r for r in rows}
        for b in sorted(args.bandwidths):
            def ms(name):
                r = t[(name, b)]
                return r.iteration_s

            cells = [ms(n) for n in ("elect-flat", "elect-flat-half", "sip-ocs", "sip-ring",
                                     "elect-cluster-200", "elect-cluster-400")]
            ocs = t[("sip-ocs", b)]
            print(f"| {workload} | {b:g} | " + " | ".join("-" if c is None else f"{c * 1e3:.3g}"
                                                        for c in cells)
                  + f" | {_ratio(ms('elect-flat-half'), ms('sip-ocs'))}"
                  f" | {_ratio(ms('elect-flat-half'), ms('sip-ring'))}"
                  f" | {_ratio(ms('elect-cluster-400'), ms('sip-ocs'))}"
                  f" | {_ratio(ms('elect-cluster-200'), ms('sip-ocs'))}"
                  f" | {'-' if ocs.k is None else f'{ocs.k} x {ocs.l}'} |")
    print()
    for workload, wall in walls:
        print(f"- {workload}: {wall:.0f} s wall")


def topoopt(args, out: Path) -> None:
    print("### TopoOpt: iteration time (ms) on 128 servers (4 GPUs each), degree 4\n")
    print("| workload | Gbps/server | direct-connect | cost $K | Fat-tree, same cost "
          "| its Gbps/host | Ideal switch | Fat-tree / DC | best k x l (DC) |")
    print("|" + "---|" * 9)
    notes = []
    for workload in args.workloads or TOPOOPT_WORKLOADS:
        rows, wall = _run(workload, 128, args.bandwidths, TOPOOPT_FABRICS, out, args,
                          gpu_flops=4 * DEFAULT_GPU_FLOPS, memory_bytes=4 * A100_MEMORY_BYTES,
                          degree=4)
        t = {(r.fabric, r.gbps): r for r in rows}
        for b in sorted(args.bandwidths):
            dc, ft, ideal = (t[(n, b)] for n in TOPOOPT_FABRICS)
            fmt = (lambda r: "-" if r.iteration_s is None else f"{r.iteration_s * 1e3:.3g}")
            print(f"| {workload} | {b:g} | {fmt(dc)} | {dc.cost_usd / 1e3:.0f} | {fmt(ft)} "
                  f"| {ft.per_node_gbps:.0f} | {fmt(ideal)} | {_ratio(ft.iteration_s, dc.iteration_s)} "
                  f"| {'-' if dc.k is None else f'{dc.k} x {dc.l}'} |")
        notes += [f"{workload}: {note}" for note in sorted({r.note for r in rows if r.note})]
        notes.append(f"{workload}: {wall:.0f} s wall")
    print()
    for note in notes:
        print(f"- {note}")


def simai(args, out: Path) -> None:
    from fabricopt.fabrics.models import ElectCluster, ElectFlat, FatTree, SipOcs
    from fabricopt.fabrics.resolve import SIMAI_EXAMPLES, simai_data_path
    from fabricopt.fabrics.simai import read_simai

    path = Path(args.simai) if args.simai else simai_data_path(SIMAI_EXAMPLES["simai-moe"])
    if not path.exists():
        raise SystemExit("bench_fabrics: the SimAI file was not found; pass --simai PATH")
    start = time.perf_counter()
    w = read_simai(path)
    read_s = time.perf_counter() - start
    print(f"### SimAI MoE workload ({len(w.layers)} rows, TP {w.tp}, EP {w.ep}, PP {w.pp}, "
          f"VPP {w.vpp}, GA {w.ga}); compute {w.compute_s:.3f} s per iteration "
          f"(1 tick = 1 ns); read in {read_s * 1e3:.0f} ms\n")
    print("| GPUs | traffic build s | TB sent per iteration | GB per GPU | Elect-Flat 400 "
          "| Fat-tree 400, 2:1 | Elect-Cluster 4800/3200 | SiP-OCS 32 x 12.5 |")
    print("|" + "---|" * 8)
    for gpus in (384, 768, 1536):
        start = time.perf_counter()
        traffic = w.traffic(gpus)
        build_s = time.perf_counter() - start
        dense = traffic.to_traffic()
        cells = []
        for fabric in (ElectFlat(400.0), FatTree(gpus, 400.0, 2.0),
                       ElectCluster(4800.0, 3200.0), SipOcs(32, 400.0)):
            try:
                cells.append(f"{fabric.comm_time(dense):.2f} s")
            except Exception as exc:  # an infeasible configuration is a result here
                cells.append(f"{type(exc).__name__}: {str(exc)[:60]}")
        per_gpu = traffic.sent_bytes().max() / 1e9
        print(f"| {gpus} | {build_s:.3f} | {traffic.total_bytes / 1e12:.1f} | {per_gpu:.0f} | "
              + " | ".join(cells) + " |")
    start = time.perf_counter()
    full = w.traffic(w.all_gpus)
    print(f"\n- {w.all_gpus} GPUs: {len(full.bytes)} GPU pairs, "
          f"{full.total_bytes / 1e12:.0f} TB per iteration, built in "
          f"{time.perf_counter() - start:.2f} s")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--section", choices=("sipml", "topoopt", "simai", "all"), default="all")
    p.add_argument("--simai", default=None, help="the SimAI workload file (default: the "
                                                 "shipped example, simai-moe)")
    p.add_argument("--workloads", default=None, help="comma-separated (default: the section's)")
    p.add_argument("--gpus", type=int, default=1024, help="GPUs of the SiP-ML section")
    p.add_argument("--bandwidths", default=None, help="comma-separated per-node Gbps")
    p.add_argument("--max-k", type=int, default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="bench-fabrics")
    args = p.parse_args(argv)
    args.workloads = args.workloads.split(",") if args.workloads else None
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    chosen = args.bandwidths
    if args.section in ("sipml", "all"):
        args.bandwidths = ([float(x) for x in chosen.split(",")] if chosen
                           else list(SIPML_BANDWIDTHS))
        sipml(args, out)
    if args.section in ("topoopt", "all"):
        args.bandwidths = ([float(x) for x in chosen.split(",")] if chosen
                           else [100.0, 200.0, 400.0, 800.0])
        topoopt(args, out)
    if args.section in ("simai", "all"):
        simai(args, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
