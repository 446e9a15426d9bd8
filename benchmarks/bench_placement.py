"""Placement: SiP-ML's speed target on a Transformer-scale graph, the MILP-vs-heuristics
gap table (with the MILP's symmetry-breaking variants), sipml against the degree-free
baseline on the families, sipml at 20,000 and 100,000 sub-ops and the (k, l) search:
``fabricopt reproduce placement``.

Run: ``python benchmarks/bench_placement.py [--quick] [--out DIR] [--update BENCHMARKS.md]``
(the same as ``fabricopt reproduce placement --resume``; the experiment is
:mod:`fabricopt.benchmarks.experiments.placement`).
"""

import sys

from fabricopt.benchmarks.experiments.script import main

if __name__ == "__main__":
    sys.exit(main(["placement"], __doc__.split("\n\n")[0]))
