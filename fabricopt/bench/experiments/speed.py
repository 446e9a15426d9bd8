"""The speed targets: CPU seconds and peak memory of the target calls, each in a
fresh process.

Each point is one task run (its own process, so the runner's peak RSS is that run's):
the task builds the instance untimed, then times the call three times in CPU seconds
(``time.process_time``, which a shared machine inflates less than wall time) and keeps
the least, as ``timeit`` does. The
points: the targets (``topoopt`` at 1024 servers, circuits ``exact`` at 2048 GPUs,
priorities ``crux`` at 2,000 and 16,000 jobs, ``evaluate`` of the 100- and 200-job
``crux`` cases), ``topoopt`` at 256 and 512 servers for its log-log slope, and building
the circuits MILP at four sizes. How runtime grows over each kind's whole size ladder
is the ``scaling`` experiment's (the ``scale`` suite); it is not repeated here.

*The papers' scale* (:data:`PAPER_SCALE`, :data:`PAPER_SLOPES`): ``sipml`` and
``sipml-ls`` on SiP-ML's 24-layer Transformer, ``topoopt`` and its instance at 4,096
servers, ``fabricopt compare`` at 1,024-9,216 GPUs (the README's example, ResNet-50 on
SiP-OCS, the SimAI workload), crux ``ecmp`` and ``crux`` at 400 jobs: each timed once
(they take seconds to minutes), with the log-log slope over two sizes where the goal
has one; and ``fabricopt bench`` on the quick suite with 2 workers, run as a user runs it
(a subprocess), in wall-clock seconds since that is what its goal states.

What is timed is a code snippet (:data:`SNIPPETS`) rather than a function of this
module so that ``scripts/speed_baseline.py --baseline DIR`` can run the very same
measurement against an old checkout, which cannot import this module; that before/after
comparison is a script option because an experiment runs only the code it is part of.
"""

from __future__ import annotations

from fabricopt.errors import InvalidArgument

import textwrap
from pathlib import Path

from fabricopt.bench.metrics import loglog_slope, ratio
from fabricopt.bench.tasks import TaskSpec, register_task
from fabricopt.bench.experiments import Experiment, markdown_table, register_experiment, write_csv

__all__ = ["SNIPPETS", "TARGETS", "PAPER_SCALE", "PAPER_SLOPES", "MILP_SIZES",
           "snippet_code", "points"]

# One snippet per measured call: builds the instance of size ``n`` (untimed) and sets
# ``run``, the call to time; ``run()`` returns the answer's objective (or None).
SNIPPETS = {
    "topoopt": """
        from fabricopt.problems.topology import generate, evaluate
        from fabricopt.algorithms.topology.topoopt import topoopt
        inst = generate(seed=0, servers=n, degree=8, groups=1, mp_peers=4)
        run = lambda: evaluate(inst, topoopt(inst))
    """,
    "circuits-exact": """
        from fabricopt.problems.circuits import generate, evaluate
        from fabricopt.algorithms.circuits import exact
        inst = generate(seed=0, gpus=n, switches=16)
        run = lambda: evaluate(inst, exact(inst))
    """,
    "priorities-crux": """
        from fabricopt.problems.priorities import generate, evaluate
        from fabricopt.algorithms.priorities.compression import compress_instance
        inst = generate(seed=0, jobs=n, levels=8)
        run = lambda: evaluate(inst, compress_instance(inst))
    """,
    # the scoring simulation of the crux method's answer (the method runs untimed)
    "crux-evaluate": """
        from fabricopt.problems.crux import generate, evaluate
        from fabricopt.algorithms.crux.crux import crux
        inst = generate(0, jobs=n, tors=max(2, 32 * n // 100), hosts_per_tor=16, aggs=8,
                        levels=8)
        sol = crux(inst)
        run = lambda: evaluate(inst, sol)
    """,
    # SiP-ML's Transformer (n layers), balanced at tau = 10 us on 64 GPUs, 15 peers
    "sipml-transformer": """
        from fabricopt.bench.experiments.placement_tasks import transformer_op_graph
        from fabricopt.algorithms.placement.sipml import balance, sipml
        from fabricopt.problems.placement import evaluate
        inst = balance(transformer_op_graph(layers=n), 1e-5, 64, max_peers=15, link_gbps=400.0)
        run = lambda: evaluate(inst, sipml(inst)[0])
    """,
    # the local search without a time limit on the same graph
    "sipml-ls-transformer": """
        from fabricopt.bench.experiments.placement_tasks import transformer_op_graph
        from fabricopt.algorithms.placement.sipml import balance
        from fabricopt.algorithms.placement.local_search import sipml_ls
        from fabricopt.problems.placement import evaluate
        inst = balance(transformer_op_graph(layers=n), 1e-5, 64, max_peers=15, link_gbps=400.0)
        run = lambda: evaluate(inst, sipml_ls(inst, seed=0)[0])
    """,
    # the local search without a time limit on a generated graph of n sub-ops
    "sipml-ls-generated": """
        from fabricopt.algorithms.placement.local_search import sipml_ls
        from fabricopt.problems.placement import evaluate, generate
        inst = generate(0, ops=n, gpus=64, max_peers=15)
        run = lambda: evaluate(inst, sipml_ls(inst, seed=0)[0])
    """,
    # generating the topoopt instance alone (its peak RSS is the instance's footprint)
    "topology-generate": """
        from fabricopt.problems.topology import generate
        def run():
            generate(seed=0, servers=n, degree=8, groups=1, mp_peers=4)
    """,
    # building the circuits MILP (n GPUs, n // 8 switches, at least 8) and, for a
    # sparse model, assembling the arrays HiGHS reads
    "circuits-milp-build": """
        from fabricopt.problems.circuits import generate
        from fabricopt.models.circuits import build
        inst = generate(seed=0, gpus=n, switches=max(8, n // 16))
        def run():
            model = build(inst)
            if hasattr(model.problem, "arrays"):
                model.problem.arrays()
    """,
}

# `fabricopt compare` at n GPUs (output discarded): the README's example with the default
# bandwidths, ResNet-50 on SiP-OCS at one bandwidth, and the SimAI workload
_COMPARE_ARGS = {
    "compare-transformer": '"transformer", "--fabrics", "elect-flat,sip-ocs,sip-ring"',
    "compare-resnet50-sip-ocs": '"resnet50", "--fabrics", "sip-ocs", "--bandwidths", "1024"',
    "compare-simai": '"simai-moe", "--model", "simai", "--fabric", "elect-cluster"',
}
for _name, _args in _COMPARE_ARGS.items():
    SNIPPETS[_name] = f"""
        import contextlib, io, tempfile
        from fabricopt.cli.app import main
        out = tempfile.mkdtemp()
        def run():
            with contextlib.redirect_stdout(io.StringIO()):
                main(["compare", {_args}, "--gpus", str(n), "--out", out + "/c", "--quiet"])
    """

# the crux kind's `ecmp` and `crux` methods at n jobs, each scored by `solve` (the simulator)
for _method in ("ecmp", "crux"):
    SNIPPETS[f"crux-{_method}"] = f"""
        from fabricopt.problems.crux import generate
        from fabricopt.methods import solve
        inst = generate(0, jobs=n, tors=max(2, 32 * n // 100), hosts_per_tor=16, aggs=8,
                        levels=8)
        run = lambda: solve(inst, "{_method}").objective
    """

#: (label, snippet, size, goal text, goal test on (CPU s, peak RSS MB) or None).
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

#: The papers' scale: (label, snippet, size, goal text, goal test on (CPU s, peak RSS
#: MB) or None, timed calls). Calls of seconds keep the least of 3 (one call of a
#: second or two swings with the machine); the minutes-long compares are timed once.
PAPER_SCALE = [
    ("`sipml`, Transformer 24 layers (24,576 sub-ops, 64 GPUs, 15 peers)",
     "sipml-transformer", 24, "< 1 s", lambda s, m: s < 1, 3),
    ("`sipml-ls` without a limit, same graph", "sipml-ls-transformer", 24, "measured", None, 3),
    ("`sipml-ls` without a limit, 100k sub-ops", "sipml-ls-generated", 100000, "< 5 s",
     lambda s, m: s < 5, 3),
    ("`topoopt`, degree 8, 4,096 servers", "topoopt", 4096, "< 8 s", lambda s, m: s < 8, 3),
    ("topology instance, 4,096 servers: peak RSS", "topology-generate", 4096, "< 200 MB",
     lambda s, m: m < 200, 3),
    ("`compare transformer --gpus 1024` (README defaults)", "compare-transformer", 1024,
     "< 30 s", lambda s, m: s < 30, 1),
    ("`compare transformer --gpus 4096`", "compare-transformer", 4096, "< 60 s",
     lambda s, m: s < 60, 1),
    ("`compare resnet50 --gpus 1024`, SiP-OCS, one bandwidth", "compare-resnet50-sip-ocs",
     1024, "measured", None, 3),
    ("`compare simai-moe --model simai --gpus 9216`", "compare-simai", 9216,
     "<= 2.6 s (SimAI-Analytical)", lambda s, m: s <= 2.6, 3),
    ("`compare simai-moe --model simai --gpus 9216`: peak RSS", "compare-simai", 9216,
     "< 300 MB", lambda s, m: m < 300, 3),
    ("crux `ecmp`, 400 jobs (solve, scored)", "crux-ecmp", 400, "< 1 s",
     lambda s, m: s < 1, 3),
    ("crux `crux`, 400 jobs (solve, scored)", "crux-crux", 400, "< 1 s",
     lambda s, m: s < 1, 3),
]

#: Log-log slopes of the papers' scale: (label, snippet, sizes, largest slope allowed).
PAPER_SLOPES = [
    ("`sipml`, Transformer 24 to 48 layers", "sipml-transformer", (24, 48), 1.2),
    ("`topoopt`, degree 8, 2,048 to 4,096 servers", "topoopt", (2048, 4096), 1.6),
    ("`compare simai-moe --model simai`, 4,608 to 9,216 GPUs", "compare-simai", (4608, 9216),
     0.2),
]


#: Each point's task time limit, CPU-heavy calls included (seconds of wall clock).
_POINT_LIMIT_S = 600.0
#: Points given longer, so that a figure is measured even on a loaded machine (the
#: 4,096-GPU compare takes about 1,800 CPU s: an hour and a half leaves room for a busy
#: second core).
_LONG_POINTS = {("compare-transformer", 1024): 1800.0, ("compare-transformer", 4096): 5400.0}

#: ``topoopt``'s slope target: sizes and the largest slope allowed.
SLOPE_SIZES, SLOPE_MAX = (256, 512, 1024), 1.6

#: GPUs of the MILP-building rows (switches: ``max(8, GPUs // 16)``).
MILP_SIZES = (32, 64, 128, 256)

# The quick variant: one small point of each snippet (checks every path, not a target)
# but the README's ``compare transformer``, which takes minutes even at 16 GPUs.
_QUICK = [("topoopt", 128), ("circuits-exact", 256), ("priorities-crux", 2000),
          ("crux-evaluate", 25), ("circuits-milp-build", 32), ("sipml-transformer", 1),
          ("sipml-ls-transformer", 1), ("sipml-ls-generated", 500),
          ("topology-generate", 128), ("compare-resnet50-sip-ocs", 64),
          ("compare-simai", 384), ("crux-ecmp", 25), ("crux-crux", 25)]


def snippet_code(snippet: str) -> str:
    """The snippet's code, dedented (for ``exec`` here or a baseline's fresh process)."""
    return textwrap.dedent(SNIPPETS[snippet])


#: Timed calls per point: the least CPU time counts (``timeit``'s convention: the
#: others are the same work slowed by whatever else the machine ran).
REPEATS = 3


@register_task("speed.call")
def call_task(snippet: str, n: int, repeats: int = REPEATS) -> dict:
    """Build snippet ``snippet``'s instance of size ``n`` untimed, then time the call
    ``repeats`` times: ``value`` is the least CPU seconds, ``first_cpu_s`` the first
    call's (it also pays first-use costs); ``objective`` what the call returned (every
    call must return the same). The package's memos of answers are emptied before each
    call (:func:`~fabricopt.bench.memos.forget_answers`), so no call times another's."""
    import time

    from fabricopt.bench.memos import forget_answers

    scope = {"n": n}
    exec(snippet_code(snippet), scope)  # the snippet is this module's own code text
    times, answers = [], set()
    for _ in range(max(1, int(repeats))):
        forget_answers()
        start = time.process_time()
        answer = scope["run"]()
        times.append(time.process_time() - start)
        answers.add(None if answer is None else float(answer))
    if len(answers) != 1:
        raise InvalidArgument(f"snippet {snippet!r} returned different answers: {sorted(answers)}")
    cpu_s = min(times)
    return {"value": cpu_s, "cpu_s": cpu_s, "first_cpu_s": times[0], "cpu_s_all": times,
            "objective": answers.pop()}


@register_task("speed.milp_share")
def milp_share_task(gpus: int = 64, switches: int = 8, time_limit_s: float = 300.0) -> dict:
    """``solve(circuits, "milp")``: the envelope's ``model_build_s`` and ``solver_s``
    (the target: building the model takes at most 5 % of solving it)."""
    import fabricopt

    inst = fabricopt.generate("circuits", seed=0, gpus=gpus, switches=switches)
    result = fabricopt.solve(inst, "milp", time_limit=time_limit_s)
    return {"value": result.info["model_build_s"], "status": result.status,
            "model_build_s": result.info["model_build_s"], "solver_s": result.info["solver_s"]}


@register_task("speed.bench_suite")
def bench_suite_task(suite: str = "quick", workers: int = 2) -> dict:
    """``fabricopt bench --suite SUITE --workers WORKERS`` in a fresh process, as a user
    runs it: ``value`` is its wall-clock seconds (the goal is stated in wall time, since
    the workers run side by side), ``cpu_s`` the CPU seconds of it and its workers."""
    import resource
    import subprocess
    import sys
    import tempfile
    import time

    with tempfile.TemporaryDirectory() as out:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "fabricopt", "bench", "--suite", suite,
                               "--workers", str(workers), "--out", out, "--no-progress",
                               "--no-plots"], capture_output=True, text=True)
        wall_s = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise InvalidArgument(f"fabricopt bench --suite {suite} exited {done.returncode}: "
                              f"{last}")
    cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    # the runner's one-line count ("suite NAME: R runs, ..., F failed") goes to stderr
    summary = next((line for line in done.stderr.splitlines() if line.startswith("suite ")),
                   "")
    return {"value": wall_s, "wall_s": wall_s, "cpu_s": cpu_s, "summary": summary}


#: The bench row: suite, workers, goal in wall-clock seconds.
BENCH_SUITE = ("quick", 2, 120.0)


def points(quick: bool) -> list[tuple[str, int]]:
    if quick:
        return _QUICK
    points = [(snippet, n) for _, snippet, n, _, _ in TARGETS]
    points += [("topoopt", n) for n in SLOPE_SIZES]
    points += [("circuits-milp-build", n) for n in MILP_SIZES]
    points += [(snippet, n) for _, snippet, n, *_ in PAPER_SCALE]
    points += [(snippet, n) for _, snippet, sizes, _ in PAPER_SLOPES for n in sizes]
    return list(dict.fromkeys(points))


def _repeats(snippet: str, n: int) -> int:
    """Timed calls of a point: its papers'-scale row's (a slope's sizes: its snippet's
    row's), else :data:`REPEATS`."""
    declared = {(s, size): calls for _, s, size, _, _, calls in PAPER_SCALE}
    if (snippet, n) in declared:
        return declared[(snippet, n)]
    if any(snippet == s and n in sizes for _, s, sizes, _ in PAPER_SLOPES):
        return min(calls for (s, _), calls in declared.items() if s == snippet)
    return REPEATS


def _plan(suite: str, quick: bool) -> list:
    gpus = 32 if quick else 64
    return [TaskSpec(suite, f"speed/{snippet}/{n}", "speed.call",
                     {"snippet": snippet, "n": n, "repeats": _repeats(snippet, n)},
                     method=snippet, time_limit_s=_LONG_POINTS.get((snippet, n), _POINT_LIMIT_S))
            for snippet, n in points(quick)] + \
        [TaskSpec(suite, f"speed/milp-share/{gpus}x8", "speed.milp_share",
                  {"gpus": gpus, "switches": 8}, method="milp", time_limit_s=600.0)] + \
        ([] if quick else
         [TaskSpec(suite, f"speed/bench/{BENCH_SUITE[0]}", "speed.bench_suite",
                   {"suite": BENCH_SUITE[0], "workers": BENCH_SUITE[1]}, method="bench",
                   time_limit_s=_POINT_LIMIT_S)])


def _measured(rows) -> dict[tuple[str, int], dict]:
    out = {}
    for r in rows:
        if r["kind"] == "task:speed.call":
            out[(r["sizes"]["snippet"], r["sizes"]["n"])] = r
    return out


def _cpu(row) -> float | None:
    return row["info"]["cpu_s"] if row and row["status"] == "feasible" else None


def _rss_mb(row) -> float | None:
    return row["peak_rss_bytes"] / 2**20 if row and row["peak_rss_bytes"] else None


def _paper_rows(got: dict) -> list[list]:
    """One row per call of :data:`PAPER_SCALE` and per slope of :data:`PAPER_SLOPES`."""
    body = []
    for label, snippet, n, goal, test, *_ in PAPER_SCALE:
        r = got.get((snippet, n))
        cpu, rss = _cpu(r), _rss_mb(r)
        if cpu is None:
            body.append([label, goal, "not run" if r is None else r["message"], None, "**no**"])
            continue
        met = "-" if test is None else "yes" if test(cpu, rss or 0.0) else "**no**"
        body.append([label, goal, f"{cpu:.2f}", None if rss is None else f"{rss:.0f}", met])
    for label, snippet, sizes, most in PAPER_SLOPES:
        times = [_cpu(got.get((snippet, n))) for n in sizes]
        slope = None if None in times else loglog_slope(list(sizes), times)
        body.append([f"{label}: log-log slope", f"<= {most:g}",
                     None if slope is None else f"{slope:.2f}", None,
                     "yes" if slope is not None and slope <= most else "**no**"])
    return body


def _bench_line(rows) -> str:
    """The bench suite's row: wall-clock seconds against the goal, and the CPU behind it."""
    suite, workers, goal_s = BENCH_SUITE
    head = f"`fabricopt bench --suite {suite} --workers {workers}`"
    got = [r for r in rows if r["kind"] == "task:speed.bench_suite"]
    if not got or got[-1]["status"] != "feasible":
        return f"{head}: {'not run' if not got else got[-1]['message']} (goal < {goal_s:g} s wall)."
    info = got[-1]["info"]
    met = "met" if info["wall_s"] < goal_s else "**not met**"
    return (f"{head}: {info['wall_s']:.1f} s wall ({info['cpu_s']:.1f} CPU s of the command "
            f"and its workers; {info['summary'] or 'no summary'}); goal < {goal_s:g} s wall "
            f"on an idle 2-core machine: {met} (wall time counts everything else the "
            f"machine runs).")


def _render(rows: list[dict], folder: Path, quick: bool) -> str:
    got = _measured(rows)
    csv = [[s, n, _cpu(r), r["info"].get("first_cpu_s"), _rss_mb(r),
            r["info"].get("objective"), r["status"], r["message"]]
           for (s, n), r in sorted(got.items())]
    write_csv(folder / "speed.csv", ["snippet", "size", "cpu_s", "first_cpu_s", "peak_rss_mb",
                                     "objective", "status", "message"], csv)
    lines = []
    if not quick:
        body = []
        for label, snippet, n, goal, test in TARGETS:
            r = got.get((snippet, n))
            cpu, rss = _cpu(r), _rss_mb(r)
            shown = (None if r is None else r["message"] if cpu is None else
                     f"{rss:.0f} MB" if goal.endswith("MB") else f"{cpu:.2f} s")
            met = cpu is not None and (test is None or test(cpu, rss or 0.0))
            body.append([label, goal, shown, "yes" if met else "**no**"])
        sizes = [n for n in SLOPE_SIZES if _cpu(got.get(("topoopt", n))) is not None]
        slope = loglog_slope(sizes, [_cpu(got[("topoopt", n)]) for n in sizes])
        body.append([f"`topoopt` log-log slope, {SLOPE_SIZES[0]} to {SLOPE_SIZES[-1]} servers",
                     f"<= {SLOPE_MAX:g}", None if slope is None else f"{slope:.2f}",
                     "yes" if slope is not None and slope <= SLOPE_MAX else "**no**"])
        lines += ["### Targets", "", markdown_table(["target", "goal", "measured",
                                                                "met"], body), ""]
        lines += ["### The papers' scale", "",
                  markdown_table(["call", "goal", "CPU s", "peak RSS (MB)", "met"],
                                 _paper_rows(got)), ""]
        lines += [_bench_line(rows), ""]
    header = ["call", "size", "CPU s", "peak RSS (MB)", "objective"]
    body = [[f"`{s}`", n, None if _cpu(r) is None else f"{_cpu(r):.3f}",
             None if _rss_mb(r) is None else f"{_rss_mb(r):.0f}",
             r["message"] if _cpu(r) is None else
             None if r["info"].get("objective") is None else f"{r['info']['objective']:.6g}"]
            for (s, n), r in sorted(got.items())]
    for r in rows:
        if r["kind"] == "task:speed.milp_share" and r["status"] == "feasible":
            i = r["info"]
            share = ratio(i["model_build_s"], i["solver_s"])
            lines += [f"`solve(generate('circuits', seed=0, gpus={r['sizes']['gpus']}, "
                      f"switches={r['sizes']['switches']}), 'milp', time_limit=300)`: "
                      f"{i['status']}, `model_build_s` {i['model_build_s']:.3f} s = "
                      + ("-" if share is None else f"{share:.2%}")
                      + f" of `solver_s` {i['solver_s']:.1f} s (target <= 5 %).", ""]
    lines += ["### Every point", "", markdown_table(header, body), "",
              f"CPU seconds (`time.process_time`): the least of {REPEATS} timed calls "
              "(1 for the minutes-long compares) "
              "(`timeit`'s convention; the first call's, with its first-use costs, is "
              "`first_cpu_s` in the CSV), the instance built untimed, in the run's own process (forked from the harness's warm "
              "forkserver, so peak RSS includes the 75-85 MB of the preloaded imports). "
              "`circuits-milp-build` at n GPUs uses max(8, n / 16) switches and includes "
              "`SparseModel.arrays()`. The machine is shared, so CPU seconds are upper "
              "bounds. CSV: `speed.csv`. Runtime over each kind's size ladder: the "
              "`scaling` experiment; the same calls on another checkout: "
              "`python scripts/speed_baseline.py --baseline DIR`."]
    return "\n".join(lines)


register_experiment(Experiment(
    name="speed", version=4, title="Speed: the target calls at scale",
    summary="CPU seconds and peak RSS of the target calls (topoopt, circuits exact, "
            "priorities crux, crux evaluate, MILP building), each in a fresh process",
    plan=_plan, render=_render))
