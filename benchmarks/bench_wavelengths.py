"""Benchmark of the ``wavelengths`` methods — speed on large rings, gaps on small ones,
the fast count bound against the ILP, what continuity costs: ``fabricopt reproduce
wavelengths``.

Run: ``python benchmarks/bench_wavelengths.py [--quick] [--out DIR] [--update BENCHMARKS.md]``
(the same as ``fabricopt reproduce wavelengths --resume``; the experiment is
:mod:`fabricopt.benchmarks.experiments.wavelengths`).
"""

import sys

from fabricopt.benchmarks.experiments.script import main

if __name__ == "__main__":
    sys.exit(main(["wavelengths"], __doc__.split("\n\n")[0]))
