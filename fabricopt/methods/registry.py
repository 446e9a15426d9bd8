"""The method registry: which methods exist for which problem kind, and their contract.

Built-in methods register themselves when their wiring module in
``fabricopt.methods`` is imported; the list below is imported on first use so that
``import fabricopt`` stays light. Plug-in methods are found on first use as well
(:mod:`fabricopt.methods.plugins`): entry points of the ``fabricopt.methods`` group,
then the modules or files named by ``FABRICOPT_PLUGINS``.

The method contract
-------------------
A method declares, when it registers (docs/methods.rst)::

    register_method("wavelengths", "mcf", mcf, honours_time_limit=True, options=[
        Option("backend", str, "highs", "LP backend", choices=("highs", "cbc")),
        Option("rounds", int, 8, "randomized roundings to try", check=at_least(1)),
        Option("fill", bool, True, "hand out leftover wavelengths"),
    ])

- ``options``: one :class:`~fabricopt.methods.options.Option` per keyword the method
  takes besides ``time_limit``, ``seed`` and ``bound`` — ``Option(name, type, default, doc,
  choices=None, check=None)`` with ``type`` one of ``int``, ``float``, ``bool``,
  ``str`` (or None for a fixed set of ``choices`` of mixed types), a default of None
  meaning None is allowed too, and ``check(value, instance)`` returning None or the
  rule broken (``at_least(1)``, ``between(0, 1)``, or your own, which may look at
  the instance). ``solve`` rejects an unknown name or a bad value with
  :class:`~fabricopt.errors.InvalidOption` before the method runs, and passes the
  method only the options the caller gave (the method's own defaults apply to the
  rest, so keep them equal to the declared ones).
- ``honours_time_limit``: True if the method stops by ``time_limit`` and returns its
  best so far. ``solve`` records ``info["time_limit_exceeded"]`` whenever a method
  ran past the limit, and ``fabricopt methods`` shows the flag.
- ``exact`` / ``bound_only``: proves optimality when it finishes / returns a bound
  and no solution.
- a keyword ``bound`` (optional, default True): a method that computes a bound beside
  its answer and names ``bound`` in its signature gets ``bound=False`` from
  ``solve(..., bound=False)`` and may then skip it (``solve`` discards any bound it
  reports anyway).

A method registered **without** ``options`` (a plug-in that declares none)
keeps working: its options are inferred from its signature by
:func:`~fabricopt.methods.options.infer_options` (each keyword with a default, typed
by the default's type), and a ``**kwargs`` method accepts any name unchecked.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from fabricopt.errors import InvalidArgument, InvalidOption, SolverUnavailable
from fabricopt.methods.options import RESERVED, Option, infer_options

__all__ = ["Method", "register_method", "get_method", "methods", "all_methods"]

# One wiring module per problem kind; each registers that kind's methods.
_BUILTIN_MODULES = (
    "fabricopt.methods.circuits",
    "fabricopt.methods.topology",
    "fabricopt.methods.wavelengths",
    "fabricopt.methods.placement",
    "fabricopt.methods.priorities", "fabricopt.methods.crux",
)


#: What ``solve`` passes a method whose signature it cannot read, or a ``**kwargs`` one.
_ALWAYS_PASSED = ("time_limit", "seed")


@dataclass(frozen=True)
class Method:
    """A registered method.

    Attributes
    ----------
    kind, name : str
        Problem kind and method name (``"circuits"``, ``"exact"``).
    fn : callable
        ``fn(instance, *, time_limit, seed, **options)`` returning a solution or a
        :class:`~fabricopt.methods.result.SolverOutput`.
    exact : bool
        True if the method proves optimality when it finishes in time.
    bound_only : bool
        True if the method only computes a bound (no solution).
    summary : str
        One line for ``fabricopt methods``.
    source : str
        ``"builtin"`` or the plug-in that provided it.
    options : tuple of Option
        The options it takes (declared, or inferred from its signature).
    declared : bool
        True if ``options`` were declared at registration.
    takes_any : bool
        True for an undeclared method with ``**kwargs``: unknown names pass unchecked.
    honours_time_limit : bool
        True if the method stops by ``time_limit``.
    time_limit_note : str
        For a method that does not honour ``time_limit``: why it runs to its end.
    """

    kind: str
    name: str
    fn: Callable[..., Any]
    exact: bool = False
    bound_only: bool = False
    summary: str = ""
    source: str = "builtin"
    options: tuple = field(default=(), compare=False)
    declared: bool = False
    takes_any: bool = False
    honours_time_limit: bool = False
    passes: tuple = field(default=_ALWAYS_PASSED, compare=False)  # of RESERVED
    time_limit_note: str = field(default="", compare=False)

    def option(self, name: str) -> Option | None:
        """The option called ``name``, or None."""
        return next((o for o in self.options if o.name == name), None)

    def validate(self, options: Mapping[str, Any], instance: Any = None) -> dict:
        """The options to pass the method, validated; raises ``InvalidOption``."""
        out = {}
        for name, value in options.items():
            option = self.option(name)
            if option is None:
                if self.takes_any:
                    out[name] = value
                    continue
                accepted = ", ".join(o.name for o in self.options) or "none"
                raise InvalidOption(f"{name} = {value!r}: not an option of method "
                                    f"{self.kind}/{self.name} (options: {accepted})")
            out[name] = option.validate(value, instance)
        return out


_METHODS: dict[tuple[str, str], Method] = {}
_loaded = False
# The plug-in being loaded, if any: methods registered meanwhile are credited to it and
# may not replace a method someone else registered.
_loading_source: str | None = None


def _first_doc_line(fn) -> str:
    doc = inspect.getdoc(fn) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def register_method(kind: str, name: str, fn: Callable[..., Any] | None = None, *,
                    options: Sequence[Option] | None = None,
                    honours_time_limit: bool = False, exact: bool = False,
                    bound_only: bool = False, summary: str | None = None,
                    source: str | None = None, time_limit_note: str = ""):
    """Register ``fn`` as method ``name`` of problem ``kind``; without ``fn``, a decorator.

    Parameters
    ----------
    kind : str
        A registered problem kind (``fabricopt.kinds()``).
    name : str
        The method's name, as given to ``solve(..., method=name)`` and the CLI.
    fn : callable, optional
        ``fn(instance)`` or ``fn(instance, *, time_limit=None, seed=0, **options)``,
        returning a solution of the kind, a
        :class:`~fabricopt.methods.result.SolverOutput`, or None (no solution); it may
        raise ``InfeasibleInstance`` when it proves that no solution exists. ``solve``
        passes ``time_limit`` and ``seed`` only if the signature accepts them, and
        ``bound=False`` (``solve(..., bound=False)``) only if it names ``bound``.
    options : sequence of Option, optional
        The options ``fn`` takes (see the module docstring); None infers them from
        the signature.
    honours_time_limit : bool
        True if ``fn`` stops by ``time_limit`` and returns its best so far.
    time_limit_note : str
        For a method that does not: why it runs to its end (``fabricopt methods`` shows
        it; every built-in method says it).
    exact : bool
        True if the method proves optimality when it finishes (status ``"optimal"``).
    bound_only : bool
        True if the method only computes a bound and returns no solution.
    summary : str, optional
        One line for ``fabricopt methods``; by default the docstring's first line.
    source : str, optional
        Who provides the method; by default ``"builtin"`` for fabricopt's own modules,
        the distribution while a plug-in loads, else the function's module.

    Returns
    -------
    Method or decorator
        The :class:`Method` record; in decorator form the decorator returns ``fn``
        itself, unchanged, so it stays callable.

    Raises
    ------
    InvalidInstance
        If ``kind`` is not a registered problem kind.
    InvalidArgument
        If a plug-in tries to replace a method that another source registered, or a
        declared option is not a keyword ``fn`` accepts.

    Notes
    -----
    Registering a name twice replaces the earlier method, except while a plug-in
    loads: a plug-in cannot shadow a built-in method or another plug-in's.

    Examples
    --------
    >>> from fabricopt.problems.circuits import CircuitsSolution
    >>> @register_method("circuits", "idle")
    ... def idle(instance):
    ...     "Leaves every port unused (feasible only without traffic)."
    ...     return CircuitsSolution([[None] * instance.gpus] * instance.switches)
    >>> get_method("circuits", "idle").summary
    'Leaves every port unused (feasible only without traffic).'
    >>> _ = _METHODS.pop(("circuits", "idle"))
    """
    if fn is None:
        def decorator(f: Callable[..., Any]) -> Callable[..., Any]:
            register_method(kind, name, f, options=options,
                            honours_time_limit=honours_time_limit, exact=exact,
                            bound_only=bound_only, summary=summary, source=source,
                            time_limit_note=time_limit_note)
            try:  # lets an entry point naming f know that importing it registered it
                f.__fabricopt_methods__ = getattr(f, "__fabricopt_methods__", ()) + ((kind, name),)
            except (AttributeError, TypeError):
                pass
            return f
        return decorator

    from fabricopt.problems import get_kind

    get_kind(kind)  # unknown kinds fail here, with the list of known ones
    if not isinstance(name, str) or not name:
        raise InvalidArgument(f"name = {name!r}: must be a non-empty string")
    if not callable(fn):
        raise InvalidArgument(f"fn = {fn!r}: must be callable")
    # Built-ins first, so that a user's registration replaces a built-in, not vice versa.
    _ensure_loaded()
    if source is None:
        source = _loading_source or _default_source(fn)
    earlier = _METHODS.get((kind, name))
    if _loading_source is not None and earlier is not None and earlier.source != source:
        raise InvalidArgument(f"method {kind}/{name} is already registered by {earlier.source}")
    inferred, takes_any = infer_options(fn)
    if options is None:
        declared, options = False, inferred
    else:
        declared, options = True, tuple(options)
        _check_declared(kind, name, fn, options, {o.name for o in inferred}, takes_any)
        takes_any = False
    method = Method(kind, name, fn, bool(exact), bool(bound_only),
                    summary if summary is not None else _first_doc_line(fn), source,
                    options, declared, takes_any, bool(honours_time_limit), _passes(fn),
                    "" if honours_time_limit else str(time_limit_note))
    _METHODS[(kind, name)] = method
    return method


def _check_declared(kind, name, fn, options, accepted: set, takes_any: bool) -> None:
    seen = set()
    for option in options:
        if not isinstance(option, Option):
            raise InvalidArgument(f"method {kind}/{name}: options must be Option objects, "
                            f"not {option!r}")
        if option.name in RESERVED or option.name in seen:
            raise InvalidArgument(f"method {kind}/{name}: option {option.name!r} is reserved "
                             f"or declared twice")
        if option.name not in accepted and not takes_any:
            raise InvalidArgument(f"method {kind}/{name}: declares option {option.name!r} but "
                            f"{getattr(fn, '__name__', fn)!r} does not accept it")
        seen.add(option.name)


def _passes(fn) -> tuple:
    """Which of ``time_limit``, ``seed`` and ``bound`` ``fn`` accepts (plug-ins may take
    none): a ``**kwargs`` method gets ``time_limit`` and ``seed``, ``bound`` only by name."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return _ALWAYS_PASSED
    named = tuple(n for n in RESERVED if n in params)
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return tuple(dict.fromkeys(_ALWAYS_PASSED + named))
    return named


def _default_source(fn) -> str:
    module = getattr(fn, "__module__", None) or "unknown"
    return "builtin" if module == "fabricopt" or module.startswith("fabricopt.") else module


def _ensure_loaded() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for module in _BUILTIN_MODULES:
        importlib.import_module(module)
    from fabricopt.methods.plugins import load_plugins

    load_plugins()


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
        from fabricopt.problems import get_kind

        get_kind(kind)
        return [m.name for m in all_methods(kind)]
    out: dict[str, list[str]] = {}
    for m in all_methods():
        out.setdefault(m.kind, []).append(m.name)
    return out
