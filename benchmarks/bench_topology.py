"""Benchmarks of the ``topology`` kind (issues 5, 14) — coin change, 128 servers, gaps to
the ``milp`` optimum, the separating families: ``fabricopt reproduce topology``.

Run: ``python benchmarks/bench_topology.py [--quick] [--out DIR] [--update BENCHMARKS.md]``
(the same as ``fabricopt reproduce topology --resume``; the experiment is
:mod:`fabricopt.benchmarks.experiments.topology`).
"""

import sys

from fabricopt.benchmarks.experiments.script import main

if __name__ == "__main__":
    sys.exit(main(["topology"], __doc__.split("\n\n")[0]))
