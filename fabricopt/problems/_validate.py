"""Field validation shared by every problem kind.

Each helper checks one value and raises :class:`~fabricopt.errors.InvalidInstance`
(or the error class passed in) with the one-line message format of docs/errors.rst:
``<field> = <value>: <rule>``.
"""

from __future__ import annotations

import math
import reprlib
from numbers import Integral, Real
from typing import Any, Mapping

import numpy as np

from fabricopt.errors import InvalidInstance, printable
from fabricopt.problems._matrix import FrozenMatrix

__all__ = [
    "MIN_MAGNITUDE",
    "MAX_SHOWN_CHARS",
    "shown",
    "fail",
    "reject_unknown_keys",
    "require",
    "as_int",
    "as_float",
    "as_matrix",
    "matrix_array",
    "as_id",
    "as_list",
    "as_object",
    "as_seed",
]


#: Smallest non-zero magnitude of a number: below it, products such as
#: ``share * 2*(g-1)/g * bytes`` underflow to 0, and a method and ``check`` could
#: disagree on whether a pair has traffic at all.
MIN_MAGNITUDE = 1e-300

#: Longest echo of a value (and of a field name) in an error message; the rest is cut
#: and its length given, so that one bad value can never flood a terminal.
MAX_SHOWN_CHARS = 60
_MAX_FIELD_CHARS = 2 * MAX_SHOWN_CHARS

_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxlist, _REPR.maxtuple, _REPR.maxdict = 3, 6, 6, 4
_REPR.maxstring = _REPR.maxother = MAX_SHOWN_CHARS


def shown(value: Any) -> str:
    """``repr(value)`` cut to :data:`MAX_SHOWN_CHARS` characters, with "…" and the length.

    Examples
    --------
    >>> shown(2.5)
    '2.5'
    >>> shown("x" * 1000)
    "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx… (1000 characters)"
    >>> shown(10 ** 100), shown(10 ** 5000)
    ('<an integer of 101 digits>', '<an integer of ~5001 digits>')
    """
    if isinstance(value, str) and len(value) > MAX_SHOWN_CHARS:
        return repr(value[:MAX_SHOWN_CHARS])[:-1] + f"… ({len(value)} characters)"
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        return f"<an integer of {_digits(value)} digits>"
    try:
        text = _REPR.repr(value)
    except (ValueError, RecursionError):
        text = f"<{type(value).__name__}>"
    container = isinstance(value, (list, tuple, dict))
    if len(text) > MAX_SHOWN_CHARS:
        size = f"{len(value)} entries" if container else f"{len(text)} characters"
        return text[:MAX_SHOWN_CHARS] + f"… ({size})"
    if container and len(value) > _REPR.maxlist:  # reprlib already cut it
        return f"{text} ({len(value)} entries)"
    return text


def _digits(n: int) -> str:
    try:
        return str(len(str(abs(n))))
    except ValueError:  # past Python's int-to-str limit: estimate from the bits
        return f"~{int(n.bit_length() * math.log10(2)) + 1}"


def fail(field: str, value: Any, rule: str, error: type[Exception] = InvalidInstance):
    """Raise ``error`` with the message ``"<field> = <value>: <rule>"``, the value shown
    by :func:`shown` (and an overlong field name cut likewise; control characters of a
    name taken from the input escaped by :func:`~fabricopt.errors.printable`)."""
    field = printable(field)
    if len(field) > _MAX_FIELD_CHARS:
        field = field[:_MAX_FIELD_CHARS] + "…"
    raise error(f"{field} = {shown(value)}: {rule}")


def require(data: Mapping[str, Any], name: str, error: type[Exception] = InvalidInstance,
            where: str = ""):
    """Return ``data[name]``; a missing key is an error naming the field (prefixed by
    ``where``, the path of a nested object, e.g. ``jobs[2]``)."""
    if not isinstance(data, Mapping):
        raise error(f"expected a JSON object, got {type(data).__name__}")
    if name not in data:
        prefix = f"{where}." if where else ""
        raise error(f"{prefix}{name}: missing required field")
    return data[name]


def reject_unknown_keys(data: Mapping[str, Any], allowed, where: str = "",
                        error: type[Exception] = InvalidInstance) -> None:
    """Reject keys outside ``allowed``: a typo must not be silently ignored."""
    extra = sorted((key for key in data if key not in allowed), key=str)
    if extra:
        prefix = f"{where}." if where else ""
        name = extra[0] if isinstance(extra[0], str) else shown(extra[0])
        if len(name) > MAX_SHOWN_CHARS:
            name = shown(name)
        raise error(f"{prefix}{name}: unknown field (allowed: {', '.join(sorted(allowed))})")


def as_int(field: str, value: Any, *, minimum: int | None = None,
           maximum: int | None = None, error: type[Exception] = InvalidInstance) -> int:
    """An integer (a float with an integral value is accepted; bools are not)."""
    if type(value) is int:  # the common case, without the abstract-class checks
        return _within(field, value, minimum, maximum, error)
    if isinstance(value, bool) or not isinstance(value, Real):
        fail(field, value, "must be an integer", error)
    if not isinstance(value, Integral):
        if not math.isfinite(value) or value != int(value):
            fail(field, value, "must be an integer", error)
    return _within(field, int(value), minimum, maximum, error)


def as_float(field: str, value: Any, *, minimum: float | None = None,
             positive: bool = False, maximum: float | None = None,
             error: type[Exception] = InvalidInstance) -> float:
    """A finite real number, optionally bounded."""
    if type(value) is not float and (isinstance(value, bool) or not isinstance(value, Real)):
        fail(field, value, "must be a number", error)
    try:
        value = float(value)
    except OverflowError:  # an integer beyond the float range
        fail(field, value, "must be finite", error)
    if not math.isfinite(value):
        fail(field, value, "must be finite", error)
    if 0 < abs(value) < MIN_MAGNITUDE:
        fail(field, value, f"too small: a non-zero value must be at least {MIN_MAGNITUDE:g} "
                           f"in magnitude (smaller ones vanish in derived quantities)", error)
    if positive and value <= 0:
        fail(field, value, "must be > 0", error)
    return _within(field, value, minimum, maximum, error, spec="g")


def _within(field: str, value, minimum, maximum, error: type[Exception], spec: str = ""):
    """``value``, or an error naming the bound it breaks (shown with format ``spec``)."""
    if minimum is not None and value < minimum:
        fail(field, value, f"must be >= {minimum:{spec}}", error)
    if maximum is not None and value > maximum:
        fail(field, value, f"must be <= {maximum:{spec}}", error)
    return value


def as_list(field: str, value: Any, *, length: int | None = None,
            error: type[Exception] = InvalidInstance) -> list:
    """A JSON array (list, tuple or NumPy array), optionally of a given length.

    A NumPy array becomes nested lists of Python scalars, so an ``np.zeros((n, n))``
    (or a list of 1-D arrays) is accepted wherever a matrix is.

    Examples
    --------
    >>> as_list("traffic_bytes", np.zeros((2, 2)))
    [[0.0, 0.0], [0.0, 0.0]]
    """
    if isinstance(value, FrozenMatrix):
        value = value.array
    if isinstance(value, np.ndarray):
        value = value.tolist() if value.ndim else value.item()
    if not isinstance(value, (list, tuple)):
        fail(field, value, "must be a list", error)
    if length is not None and len(value) != length:
        raise error(f"{field}: has {len(value)} entries, expected {shown(length)}")
    return list(value)


def as_matrix(field: str, value: Any, size: int, *, zero_diagonal: bool = True,
              error: type[Exception] = InvalidInstance) -> FrozenMatrix:
    """A ``size`` x ``size`` matrix of finite numbers >= 0, as a :class:`FrozenMatrix`
    (a tuple of row tuples over a read-only array; ``value`` itself if it is one).

    A traffic matrix's diagonal must be 0: a GPU never sends over the fabric to itself.

    Examples
    --------
    >>> m = as_matrix("traffic_bytes", np.array([[0, 2.5], [1, 0]]), 2)
    >>> m == ((0.0, 2.5), (1.0, 0.0)), m.array.flags.writeable
    (True, False)
    """
    if isinstance(value, FrozenMatrix) and len(value) == size:
        if _valid_array(value.array, zero_diagonal):
            return value
        value = value.array   # the checks below name the bad cell
    if (isinstance(value, np.ndarray) and value.dtype == np.float64
            and value.shape == (size, size) and _valid_array(value, zero_diagonal)):
        # floats all: no cell to type-check; copied, as the caller may write to it
        return FrozenMatrix(np.array(value, order="C"))
    rows = as_list(field, value, length=size, error=error)
    fast = _fast_matrix(rows, size, zero_diagonal)
    if fast is not None:
        return FrozenMatrix(fast)
    out = []  # the slow path names the first bad cell
    for i, row in enumerate(rows):
        row = as_list(f"{field}[{i}]", row, length=size, error=error)
        cells = []
        for j, cell in enumerate(row):
            x = as_float(f"{field}[{i}][{j}]", cell, minimum=0.0, error=error)
            if zero_diagonal and i == j and x != 0:
                fail(f"{field}[{i}][{j}]", x, "the diagonal must be 0 (no traffic to itself)", error)
            cells.append(x)
        out.append(cells)
    return FrozenMatrix(np.array(out, dtype=float).reshape(size, size))


_PLAIN_NUMBERS = (float, int)


def _fast_matrix(rows: list, size: int, zero_diagonal: bool) -> np.ndarray | None:
    """The validated matrix by numpy when every cell is a plain valid number, else None.

    Validating 1024 x 1024 cells one by one takes ~0.7 s; this takes ~0.05 s. Any doubt
    (another type, a bad value) returns None and the cell-by-cell path reports it.
    """
    if not all(isinstance(row, (list, tuple)) and len(row) == size for row in rows):
        return None
    if not all(type(x) in _PLAIN_NUMBERS for row in rows for x in row):
        return None  # bools, strings, numpy scalars, None: let the slow path judge
    try:
        a = np.array(rows, dtype=float).reshape(size, size)
    except (ValueError, OverflowError):
        return None
    return a if _valid_array(a, zero_diagonal) else None


def _valid_array(a: np.ndarray, zero_diagonal: bool) -> bool:
    """Is every cell of the square float array ``a`` valid?"""
    if not np.isfinite(a).all() or (a < 0).any() or (zero_diagonal and np.diag(a).any()):
        return False
    return not ((a > 0) & (a < MIN_MAGNITUDE)).any()


def matrix_array(matrix) -> np.ndarray:
    """What :func:`as_matrix` returned, as a read-only square float array (the
    :class:`FrozenMatrix`'s own, without a copy).

    Examples
    --------
    >>> a = matrix_array(as_matrix("traffic_bytes", [[0, 2], [1, 0]], 2))
    >>> a.tolist(), a.flags.writeable
    ([[0.0, 2.0], [1.0, 0.0]], False)
    """
    if isinstance(matrix, FrozenMatrix):
        return matrix.array
    n = len(matrix)
    a = np.array(matrix, dtype=float).reshape(n, n)
    a.flags.writeable = False
    return a


def as_id(field: str, value: Any, error: type[Exception] = InvalidInstance) -> str:
    """A non-empty string identifier."""
    if not isinstance(value, str) or not value:
        fail(field, value, "must be a non-empty string", error)
    return value


def as_object(field: str, value: Any, allowed, error: type[Exception] = InvalidInstance
              ) -> Mapping[str, Any]:
    """A JSON object with no keys outside ``allowed``; a record with ``to_dict`` (one of
    our dataclasses) is accepted as the object it writes."""
    if not isinstance(value, Mapping) and hasattr(value, "to_dict"):
        value = value.to_dict()
    if not isinstance(value, Mapping):
        fail(field, value, f"must be an object with {', '.join(allowed)}", error)
    reject_unknown_keys(value, allowed, field, error)
    return value


def as_seed(field: str, value: Any, error: type[Exception] = InvalidInstance, *,
            draw: bool = False):
    """A seed: an integer >= 0 (Python or NumPy) or a ``numpy.random.Generator``.

    With ``draw`` a generator gives an integer seed drawn from it (for methods, which
    take integers): the same generator state, the same seed.

    Examples
    --------
    >>> as_seed("seed", np.int64(3)), as_seed("seed", np.random.default_rng(1), draw=True)
    (3, 4720721261117928063)
    >>> as_seed("seed", -1)
    Traceback (most recent call last):
    ...
    fabricopt.errors.InvalidInstance: seed = -1: must be an integer >= 0 or a numpy.random.Generator
    """
    rule = "must be an integer >= 0 or a numpy.random.Generator"
    if isinstance(value, np.random.Generator):
        return int(value.integers(0, 2 ** 63)) if draw else value
    if isinstance(value, bool) or not isinstance(value, Integral):
        fail(field, value, rule, error)
    if value < 0:
        fail(field, value, rule, error)
    return int(value)
