"""The SimAI MoE workload on every fabric (BENCHMARKS.md ``## SimAI workload``): a thin
call of ``fabricopt reproduce simai``.

SimAI's example workload (``simai-moe``, the AICB file shipped with fabricopt) priced as
SimAI-Analytical does on every fabric at 416.6 Gbps per GPU at 384, 768 and 1536 GPUs
(the 384-GPU Elect-Cluster row beside SimAI-Analytical 1.7's own output), the bandwidth
sweep at 384 GPUs with its figure, and the iteration's traffic; see
:mod:`fabricopt.benchmarks.experiments.simai` for the parts and assumptions. Each point
is a harness task, so an interrupted run resumes where it stopped. One point by hand:
``fabricopt compare simai-moe --gpus N --fabrics NAME --switches 24 --max-hops N/2``.

Run from the repository root::

    python benchmarks/bench_simai.py            # the full experiment
    python benchmarks/bench_simai.py --quick    # 384 GPUs, four fabrics, two bandwidths
    python benchmarks/bench_simai.py --update BENCHMARKS.md   # and write its section
"""

from __future__ import annotations

import sys

from fabricopt.benchmarks.experiments.script import main

if __name__ == "__main__":
    sys.exit(main(["simai"], __doc__.split("\n\n")[0]))
