"""Every shell and Python code block of README.md and docs/ runs as written.

Each block runs alone, as a reader would paste it: in a fresh folder holding a copy of
``examples/``, shell blocks with ``bash -e`` (``fabricopt`` and ``python`` are this
interpreter), Python blocks in a fresh interpreter. A block that cannot run here says
why on its first line, where the reader sees it: ``# not run in CI: <reason>``.
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
    ids = {b.id for b in BLOCKS}
    assert {"README.md:13", "docs/tutorials/compare.rst"} & ids or len(ids) > 20
    assert all(b.code.strip() for b in BLOCKS)
    assert {b.language for b in BLOCKS} == {"sh", "python"}


def test_skipped_blocks_are_few_and_say_why():
    skipped = [b for b in BLOCKS if SKIP.match(b.code.splitlines()[0])]
    assert len(skipped) < len(BLOCKS) / 2, [b.id for b in skipped]


_SHELL_PRELUDE = f"""
fabricopt() {{ "{sys.executable}" -m fabricopt "$@"; }}
python() {{ "{sys.executable}" "$@"; }}
"""


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: b.id)
def test_block_runs_as_written(block, tmp_path):
    first = block.code.splitlines()[0]
    skip = SKIP.match(first)
    if skip:
        pytest.skip(skip.group(1))
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(tmp_path)]),
               MPLBACKEND="Agg")
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
