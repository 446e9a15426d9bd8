"""Every shell and Python code block of README.md and docs/ runs as written.

Each block runs alone, as a reader would paste it at the root of a clone: in a fresh
folder laid out like the checkout (its folders linked, ``examples/`` and the top-level
files copied, so that what a block writes stays there), shell blocks with ``bash -e``
(``fabricopt`` and ``python`` are this interpreter), Python blocks in a fresh
interpreter. A block that cannot run here says why in a line of its own, where the
reader sees it: ``# not run in CI: <reason>``. The README's test command is the one CI
runs itself (.ci/run).
(The ``>>>`` examples of the tutorials run as doctests in tests/test_docs.py.)
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [ROOT / "README.md"] + sorted(p for p in (ROOT / "docs").rglob("*.rst")
                                        if "_build" not in p.parts)
LANGUAGES = {"sh": "sh", "bash": "sh", "shell": "sh", "python": "python"}
SKIP = re.compile(r"^#\s*not run in CI:\s*(\S.*)$", re.IGNORECASE)
_FENCE = re.compile(r"^```(\w+)\s*\n(.*?)^```", re.MULTILINE | re.DOTALL)
_DIRECTIVE = re.compile(r"^(\s*)\.\. code-block::\s*(\w+)\s*$")


@dataclass(frozen=True)
class Block:
    path: Path
    line: int
    language: str
    code: str

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def markdown_blocks(path: Path) -> list[Block]:
    text = path.read_text()
    return [Block(path, text[:m.start()].count("\n") + 1, LANGUAGES[m.group(1)], m.group(2))
            for m in _FENCE.finditer(text) if m.group(1) in LANGUAGES]


def rst_blocks(path: Path) -> list[Block]:
    lines = path.read_text().splitlines()
    out = []
    for i, line in enumerate(lines):
        m = _DIRECTIVE.match(line)
        if not m or m.group(2) not in LANGUAGES:
            continue
        indent, body = len(m.group(1)), []
        for following in lines[i + 1:]:
            if following.strip() and len(following) - len(following.lstrip()) <= indent:
                break
            body.append(following)
        while body and (not body[0].strip() or body[0].strip().startswith(":")):
            body.pop(0)  # the blank line and the directive's options
        out.append(Block(path, i + 1, LANGUAGES[m.group(2)],
                         textwrap.dedent("\n".join(body)).strip() + "\n"))
    return out


BLOCKS = [b for p in SOURCES
          for b in (markdown_blocks(p) if p.suffix == ".md" else rst_blocks(p))]


def test_the_runner_finds_the_blocks():
    files = {b.path.name for b in BLOCKS}
    assert {"README.md", "compare.rst", "property_test.rst", "export.rst"} <= files
    assert all(b.code.strip() for b in BLOCKS)
    assert {b.language for b in BLOCKS} == {"sh", "python"}
    python = [b for b in BLOCKS if b.path.name == "property_test.rst" and b.language == "python"]
    assert python and python[0].code.startswith("import fabricopt\n")  # dedented, options dropped


def _readme_test_command() -> str:
    """The line .ci/run runs: the first line of the sh block after "Install and run the
    tests"."""
    text = (ROOT / "README.md").read_text().split("Install and run the tests", 1)[1]
    return text.split("```sh\n", 1)[1].splitlines()[0]


def skip_reason(block: Block) -> str | None:
    for line in block.code.splitlines():
        match = SKIP.match(line.strip())
        if match:
            return match.group(1)
    if block.path.name == "README.md" and block.code.splitlines()[0] == _readme_test_command():
        return "CI (.ci/run) runs the README's test command itself"
    return None


def test_skipped_blocks_are_few_and_say_why():
    # the README's test command runs in CI all the same (.ci/run runs it): not counted
    skipped = [b for b in BLOCKS if skip_reason(b) and any(
        SKIP.match(line.strip()) for line in b.code.splitlines())]
    assert len(skipped) < len(BLOCKS) / 2, [b.id for b in skipped]


_SHELL_PRELUDE = f"""
fabricopt() {{ "{sys.executable}" -m fabricopt "$@"; }}
python() {{ "{sys.executable}" "$@"; }}
"""


# A block that runs one of the experiments (``fabricopt reproduce NAME``) takes from 10 s
# to a minute; the slow test_quick_variant_runs_and_renders (tests/bench/
# test_experiments.py) runs every experiment's quick variant, so these run under the mark.
_RUNS_EXPERIMENT = re.compile(r"^\s*fabricopt\s+reproduce\s+(?!-)\S", re.MULTILINE)


def runs_an_experiment(block: Block) -> bool:
    return block.language == "sh" and bool(_RUNS_EXPERIMENT.search(block.code))


def test_blocks_that_run_an_experiment_are_found():
    heavy = [b for b in BLOCKS if runs_an_experiment(b)]
    assert {b.path.name for b in heavy} >= {"benchmarks.rst", "gallery.rst"}
    assert not any(runs_an_experiment(b) for b in BLOCKS if b.path.name == "README.md")
    assert runs_an_experiment(Block(ROOT, 1, "sh", "fabricopt reproduce --list\n"
                                                    "fabricopt reproduce topoopt --quick\n"))
    assert not runs_an_experiment(Block(ROOT, 1, "sh", "fabricopt reproduce --list\n"))


@pytest.mark.parametrize("block", [pytest.param(b, id=b.id, marks=[pytest.mark.slow]
                                                if runs_an_experiment(b) else [])
                                   for b in BLOCKS])
def test_block_runs_as_written(block, tmp_path):
    reason = skip_reason(block)
    if reason:
        pytest.skip(reason)
    for entry in ROOT.iterdir():
        if entry.name.startswith(".") or entry.name in ("build", "dist"):
            continue
        if entry.is_file():
            shutil.copyfile(entry, tmp_path / entry.name)
        elif entry.name == "examples":
            shutil.copytree(entry, tmp_path / entry.name)
        else:
            (tmp_path / entry.name).symlink_to(entry, target_is_directory=True)
    env = dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg")
    env.pop("FABRICOPT_PLUGINS", None)
    if block.language == "sh":
        command = ["bash", "-e", "-o", "pipefail", "-c", _SHELL_PRELUDE + block.code]
    else:
        script = tmp_path / "block.py"
        script.write_text(block.code)
        command = [sys.executable, str(script)]
    proc = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, (f"{block.id} exited {proc.returncode}\n{block.code}\n"
                                  f"{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}")
