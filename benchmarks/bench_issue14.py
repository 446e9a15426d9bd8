"""Issue 14's figures, now parts of the harness's experiments: TopoOpt's rings and
candidates and the topology families (``fabricopt reproduce topology``), the exact
priority compression and ``compression="dp"`` against ``"exact"`` inside ``crux``
(``fabricopt reproduce priorities``), the wavelengths long-reach family
(``fabricopt reproduce wavelengths``) and the circuits skewed family
(``fabricopt reproduce circuits``).

Run: ``python benchmarks/bench_issue14.py [--quick] [--out DIR] [--only NAME]
[--update BENCHMARKS.md]`` (each experiment resumes where it stopped).
"""

import sys

from fabricopt.benchmarks.experiments.script import main

if __name__ == "__main__":
    sys.exit(main(["topology", "priorities", "wavelengths", "circuits"],
                  __doc__.split("\n\n")[0]))
