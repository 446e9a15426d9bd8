"""Bounds benchmarks (issue 17): a thin call of ``fabricopt reproduce bounds``.

The experiment (:mod:`fabricopt.benchmarks.experiments.bounds`) runs through the
harness's runner and store, resumes where it stopped, and renders the section that
BENCHMARKS.md holds between its markers: the placement heuristics' primal–dual gaps per
row with the bound that gave them, the fast bound against the MILP's proven optimum,
and ``topoopt``'s PD gap at 32 and 128 servers.

Run with fabricopt installed (``pip install -e .`` in a checkout)::

    python benchmarks/bench_bounds.py --quick --out bench-out   # = fabricopt reproduce bounds --quick
    python benchmarks/bench_bounds.py --out bench-out --update BENCHMARKS.md
"""

from __future__ import annotations

import argparse
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the small variant (minutes)")
    parser.add_argument("--out", default=None, help="results folder")
    parser.add_argument("--update", default=None, metavar="DOC",
                        help="write the section into DOC between its markers")
    args = parser.parse_args(argv)
    from fabricopt.cli import main as cli

    command = ["reproduce", "bounds", "--resume"] + (["--quick"] if args.quick else [])
    command += [] if args.out is None else ["--out", args.out]
    command += [] if args.update is None else ["--update", args.update]
    return cli(command)


if __name__ == "__main__":
    sys.exit(main())
