"""The checkout explains itself: nothing in it reads outside it or points at design
notes outside it (the user-facing reference is docs/)."""

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("fabricopt", "tests", "docs", "benchmarks", "examples", ".ci")
FILES = ("README.md", "BENCHMARKS.md", "pyproject.toml", "MANIFEST.in")
# Built from parts so that this file does not itself match the patterns it forbids.
_SHARED, _DESIGN = "sha" + "red", "DES" + "IGN"
OUTSIDE = re.compile(rf"{_DESIGN}(\.md)?\s*§|{_DESIGN}\.md|\.\./{_SHARED}|{_SHARED}/data"
                     rf"|/work/{_SHARED}")


def _texts():
    paths = [ROOT / name for name in FILES]
    for folder in FOLDERS:
        paths += [p for p in (ROOT / folder).rglob("*")
                  if p.is_file() and "_build" not in p.parts and "__pycache__" not in p.parts
                  and p.suffix in (".py", ".rst", ".md", ".toml", ".txt", ".json", "")]
    return [p for p in paths if p.is_file() and p != Path(__file__)]


def _lines_matching(paths, pattern) -> list[str]:
    """``path:line: text`` for every line of ``paths`` (except this file) ``pattern`` finds."""
    found = []
    for path in paths:
        if path == Path(__file__) or not path.is_file():
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if pattern.search(line):
                found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    return found


def test_nothing_points_outside_the_checkout():
    found = _lines_matching(_texts(), OUTSIDE)
    assert not found, "\n".join(found)


NOTES = re.compile(r"notes/(sipml|topoopt|crux)\.md")
NOTES_SCOPE = ("fabricopt", "tests", "docs", "benchmarks", "examples", "README.md")


def test_no_tracked_file_cites_the_developer_notes():
    # the notes live outside the checkout; docs/departures.rst is what docstrings cite
    tracked = subprocess.run(["git", "ls-files", "-z", "--", *NOTES_SCOPE], cwd=ROOT,
                             capture_output=True, check=False)
    names = tracked.stdout.decode().split("\0") if tracked.returncode == 0 else []
    paths = [ROOT / n for n in names if n] or _texts()   # outside git (an sdist): every text
    found = _lines_matching(paths, NOTES)
    assert not found, "\n".join(found)


def test_the_departures_page_has_the_labels_docstrings_cite():
    page = (ROOT / "docs" / "departures.rst").read_text()
    labels = set(re.findall(r"^\.\. _((?:sipml|topoopt|crux)-[0-9-]+):$", page, re.M))
    cited = set()
    for path in _texts():
        if path.suffix != ".py":
            continue
        for m in re.finditer(r"\b(sipml|topoopt|crux)-(\d+(?:\.\d+)?)\b", path.read_text()):
            cited.add(f"{m[1]}-{m[2].replace('.', '-')}")
    assert cited, "no docstring cites the departures page"
    assert cited <= labels, sorted(cited - labels)


def test_the_shipped_data_carries_its_licence():
    data = ROOT / "fabricopt" / "fabrics" / "data" / "simai"
    assert (data / "LICENSE").read_text().lstrip().startswith("Apache License")
    assert "aliyun/SimAI" in (data / "SOURCE.md").read_text()
    assert (ROOT / "LICENSE").read_text() == (data / "LICENSE").read_text()  # both Apache-2.0
