"""The command line of a thin script under ``benchmarks/``: it runs experiments of the
harness (resumably) and prints their sections.

Examples
--------
>>> main(["circuits"], "Circuits.", ["--help"])  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
SystemExit: 0
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Sequence

__all__ = ["main"]


def main(names: Sequence[str], description: str, argv: Sequence[str] | None = None) -> int:
    """Run each experiment of ``names`` as ``fabricopt reproduce NAME --resume`` would
    (into ``OUT/NAME``) and print its markdown section; ``--update DOC`` also writes
    the sections into DOC between their markers."""
    from . import run_experiment, update_document

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help="the quick variants")
    parser.add_argument("--out", default="reproduce-results",
                        help="results folder; each experiment goes into OUT/NAME")
    parser.add_argument("--update", default=None, metavar="DOC",
                        help="write the sections into DOC (e.g. BENCHMARKS.md)")
    parser.add_argument("--only", choices=list(names), default=None,
                        help="run one of the experiments only")
    args = parser.parse_args(argv)
    for name in [args.only] if args.only else names:
        folder = Path(args.out) / f"{name}{'-quick' if args.quick else ''}"
        _, md = run_experiment(name, folder, quick=args.quick, resume=True)
        print(md.read_text())
        if args.update:
            update_document(args.update, name, md)
    return 0
