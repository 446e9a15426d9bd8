"""Bounds benchmarks (issue 17): how far the bounds beside heuristic answers are from
the optimum, and the primal–dual gaps they certify at the papers' scale.

Run with fabricopt installed (``pip install -e .`` in a checkout)::

    python benchmarks/bench_bounds.py --optimum     # 30 tiny instances: bound vs optimum
    python benchmarks/bench_bounds.py --families    # 500-op and 2,000-op placement families
    python benchmarks/bench_bounds.py --topology    # topoopt at 32 and 128 servers

It prints markdown tables; BENCHMARKS.md (``## bounds``) records them. "Before" is the
bound fabricopt reported until issue 17, ``max(critical path, total compute / gpus)``
for placement and the port-load / volume bound for topology.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time


import fabricopt
from fabricopt.problems import placement, topology
from fabricopt.problems.placement_bounds import critical_path_bound, load_bound
from fabricopt.solvers.result import relative_gap
from fabricopt.solvers.topology_bounds import relaxation_bound


def _old_placement_bound(instance) -> float:
    return max(critical_path_bound(instance), load_bound(instance))


def optimum_table(count: int = 30) -> str:
    """Old and new placement bounds against the MILP optimum of ``bench_placement --gap``'s
    instances (``generate(seed, ops=10 + seed % 3, gpus=4, max_peers=1 + seed % 2)``)."""
    old, new, sources, proven = [], [], {}, 0
    for seed in range(count):
        inst = placement.generate(seed, ops=10 + seed % 3, gpus=4, max_peers=1 + seed % 2)
        exact = fabricopt.solve(inst, "milp", time_limit=120)
        if exact.status != "optimal":
            continue
        proven += 1
        bound = placement.lower_bound(inst)
        assert float(bound) <= exact.objective * (1 + 1e-9), (seed, float(bound))
        old.append(relative_gap(exact.objective, _old_placement_bound(inst)))
        new.append(relative_gap(exact.objective, float(bound)))
        sources[bound.source] = sources.get(bound.source, 0) + 1
    rows = ["| bound | mean gap to optimum | max gap | equal to optimum |", "|---|---|---|---|"]
    for name, gaps in (("before: max(critical path, load)", old), ("after: lower_bound", new)):
        rows.append(f"| {name} | {statistics.mean(gaps):.4f} | {max(gaps):.4f} | "
                    f"{sum(g <= 1e-9 for g in gaps)}/{len(gaps)} |")
    named = ", ".join(f"{k} {v}" for k, v in sorted(sources.items(), key=lambda kv: -kv[1]))
    return "\n".join(rows + ["", f"{proven}/{count} proven optimal; sources: {named}"])


def families_table(seeds=(0, 1, 2)) -> str:
    """``sipml-ls`` (30 s, as in the quick suite's large row) and its PD gap with the old
    and the new bound on the 500-op and 2,000-op families."""
    rows = ["| family | seed | sipml-ls makespan ms | before: bound ms, PD gap | "
            "after: bound ms, PD gap | source | bound s |", "|---|---|---|---|---|---|---|"]
    for ops, gpus, peers in ((500, 16, 3), (2000, 32, 7)):
        for seed in seeds:
            inst = placement.generate(seed, ops=ops, gpus=gpus, max_peers=peers)
            began = time.perf_counter()
            bound = placement.lower_bound(inst)
            bound_s = time.perf_counter() - began
            r = fabricopt.solve(inst, "sipml-ls", time_limit=30.0, seed=seed)
            old = _old_placement_bound(inst)
            rows.append(
                f"| {ops}-op/{gpus}-GPU/{peers}-peer | {seed} | {1e3 * r.objective:.3f} | "
                f"{1e3 * old:.3f}, {relative_gap(r.objective, old):.1%} | "
                f"{1e3 * r.bound:.3f}, {r.gap:.1%} | {r.info['bound_source']} | {bound_s:.2f} |")
    return "\n".join(rows)


def topology_table(sizes=(32, 128), seeds=(0, 1), lp_commodities=None) -> str:
    """``topoopt``'s PD gap at the scale rows' sizes, and the LP relaxation on seed 0
    (``lp_commodities``: servers -> commodities; all sources at 32, 8 merged at 128)."""
    lp_commodities = {32: None, 128: 8} if lp_commodities is None else lp_commodities
    rows = ["| servers | seed | topoopt time s | bound s (source) | PD gap | "
            "LP relaxation s (commodities) | LP solve s |", "|---|---|---|---|---|---|---|"]
    for n in sizes:
        for seed in seeds:
            inst = topology.generate(seed, servers=n, degree=8, groups=1, mp_peers=4)
            r = fabricopt.solve(inst, "topoopt", seed=seed)
            lp = lp_s = "-"
            if n in lp_commodities and seed == seeds[0]:
                began = time.perf_counter()
                value = relaxation_bound(inst, commodities=lp_commodities[n])
                lp_s = f"{time.perf_counter() - began:.1f}"
                lp = "-" if value is None else f"{value:.5f} ({lp_commodities[n] or 'all'})"
            rows.append(f"| {n} | {seed} | {r.objective:.5f} | {r.bound:.5f} "
                        f"({r.info['bound_source']}) | {r.gap:.1%} | {lp} | {lp_s} |")
    return "\n".join(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--optimum", action="store_true")
    parser.add_argument("--families", action="store_true")
    parser.add_argument("--topology", action="store_true")
    args = parser.parse_args(argv)
    chosen = [t for t, on in ((optimum_table, args.optimum), (families_table, args.families),
                              (topology_table, args.topology)) if on]
    for table in chosen or (optimum_table, families_table, topology_table):
        print(table(), "\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
