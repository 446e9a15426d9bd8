"""Crux benchmarks, now experiments of the harness: compression and pipeline speed and
compression against the optimum (``fabricopt reproduce priorities``), and the §4.4
microbenchmark against the enumerated optimum with the §5 utilization figures
(``fabricopt reproduce crux``).

Run: ``python benchmarks/bench_crux.py [--quick] [--out DIR] [--only NAME]
[--update BENCHMARKS.md]`` (each experiment resumes where it stopped).
"""

import sys

from fabricopt.benchmarks.experiments.script import main

if __name__ == "__main__":
    sys.exit(main(["priorities", "crux"], __doc__.split("\n\n")[0]))
