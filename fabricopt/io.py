"""Reading and writing fabricopt's JSON: instances, solutions and result envelopes.

Every file fabricopt reads goes through :func:`read_json` (bounded, one-line errors);
:func:`load`, :func:`load_solution` and :func:`dump` are re-exported as
``fabricopt.load`` and friends.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from fabricopt.errors import InvalidInstance, InvalidSolution
from fabricopt.methods.result import Result
from fabricopt.problems import instance_from_dict, solution_from_dict

__all__ = ["load", "load_solution", "dump", "read_json", "write_json", "MAX_INTEGER_DIGITS"]


def load(source) -> Any:
    """Read an instance — or a whole result envelope — from a JSON file.

    Parameters
    ----------
    source : str, path or file
        A path, ``"-"`` for standard input, or an open text file.

    Returns
    -------
    instance or Result
        The instance its ``"problem"`` field names, or a :class:`Result` when the file
        is a ``fabricopt solve --json`` envelope.

    Examples
    --------
    >>> import os, tempfile
    >>> from fabricopt import generate, solve
    >>> inst = generate("circuits", seed=1, gpus=4, switches=2)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = dump(inst, os.path.join(tmp, "i.json"))
    ...     _ = dump(solve(inst, "exact"), os.path.join(tmp, "r.json"))
    ...     load(os.path.join(tmp, "i.json")) == inst, load(os.path.join(tmp, "r.json")).status
    (True, 'optimal')
    """
    data = read_json(source)
    if Result.is_envelope(data):
        return Result.from_dict(data)
    return instance_from_dict(data)


def load_solution(source, kind: str) -> Any:
    """Read a bare solution of problem ``kind`` (or the solution inside an envelope).

    Examples
    --------
    >>> import os, tempfile
    >>> from fabricopt import generate, solve
    >>> inst = generate("circuits", seed=1, gpus=4, switches=2)
    >>> result = solve(inst, "greedy")
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = dump(result, os.path.join(tmp, "r.json"))
    ...     _ = dump(result.solution, os.path.join(tmp, "s.json"))
    ...     [load_solution(os.path.join(tmp, name), "circuits") == result.solution
    ...      for name in ("r.json", "s.json")]
    [True, True]
    """
    data = read_json(source)
    if Result.is_envelope(data):
        result = Result.from_dict(data)
        if result.solution is None:
            raise InvalidSolution(f"the result envelope ({result.status}) holds no solution")
        return result.solution
    return solution_from_dict(kind, data)


def dump(obj: Any, target=None) -> str:
    """Write an instance, solution or result as JSON to ``target`` (a path, ``"-"``, a
    file, or None to only return the text).

    Examples
    --------
    >>> from fabricopt.problems.circuits import CircuitsInstance
    >>> print(dump(CircuitsInstance(1, 8.0, [[0, 1e9], [0, 0]])), end="")
    {"problem": "circuits", "switches": 1, "circuit_gbps": 8.0, "traffic_bytes": [[0.0, 1000000000.0], [0.0, 0.0]]}
    """
    return write_json(obj.to_dict(), target)


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
