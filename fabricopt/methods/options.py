"""Declared method options: what ``register_method(..., options=[...])`` takes.

An :class:`Option` names one keyword a method accepts, with its type, default, the
values it allows and a one-line doc. ``solve`` validates every option against it
*before* the method runs (a bad value is the caller's error, :class:`InvalidOption`,
exit 2 on the command line), the CLI parses ``--option NAME=VALUE`` by its type, and
``fabricopt methods KIND`` lists it.

Examples
--------
>>> rounds = Option("rounds", int, 8, "randomized roundings to try", check=at_least(1))
>>> rounds.validate(3)
3
>>> rounds.validate(0)
Traceback (most recent call last):
...
fabricopt.errors.InvalidOption: rounds = 0: must be >= 1
>>> rounds.parse("12")
12
>>> Option("load", str, "time", "link load rule", choices=("time", "jobs")).describe()
'load=time  (one of time, jobs) link load rule'
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass
from typing import Any, Callable

from fabricopt.errors import InvalidArgument, InvalidOption, SolverUnavailable

__all__ = ["Option", "at_least", "between", "infer_options", "RESERVED"]

#: Keywords ``solve`` itself passes; never declared as options. ``bound`` reaches only
#: a method whose signature names it (one that can skip computing its own bound), and
#: only as ``bound=False``.
RESERVED = ("time_limit", "seed", "bound")

_TYPES = (int, float, bool, str)
_TRUE, _FALSE, _NONE = ("true", "yes", "1"), ("false", "no", "0"), ("none", "null")


def at_least(minimum: float) -> Callable[..., str | None]:
    """A ``check`` that a number is ``>= minimum``."""
    def check(value, instance=None):
        return None if value >= minimum else f"must be >= {minimum:g}"
    return check


def between(low: float, high: float) -> Callable[..., str | None]:
    """A ``check`` that a number is in ``[low, high]``."""
    def check(value, instance=None):
        return None if low <= value <= high else f"must be in [{low:g}, {high:g}]"
    return check


def _text(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@dataclass(frozen=True)
class Option:
    """One option of a method.

    Parameters
    ----------
    name : str
        The keyword (``--option NAME=...`` on the command line; ``-`` reads as ``_``).
    type : {int, float, bool, str} or None
        The value's type; an ``int`` is accepted for a ``float`` (and converted), a
        ``bool`` never for an ``int``. None: any value ``choices`` allows (or any at
        all, for options inferred from an undeclared method's signature).
    default : Any
        The method's default (shown by ``fabricopt methods``); a default of None
        means None is also accepted.
    doc : str
        One line.
    choices : tuple, optional
        The allowed values, if they are a fixed set.
    check : callable, optional
        ``check(value, instance) -> None`` when the value is fine, else the rule it
        breaks (``"must be >= 1"``). ``instance`` is the instance being solved, for
        values that depend on it (None when validated without one).
    unavailable : callable, optional
        ``unavailable() -> {choice: why}``: the choices that cannot run on this
        machine (a solver binary that is missing), asked each time. Choosing one
        raises :class:`~fabricopt.errors.SolverUnavailable`; ``describe`` leaves it
        out of the choices and says why.

    Examples
    --------
    >>> backend = Option("backend", str, "highs", "MILP backend", choices=("highs", "cbc"),
    ...                  unavailable=lambda: {"cbc": "its binary is missing"})
    >>> backend.describe()
    'backend=highs  (one of highs; cbc unavailable here: its binary is missing) MILP backend'
    >>> backend.validate("cbc")
    Traceback (most recent call last):
    ...
    fabricopt.errors.SolverUnavailable: backend = 'cbc': its binary is missing
    """

    name: str
    type: type | None
    default: Any = None
    doc: str = ""
    choices: tuple | None = None
    check: Callable[..., str | None] | None = None
    unavailable: Callable[[], dict] | None = None

    def __post_init__(self):
        if self.type is not None and self.type not in _TYPES:
            raise InvalidArgument(f"Option {self.name!r}: type must be one of int, float, bool, "
                            f"str or None, not {self.type!r}")
        if self.choices is not None:
            object.__setattr__(self, "choices", tuple(self.choices))

    def _error(self, value, rule: str) -> InvalidOption:
        return InvalidOption(f"{self.name} = {value!r}: {rule}")

    def validate(self, value: Any, instance: Any = None) -> Any:
        """The value to pass the method (``int`` -> ``float`` for float options).

        Raises
        ------
        InvalidOption
            Naming the option, the value and the rule it breaks.
        """
        if value is None and self.default is None:
            return None
        if self.type is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if self.type is not None:
            if not isinstance(value, self.type) or (self.type is int and isinstance(value, bool)):
                raise self._error(value, f"must be {self._type_name()}")
            if self.type is float and not math.isfinite(value):
                raise self._error(value, "must be finite")
        if self.choices is not None and not any(value == c and type(value) is type(c)
                                                for c in self.choices):
            raise self._error(value, "must be one of "
                                     + ", ".join(_text(c) for c in self.choices))
        missing = self.unavailable() if self.unavailable is not None else {}
        if value in missing:
            raise SolverUnavailable(f"{self.name} = {value!r}: {missing[value]}")
        if self.check is not None:
            rule = self.check(value, instance)
            if rule:
                raise self._error(value, rule)
        return value

    def _type_name(self) -> str:
        name = {int: "an integer", float: "a number", bool: "true or false",
                str: "a string"}[self.type]
        return name + (" or none" if self.default is None else "")

    def parse(self, text: str) -> Any:
        """Parse a command-line value by this option's type (not yet validated)."""
        raw = text.strip()
        low = raw.lower()
        if self.default is None and low in _NONE:
            return None
        if self.choices is not None and self.type is None:
            for choice in self.choices:
                if low == _text(choice).lower():
                    return choice
            raise self._error(text, "must be one of " + ", ".join(_text(c) for c in self.choices))
        if self.type is bool:
            if low in _TRUE:
                return True
            if low in _FALSE:
                return False
            raise self._error(text, "must be true or false")
        if self.type in (int, float):
            try:
                return self.type(raw)
            except ValueError:
                raise self._error(text, f"must be {self._type_name()}") from None
        if self.type is str:
            return raw
        return _parse_json(raw)

    def describe(self) -> str:
        """``name=default  (rule) doc``: one line for ``fabricopt methods``."""
        if self.choices is not None:
            missing = self.unavailable() if self.unavailable is not None else {}
            rule = "one of " + ", ".join(_text(c) for c in self.choices if c not in missing)
            rule += "".join(f"; {_text(c)} unavailable here: {why}"
                            for c, why in missing.items())
        elif self.type is not None:
            rule = self.type.__name__ + (" or none" if self.default is None else "")
        else:
            rule = "any"
        return f"{self.name}={_text(self.default)}  ({rule}) {self.doc}".rstrip()


def _parse_json(text: str) -> Any:
    import json

    try:
        return json.loads(text)
    except ValueError:
        return text


def infer_options(fn: Callable[..., Any]) -> tuple[tuple[Option, ...], bool]:
    """Options of an undeclared method, from its signature: ``(options, takes_any)``.

    Every parameter with a default other than ``time_limit``, ``seed`` and ``bound``
    (:data:`RESERVED`) is an option; its type is that of the default when the default is an int, float, bool
    or str, else unchecked (``type=None``). ``takes_any`` is True when ``fn`` has a
    ``**kwargs``: names beyond these are then passed through unchecked.
    """
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return (), True
    options, takes_any = [], False
    for name, p in params.items():
        if p.kind is p.VAR_KEYWORD:
            takes_any = True
        elif name not in RESERVED and p.default is not p.empty and p.kind in (
                p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD):
            default = p.default
            kind = type(default) if type(default) in _TYPES else None
            options.append(Option(name, kind, default))
    return tuple(options), takes_any
