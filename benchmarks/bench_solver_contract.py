"""The solver contract in figures (BENCHMARKS.md ``## solver contract``): a thin call
of ``fabricopt reproduce solver-contract``.

False optima of ``milp`` on 200 ``priorities`` instances (checked against ``milp``
without warm start and CBC), the wall-clock overshoot of ``solve`` past its time limit
on the 128-GPU ``circuits`` MILP, and what a 0.5 s limit cuts from ``topoopt`` and
``crux``; see :mod:`fabricopt.benchmarks.experiments.contract`. Every run goes through
the harness's runner and store, so an interrupted run resumes where it stopped.

Run from the repository root::

    python benchmarks/bench_solver_contract.py            # the full experiment
    python benchmarks/bench_solver_contract.py --quick    # 20 instances, one limit
    python benchmarks/bench_solver_contract.py --update BENCHMARKS.md   # and write its section
"""

from __future__ import annotations

import sys

from fabricopt.benchmarks.experiments.script import main

if __name__ == "__main__":
    sys.exit(main(["solver-contract"], __doc__.split("\n\n")[0]))
