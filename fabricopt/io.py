"""Reading and writing fabricopt's JSON: instances, solutions and result envelopes.

Every file fabricopt reads goes through :func:`read_json` (bounded, one-line errors);
:func:`load`, :func:`load_solution` and :func:`dump` are re-exported as
``fabricopt.load`` and friends.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any, Mapping

from fabricopt.errors import InvalidArgument, InvalidInstance, InvalidSolution, printable
from fabricopt.methods.result import Result
from fabricopt.problems import instance_from_dict, solution_from_dict
from fabricopt.problems._validate import shown

__all__ = ["load", "load_solution", "dump", "read_json", "write_json", "check_writable", "MAX_INTEGER_DIGITS",
           "MAX_JSON_BYTES"]


def load(source) -> Any:
    """Read an instance — or a whole result envelope — from a JSON file.

    Parameters
    ----------
    source : str, path, file or dict
        A path, ``"-"`` for standard input, an open file, or JSON already parsed (a
        dict, as :func:`fabricopt.solve` takes).

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
    data = _parsed(source)
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
    data = _parsed(source)
    if Result.is_envelope(data):
        result = Result.from_dict(data)
        if result.solution is None:
            raise InvalidSolution(f"the result envelope ({result.status}) holds no solution")
        return result.solution
    return solution_from_dict(kind, data)


def _parsed(source) -> Any:
    """JSON already parsed (a mapping) as is; anything else through :func:`read_json`."""
    return source if isinstance(source, Mapping) else read_json(source)


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

#: Most bytes :func:`read_json` reads from one source (512 MiB): ten times the largest
#: instance the benchmark suites write, and small enough that an endless stream
#: (standard input fed by ``/dev/zero``) ends in a one-line error, not in MemoryError.
MAX_JSON_BYTES = 512 << 20

_SOURCE_TYPES = "a path, '-' for standard input, an open file or a parsed JSON object"


def read_json(source) -> Any:
    """Parse JSON from a path, ``"-"`` (standard input) or an open file.

    The file must be UTF-8 (a byte-order mark is allowed) and a regular file (or
    standard input): a FIFO, a device such as ``/dev/zero`` or a folder is refused
    before anything is read, and at most :data:`MAX_JSON_BYTES` bytes are read from
    any source. Anything that is not valid JSON — broken syntax, undecodable bytes,
    ``NaN`` / ``Infinity``, a key repeated in one object, an integer literal of more
    than :data:`MAX_INTEGER_DIGITS` digits, nesting deeper than the parser can follow —
    raises ``InvalidInstance`` with one line naming the file and the problem.

    Parameters
    ----------
    source : str, path or file
        A path, ``"-"`` for standard input, or a file open for reading (text or binary).

    Returns
    -------
    object
        The parsed JSON value.

    Raises
    ------
    InvalidInstance
        If the source cannot be read or is not valid JSON.
    InvalidArgument
        If ``source`` is none of the above (None, a number, ...).

    Examples
    --------
    >>> import io
    >>> read_json(io.BytesIO(b'{"problem": "circuits"}'))
    {'problem': 'circuits'}
    >>> read_json(io.BytesIO(b"[" * 100000 + b"]" * 100000))
    Traceback (most recent call last):
    ...
    fabricopt.errors.InvalidInstance: <file>: not valid JSON (nested too deeply)
    >>> read_json(io.StringIO('{"gpus": 4, "gpus": 8}'))
    Traceback (most recent call last):
    ...
    fabricopt.errors.InvalidInstance: <file>: not valid JSON (the key 'gpus' appears twice in one object)
    """
    name, data = _read_bounded(source)
    if isinstance(data, (bytes, bytearray)):
        try:
            text = bytes(data).decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InvalidInstance(f"{name}: not UTF-8 text ({_undecodable(exc)})") from None
    else:
        text = data.removeprefix("\ufeff")  # a text-mode file keeps the byte-order mark
    try:
        return json.loads(text, parse_constant=_reject_constant, parse_int=_parse_int,
                          object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise InvalidInstance(f"{name}: not valid JSON ({exc.msg} at line {exc.lineno} "
                              f"column {exc.colno})") from None
    except RecursionError:
        raise InvalidInstance(f"{name}: not valid JSON (nested too deeply)") from None
    except InvalidInstance as exc:
        raise InvalidInstance(f"{name}: {exc}") from None


def _read_bounded(source) -> tuple[str, bytes | str]:
    """``(name, content)`` of a source, at most :data:`MAX_JSON_BYTES` of it."""
    if isinstance(source, (bytes, bytearray)) or not (
            isinstance(source, (str, os.PathLike)) or hasattr(source, "read")):
        raise InvalidArgument(f"source = {shown(source)}: must be {_SOURCE_TYPES}")
    name = printable(str(source))
    try:
        if source == "-" or source is sys.stdin:
            name = "<stdin>"
            stream = getattr(sys.stdin, "buffer", sys.stdin)
            data = stream.read(MAX_JSON_BYTES + 1)
        elif hasattr(source, "read"):
            name = printable(str(getattr(source, "name", "<file>")))
            data = source.read(MAX_JSON_BYTES + 1)
        else:
            with _open_regular(Path(source), name) as stream:
                data = stream.read(MAX_JSON_BYTES + 1)
    except OSError as exc:
        raise InvalidInstance(f"{name}: cannot read ({exc.strerror or exc})") from None
    except InvalidInstance:
        raise
    except UnicodeDecodeError as exc:  # a file opened in text mode
        raise InvalidInstance(f"{name}: not UTF-8 text ({_undecodable(exc)})") from None
    except ValueError as exc:  # a path with a NUL byte; a closed file
        raise InvalidInstance(f"{name}: cannot read ({exc})") from None
    if not isinstance(data, (bytes, bytearray, str)):
        raise InvalidArgument(f"{name}: its read() returned {type(data).__name__}, "
                              f"not text or bytes")
    if len(data) > MAX_JSON_BYTES:
        raise InvalidInstance(f"{name}: larger than {MAX_JSON_BYTES:,} bytes, the most "
                              f"fabricopt reads from one JSON file")
    return name, data


def _open_regular(path: Path, name: str):
    """Open ``path`` for reading in binary, refusing what is not a regular file *before*
    opening it (opening a FIFO blocks until someone writes to it)."""
    mode = path.stat().st_mode
    if not stat.S_ISREG(mode):
        what = ("a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
                else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
                else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")
        raise InvalidInstance(f"{name}: cannot read (it is {what}, not a regular file; "
                              f"use - to read standard input)")
    return path.open("rb")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise InvalidInstance(f"not valid JSON (the key {shown(key)} appears twice in "
                                      f"one object)")
            seen.add(key)
    return out


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
    """Write ``data`` as JSON to a path, ``"-"`` / ``None`` (return the text) or a file.

    A path is written atomically: to a temporary file beside it, then renamed over it,
    so a reader never sees half a file and a failed write leaves what was there.

    Raises
    ------
    InvalidArgument
        If the path cannot be written (its folder is missing or read-only, it is a
        folder, the disk is full), naming the path and the reason.

    Examples
    --------
    >>> write_json({"a": 1})
    '{"a": 1}\\n'
    """
    text = json.dumps(data, indent=None, allow_nan=False) + "\n"
    if target is None:
        return text
    if target == "-":
        sys.stdout.write(text)
    elif hasattr(target, "write"):
        target.write(text)
    else:
        _write_atomically(Path(target), text.encode())
    return text


def check_writable(target) -> Path:
    """The path ``target`` names, after checking that a file can be written there: its
    folder exists and is writable and it is not itself a folder. Commands call it before
    the work whose result they will write.

    Raises
    ------
    InvalidArgument
        Naming the path and what is wrong with it.

    Examples
    --------
    >>> check_writable("/no/such/folder/r.json")
    Traceback (most recent call last):
    ...
    fabricopt.errors.InvalidArgument: /no/such/folder/r.json: cannot write (the folder /no/such/folder does not exist)
    """
    path = Path(target)
    name = printable(str(path))
    folder = path.parent
    if path.is_dir():
        raise InvalidArgument(f"{name}: cannot write (it is a folder; name a file)")
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise InvalidArgument(f"{name}: cannot write (the folder {printable(str(folder))} "
                              f"{what})")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InvalidArgument(f"{name}: cannot write (the folder {printable(str(folder))} "
                              f"is not writable)")
    if path.exists() and not os.access(path, os.W_OK):
        raise InvalidArgument(f"{name}: cannot write (the file is read-only)")
    return path


def _write_atomically(path: Path, data: bytes) -> None:
    check_writable(path)
    temp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            with os.fdopen(fd, "wb") as stream:
                stream.write(data)
        finally:
            if path.exists():
                os.chmod(temp, stat.S_IMODE(path.stat().st_mode))
        os.replace(temp, path)
    except OSError as exc:
        temp.unlink(missing_ok=True)
        raise InvalidArgument(f"{printable(str(path))}: cannot write "
                              f"({exc.strerror or exc})") from None
