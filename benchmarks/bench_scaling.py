"""Scaling of the fast methods, and the speed targets of issue 15, before and after.

Every measurement runs in a fresh Python process (so that its peak RSS is its own),
builds its instance untimed, then times one call in CPU seconds. Each method climbs a
ladder of sizes growing geometrically and stops after the first size over ``--budget``
seconds. With ``--baseline DIR`` (a checkout of the code before, e.g.
``git archive main | tar -x -C /tmp/before``) the target rows are measured on both trees
in the same run, so their ratios compare like with like.

Run from the repository root::

    python benchmarks/bench_scaling.py --baseline /tmp/before    # about 15 minutes
    python benchmarks/bench_scaling.py --only crux-evaluate      # one ladder
    python benchmarks/bench_scaling.py --only topoopt --baseline /tmp/before  # and before
    python benchmarks/bench_scaling.py --fill                    # the fill-kernel threshold
    python benchmarks/bench_scaling.py --milp --baseline /tmp/before   # model building

It prints markdown for BENCHMARKS.md (``## speed``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# One snippet per method: builds the instance of size n (untimed), times the call.
SETUP = {
    "topoopt": """
        from fabricopt.problems.topology import generate, evaluate
        from fabricopt.heuristics.topoopt import topoopt
        inst = generate(seed=0, servers=n, degree=8, groups=1, mp_peers=4)
        run = lambda: evaluate(inst, topoopt(inst))
    """,
    "circuits-exact": """
        from fabricopt.problems.circuits import generate, evaluate
        from fabricopt.heuristics.circuits import exact
        inst = generate(seed=0, gpus=n, switches=16)
        run = lambda: evaluate(inst, exact(inst))
    """,
    "circuits-greedy": """
        from fabricopt.problems.circuits import generate, evaluate
        from fabricopt.heuristics.circuits import greedy
        inst = generate(seed=0, gpus=n, switches=16)
        run = lambda: evaluate(inst, greedy(inst))
    """,
    "priorities-crux": """
        from fabricopt.problems.priorities import generate, evaluate
        from fabricopt.heuristics.compression import compress_instance
        inst = generate(seed=0, jobs=n, levels=8)
        run = lambda: evaluate(inst, compress_instance(inst))
    """,
    # the scoring simulation of the crux method's answer (the method runs untimed)
    "crux-evaluate": """
        from fabricopt.problems.crux import generate, evaluate
        from fabricopt.heuristics.crux import crux
        inst = generate(0, jobs=n, tors=max(2, 32 * n // 100), hosts_per_tor=16, aggs=8,
                        levels=8)
        sol = crux(inst)
        run = lambda: evaluate(inst, sol)
    """,
}

LADDERS = {
    "topoopt": [64, 128, 256, 512, 1024],
    "circuits-exact": [128, 256, 512, 1024, 2048],
    "circuits-greedy": [128, 256, 512, 1024, 2048],
    "priorities-crux": [1000, 2000, 4000, 8000, 16000],
    "crux-evaluate": [25, 50, 100, 200, 400],
}

# (label, method, size, target text, target test on (seconds, rss_mb) or None)
TARGETS = [
    ("`topoopt`, 1024 servers, degree 8", "topoopt", 1024, "< 4 s", lambda s, m: s < 4),
    ("circuits `exact`, 2048 GPUs x 16", "circuits-exact", 2048, "< 1 s", lambda s, m: s < 1),
    ("priorities `crux`, 2,000 jobs, K = 8", "priorities-crux", 2000, "< 0.5 s",
     lambda s, m: s < 0.5),
    ("priorities `crux`, 16,000 jobs, K = 8: peak RSS", "priorities-crux", 16000, "< 600 MB",
     lambda s, m: m < 600),
    ("`evaluate` of the 100-job `crux` case", "crux-evaluate", 100, "< 1.5 s",
     lambda s, m: s < 1.5),
    ("`evaluate` of the 200-job `crux` case", "crux-evaluate", 200, "completes", None),
]

# The dense DP of the code before needs (n+1)^2 doubles per order: 2 GB at 16,000 jobs.
BASELINE_SKIP = {("priorities-crux", 16000): "not run: its dense (n+1)² matrix is 2.0 GB"}

PROBE = """
import json, resource, sys, time
n = {n}
{setup}
start = time.process_time()
value = run()
seconds = time.process_time() - start
rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({{"seconds": seconds, "rss_mb": rss_mb, "value": float(value)}}))
"""


def _run(tree: Path, code: str, timeout_s: float) -> dict:
    """Run ``code`` in a fresh process importing fabricopt from ``tree``; its last line of
    output is JSON."""
    env = {**os.environ, "PYTHONPATH": str(tree), "OMP_NUM_THREADS": "1"}
    try:
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                              text=True, timeout=timeout_s, cwd=tree)
    except subprocess.TimeoutExpired:
        return {"error": f"over {timeout_s:.0f} s"}
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        return {"error": lines[-1] if lines else f"exit {done.returncode}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(tree: Path, method: str, n: int, timeout_s: float) -> dict:
    """One timed call in a fresh process importing fabricopt from ``tree``."""
    return _run(tree, PROBE.format(n=n, setup=textwrap.dedent(SETUP[method])), timeout_s)


def slope(points: list[tuple[int, float]]) -> float:
    """Least-squares slope of log(seconds) over log(size)."""
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(max(s, 1e-6)) for _, s in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den if den else math.nan


def ladder(tree: Path, method: str, budget_s: float, timeout_s: float,
           title: str = "") -> list[str]:
    rows, points = [], []
    largest = None
    for n in LADDERS[method]:
        got = measure(tree, method, n, timeout_s)
        if "error" in got:
            rows.append(f"| {n} | {got['error']} | | |")
            break
        points.append((n, got["seconds"]))
        rows.append(f"| {n} | {got['seconds']:.3f} | {got['rss_mb']:.0f} | {got['value']:.6g} |")
        if got["seconds"] > budget_s:
            break
        largest = n
    top = slope(points[-2:]) if len(points) >= 2 else math.nan
    fit = slope(points) if len(points) >= 2 else math.nan
    return ([f"#### `{method}`{title}", "", "| size | CPU s | peak RSS (MB) | objective |",
             "|---|---|---|---|"] + rows +
            ["", f"log-log slope: {fit:.2f} over all sizes, {top:.2f} between the last two; "
                 f"largest size within {budget_s:g} s: {largest if largest else 'none'}", ""])


def targets(tree: Path, baseline: Path | None, timeout_s: float) -> list[str]:
    lines = ["#### Targets (issue 15)", "",
             "| target | goal | before | after | ratio | met |", "|---|---|---|---|---|---|"]
    cache: dict = {}

    def get(where, method, n):
        key = (where, method, n)
        if key not in cache:
            cache[key] = measure(where, method, n, timeout_s)
        return cache[key]

    def show(got, rss):
        if got is None or "error" in got:
            return "" if got is None else got["error"]
        return f"{got['rss_mb']:.0f} MB" if rss else f"{got['seconds']:.2f} s"

    for label, method, n, goal, test in TARGETS:
        rss = goal.endswith("MB")
        after = get(tree, method, n)
        before = None
        if baseline is not None:
            skip = BASELINE_SKIP.get((method, n))
            before = {"error": skip} if skip else get(baseline, method, n)
        ratio = ""
        if before and after and "error" not in before and "error" not in after:
            key = "rss_mb" if rss else "seconds"
            ratio = f"{before[key] / max(after[key], 1e-9):.1f}x"
        met = ("error" not in after) if test is None else (
            "error" not in after and test(after["seconds"], after["rss_mb"]))
        lines.append(f"| {label} | {goal} | {show(before, rss)} | {show(after, rss)} | "
                     f"{ratio} | {'yes' if met else 'NO'} |")
    # topoopt's slope from 256 to 1024 servers, from the same measurements' ladder
    pts = []
    for n in (256, 512, 1024):
        got = get(tree, "topoopt", n)
        if "error" not in got:
            pts.append((n, got["seconds"]))
    if len(pts) == 3:
        s = slope(pts)
        lines.append(f"| `topoopt` log-log slope, 256 to 1024 servers | <= 1.6 | | {s:.2f} | | "
                     f"{'yes' if s <= 1.6 else 'NO'} |")
    return lines + [""]


MILP_BUILD = """
import json, resource, time
from fabricopt.problems.circuits import generate
from fabricopt.formulations.circuits import build
inst = generate(seed=0, gpus={gpus}, switches={switches})
start = time.process_time()
model = build(inst)
arrays = model.problem.arrays() if hasattr(model.problem, "arrays") else None
seconds = time.process_time() - start
rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({{"seconds": seconds, "rss_mb": rss_mb, "value": 0.0}}))
"""

MILP_SOLVE = """
import json, fabricopt
inst = fabricopt.generate("circuits", seed=0, gpus=64, switches=8)
r = fabricopt.solve(inst, "milp", time_limit={limit})
print(json.dumps({{"status": r.status, "model_build_s": r.info["model_build_s"],
                  "solver_s": r.info["solver_s"]}}))
"""


def milp_build(tree: Path, baseline: Path | None, timeout_s: float) -> list[str]:
    """Building the circuits MILP (``build`` and, for sparse models, assembling its
    arrays) before and after; then ``model_build_s`` against ``solver_s`` at 64 x 8."""
    lines = ["#### Building the circuits MILP", "",
             "CPU s of `formulations.circuits.build(generate('circuits', seed=0, gpus=N, "
             "switches=Q))`; after: with `SparseModel.arrays()` (what HiGHS reads); before: "
             "the PuLP model alone (its copy into HiGHS not counted).", "",
             "| GPUs x switches | variables | before (s) | after (s) | ratio |",
             "|---|---|---|---|---|"]
    for gpus, switches in [(32, 8), (64, 8), (128, 8), (256, 16)]:
        code = MILP_BUILD.format(gpus=gpus, switches=switches)
        after = _run(tree, code, timeout_s)
        before = _run(baseline, code, timeout_s) if baseline else {"error": ""}
        show = lambda r: r.get("error") or f"{r['seconds']:.3f}"
        ratio = (f"{before['seconds'] / max(after['seconds'], 1e-9):.0f}x"
                 if "error" not in before and "error" not in after else "")
        lines.append(f"| {gpus} x {switches} | {switches * gpus * gpus + 1:,} | {show(before)} "
                     f"| {show(after)} | {ratio} |")
    got = _run(tree, MILP_SOLVE.format(limit=300), 600)
    if "error" in got:
        lines += ["", f"64 x 8 `milp`: {got['error']}"]
    else:
        lines += ["", f"`fabricopt.solve(generate('circuits', seed=0, gpus=64, switches=8), "
                      f"'milp', time_limit=300)`: {got['status']}, `model_build_s` "
                      f"{got['model_build_s']:.3f} s = "
                      f"{got['model_build_s'] / got['solver_s']:.2%} of `solver_s` "
                      f"{got['solver_s']:.1f} s (target <= 5 %)"]
    return lines + [""]


def fill_threshold(sizes=(8, 16, 32, 64, 96, 128, 192, 256, 512), repeat=20) -> list[str]:
    """CPU seconds of one fill by each kernel on clusters of the 200-job crux case."""
    import time

    from fabricopt.heuristics.crux import ecmp
    from fabricopt.problems._flowstate import fill_array, fill_list
    from fabricopt.problems.contention import _shared_links, link_components
    from fabricopt.problems.crux import generate, sim_jobs

    inst = generate(0, jobs=200, tors=64, hosts_per_tor=16, aggs=8, levels=8)
    sol = ecmp(inst)
    jobs = sim_jobs(inst, sol.path, sol.level)
    group = max(link_components(jobs), key=len)
    flows = [(jobs[j].level, nbytes, links) for j in group for nbytes, links in jobs[j].flows]
    lines = ["#### Fill kernels by cluster size", "",
             "Flows of the largest component of the 200-job `crux` case (`ecmp` paths), "
             f"first k; CPU ms per fill, best of {repeat}.", "",
             "| flows | `fill_list` (ms) | `fill_array` (ms) |", "|---|---|---|"]
    for k in sizes:
        if k > len(flows):
            break
        part = flows[:k]
        cap, paths, fcap = _shared_links(inst.links, [p for _, _, p in part])
        level = [lev for lev, _, _ in part]
        best = {}
        for name, fill in (("list", fill_list), ("array", fill_array)):
            times = []
            for _ in range(repeat):
                start = time.process_time()
                fill(cap, paths, fcap, level)
                times.append(time.process_time() - start)
            best[name] = min(times) * 1e3
        lines.append(f"| {k} | {best['list']:.3f} | {best['array']:.3f} |")
    return lines + [""]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="a checkout of the code before")
    parser.add_argument("--budget", type=float, default=10.0, help="seconds per size")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per process")
    parser.add_argument("--only", choices=sorted(SETUP),
                        help="one ladder, no targets (with --baseline, also before)")
    parser.add_argument("--fill", action="store_true", help="only the fill-kernel table")
    parser.add_argument("--milp", action="store_true", help="only the MILP build tables")
    args = parser.parse_args(argv)
    print(f"Python {platform.python_version()}, {platform.machine()}, "
          f"{os.cpu_count()} cores; CPU seconds of one call in a fresh process\n")
    if args.fill:
        print("\n".join(fill_threshold()))
        return 0
    if args.milp:
        print("\n".join(milp_build(ROOT, args.baseline, args.timeout)))
        return 0
    out = []
    if args.only is None:
        out += targets(ROOT, args.baseline, args.timeout)
    for method in [args.only] if args.only else SETUP:
        out += ladder(ROOT, method, args.budget, args.timeout)
        if args.only and args.baseline:  # the same ladder on the code before, same run
            out += ladder(args.baseline, method, args.budget, args.timeout, " (before)")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
