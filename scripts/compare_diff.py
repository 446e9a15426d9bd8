"""Diff ``fabricopt compare --json`` between this tree and another checkout.

Run from the repository root::

    python scripts/compare_diff.py --baseline /tmp/before          # the default commands
    python scripts/compare_diff.py --baseline /tmp/before -- simai-moe --gpus 384 \\
        --model simai --fabric elect-cluster,elect-flat            # one command of yours

``--baseline DIR`` is a checkout of the code before (``git archive REV | tar -x -C DIR``).
Each command runs on both trees, each in a fresh interpreter importing ``fabricopt`` from
its tree (the CPU seconds of each are printed, start-up included); the JSON rows are
compared field by field: text and counts must be equal,
numbers equal within ``--rel`` (default 1e-9; 0 asks for bit-equality). The default
commands are the README's ``compare`` examples at small ``--gpus`` (the SimAI one on every
fabric it prices, serial and concurrent). Exit status 1 if any row differs.

A script rather than a test: the code before is not part of this tree, and a test can
only compare the tree with itself.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
from pathlib import Path

from fabricopt.bench.metrics import primal_gap

ROOT = Path(__file__).resolve().parents[1]

#: The README's ``compare`` examples at small sizes (arguments after ``compare``).
COMMANDS = [
    ["simai-moe", "--gpus", "384", "--model", "simai", "--fabric", "elect-cluster"],
    ["simai-moe", "--gpus", "384", "--model", "simai", "--fabric",
     "elect-cluster,elect-flat,fat-tree,elect-cluster-400", "--bandwidths", "100,400,1600"],
    ["simai-moe", "--gpus", "384", "--model", "simai", "--fabric",
     "elect-cluster,elect-flat,fat-tree", "--mode", "concurrent"],
    ["simai-micro", "--gpus", "16", "--model", "simai", "--fabric",
     "elect-cluster,elect-flat,fat-tree,sip-ocs,sip-ring,direct-connect"],
    ["resnet50", "--gpus", "64", "--k", "1", "--bandwidths", "100,400,1600",
     "--fabrics", "elect-flat,sip-ocs,sip-ring"],
]


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(tree: Path, args: list[str], timeout_s: float) -> tuple[list[dict] | str, float]:
    """The JSON rows of ``fabricopt compare ARGS --json`` on ``tree`` (or the error),
    and the CPU seconds the run took (its process, start-up included)."""
    env = {**os.environ, "PYTHONPATH": str(tree), "OMP_NUM_THREADS": "1"}
    start = _children_cpu_s()
    try:
        done = subprocess.run([sys.executable, "-m", "fabricopt", "compare", *args, "--json",
                               "--quiet"], env=env, capture_output=True, text=True,
                              timeout=timeout_s, cwd=tree)
    except subprocess.TimeoutExpired:
        return f"over {timeout_s:.0f} s", _children_cpu_s() - start
    cpu_s = _children_cpu_s() - start
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        return (lines[-1] if lines else f"exit {done.returncode}"), cpu_s
    return json.loads(done.stdout), cpu_s


def differences(before, after, rel: float, where: str = "") -> tuple[list[str], float]:
    """Where two JSON values differ beyond ``rel``, and the largest relative difference
    of their numbers."""
    if isinstance(before, dict) and isinstance(after, dict):
        if before.keys() != after.keys():
            return [f"{where}: keys {sorted(before)} != {sorted(after)}"], 0.0
        found, worst = [], 0.0
        for key in before:
            got, w = differences(before[key], after[key], rel, f"{where}.{key}")
            found, worst = found + got, max(worst, w)
        return found, worst
    if isinstance(before, list) and isinstance(after, list):
        if len(before) != len(after):
            return [f"{where}: {len(before)} items != {len(after)}"], 0.0
        found, worst = [], 0.0
        for i, (b, a) in enumerate(zip(before, after)):
            got, w = differences(b, a, rel, f"{where}[{i}]")
            found, worst = found + got, max(worst, w)
        return found, worst
    numbers = (int, float)
    if (isinstance(before, numbers) and isinstance(after, numbers)
            and not isinstance(before, bool) and not isinstance(after, bool)):
        if before == after:
            return [], 0.0
        if not (math.isfinite(before) and math.isfinite(after)):
            return [f"{where}: {before!r} != {after!r}"], math.inf
        diff = primal_gap(after, before)  # |a - b| / max(|a|, |b|), nonzero here
        return ([f"{where}: {before!r} != {after!r} (rel {diff:.2e})"] if diff > rel else []), diff
    return ([] if before == after else [f"{where}: {before!r} != {after!r}"]), 0.0


def _short(result) -> str:
    return result if isinstance(result, str) else f"{len(result)} rows"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", required=True, type=Path, help="checkout of the code before")
    parser.add_argument("--rel", type=float, default=1e-9, help="largest relative difference")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per command")
    parser.add_argument("command", nargs="*", help="one compare command (after --)")
    args = parser.parse_args(argv)
    commands = [args.command] if args.command else COMMANDS
    failed = 0
    for command in commands:
        before, before_s = run(args.baseline, command, args.timeout)
        after, after_s = run(ROOT, command, args.timeout)
        line = (f"fabricopt compare {' '.join(command)} (CPU s: before {before_s:.1f}, "
                f"after {after_s:.1f})")
        if isinstance(before, str) or isinstance(after, str):
            same = before == after
            print(f"{'same' if same else 'DIFFERENT'}: {line}: before {_short(before)}, "
                  f"after {_short(after)}")
            failed += not same
            continue
        found, worst = differences(before, after, args.rel)
        exact = "bit-equal" if worst == 0 else f"largest relative difference {worst:.2e}"
        print(f"{'DIFFERENT' if found else 'same'}: {line}: {len(after)} rows, {exact}")
        for text in found[:20]:
            print(f"    {text}")
        failed += bool(found)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
