"""The papers' fabric comparisons on the shared cost model (BENCHMARKS.md).

1. SiP-ML and 2. TopoOpt: thin calls of ``fabricopt reproduce sipml`` and
   ``fabricopt reproduce topoopt`` (see :mod:`fabricopt.benchmarks.experiments`), which
   run through the harness's runner and store and resume where they stopped.
3. SimAI: a thin call of ``fabricopt reproduce simai`` (the MoE workload on every
   fabric, its bandwidth sweep and its per-iteration traffic at 384 GPUs to all 9,216).

Run from the repository root::

    python benchmarks/bench_fabrics.py --section sipml --out bench-out   # = fabricopt reproduce sipml
    python benchmarks/bench_fabrics.py --section topoopt --out bench-out
    python benchmarks/bench_fabrics.py --section simai --out bench-out   # = fabricopt reproduce simai
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def paper_section(name: str, quick: bool, out: Path) -> None:
    """The SiP-ML, TopoOpt and SimAI sections are experiments of the harness: this runs
    ``fabricopt reproduce NAME`` (resumable) and prints its section."""
    from fabricopt.benchmarks.experiments import run_experiment

    _, md = run_experiment(name, out / name, quick=quick, resume=True)
    print(md.read_text())


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--section", choices=("sipml", "topoopt", "simai", "all"), default="all")
    p.add_argument("--quick", action="store_true", help="the experiments' quick variants")
    p.add_argument("--out", default="bench-fabrics")
    args = p.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name in ("sipml", "topoopt", "simai"):
        if args.section in (name, "all"):
            paper_section(name, args.quick, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
