"""Paper scenarios as data: every number of an experiment's setup with its source.

A scenario is a JSON file under ``fabricopt/bench/scenarios/<paper>/<name>.json``::

    {"format": "fabricopt-scenario/1",
     "paper": "crux",
     "name": "fig19",
     "title": "One GPT beside 2, 3 or 4 BERT-8 jobs on shared uplinks",
     "values": {
         "hosts": {"value": 12, "source": "paper: Crux §6.1 (testbed)"},
         "jitter": {"value": 0.1, "source": "assumption: ±10 % compute jitter"},
         "cases": [{"bert_jobs": {"value": 2, "source": "paper: Crux Fig. 19"}}]}}

Every number (and every boolean or string that is a setting rather than a label) is
an object ``{"value": ..., "source": "..."}``; ``values`` may nest objects and lists
of them freely. A source starts with one of :data:`SOURCE_KINDS`:

- ``paper:`` a section, table or figure of the paper (``paper: TopoOpt §5.1, Table 2``);
- ``artifact:`` a file of the authors' artifact (``artifact: topoopt/run_dlrm.sh``);
- ``calibrated:`` fitted once to a published number, which the source names;
- ``assumption:`` ours, with the reason.

:func:`load_scenario` validates a file and returns a :class:`Scenario`: ``values`` with
the wrappers removed (plain numbers), and :meth:`Scenario.source` /
:meth:`Scenario.table` for the provenance that reports print beside each number.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Iterator, Mapping

from fabricopt.errors import InvalidArgument
from fabricopt.io import read_json

__all__ = ["Scenario", "load_scenario", "scenarios", "SOURCE_KINDS", "FORMAT"]

#: The ``format`` field of a version-1 scenario.
FORMAT = "fabricopt-scenario/1"
#: The prefixes a ``source`` may start with.
SOURCE_KINDS = ("paper:", "artifact:", "calibrated:", "assumption:")
_TOP_KEYS = ("format", "paper", "name", "title", "values")
_PACKAGE = "fabricopt.bench"
_FOLDER = "scenarios"


def _is_leaf(node: Any) -> bool:
    return isinstance(node, Mapping) and "value" in node and "source" in node


def _unwrap(node: Any, where: str, sources: dict[str, str]) -> Any:
    """The plain value of ``node``; records each leaf's source under its dotted path."""
    if _is_leaf(node):
        extra = set(node) - {"value", "source", "note"}
        if extra:
            raise InvalidArgument(f"{where}: unknown keys {sorted(extra)} beside value/source")
        source = node["source"]
        if not isinstance(source, str) or not source.startswith(SOURCE_KINDS):
            raise InvalidArgument(f"{where}.source = {source!r}: must start with one of "
                                  f"{', '.join(SOURCE_KINDS)}")
        value = node["value"]
        if isinstance(value, (Mapping, list)) and not _all_plain(value):
            raise InvalidArgument(f"{where}.value: a sourced value holds plain data only")
        sources[where] = source
        return value
    if isinstance(node, Mapping):
        return {key: _unwrap(child, f"{where}.{key}", sources) for key, child in node.items()}
    if isinstance(node, list):
        return [_unwrap(child, f"{where}[{i}]", sources) for i, child in enumerate(node)]
    if isinstance(node, (int, float)) and not isinstance(node, bool):
        raise InvalidArgument(f"{where} = {node!r}: a number without a source (write "
                              f'{{"value": {node!r}, "source": "paper: ..."}})')
    return node  # labels (strings, booleans, null) need no source


def _all_plain(node: Any) -> bool:
    if isinstance(node, Mapping):
        return not _is_leaf(node) and all(_all_plain(v) for v in node.values())
    if isinstance(node, list):
        return all(_all_plain(v) for v in node)
    return True


@dataclass(frozen=True)
class Scenario:
    """One validated scenario file.

    Attributes
    ----------
    paper, name, title : str
    values : dict
        The setup with every ``{"value", "source"}`` wrapper replaced by its value.
    sources : dict
        Dotted path (``values.cases[0].bert_jobs``) to its source.
    path : str
        Where the file was read from.
    """

    paper: str
    name: str
    title: str
    values: dict
    sources: dict
    path: str

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    def source(self, path: str) -> str:
        """The source of the value at ``path`` (``"hosts"`` or ``"cases[0].bert_jobs"``)."""
        full = path if path.startswith("values") else f"values.{path}"
        try:
            return self.sources[full]
        except KeyError:
            raise InvalidArgument(f"{self.paper}/{self.name}: no sourced value at {path!r}") \
                from None

    def items(self) -> Iterator[tuple[str, Any, str]]:
        """``(path, value, source)`` of every sourced value, in file order."""
        for full, source in self.sources.items():
            yield full.removeprefix("values."), _get(self.values, full.removeprefix("values.")), \
                source

    def table(self) -> str:
        """A markdown table of every sourced value, for reports and docs."""
        lines = [f"Scenario `{self.paper}/{self.name}`: {self.title}", "",
                 "| setting | value | source |", "|---|---|---|"]
        for path, value, source in self.items():
            lines.append(f"| `{path}` | {json.dumps(value)} | {source} |")
        return "\n".join(lines)


def _get(values: Any, path: str) -> Any:
    node = values
    for part in path.replace("[", ".[").split("."):
        if not part:
            continue
        node = node[int(part[1:-1])] if part.startswith("[") else node[part]
    return node


def _parse(data: Any, where: str) -> Scenario:
    if not isinstance(data, Mapping):
        raise InvalidArgument(f"{where}: a scenario is a JSON object")
    for key in _TOP_KEYS:
        if key not in data:
            raise InvalidArgument(f"{where}: {key}: missing required field")
    extra = set(data) - set(_TOP_KEYS) - {"notes"}
    if extra:
        raise InvalidArgument(f"{where}: unknown fields {sorted(extra)}")
    if data["format"] != FORMAT:
        raise InvalidArgument(f"{where}: format = {data['format']!r}: expected {FORMAT!r}")
    sources: dict[str, str] = {}
    values = _unwrap(data["values"], "values", sources)
    if not isinstance(values, dict):
        raise InvalidArgument(f"{where}: values must be a JSON object")
    return Scenario(str(data["paper"]), str(data["name"]), str(data["title"]), values, sources,
                    where)


def load_scenario(paper: str, name: str | None = None) -> Scenario:
    """Read and validate a scenario: a shipped one by ``(paper, name)``, or a file path.

    Examples
    --------
    >>> import json, os, tempfile
    >>> doc = {"format": FORMAT, "paper": "demo", "name": "tiny", "title": "t",
    ...        "values": {"hosts": {"value": 12, "source": "paper: §6.1"}}}
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "s.json")
    ...     _ = open(path, "w").write(json.dumps(doc))
    ...     s = load_scenario(path)
    >>> s["hosts"], s.source("hosts")
    (12, 'paper: §6.1')
    """
    if name is None:
        return _parse(read_json(paper), str(paper))
    if "/" in paper or "/" in name or paper.startswith(".") or name.startswith("."):
        raise InvalidArgument(f"scenario {paper!r}/{name!r}: not a shipped scenario name")
    path = resources.files(_PACKAGE) / _FOLDER / paper / f"{name}.json"
    if not path.is_file():
        raise InvalidArgument(f"scenario {paper}/{name}: not shipped (have: "
                              f"{', '.join(scenarios(paper)) or 'none'})")
    with path.open("rb") as f:
        return _parse(read_json(f), f"{paper}/{name}")


def scenarios(paper: str | None = None) -> list[str]:
    """The shipped scenarios, as ``paper/name`` (or the names of one paper's)."""
    root = Path(str(resources.files(_PACKAGE) / _FOLDER))
    if paper is not None:
        return sorted(p.stem for p in (root / paper).glob("*.json"))
    return sorted(f"{p.parent.name}/{p.stem}" for p in root.glob("*/*.json"))
