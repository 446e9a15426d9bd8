"""The SimAI MoE workload on every fabric (BENCHMARKS.md ``## SimAI workload``).

    python benchmarks/bench_simai.py                 # table at 384, 768, 1536 GPUs + figure
    python benchmarks/bench_simai.py --gpus 384 --no-sweep

1. The table: SimAI's example workload (``simai-moe``: the AICB file
   ``workload_analytical.txt``, shipped with fabricopt) priced as SimAI-Analytical does
   (serial collectives, SimAI's efficiency tables, overlap 0, ``-pp_o 1``) on every fabric
   at one per-GPU bandwidth, SimAI's NIC bandwidth per GPU (48.5 GB/s, GB = 2^30 bytes:
   416.6 Gbps), at each GPU count. Each row is
   ``fabrics.simai_comparison.compare_simai(...)`` — the same as ``fabricopt compare
   simai-moe --gpus N --fabrics NAME --switches 24 --max-hops N/2 --json``.
2. The figure: iteration time against per-GPU bandwidth (416.6 Gbps x 1, 2, 4, 8, 16) at
   the sweep's GPU count, written as PNG to ``--out`` (not committed: regenerate it).

Assumptions (see fabricopt.fabrics.simai_comparison): SiP-OCS with 24 switches (the MoE
job has 18-20 peers per GPU; SiP-ML's 16 cannot serve it); SiP-Ring with unlimited reach
(``max_hops`` N/2: the rank layout puts pipeline stages DP*TP ranks apart); direct-connect
degree 4; SimAI's efficiency factors applied on every fabric (they model the collective
library's efficiency by message size, not the wires).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from fabricopt.fabrics.comparison import plot
from fabricopt.fabrics.simai_comparison import compare_simai, simai_markdown_table
from fabricopt.fabrics.simai_iteration import gib_per_s_to_gbps

FABRICS = ("elect-cluster", "elect-flat", "fat-tree", "sip-ocs", "sip-ring", "direct-connect")
NIC_GBPS = gib_per_s_to_gbps(48.5)


def _rows(gpus: int, bandwidths, fabrics, args):
    out, times = [], []
    for name in fabrics:
        start = time.perf_counter()
        rows = compare_simai("simai-moe", gpus, bandwidths, [name], switches=args.switches,
                             degree=args.degree, max_hops=gpus // 2)
        times += [(time.perf_counter() - start) / len(rows)] * len(rows)
        out += rows
        for r in rows:
            print(f"{name} @ {r.gbps:g} Gbps, {gpus} GPUs: "
                  + (f"{r.iteration_s:.4f} s" if r.iteration_s is not None else r.note[:120])
                  + f"  ({times[-1]:.1f} s to price)", file=sys.stderr, flush=True)
    return out, times


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gpus", default="384,768,1536", help="GPU counts of the table")
    p.add_argument("--fabrics", default=",".join(FABRICS))
    p.add_argument("--switches", type=int, default=24, help="OCSs of sip-ocs")
    p.add_argument("--degree", type=int, default=4, help="links per GPU of direct-connect")
    p.add_argument("--sweep-gpus", type=int, default=384, help="GPU count of the figure")
    p.add_argument("--no-sweep", action="store_true", help="no bandwidth sweep, no figure")
    p.add_argument("--out", default="bench-simai", help="folder of the figure and tables")
    args = p.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    fabrics = [f for f in args.fabrics.split(",") if f]
    table_rows, table_times = [], []
    for gpus in (int(g) for g in args.gpus.split(",")):
        rows, times = _rows(gpus, [NIC_GBPS], fabrics, args)
        table_rows += rows
        table_times += times
    text = ["### The SimAI MoE workload at 416.6 Gbps per GPU", "",
            simai_markdown_table(table_rows), "",
            "Seconds to price each point: " + ", ".join(
                f"{r.fabric}@{r.gpus} {t:.1f}" for r, t in zip(table_rows, table_times)), ""]
    if not args.no_sweep:
        sweep = [NIC_GBPS * 2 ** k for k in range(5)]
        rows, _ = _rows(args.sweep_gpus, sweep, fabrics, args)
        plot(rows, out / "simai-sweep.png",
             title=f"simai-moe on {args.sweep_gpus} GPUs (SimAI-Analytical composition)")
        text += [f"### Bandwidth sweep at {args.sweep_gpus} GPUs "
                 f"(figure: {out / 'simai-sweep.png'})", "", simai_markdown_table(rows), ""]
    report = "\n".join(text)
    (out / "simai.md").write_text(report + "\n")
    print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
