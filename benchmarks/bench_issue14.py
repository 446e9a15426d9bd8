"""Issue 14's figures: TopoOpt's mirrored rings, ring shares and candidates; the exact
priority compression; the generator families that separate methods.

Run from the repository root: ``python benchmarks/bench_issue14.py`` (``--help``;
about five minutes on a loaded 2-core machine). It prints markdown for BENCHMARKS.md:

1. ``topology``: the primal gap to the ``milp`` optimum on the quick suite's original
   rows (s6-d3, s6-d4, s8-mp) of ``topoopt`` with the paper's allocation only
   (``candidates=False``), ``topoopt`` and ``ring``.
2. ``topology``: 128 servers, degree 8, one group, 4 MP peers: ``topoopt`` against ``ring``.
3. ``priorities``: ``exact`` against the ``crux`` DP and the ``milp`` at 5,000 jobs, K = 8.
4. ``crux``: ``compression="dp"`` against ``"exact"`` on the §4.4 microbenchmark cases
   and on 20-job cases with 8 levels (utilization, and the cut of the contention DAG).
5. The new families: every method's gap to the ``milp`` optimum where it proves it.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

# Benchmark this checkout, not whatever fabricopt is installed.

import fabricopt
from fabricopt.benchmarks.metrics import primal_gap
from fabricopt.heuristics.compression import cut_value
from fabricopt.heuristics.crux import contention_dag, crux_plan
from fabricopt.problems.topology import lower_bound

TOPOLOGY_HEURISTICS = ["topoopt", "ring", "random-regular", "ocs-reconfig"]


gap = primal_gap  # the harness's primal gap, |p - p*| / max(|p|, |p*|), 0 when both are 0


def bench_topology_quick() -> None:
    rows = [({"servers": 6, "degree": 3}, (0, 1, 2)), ({"servers": 6, "degree": 4}, (0, 1, 2)),
            ({"servers": 8, "degree": 3, "mp_peers": 4, "mp_bytes": 5e8}, (0,))]
    runs = [("topoopt, candidates=False (paper allocation)", "topoopt", {"candidates": False}),
            ("topoopt", "topoopt", {}), ("ring", "ring", {})]
    gaps = {label: [] for label, _, _ in runs}
    for sizes, seeds in rows:
        for seed in seeds:
            inst = fabricopt.generate("topology", seed, **sizes)
            best = fabricopt.solve(inst, "milp", seed=seed, time_limit=60)
            for label, method, options in runs:
                r = fabricopt.solve(inst, method, seed=seed, **options)
                gaps[label].append(gap(r.objective, best.objective))
    print("### topology: the quick suite's original 7 instances (s6-d3, s6-d4, s8-mp)\n")
    print("| method | mean gap to milp | max gap |")
    print("|---|---|---|")
    for label, values in gaps.items():
        print(f"| `{label}` | {100 * statistics.mean(values):.2f} % | {100 * max(values):.2f} % |")
    print()


def bench_topology_128(seeds) -> None:
    print("### topology: 128 servers, degree 8, one group, 4 MP peers per server\n")
    print("| seed | topoopt (ms) | runtime (s) | ring (ms) | ring / topoopt | lower bound (ms) |")
    print("|---|---|---|---|---|---|")
    for seed in seeds:
        inst = fabricopt.generate("topology", seed, servers=128, degree=8, groups=1, mp_peers=4)
        t = fabricopt.solve(inst, "topoopt", seed=seed)
        r = fabricopt.solve(inst, "ring", seed=seed)
        print(f"| {seed} | {t.objective * 1e3:.2f} | {t.runtime_s:.2f} | {r.objective * 1e3:.2f} | "
              f"{r.objective / t.objective:.2f} | {lower_bound(inst) * 1e3:.2f} |")
    print()


def bench_priorities(seeds, jobs: int, levels: int) -> None:
    print(f"### priorities: {jobs:,} jobs, K = {levels}\n")
    print("| seed | edges | method | status | cut | gap to exact | runtime (s) |")
    print("|---|---|---|---|---|---|---|")
    for seed in seeds:
        inst = fabricopt.generate("priorities", seed, jobs=jobs, levels=levels)
        exact = fabricopt.solve(inst, "exact")
        for method in ("exact", "milp", "crux"):
            r = exact if method == "exact" else fabricopt.solve(inst, method, seed=seed)
            print(f"| {seed} | {len(inst.edges)} | `{method}` | {r.status} | {r.objective:.1f} | "
                  f"{100 * gap(r.objective, exact.objective):.2f} % | {r.runtime_s:.2f} |")
    print()


def bench_crux_compression(label: str, cases) -> None:
    util = {"dp": [], "exact": []}
    cuts = {"dp": [], "exact": []}
    for inst, seed in cases:
        path, priority, intensity = crux_plan(inst)
        edges = contention_dag(inst, path, priority, intensity)
        for compression in util:
            r = fabricopt.solve(inst, "crux", seed=seed, compression=compression)
            util[compression].append(r.objective)
            cuts[compression].append(cut_value(edges, [r.solution.level[j] for j in inst.ids]))
    diff = [e - d for e, d in zip(util["exact"], util["dp"])]
    better_cut = sum(e > d + 1e-9 for e, d in zip(cuts["exact"], cuts["dp"]))
    print(f"| {label} | {len(diff)} | {100 * statistics.mean(util['dp']):.3f} % | "
          f"{100 * statistics.mean(util['exact']):.3f} % | {100 * statistics.mean(diff):+.3f} pp | "
          f"{100 * min(diff):+.3f} / {100 * max(diff):+.3f} pp | {better_cut} |")


def bench_families(kind: str, rows, methods) -> None:
    print(f"### {kind}: the new families against the proven optimum\n")
    print("| row | instances | optimum / cheap bound | " + " | ".join(f"`{m}` mean / max gap"
                                                           for m in methods) + " |")
    print("|---|---|---|" + "---|" * len(methods))
    for name, sizes, seeds in rows:
        gaps = {m: [] for m in methods}
        ratios, proved = [], 0
        for seed in seeds:
            inst = fabricopt.generate(kind, seed, **sizes)
            best = fabricopt.solve(inst, "milp", seed=seed, time_limit=120)
            if best.status != "optimal":
                continue
            proved += 1
            cheap = fabricopt.problems.get_kind(kind).bound(inst)
            ratios.append(best.objective / cheap if cheap else float("nan"))
            for m in methods:
                r = fabricopt.solve(inst, m, seed=seed)
                gaps[m].append(gap(r.objective, best.objective))
        cells = " | ".join(f"{100 * statistics.mean(v):.1f} / {100 * max(v):.1f} %" if v else "-"
                           for v in gaps.values())
        ratio = f"{min(ratios):.3f}-{max(ratios):.3f}" if ratios else "-"
        print(f"| `{name}` {sizes} | {proved}/{len(seeds)} proved | {ratio} | {cells} |")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=5000)
    parser.add_argument("--skip-slow", action="store_true",
                        help="skip the 5,000-job and 128-server sections")
    args = parser.parse_args()
    start = time.perf_counter()
    print(f"Python {platform.python_version()}, {platform.machine()}, "
          f"fabricopt {fabricopt.__version__}\n")
    bench_topology_quick()
    if not args.skip_slow:
        bench_topology_128((0, 1, 2))
        bench_priorities((0, 1), args.jobs, 8)
    print("### crux: compression='dp' against 'exact'\n")
    print("| cases | n | dp utilization | exact utilization | mean difference | min / max | "
          "cases where exact cuts more |")
    print("|---|---|---|---|---|---|---|")
    gen = fabricopt.generate
    bench_crux_compression("microbenchmark: jobs=5, levels=3, seeds 0-9",
                           [(gen("crux", s, jobs=5, levels=3), s) for s in range(10)])
    bench_crux_compression("jobs=20, levels=8, hosts_per_tor=10, seeds 0-4",
                           [(gen("crux", s, jobs=20, levels=8, hosts_per_tor=10), s)
                            for s in range(5)])
    print()
    bench_families("topology", [
        ("a2a-s6-d3", {"servers": 6, "degree": 3, "mp_peers": 5, "mp_bytes": 5e8}, (0, 1, 2)),
        ("a2a-s6-d2", {"servers": 6, "degree": 2, "mp_peers": 5, "mp_bytes": 3e8}, (0, 1, 2)),
        ("groups-s6-d2", {"servers": 6, "degree": 2, "groups": 3, "mp_peers": 5,
                          "mp_bytes": 1e8}, (0, 1, 2)),
    ], TOPOLOGY_HEURISTICS)
    bench_families("wavelengths", [
        ("long-reach", {"nodes": 16, "wavelengths": 8, "max_hops": 6, "mp_peers": 4,
                        "family": "long-reach"}, (0, 1, 2, 3)),
        ("long-reach-n32-w16", {"nodes": 32, "wavelengths": 16, "max_hops": 8, "mp_peers": 4,
                                "family": "long-reach"}, (0, 1, 2)),
        ("small (hybrid, for comparison)", {"nodes": 10, "wavelengths": 4, "max_hops": 4},
         (0, 1, 2)),
    ], ["mcf", "greedy"])
    bench_families("circuits", [
        ("skewed", {"gpus": 16, "switches": 4, "skew": 3.0}, (0, 1, 2)),
    ], ["exact", "greedy"])
    print(f"(whole script: {time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
