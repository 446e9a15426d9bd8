"""Hostile inputs: seeded mutations of valid instances, solutions and result envelopes.

Every case starts from a small valid instance of a kind (its ``generate``), the
solution a fast method finds for it and the envelope ``solve`` returns, and breaks one
thing: a field removed or added, a value of the wrong type, an extreme magnitude or a
value scaled by up to 1e300, a ragged matrix, a duplicated or unknown id, a reversed edge, a self-loop, the wrong
``problem``, a name holding control characters (a newline, ESC, CR, NUL, U+202E), a key
repeated in one object, or the file itself (truncated, not UTF-8, UTF-16, a byte-order
mark, nested 100,000 deep, a 5,000-digit integer, a megabyte string; a FIFO, a device
or a folder in its place). A case is fully determined by ``(kind, target,
family, seed)``, so the fuzz tests (which let hypothesis draw those) and
``fabricopt reproduce hostile`` (which enumerates them) try the same inputs.

Examples
--------
>>> case = mutate("circuits", "instance", "extreme", seed=3)
>>> case.kind, case.family, isinstance(case.data, bytes)
('circuits', 'extreme', True)
>>> mutate("circuits", "instance", "extreme", seed=3) == case
True
"""

from __future__ import annotations

from fabricopt.errors import InvalidArgument, SolverFailure

import functools
import json
import random
from dataclasses import dataclass, field
from typing import Any, Iterator

__all__ = ["FAST_METHODS", "BASE_SIZES", "TARGETS", "FAMILIES", "EXTREMES", "HOSTILE_NAMES",
           "SPECIAL_FILES", "Case", "base", "mutate", "cases"]

#: A fast method per kind: what an accepted instance must solve with.
FAST_METHODS = {"circuits": "greedy", "wavelengths": "greedy", "topology": "ring",
                "placement": "round-robin", "priorities": "varys", "crux": "ecmp"}

#: Sizes of the valid instances that mutations start from (small: fast to solve).
BASE_SIZES = {"circuits": {"gpus": 4, "switches": 2},
              "wavelengths": {"nodes": 6, "wavelengths": 2, "max_hops": 3},
              "topology": {"servers": 4, "degree": 2},
              "placement": {"ops": 8, "gpus": 3},
              "priorities": {"jobs": 4, "levels": 2},
              "crux": {"jobs": 2, "tors": 2, "hosts_per_tor": 2}}

#: What a case mutates: the instance, a bare solution, or a ``solve --json`` envelope.
TARGETS = ("instance", "solution", "envelope")

#: Values that break magnitudes: signs, zero, non-finite, the float extremes, integers
#: past int64 and float range.
EXTREMES = (-1, 0, -0.5, 0.5, float("nan"), float("inf"), float("-inf"), 1e308, -1e308,
            5e-324, 2 ** 70, 2 ** 63, 2 ** 62, 10 ** 9, 1e9, 1e-300, 10 ** 400)

_WRONG_TYPES = ("x", "", None, [], {}, [1, 2], {"a": 1}, True, False)
_BASES = 3  # distinct valid starting points per kind


@dataclass(frozen=True)
class Case:
    """One hostile input.

    Attributes
    ----------
    kind, target, family : str
        The problem kind, what is mutated (:data:`TARGETS`), and the mutation family.
    seed : int
    description : str
        What was done, e.g. ``"traffic_bytes[1][0] = nan"``.
    instance : bytes
        The instance file's bytes (mutated when ``target == "instance"``).
    data : bytes
        The mutated file's bytes (the instance's, for an instance target).
    obj : object or None
        The mutated JSON value for the Python API, None when only bytes can express it
        (truncated or undecodable files, nesting too deep for ``json.dumps``).
    special : str or None
        What stands at the file's path instead of a file holding ``data``: one of
        :data:`SPECIAL_FILES` (a FIFO nobody writes to, a link to ``/dev/zero`` or
        ``/dev/urandom``, a folder), None for a plain file.
    """

    kind: str
    target: str
    family: str
    seed: int
    description: str
    instance: bytes = field(repr=False)
    data: bytes = field(repr=False)
    obj: Any = field(default=None, repr=False)  # may hold a 5,000-digit int: no repr
    special: str | None = None

    def __eq__(self, other):  # NaN inside obj would make dataclass equality false
        return isinstance(other, Case) and (self.kind, self.target, self.family, self.seed,
                                            self.data) == (other.kind, other.target,
                                                           other.family, other.seed, other.data)

    def __hash__(self):
        return hash((self.kind, self.target, self.family, self.seed))


@functools.lru_cache(maxsize=None)
def _base_json(kind: str, index: int) -> tuple[str, str, str]:
    from fabricopt.problems import generate
    from fabricopt.methods import solve

    inst = generate(kind, seed=index + 1, **BASE_SIZES[kind])
    result = solve(inst, FAST_METHODS[kind])
    if result.solution is None:
        raise SolverFailure(f"{kind}: the fast method found no solution of base {index}")
    return (json.dumps(inst.to_dict()), json.dumps(result.solution.to_dict()),
            json.dumps(result.to_dict()))


def base(kind: str, index: int = 0) -> tuple[dict, dict, dict]:
    """Fresh copies of valid base ``index``: ``(instance, solution, envelope)`` JSON."""
    return tuple(json.loads(text) for text in _base_json(kind, index % _BASES))


def _encode(obj: Any) -> bytes:
    return json.dumps(obj).encode()


def _paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path (keys and indices) to a value in a JSON document, the root excluded."""
    out = []
    items = node.items() if isinstance(node, dict) else \
        enumerate(node) if isinstance(node, list) else ()
    for key, child in items:
        out.append(prefix + (key,))
        out += _paths(child, prefix + (key,))
    return out


def _get(doc: Any, path: tuple) -> Any:
    for key in path:
        doc = doc[key]
    return doc


def _name(path: tuple) -> str:
    out = ""
    for key in path:
        out += f"[{key}]" if isinstance(key, int) else (f".{key}" if out else str(key))
    return out or "<root>"


def _shape(doc: Any, path: tuple) -> tuple:
    """``path`` with list indices and the keys of id-keyed maps (more than 6 keys, e.g.
    crux ``links``) replaced by ``*``."""
    out, node = [], doc
    for key in path:
        out.append("*" if isinstance(node, list) or len(node) > 6 else key)
        node = node[key]
    return tuple(out)


def _pick(rng: random.Random, doc: Any, want=lambda path, value: True) -> tuple | None:
    """A random path among those ``want`` accepts: first a field uniformly (list indices
    ignored, so ``switches`` is as likely as some cell of ``traffic_bytes``), then one of
    its places."""
    shapes: dict[tuple, list[tuple]] = {}
    for p in _paths(doc):
        if want(p, _get(doc, p)):
            shapes.setdefault(_shape(doc, p), []).append(p)
    if not shapes:
        return None
    return rng.choice(shapes[rng.choice(sorted(shapes, key=repr))])


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


_SPLICE = "\u0000fuzz-splice\u0000"


def _spliced(doc: Any, path: tuple, text: str) -> bytes:
    """The document's bytes with the value at ``path`` replaced by raw JSON ``text``."""
    parent = _get(doc, path[:-1])
    parent[path[-1]] = _SPLICE
    return _encode(doc).replace(json.dumps(_SPLICE).encode(), text.encode())


# -- mutation families: each takes (rng, doc) and returns (description, bytes, obj) ----

def _missing(rng, doc):
    path = _pick(rng, doc, lambda p, v: isinstance(_get(doc, p[:-1]), dict))
    if path is None:
        return _empty(rng, doc)
    del _get(doc, path[:-1])[path[-1]]
    return f"{_name(path)} removed", _encode(doc), doc


def _extra(rng, doc):
    objects = [()] + [p for p in _paths(doc) if isinstance(_get(doc, p), dict)]
    path = rng.choice(objects)
    _get(doc, path)[rng.choice(["extra", "Problem", "speed_gbps", "", "id "])] = 1
    return f"{_name(path)} gained an unknown field", _encode(doc), doc


def _replace(doc, path, value, what=None):
    _get(doc, path[:-1])[path[-1]] = value
    text = what or repr(value)
    return f"{_name(path)} = {text}", _encode(doc), doc


def _wrong_type(rng, doc):
    path = _pick(rng, doc)
    if path is None:
        return _extra(rng, doc)
    return _replace(doc, path, rng.choice(_WRONG_TYPES))


def _bool(rng, doc):
    path = _pick(rng, doc, lambda p, v: _is_number(v)) or _pick(rng, doc)
    if path is None:
        return _extra(rng, doc)
    return _replace(doc, path, rng.choice([True, False]))


def _extreme(rng, doc):
    path = _pick(rng, doc, lambda p, v: _is_number(v)) or _pick(rng, doc)
    if path is None:
        return _extra(rng, doc)
    value = rng.choice(EXTREMES)
    return _replace(doc, path, value, "10**400" if value == 10 ** 400 else None)


def _scaled(rng, doc):
    path = _pick(rng, doc, lambda p, v: _is_number(v)) or _pick(rng, doc)
    if path is None:
        return _extra(rng, doc)
    factor = rng.choice([1e4, 1e-4, 1e300, 1e-300, 2 ** 64])
    value = _get(doc, path)
    scaled = value * factor if _is_number(value) else factor
    return _replace(doc, path, scaled, f"{value!r} * {factor:g}")


def _ragged(rng, doc):
    path = _pick(rng, doc, lambda p, v: isinstance(v, list) and v)
    if path is None:
        return _empty(rng, doc)
    items = _get(doc, path)
    if rng.random() < 0.5:
        del items[rng.randrange(len(items))]
        what = "lost an entry"
    else:
        items.append(json.loads(json.dumps(rng.choice(items))))
        what = "gained an entry"
    return f"{_name(path)} {what}", _encode(doc), doc


def _empty(rng, doc):
    path = _pick(rng, doc, lambda p, v: isinstance(v, (list, dict)))
    if path is None:
        return "the whole document emptied", _encode({}), {}
    value = [] if isinstance(_get(doc, path), list) else {}
    return _replace(doc, path, value)


def _strings(doc) -> list[str]:
    return sorted({v for p in _paths(doc) for v in [_get(doc, p)] if isinstance(v, str)})


def _duplicate(rng, doc):
    """Copy one string over another: duplicate ids, repeated deps, paths through a link
    twice, src == dst."""
    path = _pick(rng, doc, lambda p, v: isinstance(v, str) and p[-1] != "problem")
    names = _strings(doc)
    if path is None or len(names) < 2:
        return _ragged(rng, doc)
    return _replace(doc, path, rng.choice(names))


def _unknown_id(rng, doc):
    path = _pick(rng, doc, lambda p, v: isinstance(v, str) and p[-1] != "problem")
    if path is not None and rng.random() < 0.6:
        return _replace(doc, path, rng.choice(["nope", "j99", "l-missing", "0"]))
    path = _pick(rng, doc, lambda p, v: isinstance(v, int) and not isinstance(v, bool))
    if path is None:
        return _extra(rng, doc)
    return _replace(doc, path, _get(doc, path) + rng.choice([1, 7, 1000]))


def _edges(doc) -> list[tuple]:
    return [p for p in _paths(doc) if isinstance(v := _get(doc, p), dict)
            and {"src", "dst"} <= set(v)]


def _reverse_edge(rng, doc):
    """Add a reversed copy of an edge (a 2-cycle) or reverse one, or reverse a list."""
    edges = _edges(doc)
    if edges:
        path = rng.choice(edges)
        edge = dict(_get(doc, path))
        edge["src"], edge["dst"] = edge["dst"], edge["src"]
        parent = _get(doc, path[:-1])
        if isinstance(parent, list) and rng.random() < 0.7:
            parent.append(edge)
            return f"{_name(path)} reversed and appended (a cycle)", _encode(doc), doc
        return _replace(doc, path, edge, "its reverse")
    path = _pick(rng, doc, lambda p, v: isinstance(v, list) and len(v) > 1)
    if path is None:
        return _duplicate(rng, doc)
    return _replace(doc, path, list(reversed(_get(doc, path))), "reversed")


def _self_loop(rng, doc):
    edges = _edges(doc)
    if edges:
        path = rng.choice(edges)
        edge = _get(doc, path)
        edge["dst"] = edge["src"]
        return f"{_name(path)}.dst = its src", _encode(doc), doc
    # a pair / link / matrix diagonal: the same index on both sides
    path = _pick(rng, doc, lambda p, v: isinstance(v, list) and len(v) >= 2
                 and type(v[0]) is type(v[1]) and not isinstance(v[0], (list, dict)))
    if path is None:
        return _duplicate(rng, doc)
    items = _get(doc, path)
    items[1] = items[0]
    return f"{_name(path)}[1] = {_name(path)}[0]", _encode(doc), doc


def _wrong_problem(rng, doc):
    from fabricopt.problems import kinds

    value = rng.choice(list(kinds()) + ["circuit", "", None, 7, ["circuits"]])
    if isinstance(doc, dict) and "problem" in doc:
        return _replace(doc, ("problem",), value)
    doc = {"problem": value, **doc} if isinstance(doc, dict) else {"problem": value}
    return f"problem = {value!r} added", _encode(doc), doc


def _truncated(rng, doc):
    data = _encode(doc)
    cut = rng.randrange(len(data))
    return f"truncated at byte {cut} of {len(data)}", data[:cut], None


def _non_utf8(rng, doc):
    data = _encode(doc)
    if rng.random() < 0.5:
        return "UTF-16 encoded", json.dumps(doc).encode("utf-16"), None
    at = rng.randrange(len(data) + 1)
    junk = rng.choice([b"\xff", b"\xc3\x28", b"\xe9", b"\x80\x80"])
    return f"bytes {junk!r} at {at}", data[:at] + junk + data[at:], None


def _deep(rng, doc):
    depth = rng.choice([1000, 100_000])
    path = _pick(rng, doc)
    opener, closer = rng.choice([("[", "]"), ('{"a":', "}")])
    nested = opener * depth + "0" + closer * depth
    if path is None:
        return f"nested {depth} deep", nested.encode(), None
    return f"{_name(path)} nested {depth} deep", _spliced(doc, path, nested), None


def _huge_int(rng, doc):
    path = _pick(rng, doc, lambda p, v: _is_number(v)) or _pick(rng, doc)
    digits = rng.choice([400, 5000])
    literal = "9" * digits
    if path is None:
        return f"a {digits}-digit integer", literal.encode(), None
    obj = json.loads(json.dumps(doc))
    _get(obj, path[:-1])[path[-1]] = 10 ** digits - 1
    return f"{_name(path)} = a {digits}-digit integer", _spliced(doc, path, literal), obj


#: Names that a terminal would act on: a newline with a fake verdict line after it, ESC
#: sequences, a carriage return, NUL, the right-to-left override.
HOSTILE_NAMES = ("a\nfeasible: objective (min) 0", "\x1b[2J\x1b[31mred", "x\rfeasible",
                 "nul\x00byte", "\u202eevil", "tab\tand\x7fdel\x85nel\u2028line")


def _control_chars(rng, doc):
    """A string (an id, a name) replaced by a hostile name: everywhere it occurs (the
    file stays valid) or once (an unknown id, echoed in the error); without strings, a
    hostile unknown field."""
    name = rng.choice(HOSTILE_NAMES)
    path = _pick(rng, doc, lambda p, v: isinstance(v, str) and p[-1] != "problem")
    if path is None:
        objects = [()] + [p for p in _paths(doc) if isinstance(_get(doc, p), dict)]
        where = rng.choice(objects)
        _get(doc, where)[name] = 1
        return f"{_name(where)} gained the field {name!r}", _encode(doc), doc
    old = _get(doc, path)
    if rng.random() < 0.5:
        text = json.dumps(doc).replace(json.dumps(old), json.dumps(name))
        return f"{old!r} renamed {name!r} everywhere", text.encode(), json.loads(text)
    return _replace(doc, path, name)


_MARK = "\u0000fuzz-key\u0000"


def _duplicate_key(rng, doc):
    """A key written twice in one object (JSON parsers silently keep the last)."""
    objects = [p for p in [()] + _paths(doc) if isinstance(_get(doc, p), dict) and _get(doc, p)]
    if not objects:
        return _extra(rng, doc)
    path = rng.choice(objects)
    node = _get(doc, path)
    key = rng.choice(sorted(node))
    first = node[key] if rng.random() < 0.3 else rng.choice([0, -1, "x", None, [], 1e9])
    marked = {_MARK: 0, **node}
    if path:
        _get(doc, path[:-1])[path[-1]] = marked
    else:
        doc = marked
    text = _encode(doc).replace(json.dumps(_MARK).encode() + b": 0",
                                json.dumps(key).encode() + b": " + json.dumps(first).encode())
    return f"{_name(path + (key,))} written twice (first {first!r})", text, None


def _bom(rng, doc):
    """A UTF-8 byte-order mark before a valid document (allowed)."""
    return "a UTF-8 byte-order mark first", b"\xef\xbb\xbf" + _encode(doc), doc


#: What :func:`_special_file` puts at a file's path.
SPECIAL_FILES = ("fifo", "dev-zero", "dev-urandom", "folder")


def _special_file(rng, doc):
    """Not a file at all: reading a FIFO or a device never ends."""
    special = rng.choice(SPECIAL_FILES)
    return f"a {special} in place of the file", _encode(doc), None, special


def _huge_string(rng, doc):
    path = _pick(rng, doc)
    value = "x" * rng.choice([10_000, 1_000_000])
    if path is None:
        return _extra(rng, doc)
    return _replace(doc, path, value, f"a {len(value)}-character string")


_FAMILY_FUNCTIONS = {
    "missing": _missing, "extra": _extra, "wrong_type": _wrong_type, "bool": _bool,
    "extreme": _extreme, "scaled": _scaled, "ragged": _ragged, "empty": _empty, "duplicate": _duplicate,
    "unknown_id": _unknown_id, "reverse_edge": _reverse_edge, "self_loop": _self_loop,
    "wrong_problem": _wrong_problem, "truncated": _truncated, "non_utf8": _non_utf8,
    "deep_nesting": _deep, "huge_int_literal": _huge_int, "huge_string": _huge_string,
    "control_chars": _control_chars, "duplicate_key": _duplicate_key, "bom": _bom,
    "special_file": _special_file,
}

#: The mutation families, in a fixed order.
FAMILIES = tuple(_FAMILY_FUNCTIONS)


def mutate(kind: str, target: str, family: str, seed: int) -> Case:
    """The hostile input ``(kind, target, family, seed)``: deterministic.

    Raises
    ------
    ValueError
        For an unknown target or family.
    """
    if target not in TARGETS:
        raise InvalidArgument(f"target = {target!r}: must be one of {', '.join(TARGETS)}")
    if family not in _FAMILY_FUNCTIONS:
        raise InvalidArgument(f"family = {family!r}: must be one of {', '.join(FAMILIES)}")
    rng = random.Random(f"{kind}/{target}/{family}/{seed}")
    instance, solution, envelope = base(kind, rng.randrange(_BASES))
    doc = {"instance": instance, "solution": solution, "envelope": envelope}[target]
    description, data, obj, *special = _FAMILY_FUNCTIONS[family](rng, doc)
    inst_bytes = data if target == "instance" else _encode(instance)
    return Case(kind, target, family, seed, description, inst_bytes, data, obj,
                special[0] if special else None)


def cases(kinds, targets=TARGETS, families=FAMILIES, per_family: int = 10,
          start: int = 0) -> Iterator[Case]:
    """Every ``mutate(kind, target, family, seed)`` for ``seed`` in
    ``start .. start + per_family - 1``."""
    for kind in kinds:
        for target in targets:
            for family in families:
                for seed in range(start, start + per_family):
                    yield mutate(kind, target, family, seed)

