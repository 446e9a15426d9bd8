"""Placement benchmarks: a thin call of ``fabricopt reproduce placement``.

The measurements (SiP-ML's speed target on a Transformer-scale graph, the
MILP-vs-heuristics gap table on 30 random 10-12-op instances with the MILP's
symmetry-breaking variants, ``sipml`` against the degree-free baseline on the named
families, ``sipml`` at 20,000 and 100,000 sub-ops, and the (k, l) search's candidates)
are the ``placement`` experiment of the harness
(:mod:`fabricopt.benchmarks.experiments.placement`): every run goes through the
runner and store, so an interrupted run resumes where it stopped. Run from a checkout
with fabricopt installed::

    python benchmarks/bench_placement.py --out bench-out          # = fabricopt reproduce placement --resume
    python benchmarks/bench_placement.py --quick --out bench-out  # the small variant

It prints the section's markdown; ``fabricopt reproduce placement --update
BENCHMARKS.md`` writes it into BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="the experiment's quick variant")
    parser.add_argument("--out", default="bench-placement",
                        help="results folder (database, markdown, CSV)")
    parser.add_argument("--workers", type=int, default=None)
    args = parser.parse_args(argv)
    from fabricopt.benchmarks.experiments import run_experiment

    _, md = run_experiment("placement", Path(args.out) / "placement", quick=args.quick,
                           resume=True, workers=args.workers)
    print(md.read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
