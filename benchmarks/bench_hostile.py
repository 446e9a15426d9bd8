"""Hostile input (BENCHMARKS.md ``## hostile input``): a thin call of ``fabricopt
reproduce hostile``.

Every case of :mod:`fabricopt.testing.mutations` (six kinds x instances, solutions and
``solve --json`` envelopes x 18 mutation families x 6 seeds = 1,944 files) through
``fabricopt solve`` / ``fabricopt check`` and the matching API calls, each in a forked
child with a 2 GB address-space limit and a 5 s alarm per call; one harness task per
(kind, target, family) batch counts the outcomes (see
:mod:`fabricopt.benchmarks.experiments.hostile`), so an interrupted run resumes where it
stopped.

Run from the repository root::

    python benchmarks/bench_hostile.py            # the full experiment, ~6 min on 2 cores
    python benchmarks/bench_hostile.py --quick    # circuits only, one seed
    python benchmarks/bench_hostile.py --update BENCHMARKS.md   # and write its section
"""

from __future__ import annotations

import sys

from fabricopt.benchmarks.experiments.script import main

if __name__ == "__main__":
    sys.exit(main(["hostile"], __doc__.split("\n\n")[0]))
