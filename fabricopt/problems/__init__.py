"""Problem kinds: instance and solution types, JSON, validation, ``check`` and ``evaluate``.

This package is the ground floor and the single source of truth for what a feasible
solution is and what it scores: every method's result is checked and scored here.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Mapping

from ..errors import InvalidInstance, InvalidSolution
from ._kind import CheckResult, NamedBound, ProblemKind, get_kind, kind_of, kinds, register_kind
from . import circuits  # noqa: F401  (registers the kind)
from . import topology  # noqa: F401  (registers the kind)
from . import wavelengths  # noqa: F401  (registers the kind)
from . import placement  # noqa: F401  (registers the kind)
from . import crux, priorities  # noqa: F401  (register the Crux kinds)

__all__ = ["CheckResult", "NamedBound", "ProblemKind", "get_kind", "kind_of", "kinds", "register_kind",
           "check", "evaluate", "instance_from_dict", "solution_from_dict", "to_dict",
           "read_json", "write_json", "MAX_INTEGER_DIGITS"]


def instance_from_dict(data: Mapping[str, Any]):
    """Build the instance a JSON object describes, dispatching on its ``"problem"`` field."""
    if not isinstance(data, Mapping):
        raise InvalidInstance(f"expected a JSON object, got {type(data).__name__}")
    if "problem" not in data:
        raise InvalidInstance("problem: missing required field")
    return get_kind(data["problem"]).instance_from_dict(data)


def solution_from_dict(kind: str | ProblemKind, data: Mapping[str, Any]):
    """Build a solution of ``kind`` from a JSON object."""
    if isinstance(kind, str):
        kind = get_kind(kind)
    if not isinstance(data, Mapping):
        raise InvalidSolution(f"expected a JSON object, got {type(data).__name__}")
    return kind.solution_from_dict(data)


def to_dict(obj: Any) -> dict[str, Any]:
    """The JSON object of an instance, solution or result."""
    return obj.to_dict()


def _same_kind(instance, solution) -> ProblemKind:
    kind = kind_of(instance)
    if not isinstance(instance, kind.instance_type):
        raise InvalidInstance(f"{type(instance).__name__} is a solution, not an instance")
    if not isinstance(solution, kind.solution_type):
        raise InvalidSolution(f"{type(solution).__name__} is not a {kind.name} solution")
    return kind


def check(instance, solution) -> CheckResult:
    """Is ``solution`` feasible for ``instance``? The first violated rule in words if not.

    Examples
    --------
    >>> from fabricopt.problems.circuits import CircuitsInstance, CircuitsSolution
    >>> inst = CircuitsInstance(1, 100.0, [[0, 5e6], [0, 0]])
    >>> check(inst, CircuitsSolution([[None, None]]))
    CheckResult(feasible=False, reason='traffic_bytes[0][1] = 5000000.0 has no circuit 0->1')
    """
    return _same_kind(instance, solution).check(instance, solution)


def evaluate(instance, solution) -> float:
    """The objective of ``solution`` on ``instance`` as docs/formats.rst defines it.

    Examples
    --------
    >>> from fabricopt.problems.circuits import CircuitsInstance, CircuitsSolution
    >>> inst = CircuitsInstance(1, 8.0, [[0, 1e9], [0, 0]])
    >>> evaluate(inst, CircuitsSolution([[1, None]]))  # 8e9 bits over one 8 Gbps circuit
    1.0
    """
    return float(_same_kind(instance, solution).evaluate(instance, solution))


#: Longest integer literal a JSON file may hold: a float stops at 309 digits, and
#: converting longer literals costs time quadratic in their length.
MAX_INTEGER_DIGITS = 320


def read_json(source) -> Any:
    """Parse JSON from a path, ``"-"`` (standard input) or an open file.

    The file must be UTF-8 (a byte-order mark is allowed). Anything that is not valid
    JSON — broken syntax, undecodable bytes, ``NaN`` / ``Infinity``, an integer literal
    of more than :data:`MAX_INTEGER_DIGITS` digits, nesting deeper than the parser can
    follow — raises ``InvalidInstance`` with one line naming the file and the problem.

    Examples
    --------
    >>> import io
    >>> read_json(io.BytesIO(b'{"problem": "circuits"}'))
    {'problem': 'circuits'}
    >>> read_json(io.BytesIO(b"[" * 100000 + b"]" * 100000))
    Traceback (most recent call last):
    ...
    fabricopt.errors.InvalidInstance: <file>: not valid JSON (nested too deeply)
    """
    name = str(source)
    try:
        if source == "-" or source is sys.stdin:
            name = "<stdin>"
            stream = sys.stdin
            data = stream.buffer.read() if hasattr(stream, "buffer") else stream.read()
        elif hasattr(source, "read"):
            name = getattr(source, "name", "<file>")
            data = source.read()
        else:
            data = Path(source).read_bytes()
    except OSError as exc:
        raise InvalidInstance(f"{name}: cannot read ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:  # a file opened in text mode
        raise InvalidInstance(f"{name}: not UTF-8 text ({_undecodable(exc)})") from None
    if isinstance(data, (bytes, bytearray)):
        try:
            text = bytes(data).decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InvalidInstance(f"{name}: not UTF-8 text ({_undecodable(exc)})") from None
    else:
        text = data
    try:
        return json.loads(text, parse_constant=_reject_constant, parse_int=_parse_int)
    except json.JSONDecodeError as exc:
        raise InvalidInstance(f"{name}: not valid JSON ({exc.msg} at line {exc.lineno} "
                              f"column {exc.colno})") from None
    except RecursionError:
        raise InvalidInstance(f"{name}: not valid JSON (nested too deeply)") from None
    except InvalidInstance as exc:
        raise InvalidInstance(f"{name}: {exc}") from None


def _undecodable(exc: UnicodeDecodeError) -> str:
    bad = exc.object[exc.start:exc.start + 1]
    hint = "; it looks like UTF-16" if exc.object[:2] in (b"\xff\xfe", b"\xfe\xff") else ""
    return f"byte 0x{bad.hex()} at offset {exc.start}{hint}"


def _parse_int(token: str) -> int:
    digits = len(token.lstrip("-"))
    if digits > MAX_INTEGER_DIGITS:
        raise InvalidInstance(f"not valid JSON (an integer of {digits} digits; numbers "
                              f"must fit a float, at most {MAX_INTEGER_DIGITS} digits)")
    return int(token)


def _reject_constant(token: str):
    raise InvalidInstance(f"JSON contains {token}: numbers must be finite")


def write_json(data: Any, target=None) -> str:
    """Write ``data`` as JSON to a path, ``"-"`` / ``None`` (return the text) or a file."""
    text = json.dumps(data, indent=None, allow_nan=False) + "\n"
    if target is None:
        return text
    if target == "-":
        sys.stdout.write(text)
    elif hasattr(target, "write"):
        target.write(text)
    else:
        Path(target).write_text(text)
    return text
