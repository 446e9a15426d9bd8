"""The papers' fabric comparisons on the shared cost model (BENCHMARKS.md).

1. SiP-ML and 2. TopoOpt: thin calls of ``fabricopt reproduce sipml`` and
   ``fabricopt reproduce topoopt`` (see :mod:`fabricopt.benchmarks.experiments`), which
   run through the harness's runner and store and resume where they stopped.
3. SimAI: the real 9,216-GPU MoE workload (AICB format) read, turned into per-iteration
   traffic at a few GPU counts, and priced on fabrics beside its compute time.

Run from the repository root::

    python benchmarks/bench_fabrics.py --section sipml --out bench-out   # = fabricopt reproduce sipml
    python benchmarks/bench_fabrics.py --section topoopt --out bench-out
    python benchmarks/bench_fabrics.py --section simai
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path




def paper_section(name: str, quick: bool, out: Path) -> None:
    """The SiP-ML and TopoOpt sections are experiments of the harness: this runs
    ``fabricopt reproduce NAME`` (resumable) and prints its section."""
    from fabricopt.benchmarks.experiments import run_experiment

    _, md = run_experiment(name, out / name, quick=quick, resume=True)
    print(md.read_text())


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
                                                 "package's example)")
    p.add_argument("--quick", action="store_true", help="the experiments' quick variants")
    p.add_argument("--out", default="bench-fabrics")
    args = p.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name in ("sipml", "topoopt"):
        if args.section in (name, "all"):
            paper_section(name, args.quick, out)
    if args.section in ("simai", "all"):
        simai(args, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
