"""Runtime of ``exact`` vs ``milp`` (and ``greedy``'s gap) on SiP-OCS circuit assignment.

Run: ``python benchmarks/bench_circuits.py [--seeds 5] [--gpus 32] [--switches 8]``.
Prints a markdown table; the figures in BENCHMARKS.md come from it.
"""

from __future__ import annotations

import argparse
import platform
import statistics

import fabricopt


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--gpus", type=int, default=32)
    parser.add_argument("--switches", type=int, default=8)
    parser.add_argument("--time-limit", type=float, default=600.0)
    args = parser.parse_args()

    rows = []
    for seed in range(args.seeds):
        inst = fabricopt.generate("circuits", seed=seed, gpus=args.gpus, switches=args.switches)
        exact = fabricopt.solve(inst, "exact")
        milp_cold = fabricopt.solve(inst, "milp", time_limit=args.time_limit, warm_start=False)
        milp_warm = fabricopt.solve(inst, "milp", time_limit=args.time_limit)
        greedy = fabricopt.solve(inst, "greedy")
        assert milp_cold.status != "optimal" or abs(milp_cold.objective - exact.objective) \
            <= 1e-9 * exact.objective, "exact and milp disagree"
        rows.append((seed, exact, milp_cold, milp_warm, greedy))

    print(f"circuits, {args.gpus} GPUs, {args.switches} switches, "
          f"{platform.processor() or platform.machine()}, HiGHS 1 thread\n")
    print("| seed | optimum (ms) | exact (s) | milp cold (s) | milp cold status | "
          "milp warm (s) | greedy gap |")
    print("|---|---|---|---|---|---|---|")
    for seed, e, mc, mw, g in rows:
        gap = (g.objective - e.objective) / g.objective
        print(f"| {seed} | {e.objective * 1e3:.4f} | {e.runtime_s:.4f} | {mc.runtime_s:.2f} | "
              f"{mc.status} | {mw.runtime_s:.2f} | {gap:.2%} |")
    print(f"\nmedian exact {statistics.median(r[1].runtime_s for r in rows):.4f} s, "
          f"median milp (cold) {statistics.median(r[2].runtime_s for r in rows):.2f} s, "
          f"median milp (warm) {statistics.median(r[3].runtime_s for r in rows):.2f} s")


if __name__ == "__main__":
    main()
