"""The method registry: which methods exist for which problem kind.

Built-in methods register themselves when their wiring module in
``fabricopt.solvers`` is imported; the list below is imported on first use so that
``import fabricopt`` stays light.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

from ..errors import SolverUnavailable

__all__ = ["Method", "register_method", "get_method", "methods", "all_methods"]

# One wiring module per problem kind; each registers that kind's methods.
_BUILTIN_MODULES = (
    "fabricopt.solvers.circuits",
    "fabricopt.solvers.priorities", "fabricopt.solvers.crux",
)


@dataclass(frozen=True)
class Method:
    """A registered method.

    Attributes
    ----------
    kind, name : str
        Problem kind and method name (``"circuits"``, ``"exact"``).
    fn : callable
        ``fn(instance, *, time_limit, seed, **options)`` returning a solution or a
        :class:`~fabricopt.solvers.result.SolverOutput`.
    exact : bool
        True if the method proves optimality when it finishes in time.
    bound_only : bool
        True if the method only computes a bound (no solution).
    summary : str
        One line for ``fabricopt methods``.
    source : str
        ``"builtin"`` or the plug-in that provided it.
    """

    kind: str
    name: str
    fn: Callable[..., Any]
    exact: bool = False
    bound_only: bool = False
    summary: str = ""
    source: str = "builtin"
    options: tuple = field(default=(), compare=False)


_METHODS: dict[tuple[str, str], Method] = {}
_loaded = False


def _first_doc_line(fn) -> str:
    doc = inspect.getdoc(fn) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def register_method(kind: str, name: str, fn: Callable[..., Any], *, exact: bool = False,
                    bound_only: bool = False, summary: str | None = None,
                    source: str = "builtin") -> Method:
    """Register ``fn`` as method ``name`` for problem ``kind`` and return the record.

    Registering a name twice replaces the earlier method.
    """
    from ..problems import get_kind

    get_kind(kind)  # unknown kinds fail here, with the list of known ones
    if not isinstance(name, str) or not name:
        raise ValueError(f"name = {name!r}: must be a non-empty string")
    if not callable(fn):
        raise TypeError(f"fn = {fn!r}: must be callable")
    method = Method(kind, name, fn, exact, bound_only,
                    summary if summary is not None else _first_doc_line(fn), source)
    _METHODS[(kind, name)] = method
    return method


def _ensure_loaded() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for module in _BUILTIN_MODULES:
        importlib.import_module(module)


def get_method(kind: str, name: str) -> Method:
    """The method ``name`` of ``kind``; unknown names raise ``SolverUnavailable``."""
    _ensure_loaded()
    try:
        return _METHODS[(kind, name)]
    except KeyError:
        known = ", ".join(m.name for m in all_methods(kind)) or "none"
        raise SolverUnavailable(f"method = {name!r}: no such method for {kind} "
                                f"(known: {known})") from None


def all_methods(kind: str | None = None) -> list[Method]:
    """Registered :class:`Method` records, optionally of one kind, sorted by kind and name."""
    _ensure_loaded()
    return [m for (k, _), m in sorted(_METHODS.items()) if kind is None or k == kind]


def methods(kind: str | None = None) -> list[str] | dict[str, list[str]]:
    """Method names of ``kind``, or a dict kind -> names when ``kind`` is None.

    Examples
    --------
    >>> methods("circuits")
    ['exact', 'greedy', 'milp']
    """
    if kind is not None:
        from ..problems import get_kind

        get_kind(kind)
        return [m.name for m in all_methods(kind)]
    out: dict[str, list[str]] = {}
    for m in all_methods():
        out.setdefault(m.kind, []).append(m.name)
    return out
