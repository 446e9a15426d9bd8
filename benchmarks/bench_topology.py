"""Benchmarks of the ``topology`` kind (issue 5), printed as markdown for BENCHMARKS.md.

1. ``coin_change_mod`` for n = 65,536 with 8 coins (4 jumps and their mirrors).
2. ``topoopt`` on 128 servers of degree 8: one 128-member AllReduce and sparse MP traffic.
3. The primal gap of every heuristic to the ``milp`` optimum on random 6-server instances.
4. ``milp`` on 8 servers: status, bound and runtime under a time limit.

Run from the repository root: ``python benchmarks/bench_topology.py`` (``--help``).
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

# Benchmark this checkout, not whatever fabricopt is installed.

import fabricopt
from fabricopt.heuristics.topoopt import (coin_change_mod, select_permutations,
                                          totient_perms)
from fabricopt.problems.topology import generate, lower_bound
from fabricopt.benchmarks.metrics import primal_gap

HEURISTICS = ["topoopt", "ring", "random-regular", "ocs-reconfig"]


def timed(fn, repeat: int) -> tuple[float, list]:
    """Median wall-clock seconds of ``repeat`` calls, and their results."""
    times, results = [], []
    for _ in range(repeat):
        start = time.perf_counter()
        results.append(fn())
        times.append(time.perf_counter() - start)
    return statistics.median(times), results


def bench_coin_change(repeat: int) -> None:
    n = 65536
    jumps = select_permutations(totient_perms(n), 4)
    coins = sorted(set(jumps) | {n - p for p in jumps})
    seconds, tables = timed(lambda: coin_change_mod(n, coins, bidirectional=False), repeat)
    table = tables[-1]
    print(f"### coin_change_mod, n = {n}, coins = {coins}\n")
    print(f"median of {repeat}: **{seconds:.3f} s** (target < 1 s); "
          f"diameter {table.diameter}, mean hops {table.mean_hops:.3f}\n")


def bench_topoopt_128(repeat: int, seed: int) -> None:
    inst = generate(seed, servers=128, degree=8, groups=1, mp_peers=4)
    print("### 128 servers, degree 8, one 128-member AllReduce, 4 MP peers per server\n")
    print(f"`generate('topology', seed={seed}, servers=128, degree=8, groups=1, mp_peers=4)`; "
          f"lower bound {lower_bound(inst) * 1e3:.2f} ms\n")
    print("| method | median runtime (s) | busiest link (ms) | / lower bound | mean hops |")
    print("|---|---|---|---|---|")
    runs = [(m, m, {}) for m in HEURISTICS]
    runs.insert(1, ("topoopt", "topoopt, mp_degree=0 (artifact)", {"mp_degree": 0}))
    for method, label, options in runs:
        _, results = timed(lambda: fabricopt.solve(inst, method, seed=seed, **options), repeat)
        result = results[-1]
        assert result.status == "feasible", result.info
        runtime = statistics.median(r.runtime_s for r in results)
        print(f"| `{label}` | {runtime:.3f} | {result.objective * 1e3:.2f} | "
              f"{result.objective / lower_bound(inst):.3f} | {result.info['mean_hops']:.3f} |")
    print("\n(runtime = the method alone, as `Result.runtime_s`; `topoopt` target < 5 s)\n")


def bench_gaps(instances: int, servers: int) -> None:
    rows = {m: {"gap": [], "time": [], "hops": []} for m in HEURISTICS + ["milp"]}
    statuses = []
    for seed in range(instances):
        degree = 3 + seed % 2
        inst = generate(seed, servers=servers, degree=degree)
        exact = fabricopt.solve(inst, "milp")
        statuses.append(exact.status)
        assert exact.status == "optimal", exact.info
        best = exact.objective
        for method in HEURISTICS + ["milp"]:
            r = exact if method == "milp" else fabricopt.solve(inst, method)
            rows[method]["gap"].append(primal_gap(r.objective, best))
            rows[method]["time"].append(r.runtime_s)
            rows[method]["hops"].append(r.info["mean_hops"])
    print(f"### Gap to the `milp` optimum, {instances} instances of {servers} servers\n")
    print(f"`generate('topology', seed=s, servers={servers}, degree=3 + s % 2)` for s = 0..{instances - 1} "
          f"(two AllReduce groups, 2 MP peers per server); `milp` status: "
          f"{statuses.count('optimal')}/{instances} optimal.\n")
    print("| method | mean gap | max gap | optimal (gap < 1e-6) | mean runtime (s) | max runtime (s) | mean hops |")
    print("|---|---|---|---|---|---|---|")
    for method, row in rows.items():
        hits = sum(g < 1e-6 for g in row["gap"])
        print(f"| `{method}` | {statistics.mean(row['gap']):.3f} | {max(row['gap']):.3f} | "
              f"{hits}/{instances} | {statistics.mean(row['time']):.3f} | {max(row['time']):.3f} | "
              f"{statistics.mean(row['hops']):.3f} |")
    print("\ngap = (heuristic - optimum) / heuristic, the primal gap of docs/benchmarks.rst.\n")


def bench_milp_8(instances: int, time_limit: float) -> None:
    print(f"### `milp` on 8 servers, time limit {time_limit:g} s\n")
    print(f"`generate('topology', seed=s, servers=8, degree=3, mp_peers=4, mp_bytes=5e8)` "
          f"for s = 0..{instances - 1} (MP-heavy: the hard case for rings)\n")
    print("| seed | status | busiest link (ms) | bound (ms) | gap | runtime (s) | nodes | topoopt (ms) |")
    print("|---|---|---|---|---|---|---|---|")
    for seed in range(instances):
        inst = generate(seed, servers=8, degree=3, mp_peers=4, mp_bytes=5e8)
        r = fabricopt.solve(inst, "milp", time_limit=time_limit)
        heuristic = fabricopt.solve(inst, "topoopt")
        print(f"| {seed} | {r.status} | {r.objective * 1e3:.2f} | {r.bound * 1e3:.2f} | "
              f"{r.gap:.4f} | {r.runtime_s:.2f} | {r.info.get('nodes')} | "
              f"{heuristic.objective * 1e3:.2f} |")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--instances", type=int, default=20)
    parser.add_argument("--servers", type=int, default=6)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--eight", type=int, default=5, help="8-server milp instances")
    parser.add_argument("--time-limit", type=float, default=60.0)
    args = parser.parse_args()
    print(f"Python {platform.python_version()}, {platform.machine()}, "
          f"fabricopt {fabricopt.__version__}\n")
    bench_coin_change(args.repeat)
    bench_topoopt_128(args.repeat, args.seed)
    bench_gaps(args.instances, args.servers)
    bench_milp_8(args.eight, args.time_limit)


if __name__ == "__main__":
    main()
