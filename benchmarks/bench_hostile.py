"""Hostile input: how many malformed files end the promised way, through the CLI and the API.

Run from the repository root::

    python benchmarks/bench_hostile.py                  # 6 seeds per (kind, target, family)
    python benchmarks/bench_hostile.py --seeds 2 --kinds circuits,crux

Every case of :mod:`fabricopt.testing.mutations` (all six kinds; instances, solutions and
``solve --json`` envelopes; every mutation family) runs through
:func:`fabricopt.testing.probe.probe` — ``fabricopt solve`` / ``fabricopt check`` in
process, then the matching API calls — inside a forked child with a 2 GB address-space
limit, killed at ``--timeout`` seconds. It prints markdown for BENCHMARKS.md
(``## hostile input``): inputs tried, clean errors (exit 2, one short line, a
``FabricError``), accepted inputs that kept every promise, tracebacks (CLI tracebacks or
API exceptions outside ``FabricError``), hangs, non-finite answers, and other broken
promises (a multi-line or overlong stderr, exit 2 without a ``FabricError``, a fast method
that fails on an accepted instance), per kind and per family, then the first few failures.
"""

from __future__ import annotations

import argparse
import collections
import os
import pickle
import resource
import select
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

from fabricopt.problems import kinds as all_kinds  # noqa: E402
from fabricopt.testing.mutations import FAMILIES, TARGETS, cases  # noqa: E402
from fabricopt.testing.probe import probe  # noqa: E402

_MEMORY_BYTES = 2 << 30
_COLUMNS = ("tried", "clean errors", "accepted ok", "tracebacks", "hangs", "non-finite",
            "other broken")


def _in_child(case, timeout_s: float) -> dict:
    """Probe ``case`` in a forked child; a child that dies or overruns is a hang/crash."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        os.close(read)
        code = 0
        try:
            resource.setrlimit(resource.RLIMIT_AS, (_MEMORY_BYTES, _MEMORY_BYTES))
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            o = probe(case, timeout_s)
            reply = {"failures": o.failures, "traceback": o.traceback, "hang": o.hang,
                     "non_finite": o.non_finite, "clean": o.clean_error}
            with os.fdopen(write, "wb") as f:
                pickle.dump(reply, f)
        except BaseException:  # noqa: BLE001 — a crash is reported by the parent
            code = 1
        os._exit(code)
    os.close(write)
    deadline = time.monotonic() + 2 * timeout_s + 10
    chunks = []
    while True:
        left = deadline - time.monotonic()
        ready, _, _ = select.select([read], [], [], max(0.0, left))
        if not ready:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(read)
            return {"failures": ["killed: no answer at the hard limit"], "hang": True,
                    "traceback": False, "non_finite": False, "clean": False}
        chunk = os.read(read, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read)
    _, status = os.waitpid(pid, 0)
    if not chunks:
        return {"failures": [f"the probe died (wait status {status}, e.g. out of memory)"],
                "hang": False, "traceback": True, "non_finite": False, "clean": False}
    return pickle.loads(b"".join(chunks))


def _row(name: str, counts: collections.Counter) -> str:
    return "| " + " | ".join([name] + [str(counts[c]) for c in _COLUMNS]) + " |"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=6, help="seeds per (kind, target, family)")
    parser.add_argument("--kinds", default=",".join(all_kinds()))
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds per call")
    parser.add_argument("--show", type=int, default=12, help="failures to list")
    args = parser.parse_args(argv)
    kinds = [k for k in args.kinds.split(",") if k]
    per_kind: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    per_family: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    failures = []
    start = time.perf_counter()
    for case in cases(kinds, TARGETS, FAMILIES, per_family=args.seeds):
        r = _in_child(case, args.timeout)
        tags = ["tried"]
        if r["clean"]:
            tags.append("clean errors")
        elif not r["failures"]:
            tags.append("accepted ok")
        else:
            tags += [c for c, key in (("tracebacks", "traceback"), ("hangs", "hang"),
                                      ("non-finite", "non_finite")) if r[key]]
            if len(tags) == 1:
                tags.append("other broken")
            failures.append(f"{case.kind}/{case.target}/{case.family}/{case.seed} "
                            f"({case.description[:70]}): {'; '.join(r['failures'])[:240]}")
        for tag in tags:
            per_kind[case.kind][tag] += 1
            per_family[case.family][tag] += 1
    elapsed = time.perf_counter() - start
    header = "| {} | " + " | ".join(_COLUMNS) + " |"
    rule = "|---|" + "---:|" * len(_COLUMNS)
    total = sum(per_kind.values(), collections.Counter())
    print(f"`python benchmarks/bench_hostile.py --seeds {args.seeds} --timeout {args.timeout:g}`"
          f" ({elapsed:.0f} s)\n")
    print(header.format("kind"), rule, sep="\n")
    for kind in kinds:
        print(_row(kind, per_kind[kind]))
    print(_row("**all**", total))
    print()
    print(header.format("family"), rule, sep="\n")
    for family in FAMILIES:
        print(_row(family, per_family[family]))
    if failures:
        print(f"\nFirst {min(args.show, len(failures))} of {len(failures)} broken promises:\n")
        for line in failures[:args.show]:
            print(f"- {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
