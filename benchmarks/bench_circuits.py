"""Runtime of ``exact`` vs ``milp`` (cold and warm-started), ``greedy``'s gap, the skewed
family and SiP-ML's scale on SiP-OCS circuit assignment: ``fabricopt reproduce circuits``.

Run: ``python benchmarks/bench_circuits.py [--quick] [--out DIR] [--update BENCHMARKS.md]``
(the same as ``fabricopt reproduce circuits --resume``; the experiment is
:mod:`fabricopt.benchmarks.experiments.circuits`).
"""

import sys

from fabricopt.benchmarks.experiments.script import main

if __name__ == "__main__":
    sys.exit(main(["circuits"], __doc__.split("\n\n")[0]))
