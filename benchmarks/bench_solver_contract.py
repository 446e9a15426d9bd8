"""The solver contract in figures: false optima and time-limit overshoot.

``false-optimal``: on 200 generated ``priorities`` instances (20–60 jobs, 2 levels,
seeds 0..199) count the ``milp`` results that say ``optimal`` while a second
solve — ``milp`` without warm start, or CBC — finds a better objective.

``overshoot``: wall-clock seconds of ``solve`` on the 128-GPU, 8-switch ``circuits``
instance (seed 0) with ``milp`` at time limits 1 and 2 s.

Run from the repository root (it works on any checkout that has ``fabricopt``)::

    PYTHONPATH=$PWD python benchmarks/bench_solver_contract.py false-optimal
    PYTHONPATH=$PWD python benchmarks/bench_solver_contract.py overshoot
"""

from __future__ import annotations

import sys
import time

import fabricopt

_RTOL = 1e-6


def false_optimal(count: int = 200) -> None:
    false, optimal = [], 0
    for seed in range(count):
        jobs = 20 + seed % 41
        inst = fabricopt.generate("priorities", seed=seed, jobs=jobs, levels=2)
        claim = fabricopt.solve(inst, "milp")
        if claim.status != "optimal":
            continue
        optimal += 1
        others = [fabricopt.solve(inst, "milp", warm_start=False),
                  fabricopt.solve(inst, "milp", backend="cbc")]
        best = max(r.objective for r in others if r.objective is not None)
        if best > claim.objective * (1 + _RTOL) + 1e-9:  # priorities maximizes
            false.append((seed, jobs, claim.objective, best))
    print(f"{count} priorities instances (20-60 jobs, 2 levels): {optimal} claimed optimal, "
          f"{len(false)} of them beaten by another solve")
    for seed, jobs, claimed, best in false:
        print(f"  seed {seed} jobs {jobs}: claimed {claimed:.3f}, best {best:.3f}")


def overshoot() -> None:
    inst = fabricopt.generate("circuits", seed=0, gpus=128, switches=8)
    for limit in (1.0, 2.0):
        began = time.perf_counter()
        result = fabricopt.solve(inst, "milp", time_limit=limit)
        wall = time.perf_counter() - began
        print(f"circuits 128x8 milp time_limit {limit:g} s: wall {wall:.2f} s "
              f"(runtime_s {result.runtime_s:.2f}, status {result.status}, "
              f"build {result.info.get('model_build_s', float('nan')):.2f} s, "
              f"solver {result.info.get('solver_s', float('nan')):.2f} s)")


if __name__ == "__main__":
    {"false-optimal": false_optimal, "overshoot": overshoot}[sys.argv[1]]()
