"""Hostile input: how many malformed files end the promised way, through the
CLI and the API.

Every case of :mod:`fabricopt.bench.hostile.mutations` (six kinds; instances, bare solutions
and ``solve --json`` envelopes; 22 mutation families; 6 seeds each: 2,376 files; quick:
circuits only, one seed) runs through :func:`fabricopt.bench.hostile.probe.probe` —
``python -m fabricopt solve`` / ``check`` in a process of its own, then the matching API
calls — inside a forked child with a 2 GB address-space limit and a per-call alarm. One
task per (kind, target, family) batch of seeds counts the outcomes:

- *clean errors*: exit 2, one stderr line of at most 400 characters, and the API raised
  a ``FabricError``;
- *accepted ok*: exit 0 or 1 and, for an instance, the kind's fast method returned a
  finite objective that ``check`` accepts;
- *tracebacks*: an exception outside ``FabricError`` (CLI or API), or a child that died;
- *hangs*: the alarm fired, or the child gave no answer at its hard limit;
- *non-finite*: inf or nan in an objective, bound or ``info``;
- *multi-line*: more than one line on stderr;
- *raw control*: a control or format character (ESC, CR, NUL, U+202E, a newline inside a
  message ...) printed raw;
- *other broken*: an overlong stderr line, exit 2 while the API raised nothing, or a
  fast method failing on an accepted instance.

A case may count in several columns. The probe decides every outcome; the task only
counts what it reports.
"""

from __future__ import annotations

from pathlib import Path

from fabricopt.bench.tasks import TaskSpec, register_task
from fabricopt.bench.experiments import Experiment, markdown_table, register_experiment, write_csv

__all__ = ["COLUMNS", "MEMORY_BYTES"]

#: The address-space limit of each probe's child.
MEMORY_BYTES = 2 << 30
COLUMNS = ("tried", "clean errors", "accepted ok", "tracebacks", "hangs", "non-finite",
           "multi-line", "raw control", "other broken")
_FLAGS = (("tracebacks", "traceback"), ("hangs", "hang"), ("non-finite", "non_finite"),
          ("multi-line", "multi_line"), ("raw control", "raw_control"))

_FULL = {"seeds": 6, "kinds": None, "timeout_s": 5.0}
_QUICK = {"seeds": 1, "kinds": ("circuits",), "timeout_s": 5.0}


def _in_child(case, timeout_s: float) -> dict:
    """Probe ``case`` in a forked child; a child that dies or overruns is reported as
    a crash or a hang (the probe cannot report on itself then)."""
    import os
    import pickle
    import resource
    import select
    import signal
    import time

    from fabricopt.bench.hostile.probe import STARTUP_S, probe

    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        os.close(read)
        code = 0
        try:
            resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            o = probe(case, timeout_s)
            reply = {"failures": o.failures, "clean": o.clean_error,
                     **{key: getattr(o, key) for _, key in _FLAGS}}
            with os.fdopen(write, "wb") as f:
                pickle.dump(reply, f)
        except BaseException:  # noqa: BLE001 — a crash is reported by the parent
            code = 1
        os._exit(code)
    os.close(write)
    deadline = time.monotonic() + 2 * timeout_s + STARTUP_S + 10
    chunks = []
    while True:
        left = deadline - time.monotonic()
        ready, _, _ = select.select([read], [], [], max(0.0, left))
        if not ready:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(read)
            return {"failures": ["killed: no answer at the hard limit"], "clean": False,
                    **{key: key == "hang" for _, key in _FLAGS}}
        chunk = os.read(read, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read)
    _, status = os.waitpid(pid, 0)
    if not chunks:
        return {"failures": [f"the probe died (wait status {status}, e.g. out of memory)"],
                "clean": False, **{key: key == "traceback" for _, key in _FLAGS}}
    return pickle.loads(b"".join(chunks))


def _tags(reply: dict) -> list[str]:
    """The columns one probe's reply counts in."""
    tags = ["tried"]
    if reply["clean"]:
        return tags + ["clean errors"]
    if not reply["failures"]:
        return tags + ["accepted ok"]
    tags += [c for c, key in _FLAGS if reply[key]]
    return tags if len(tags) > 1 else tags + ["other broken"]


@register_task("hostile.batch")
def batch_task(kind: str, target: str, family: str, seeds: int, timeout_s: float) -> dict:
    """Probe ``mutate(kind, target, family, seed)`` for seeds ``0 .. seeds - 1``, each in
    a forked child: the outcome counts and the broken promises."""
    import os

    from fabricopt.bench.hostile.mutations import mutate

    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    counts = dict.fromkeys(COLUMNS, 0)
    broken = []
    for seed in range(seeds):
        case = mutate(kind, target, family, seed)
        reply = _in_child(case, timeout_s)
        tags = _tags(reply)
        for tag in tags:
            counts[tag] += 1
        if not ({"clean errors", "accepted ok"} & set(tags)):
            broken.append(f"{kind}/{target}/{family}/{seed} ({case.description[:70]}): "
                          f"{'; '.join(reply['failures'])[:240]}")
    return {"value": float(counts["tried"] - counts["clean errors"] - counts["accepted ok"]),
            "counts": counts, "broken": broken}


def _plan(suite: str, quick: bool) -> list:
    from fabricopt.problems import kinds as all_kinds
    from fabricopt.bench.hostile.mutations import FAMILIES, TARGETS

    v = _QUICK if quick else _FULL
    from fabricopt.bench.hostile.probe import STARTUP_S

    hard_s = v["seeds"] * (2 * v["timeout_s"] + STARTUP_S + 10) + 60
    return [TaskSpec(suite, f"hostile/{kind}/{target}/{family}", "hostile.batch",
                     {"kind": kind, "target": target, "family": family,
                      "seeds": v["seeds"], "timeout_s": v["timeout_s"]},
                     method="probe", time_limit_s=hard_s)
            for kind in (v["kinds"] or all_kinds()) for target in TARGETS
            for family in FAMILIES]


def _render(rows: list[dict], folder: Path, quick: bool) -> str:
    from fabricopt.bench.hostile.mutations import FAMILIES
    from fabricopt.bench.hostile.probe import STARTUP_S

    done = [r for r in rows if r["kind"] == "task:hostile.batch" and r["status"] == "feasible"]
    per: dict[str, dict[str, dict[str, int]]] = {"kind": {}, "family": {}, "target": {}}
    broken = []
    for r in sorted(done, key=lambda r: r["instance_id"]):
        for axis in per:
            into = per[axis].setdefault(r["sizes"][axis], dict.fromkeys(COLUMNS, 0))
            for c in COLUMNS:
                into[c] += r["info"]["counts"][c]
        broken += r["info"]["broken"]
    total = {c: sum(v[c] for v in per["kind"].values()) for c in COLUMNS}
    seeds = done[0]["sizes"]["seeds"] if done else 0
    timeout = done[0]["sizes"]["timeout_s"] if done else 0
    lines = [f"{total['tried']:,} files: {len(per['kind'])} kinds x {len(per['target'])} "
             f"targets x {len(per['family'])} mutation families x {seeds} seeds, each probed "
             f"in a forked child ({MEMORY_BYTES >> 30} GB address space, {timeout:g} s alarm "
             f"per call, {STARTUP_S:g} s more for the command's interpreter to start). Columns: the module docstring of "
             "`fabricopt.bench.experiments.hostile`.", ""]
    csv = []
    for axis, order in (("kind", sorted(per["kind"])), ("target", sorted(per["target"])),
                        ("family", [f for f in FAMILIES if f in per["family"]])):
        body = [[name] + [per[axis][name][c] for c in COLUMNS] for name in order]
        if axis == "kind":
            body.append(["**all**"] + [total[c] for c in COLUMNS])
        csv += [[axis] + b for b in body]
        lines += [markdown_table([axis, *COLUMNS], body), ""]
    write_csv(folder / "hostile.csv", ["axis", "name", *COLUMNS], csv)
    if broken:
        lines += [f"First {min(12, len(broken))} of {len(broken)} broken promises:", ""]
        lines += [f"- {b}" for b in broken[:12]] + [""]
    lines.append("CSV: `hostile.csv`.")
    return "\n".join(lines)


register_experiment(Experiment(
    name="hostile", version=2, title="Hostile input: malformed files through the CLI and API",
    summary="2,376 mutated instance/solution/envelope files through fabricopt solve/check and "
            "the API, each in a forked child: clean errors, tracebacks, hangs, non-finite",
    plan=_plan, render=_render))
