"""The ``wavelengths`` experiment: SiP-Ring wavelength scheduling.

1. Speed: ``mcf`` and ``greedy`` on 128-node rings with W = 64 and max_hops = 16
   (targets: under 1 s and under 0.2 s) and at SiP-ML's scale (1,024 nodes, W = 80),
   beside the CPU time of the kind's fast count bound.
2. Gaps: ``mcf``, ``greedy`` and ``count-bound`` against the proven ``milp`` optimum
   on small instances of two families — the generator's hybrid model/data-parallel
   traffic with one model-parallel group spanning the ring, and uniform traffic (each
   pair within reach demanded with probability 0.6, 1-4 MB) — and on the generator's
   long-reach family (demands just within ``max_hops``).
3. Bound: how often the fast count bound equals the count ILP (``count-bound``).
4. Continuity: on random small forward-only instances, how often the optimum exceeds
   the count bound, and how often continuity alone makes an instance infeasible.

References
----------
.. [1] M. Khani et al., "SiP-ML", SIGCOMM 2021, §3.3 (SiP-Ring, the count relaxation
   without wavelength continuity).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from fabricopt.bench.tasks import TaskSpec, register_task
from fabricopt.problems.tolerances import CERTIFY_RTOL
from fabricopt.bench.experiments import Experiment, markdown_table, register_experiment, write_csv
from fabricopt.bench.experiments.comparisons import (BUILDERS, CPU_NOTE, EXTRAS, compare_spec,
                                                     cpu_timed, fmt_pct, fmt_s, method_stats,
                                                     records_of)

KIND = "wavelengths"
FAST = ("mcf", "greedy")


def uniform_instance(seed: int, density: float = 0.6):
    """Small uniform traffic: each pair within reach demanded with probability
    ``density``, 1-4 MB; nodes 8/10/12, W 4/6/8, max_hops 2/3 cycling with the seed."""
    from fabricopt.problems.wavelengths import WavelengthsInstance

    nodes, w, hops = (8, 10, 12)[seed % 3], (4, 6, 8)[(seed // 3) % 3], (2, 3)[(seed // 9) % 2]
    rng = np.random.default_rng(seed)
    traffic = np.zeros((nodes, nodes))
    for i in range(nodes):
        for j in range(nodes):
            if i != j and min((j - i) % nodes, (i - j) % nodes) <= hops \
                    and rng.random() < density:
                traffic[i, j] = float(np.round(rng.uniform(1e6, 4e6)))
    return WavelengthsInstance(nodes, w, 25.0, hops, traffic.tolist())


def hybrid_instance(seed: int):
    """The generator's hybrid traffic, one model-parallel group spanning the ring, every
    GPU sending up to max_hops ahead; nodes 8/10/12, W 3/4/6, max_hops n/2 or n/2 - 1."""
    from fabricopt.problems import generate

    n, w = (8, 10, 12)[seed % 3], (3, 4, 6)[(seed // 3) % 3]
    h = (n // 2, n // 2 - 1)[(seed // 9) % 2]
    return generate(KIND, seed=seed, nodes=n, wavelengths=w, max_hops=h, group=n, mp_peers=h)


BUILDERS["wavelengths-uniform"] = lambda seed: uniform_instance(seed)
BUILDERS["wavelengths-hybrid"] = lambda seed: hybrid_instance(seed)


def _fast_bound(instance, repeats: int) -> dict:
    from fabricopt.bounds.wavelengths import count_bound

    value, cpu_s = cpu_timed(lambda: count_bound(instance), repeats)
    return {"fast_bound": float(value), "fast_bound_cpu_s": cpu_s,
            "pairs": len(instance.demanded)}


def _two_way(instance, repeats: int) -> dict:
    _, _, _, cw, ccw = instance.pairs
    return {"two_way": int(((cw <= instance.max_hops) & (ccw <= instance.max_hops)).sum())}


def _feasible_only(instance, repeats: int) -> dict:
    from fabricopt.problems.wavelengths import infeasibility

    reason = infeasibility(instance)
    return {} if reason is None else {"skip": str(reason)}


EXTRAS.update({"wavelengths.fast_bound": _fast_bound, "wavelengths.two_way": _two_way,
               "wavelengths.feasible_only": _feasible_only})


@register_task("wavelengths.continuity")
def continuity_task(trials: int, seed: int = 0) -> dict:
    """Random forward-only instances (every demand i -> i+d, d <= max_hops < N/2, so all
    go clockwise; nodes 5-7, W 2-3): of those the count relaxation serves, how many have
    a ``milp`` optimum above the count bound, and how many continuity makes infeasible."""
    from fabricopt.methods import solve
    from fabricopt.problems.wavelengths import WavelengthsInstance, infeasibility
    from fabricopt.bounds.wavelengths import count_bound

    rng = np.random.default_rng(seed)
    kept = worse = infeasible = 0
    for _ in range(trials):
        n, w = int(rng.integers(5, 8)), int(rng.integers(2, 4))
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
        milp = solve(inst, "milp")
        if milp.status == "infeasible":
            infeasible += 1
        elif milp.objective > count_bound(inst) * (1 + CERTIFY_RTOL):
            worse += 1
    return {"value": float(kept), "trials": trials, "kept": kept, "worse": worse,
            "infeasible": infeasible}


_SPEED = {
    "speed-128": ("128 nodes, W=64, max_hops=16, generator default (3 MP peers + DP)",
                  {"nodes": 128, "wavelengths": 64, "max_hops": 16}),
    "speed-128-dense": ("128 nodes, W=64, max_hops=16, dense (15 MP peers + DP)",
                        {"nodes": 128, "wavelengths": 64, "max_hops": 16, "mp_peers": 15}),
    "speed-1024": ("1024 nodes, W=80, max_hops=16 (SiP-ML's scale), generator default",
                   {"nodes": 1024, "wavelengths": 80, "max_hops": 16}),
}
_BOUND = [{"nodes": 32, "wavelengths": 16, "max_hops": 16},
          {"nodes": 16, "wavelengths": 8, "max_hops": 8},
          {"nodes": 64, "wavelengths": 64, "max_hops": 32},
          {"nodes": 128, "wavelengths": 64, "max_hops": 16},
          {"nodes": 32, "wavelengths": 64, "max_hops": 16, "group": 32, "mp_peers": 16}]
_FAMILIES = {
    "long-reach": {"nodes": 16, "wavelengths": 8, "max_hops": 6, "mp_peers": 4,
                   "family": "long-reach"},
    "long-reach-n32-w16": {"nodes": 32, "wavelengths": 16, "max_hops": 8, "mp_peers": 4,
                           "family": "long-reach"},
}
_MILP = ["milp", "milp", {"time_limit": 60.0}]
_GAP_METHODS = [[m, m, {}] for m in FAST + ("count-bound",)]


def _label(sizes: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in sizes.items())


def _plan(suite: str, quick: bool) -> list:
    seeds, reps = (range(1), 1) if quick else (range(3), 3)
    specs = [compare_spec(suite, name, KIND, sizes, seeds, [[m, m, {}] for m in FAST],
                          repeats=reps, extras=("wavelengths.fast_bound",))
             for name, (_, sizes) in _SPEED.items() if not quick or name == "speed-128"]
    small = range(6) if quick else range(30)
    for family in ("hybrid", "uniform"):
        extras = ("wavelengths.feasible_only",) if family == "uniform" else ()
        specs.append(compare_spec(suite, f"small-{family}", KIND, {}, small, _GAP_METHODS,
                                  _MILP, builder=f"wavelengths-{family}", extras=extras))
    for sizes in _BOUND[:2] if quick else _BOUND:
        specs.append(compare_spec(suite, f"bound/{_label(sizes)}", KIND, sizes, seeds,
                                  [["count-bound", "count-bound", {"time_limit": 60.0}]],
                                  extras=("wavelengths.fast_bound", "wavelengths.two_way")))
    for name, sizes in _FAMILIES.items():
        if quick and name != "long-reach":
            continue
        specs.append(compare_spec(suite, f"family/{name}", KIND, sizes,
                                  range(1) if quick else range(4 if name == "long-reach" else 3),
                                  [[m, m, {}] for m in FAST], _MILP, extras=("cheap_bound",)))
    trials = 50 if quick else 1000
    specs.append(TaskSpec(suite, f"{KIND}/continuity", "wavelengths.continuity",
                          {"trials": trials}, method="milp", time_limit_s=1800.0))
    return specs


def _upper_median(values):
    """The upper middle of the values that are not None: an element of them (a pair
    count stays an integer), the median when their number is odd."""
    values = sorted(v for v in values if v is not None)
    return values[len(values) // 2] if values else None


def _speed_lines(rows, csv_rows) -> list[str]:
    body = []
    for name, (label, _) in _SPEED.items():
        records = records_of(rows, KIND, name)
        if not records:
            continue
        bound_cpu = [r["fast_bound_cpu_s"] for r in records]
        body.append([label, _upper_median([r["pairs"] for r in records]),
                     "count bound (kind's, fast)",
                     fmt_s(_upper_median(bound_cpu)), fmt_s(max(bound_cpu)), None, None])
        for m in FAST:
            runs = [r[m] for r in records]
            ok = [x for x in runs if x["status"] == "feasible"]
            gaps = [x["gap"] for x in ok if x["gap"] is not None]
            s = method_stats(records, m)
            body.append(["", "", m, fmt_s(s["median_cpu_s"]), fmt_s(s["max_cpu_s"]),
                         fmt_pct(sum(gaps) / len(gaps) if gaps else None),
                         len(runs) - len(ok)])
            csv_rows += [["speed", name, r["seed"], m, r[m]["value"], r[m]["cpu_s"]]
                         for r in records]
    if not body:
        return []
    return ["### Speed", "", "Targets: `mcf` under 1 s and `greedy` under 0.2 s on a 128-node "
            "ring, W = 64, max_hops = 16.", "",
            markdown_table(["instances", "pairs", "method", "median CPU s", "max CPU s",
                            "mean gap to bound", "failures"], body), ""]


def _gap_lines(rows, csv_rows) -> list[str]:
    body = []
    for family in ("hybrid", "uniform"):
        records = records_of(rows, KIND, f"small-{family}")
        if not records:
            continue
        kept = [r for r in records if "skip" not in r]
        proved = [r for r in kept if r["reference"]["status"] == "optimal"]
        ref = [r["reference"]["cpu_s"] for r in kept]
        body.append([family, len(proved), "milp (proven optimum)", None, None, len(proved),
                     f"{len(kept) - len(proved)} unproved", fmt_s(_upper_median(ref))])
        for m in FAST + ("count-bound",):
            s = method_stats(kept, m)
            body.append(["", "", m, fmt_pct(s["mean_gap"]), fmt_pct(s["max_gap"]), s["optimal"],
                         s["none"], fmt_s(s["median_cpu_s"])])
            csv_rows += [["gap", family, r["seed"], m, r[m]["value"], r[m]["cpu_s"]] for r in kept]
        skipped = len(records) - len(kept)
        if skipped:
            body.append(["", "", f"({skipped} seeds skipped: infeasibility proof)", None, None,
                         None, None, None])
    if not body:
        return []
    return ["### Gap to the proven optimum (small instances)", "",
            "*hybrid*: the generator with one model-parallel group spanning the ring (nodes "
            "8/10/12, W 3/4/6, max_hops about nodes/2). *uniform*: each pair within reach "
            "demanded with probability 0.6, 1-4 MB (nodes 8/10/12, W 4/6/8, max_hops 2/3). "
            "`count-bound`'s value is its bound.", "",
            markdown_table(["family", "instances", "method", "mean gap", "max gap", "optimal",
                            "no schedule", "median CPU s"], body), ""]


def _family_lines(rows, csv_rows) -> list[str]:
    body = []
    for name, sizes in _FAMILIES.items():
        records = records_of(rows, KIND, f"family/{name}")
        if not records:
            continue
        proved = [r for r in records if r["reference"]["status"] == "optimal"]
        ratios = [r["reference"]["value"] / r["cheap_bound"] for r in proved if r["cheap_bound"]]
        cells = []
        for m in FAST:
            s = method_stats(records, m)
            cells.append(None if s["mean_gap"] is None else
                         f"{fmt_pct(s['mean_gap'], 1)} / {fmt_pct(s['max_gap'], 1)}")
        body.append([f"`{name}` ({_label(sizes)})", f"{len(proved)}/{len(records)} proved",
                     f"{min(ratios):.3f}-{max(ratios):.3f}" if ratios else None, *cells])
        csv_rows += [["family", name, r["seed"], m, r[m]["value"], r[m]["cpu_s"]]
                     for r in records for m in FAST]
    if not body:
        return []
    return ["### The long-reach family against the proven optimum", "",
            markdown_table(["row", "instances", "optimum / cheap bound",
                            "`mcf` mean / max gap", "`greedy` mean / max gap"], body), ""]


def _bound_lines(rows) -> list[str]:
    body = []
    for sizes in _BOUND:
        records = records_of(rows, KIND, f"bound/{_label(sizes)}")
        if not records:
            continue
        equal = sum(r["count-bound"]["bound"] is not None and
                    abs(r["count-bound"]["bound"] - r["fast_bound"])
                    <= CERTIFY_RTOL * r["count-bound"]["bound"] for r in records)
        ilp = [r["count-bound"]["cpu_s"] for r in records]
        body.append([_label(sizes), _upper_median([r["two_way"] for r in records]),
                     f"{equal}/{len(records)}",
                     fmt_s(_upper_median([r["fast_bound_cpu_s"] for r in records])),
                     fmt_s(_upper_median(ilp)), fmt_s(max(ilp))])
    if not body:
        return []
    return ["### The fast count bound against the count ILP", "",
            markdown_table(["instances", "two-way pairs", "fast = ILP", "fast median CPU s",
                            "ILP median CPU s", "ILP max CPU s"], body), ""]


def _render(rows: list[dict], folder: Path, quick: bool) -> str:
    csv_rows: list[list] = []
    lines = _speed_lines(rows, csv_rows) + _gap_lines(rows, csv_rows)
    lines += _family_lines(rows, csv_rows) + _bound_lines(rows)
    cont = [r for r in rows if r["instance_id"] == f"{KIND}/continuity"
            and r["status"] == "feasible"]
    if cont:
        c = cont[0]["info"]
        lines += ["### What wavelength continuity costs", "",
                  f"{c['kept']} of {c['trials']} random forward-only instances (nodes 5-7, "
                  f"W 2-3) are served by the count relaxation: the `milp` optimum exceeds the "
                  f"count bound on {c['worse']}; continuity makes {c['infeasible']} "
                  f"infeasible.", ""]
    write_csv(folder / "wavelengths.csv", ["part", "row", "seed", "method", "value", "cpu_s"],
              csv_rows)
    lines += [CPU_NOTE + " The fast bound's CPU s is `count_bound` alone; gap to bound is "
              "the envelope's primal-dual gap. CSV: `wavelengths.csv`."]
    return "\n".join(lines)


register_experiment(Experiment(
    name="wavelengths", version=1, title="wavelengths: SiP-Ring wavelength scheduling",
    summary="mcf / greedy speed at 128 and 1024 nodes, gaps to the proven optimum, the fast "
            "count bound vs the ILP, what continuity costs",
    plan=_plan, render=_render))
