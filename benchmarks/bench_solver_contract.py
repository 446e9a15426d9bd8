"""The solver contract in figures: false optima and time-limit overshoot.

``false-optimal``: on 200 generated ``priorities`` instances (20–60 jobs, 2 levels,
seeds 0..199) count the ``milp`` results that say ``optimal`` while a second
solve — ``milp`` without warm start, or CBC — finds a better objective.

``overshoot``: wall-clock seconds of ``solve`` on the 128-GPU, 8-switch ``circuits``
instance (seed 0) with ``milp`` at time limits 1 and 2 s.

``heuristics``: ``topoopt`` (128 servers, degree 8) and ``crux`` (100 jobs) with a
0.5 s time limit and without: the method's seconds (``runtime_s``), the objective and
what the limit cut (the wall time of ``solve`` adds ``evaluate``, which for ``crux`` is
a simulation of all 100 jobs).

Run from the repository root (it works on any checkout that has ``fabricopt``)::

    PYTHONPATH=$PWD python benchmarks/bench_solver_contract.py false-optimal
    PYTHONPATH=$PWD python benchmarks/bench_solver_contract.py overshoot
    PYTHONPATH=$PWD python benchmarks/bench_solver_contract.py heuristics
"""

from __future__ import annotations

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


def heuristics() -> None:
    cases = [("topoopt", fabricopt.generate("topology", seed=0, servers=128, degree=8,
                                            groups=1, mp_peers=4),
              ("candidates_scored", "candidates_total")),
             ("crux", fabricopt.generate("crux", seed=0, jobs=100, levels=8, tors=20,
                                         hosts_per_tor=10),
              ("corrections", "corrections_total", "orders_tried"))]
    for method, inst, fields in cases:
        for limit in (None, 0.5):
            began = time.perf_counter()
            result = fabricopt.solve(inst, method, time_limit=limit)
            wall = time.perf_counter() - began
            counts = ", ".join(f"{f} {result.info.get(f)}" for f in fields)
            print(f"{method} time_limit {limit}: runtime_s {result.runtime_s:.2f} "
                  f"(solve wall {wall:.2f} s), objective {result.objective:.6g}, {counts}"
                  + (f"; cut: {result.info['time_limit_exceeded']}"
                     if "time_limit_exceeded" in result.info else ""))


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("measure", choices=("false-optimal", "overshoot", "heuristics"))
    {"false-optimal": false_optimal, "overshoot": overshoot,
     "heuristics": heuristics}[parser.parse_args().measure]()
