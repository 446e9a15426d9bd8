"""Two speed measurements that ``fabricopt reproduce speed`` cannot make: the same calls
timed on this tree and on another checkout, and the contention fill kernels' threshold.

Run from the repository root::

    python scripts/speed_baseline.py --baseline /tmp/before   # before/after, old checkout
    python scripts/speed_baseline.py --only topoopt --baseline /tmp/before  # one ladder
    python scripts/speed_baseline.py --fill          # the fill-kernel threshold

The experiment (:mod:`fabricopt.bench.experiments.speed`) runs each point in its own
process through the harness (store, resume, peak RSS) and prints its section. How
runtime grows over each kind's size ladder is ``fabricopt reproduce scaling``.

``--baseline DIR`` (a checkout of the code before, e.g. ``git archive REV | tar -x
-C /tmp/before``) measures every point of the experiment's full plan on both trees, each
in a fresh interpreter importing ``fabricopt`` from its tree, in the same run, so the
ratios compare like with like. It is a script option because an experiment runs only
the code it is part of; the snippets timed are the experiment's own
(``experiments.speed.SNIPPETS``). ``--fill`` times the two contention fill kernels on
clusters of growing size (the threshold between them, a micro-benchmark of internals).
``--only SNIPPET --baseline DIR`` measures one snippet's size ladder on both trees, with
each tree's log-log slope.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The sizes of ``--only SNIPPET`` (a before/after ladder of one call).
LADDERS = {
    "topoopt": [64, 128, 256, 512, 1024],
    "circuits-exact": [128, 256, 512, 1024, 2048],
    "priorities-crux": [1000, 2000, 4000, 8000, 16000],
    "crux-evaluate": [25, 50, 100, 200, 400],
    "circuits-milp-build": [32, 64, 128, 256],
}

# The dense DP of the code before needs (n+1)^2 doubles per order: 2 GB at 16,000 jobs.
BASELINE_SKIP = {("priorities-crux", 16000): "not run: its dense (n+1)² matrix is 2.0 GB"}

PROBE = """
import json, resource, time
n = {n}
{setup}
start = time.process_time()
value = run()
seconds = time.process_time() - start
rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({{"seconds": seconds, "rss_mb": rss_mb,
                  "value": None if value is None else float(value)}}))
"""


def measure(tree: Path, snippet: str, n: int, timeout_s: float) -> dict:
    """One timed call of ``snippet`` at size ``n`` in a fresh interpreter importing
    fabricopt from ``tree``: CPU seconds, peak RSS, the call's value (or an error)."""
    from fabricopt.bench.experiments.speed import snippet_code

    code = PROBE.format(n=n, setup=snippet_code(snippet))
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


def baseline(tree: Path, before: Path, timeout_s: float, only: str | None = None,
             budget_s: float = 10.0) -> list[str]:
    """Every point of the speed experiment's full plan (or of ``only``'s ladder, up to
    the first size over ``budget_s`` on either tree) on ``before`` and on ``tree``."""
    from fabricopt.bench.experiments.speed import points
    from fabricopt.bench.metrics import loglog_slope, ratio

    plan = [(only, n) for n in LADDERS[only]] if only else points(quick=False)
    seconds: dict[str, list] = {"before": [], "after": []}

    lines = [f"Before: `{before}`; after: `{tree}`. CPU seconds of one call in a fresh "
             "interpreter (peak RSS for the 16,000-job row).", "",
             "| call | size | before | after | ratio |", "|---|---|---|---|---|"]
    for snippet, n in plan:
        rss = (snippet, n) == ("priorities-crux", 16000)
        key = "rss_mb" if rss else "seconds"
        after = measure(tree, snippet, n, timeout_s)
        skip = BASELINE_SKIP.get((snippet, n))
        old = {"error": skip} if skip else measure(before, snippet, n, timeout_s)
        show = (lambda g: g.get("error") or
                (f"{g['rss_mb']:.0f} MB" if rss else f"{g['seconds']:.3f} s"))
        r = ratio(old.get(key), after.get(key))
        lines.append(f"| `{snippet}` | {n} | {show(old)} | {show(after)} | "
                     f"{'' if r is None else f'{r:.1f}x'} |")
        seconds["before"].append(old.get("seconds"))
        seconds["after"].append(after.get("seconds"))
        if only and max(g.get("seconds") or budget_s + 1 for g in (old, after)) > budget_s:
            break
    if only:
        sizes = [n for _, n in plan][:len(seconds["after"])]
        fits = {k: loglog_slope(sizes, v) for k, v in seconds.items()}
        lines += ["", "log-log slope over the ladder: " + ", ".join(
            f"{k} {'-' if v is None else f'{v:.2f}'}" for k, v in fits.items())]
    return lines + [""]


def fill_threshold(sizes=(8, 16, 32, 64, 96, 128, 192, 256, 512), repeat=20) -> list[str]:
    """CPU seconds of one fill by each kernel on clusters of the 200-job crux case."""
    import time

    from fabricopt.algorithms.crux.crux import ecmp
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
    parser.add_argument("--timeout", type=float, default=300.0,
                        help="seconds per process (--baseline)")
    parser.add_argument("--only", choices=sorted(LADDERS),
                        help="with --baseline: one snippet's size ladder on both trees")
    parser.add_argument("--budget", type=float, default=10.0,
                        help="with --only: stop after the first size over this many s")
    parser.add_argument("--fill", action="store_true", help="only the fill-kernel table")
    args = parser.parse_args(argv)
    if args.fill:
        print(f"Python {platform.python_version()}, {platform.machine()}, "
              f"{os.cpu_count()} cores\n")
        print("\n".join(fill_threshold()))
        return 0
    if args.baseline is None:
        parser.error("give --baseline DIR or --fill (the experiment itself is "
                     "`fabricopt reproduce speed`)")
    print("\n".join(baseline(ROOT, args.baseline, args.timeout, args.only, args.budget)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
