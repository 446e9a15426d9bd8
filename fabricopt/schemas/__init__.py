"""JSON Schemas (draft 2020-12) of every problem kind's instance and solution, and of
the result envelope, shipped as package data.

A schema checks a document's structure — fields, types, constant ranges — so other
tools can validate fabricopt's JSON without Python; :func:`fabricopt.load` is still
the full validator (it also checks square matrices, known ids, acyclic dependencies and
bounds that depend on other fields). The formats are described in the docs' Formats
page; ``fabricopt schema KIND [--solution | --result]`` prints a schema, and
``fabricopt schema compare`` the schema of ``fabricopt compare --json``.

Examples
--------
>>> from fabricopt.schemas import schema
>>> s = schema("circuits")
>>> s["$schema"], s["required"]
('https://json-schema.org/draft/2020-12/schema', ['problem', 'switches', 'circuit_gbps', 'traffic_bytes'])
>>> schema("circuits", "result")["properties"]["solution"]["anyOf"][1]["title"]
'circuits solution'
"""

from __future__ import annotations

import copy
import json
from functools import lru_cache
from pathlib import Path

__all__ = ["schema", "schema_path", "compare_schema", "WHICH"]

#: What a schema describes.
WHICH = ("instance", "solution", "result")

_HERE = Path(__file__).resolve().parent


def schema_path(kind: str, which: str = "instance") -> Path:
    """The shipped file of a kind's ``instance`` or ``solution`` schema (or of the
    kind-independent ``result`` envelope).

    Raises
    ------
    InvalidInstance
        For an unknown kind or ``which``.
    """
    from fabricopt.problems import get_kind
    from fabricopt.errors import InvalidInstance

    get_kind(kind)
    if which not in WHICH:
        raise InvalidInstance(f"which = {which!r}: must be one of {', '.join(WHICH)}")
    return _HERE / ("result.json" if which == "result" else f"{kind}.{which}.json")


@lru_cache(maxsize=None)
def _read(path: Path) -> dict:
    return json.loads(path.read_text())


def schema(kind: str, which: str = "instance") -> dict:
    """The JSON Schema of ``kind``'s ``instance``, ``solution`` or ``result`` envelope.

    The ``result`` schema is the envelope with ``problem`` fixed to ``kind`` and
    ``solution`` either null or the kind's solution.

    Parameters
    ----------
    kind : str
        A problem kind, e.g. ``"circuits"``.
    which : {"instance", "solution", "result"}

    Returns
    -------
    dict
        A draft 2020-12 schema (a fresh copy: changing it changes nothing shipped).
    """
    out = copy.deepcopy(_read(schema_path(kind, which)))
    if which == "result":
        solution = copy.deepcopy(_read(schema_path(kind, "solution")))
        del solution["$schema"], solution["$id"]
        out["$id"] = f"urn:fabricopt:schema:{kind}.result"
        out["title"] = f"{kind} result"
        out["properties"]["problem"] = {"const": kind, "description": "The problem kind."}
        out["properties"]["solution"] = {"anyOf": [{"type": "null"}, solution]}
    return out


def compare_schema() -> dict:
    """The JSON Schema of ``fabricopt compare --json``: an array with one object per
    fabric and bandwidth, of an op-graph workload or of a traffic (SimAI) workload.

    Examples
    --------
    >>> [row["title"] for row in compare_schema()["items"]["oneOf"]]
    ['op-graph row', 'traffic row']
    """
    return copy.deepcopy(_read(_HERE / "compare.json"))
