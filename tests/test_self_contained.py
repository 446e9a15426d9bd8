"""The checkout explains itself: nothing in it reads outside it or points at design
notes outside it (the user-facing reference is docs/)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("fabricopt", "tests", "docs", "benchmarks", "examples", ".ci")
FILES = ("README.md", "BENCHMARKS.md", "pyproject.toml", "MANIFEST.in")
OUTSIDE = re.compile(r"DESIGN(\.md)?\s*§|DESIGN\.md|\.\./shared|shared/data|/work/shared")


def _texts():
    paths = [ROOT / name for name in FILES]
    for folder in FOLDERS:
        paths += [p for p in (ROOT / folder).rglob("*")
                  if p.is_file() and "_build" not in p.parts and "__pycache__" not in p.parts
                  and p.suffix in (".py", ".rst", ".md", ".toml", ".txt", ".json", "")]
    return [p for p in paths if p.is_file() and p != Path(__file__)]


def test_nothing_points_outside_the_checkout():
    found = []
    for path in _texts():
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line):
                found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not found, "\n".join(found)


def test_the_shipped_data_carries_its_licence():
    data = ROOT / "fabricopt" / "fabrics" / "data" / "simai"
    assert (data / "LICENSE").read_text().lstrip().startswith("Apache License")
    assert "aliyun/SimAI" in (data / "SOURCE.md").read_text()
    assert (ROOT / "LICENSE").read_text() == (data / "LICENSE").read_text()  # both Apache-2.0
