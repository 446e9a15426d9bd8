"""Benchmark of the ``wavelengths`` methods: speed on a large ring, gaps on small ones.

Run from the repository root::

    python benchmarks/bench_wavelengths.py            # about two minutes
    python benchmarks/bench_wavelengths.py --seeds 2 --small 10 --reps 1   # a quick look

It prints markdown for BENCHMARKS.md (``## wavelengths``):

1. Speed (issue 4): ``mcf`` and ``greedy`` on 128-node rings with W = 64 and
   max_hops = 16 (targets: under 1 s and under 0.2 s), with the time of the kind's fast
   count bound and of the count ILP, plus SiP-ML's own scale (1024 nodes, W = 80).
   Times are ``Result.runtime_s`` (the method call, LPs included; scoring excluded),
   median and max over instances of the best of ``--reps`` runs.
2. Gaps: ``mcf``, ``greedy`` and ``count-bound`` against the proven ``milp`` optimum on
   ``--small`` random small instances of two families — the generator's hybrid
   model/data-parallel traffic (dense: one model-parallel group, every GPU sending up
   to max_hops ahead), and uniform traffic (each pair within reach demanded with
   probability 0.6, 1-4 MB). Gap = ``(objective - optimum) / objective``.
3. Bound: how often the fast count bound equals the count ILP (and their runtimes).
4. Continuity: on ``--continuity`` random small forward-only instances, how often the
   optimum exceeds the count bound, and how often continuity alone makes an instance
   infeasible.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np


import fabricopt
from fabricopt.problems.wavelengths import (WavelengthsInstance, count_bound,
                                            infeasibility)
from fabricopt.benchmarks.metrics import primal_gap


def timed_solve(inst, method, reps, **options):
    """The result of the fastest of ``reps`` runs (all runs give the same answer)."""
    best = None
    for _ in range(reps):
        result = fabricopt.solve(inst, method, **options)
        if best is None or result.runtime_s < best.runtime_s:
            best = result
    return best


def fast_bound_time(inst, reps):
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        value = count_bound(inst)
        times.append(time.perf_counter() - start)
    return value, min(times)


def speed(seeds: int, reps: int) -> list[str]:
    configs = [
        ("128 nodes, W=64, max_hops=16, generator default (3 MP peers + DP)",
         dict(nodes=128, wavelengths=64, max_hops=16)),
        ("128 nodes, W=64, max_hops=16, dense (15 MP peers + DP)",
         dict(nodes=128, wavelengths=64, max_hops=16, mp_peers=15)),
        ("1024 nodes, W=80, max_hops=16 (SiP-ML's scale), generator default",
         dict(nodes=1024, wavelengths=80, max_hops=16)),
    ]
    lines = ["| instances | pairs | method | median s | max s | mean gap to bound | failures |",
             "|---|---|---|---|---|---|---|"]
    for label, sizes in configs:
        instances = [fabricopt.generate("wavelengths", seed=s, **sizes) for s in range(seeds)]
        pairs = statistics.median(len(i.demanded) for i in instances)
        rows = {}
        for method in ("mcf", "greedy"):
            results = [timed_solve(inst, method, reps) for inst in instances]
            rows[method] = results
        results = [fast_bound_time(inst, reps) for inst in instances]
        times = [t for _, t in results]
        lines.append(f"| {label} | {pairs:.0f} | count bound (kind's, fast) | "
                     f"{statistics.median(times):.4f} | {max(times):.4f} | - | - |")
        for method, results in rows.items():
            ok = [r for r in results if r.status == "feasible"]
            times = [r.runtime_s for r in results]
            gap = statistics.mean(r.gap for r in ok) if ok else float("nan")
            lines.append(f"| | | {method} | {statistics.median(times):.3f} | {max(times):.3f} | "
                         f"{gap:.2%} | {len(results) - len(ok)} |")
        print(f"  speed: {label} done", file=sys.stderr, flush=True)
    return lines


def uniform_instance(seed: int, nodes: int, wavelengths: int, max_hops: int,
                     density: float = 0.6) -> WavelengthsInstance:
    """Each pair within reach demanded with probability ``density``, 1-4 MB each."""
    rng = np.random.default_rng(seed)
    traffic = np.zeros((nodes, nodes))
    for i in range(nodes):
        for j in range(nodes):
            if i != j and min((j - i) % nodes, (i - j) % nodes) <= max_hops \
                    and rng.random() < density:
                traffic[i, j] = float(np.round(rng.uniform(1e6, 4e6)))
    return WavelengthsInstance(nodes, wavelengths, 25.0, max_hops, traffic.tolist())


def small_instances(count: int):
    """(family, instance) pairs: ``count`` hybrid and ``count`` uniform feasible ones."""
    out = []
    for s in range(count):
        n = (8, 10, 12)[s % 3]
        w = (3, 4, 6)[(s // 3) % 3]
        h = (n // 2, n // 2 - 1)[(s // 9) % 2]
        out.append(("hybrid", fabricopt.generate("wavelengths", seed=s, nodes=n, wavelengths=w,
                                                 max_hops=h, group=n, mp_peers=h)))
    seed = 0
    found = 0
    while found < count:
        n = (8, 10, 12)[seed % 3]
        w = (4, 6, 8)[(seed // 3) % 3]
        h = (2, 3)[(seed // 9) % 2]
        inst = uniform_instance(seed, n, w, h)
        seed += 1
        if infeasibility(inst) is None:
            out.append(("uniform", inst))
            found += 1
    return out


def gaps(count: int, time_limit: float) -> list[str]:
    lines = ["| family | instances | method | mean gap | max gap | optimal | no schedule | "
             "median s |", "|---|---|---|---|---|---|---|---|"]
    per = {}
    for family, inst in small_instances(count):
        milp = fabricopt.solve(inst, "milp", time_limit=time_limit)
        entry = per.setdefault(family, {"n": 0, "milp": [], "unproved": 0})
        if milp.status != "optimal":
            entry["unproved"] += 1
            continue
        entry["n"] += 1
        entry["milp"].append(milp.runtime_s)
        best = milp.objective
        for method in ("mcf", "greedy", "count-bound"):
            r = fabricopt.solve(inst, method)
            value = r.bound if method == "count-bound" else r.objective
            stats = entry.setdefault(method, {"gaps": [], "none": 0, "times": []})
            stats["times"].append(r.runtime_s)
            if value is None:
                stats["none"] += 1
                continue
            stats["gaps"].append(primal_gap(value, best))
        print(f"  gaps: {family} {entry['n']} done", file=sys.stderr, flush=True)
    for family, entry in per.items():
        times = entry["milp"]
        lines.append(f"| {family} | {entry['n']} | milp (proven optimum) | 0 | 0 | {entry['n']} | "
                     f"{entry['unproved']} unproved | {statistics.median(times):.3f} |")
        for method in ("mcf", "greedy", "count-bound"):
            s = entry[method]
            g = s["gaps"]
            optimal = sum(x <= 1e-9 for x in g)
            lines.append(f"| | | {method} | {statistics.mean(g):.2%} | {max(g):.2%} | {optimal} | "
                         f"{s['none']} | {statistics.median(s['times']):.4f} |")
    return lines


def bound_agreement(seeds: int) -> list[str]:
    configs = [dict(nodes=32, wavelengths=16, max_hops=16), dict(nodes=16, wavelengths=8, max_hops=8),
               dict(nodes=64, wavelengths=64, max_hops=32),
               dict(nodes=128, wavelengths=64, max_hops=16),
               dict(nodes=32, wavelengths=64, max_hops=16, group=32, mp_peers=16)]
    lines = ["| instances | two-way pairs | fast = ILP | fast median s | ILP median s | ILP max s |",
             "|---|---|---|---|---|---|"]
    for sizes in configs:
        equal, fast_t, ilp_t, two_way = 0, [], [], []
        for s in range(seeds):
            inst = fabricopt.generate("wavelengths", seed=s, **sizes)
            _, _, _, cw, ccw = inst.pairs
            two_way.append(int(((cw <= inst.max_hops) & (ccw <= inst.max_hops)).sum()))
            value, t = fast_bound_time(inst, 1)
            fast_t.append(t)
            ilp = fabricopt.solve(inst, "count-bound", time_limit=60)
            ilp_t.append(ilp.runtime_s)
            equal += ilp.bound is not None and abs(ilp.bound - value) <= 1e-9 * ilp.bound
        label = ", ".join(f"{k}={v}" for k, v in sizes.items())
        lines.append(f"| {label} | {statistics.median(two_way):.0f} | {equal}/{seeds} | "
                     f"{statistics.median(fast_t):.4f} | {statistics.median(ilp_t):.3f} | "
                     f"{max(ilp_t):.3f} |")
        print(f"  bound: {label} done", file=sys.stderr, flush=True)
    return lines


def continuity(trials: int) -> list[str]:
    """Where does wavelength continuity cost anything? Forward-only random instances
    (every demand i -> i+d, d <= max_hops < N/2, so all go clockwise)."""
    rng = np.random.default_rng(0)
    kept = worse = infeasible = 0
    for _ in range(trials):
        n = int(rng.integers(5, 8))
        w = int(rng.integers(2, 4))
        h = int(rng.integers(2, (n - 1) // 2 + 1))
        traffic = np.zeros((n, n))
        for i in range(n):
            for d in range(1, h + 1):
                if rng.random() < 0.6:
                    traffic[i, (i + d) % n] = float(rng.choice([1e6, 2e6, 3e6]))
        inst = WavelengthsInstance(n, w, 25.0, h, traffic.tolist())
        if infeasibility(inst) is not None:
            continue
        kept += 1
        milp = fabricopt.solve(inst, "milp")
        if milp.status == "infeasible":
            infeasible += 1
        elif milp.objective > count_bound(inst) * (1 + 1e-9):
            worse += 1
    return [f"{kept} forward-only instances (nodes 5-7, W 2-3) that the count relaxation "
            f"serves: the optimum exceeds the count bound on {worse}; continuity makes "
            f"{infeasible} infeasible."]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=5, help="instances per large config")
    parser.add_argument("--reps", type=int, default=3, help="runs per timing (best is kept)")
    parser.add_argument("--small", type=int, default=30, help="small instances per family")
    parser.add_argument("--time-limit", type=float, default=120.0, help="milp seconds")
    parser.add_argument("--continuity", type=int, default=1000,
                        help="random forward-only instances for the continuity search")
    args = parser.parse_args(argv)
    print("### Speed\n")
    print("\n".join(speed(args.seeds, args.reps)))
    print("\n### Gap to the proven optimum (small instances)\n")
    print("\n".join(gaps(args.small, args.time_limit)))
    print("\n### The fast count bound against the count ILP\n")
    print("\n".join(bound_agreement(args.seeds)))
    print("\n### What wavelength continuity costs\n")
    print("\n".join(continuity(args.continuity)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
