"""What every problem kind provides, and the registry of kinds.

A problem kind is one module in :mod:`fabricopt.problems` that defines an instance
type, a solution type, JSON conversion, ``check`` (feasibility) and ``evaluate``
(objective), and registers itself here with :func:`register_kind`.
"""

from __future__ import annotations

from fabricopt.errors import InvalidArgument

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

__all__ = ["CheckResult", "NamedBound", "ProblemKind", "register_kind", "register_bound", "kind_of", "get_kind", "kinds"]


@dataclass(frozen=True)
class CheckResult:
    """Outcome of a feasibility check: ``feasible`` and, if not, the first violated rule.

    A ``CheckResult`` is truthy exactly when the solution is feasible.

    Examples
    --------
    >>> bool(CheckResult(False, "configs[0]: GPU 1 is the target of two circuits"))
    False
    """

    feasible: bool
    reason: str | None = None

    def __bool__(self) -> bool:
        return self.feasible

    @classmethod
    def ok(cls) -> "CheckResult":
        return cls(True, None)

    @classmethod
    def violated(cls, reason: str) -> "CheckResult":
        return cls(False, reason)


class NamedBound(float):
    """A bound's value (a float) that also names the argument it comes from: ``source``.

    A kind's ``bound`` may return one, so a result can say which bound it reports
    (``Result.bound_source``).

    Examples
    --------
    >>> b = NamedBound.best({"critical-path": 3.0, "load": 1.5}, sense="min")
    >>> float(b), b.source
    (3.0, 'critical-path')
    """

    source: str

    def __new__(cls, value: float, source: str) -> "NamedBound":
        out = super().__new__(cls, value)
        out.source = str(source)
        return out

    def __reduce__(self):
        return (type(self), (float(self), self.source))

    def __repr__(self) -> str:
        return f"NamedBound({float(self)!r}, {self.source!r})"

    @classmethod
    def best(cls, values: Mapping[str, float], *, sense: str) -> "NamedBound":
        """The tightest of ``values`` (name -> bound): the largest when minimizing, the
        smallest when maximizing; the first listed wins a tie."""
        if not values:
            raise InvalidArgument("no bound to choose from")
        pick = max if sense == "min" else min
        name = pick(values, key=lambda k: values[k])
        return cls(float(values[name]), name)


@dataclass(frozen=True)
class ProblemKind:
    """The definition of one problem kind.

    Attributes
    ----------
    name : str
        The ``"problem"`` field of its JSON, e.g. ``"circuits"``.
    sense : {"min", "max"}
        Whether ``evaluate`` is minimized or maximized.
    instance_type, solution_type : type
        Frozen dataclasses. Constructing an instance validates it.
    instance_from_dict, solution_from_dict : callable
        Parse JSON objects; raise ``InvalidInstance`` / ``InvalidSolution``.
    check : callable
        ``check(instance, solution) -> CheckResult``; raises ``InvalidSolution`` when the
        solution names things the instance does not have.
    evaluate : callable
        ``evaluate(instance, solution) -> float``: the objective of docs/formats.rst.
    generate : callable or None
        ``generate(seed=0, **sizes) -> instance``: a seeded generator of realistic instances.
    bound : callable or None
        ``bound(instance) -> float``: a cheap valid bound on the optimum (lower when
        minimizing, upper when maximizing) that every result of this kind may use; a
        :class:`NamedBound` also says which argument gave it.
    bound_name : str
        What ``Result.bound_source`` calls ``bound`` when it returns a plain float.
    size : callable or None
        ``size(instance) -> int``: a single size figure for reports (e.g. GPUs, ops).
    """

    name: str
    sense: str
    instance_type: type
    solution_type: type
    instance_from_dict: Callable[[Mapping[str, Any]], Any]
    solution_from_dict: Callable[[Mapping[str, Any]], Any]
    check: Callable[[Any, Any], CheckResult]
    evaluate: Callable[[Any, Any], float]
    generate: Callable[..., Any] | None = None
    bound: Callable[[Any], float] | None = None
    size: Callable[[Any], int] | None = None
    doc: str = field(default="", compare=False)
    bound_name: str = field(default="", compare=False)


_KINDS: dict[str, ProblemKind] = {}


def register_kind(kind: ProblemKind) -> ProblemKind:
    """Add ``kind`` to the registry (done once, by the kind's own module)."""
    if kind.sense not in ("min", "max"):
        raise InvalidArgument(f"sense = {kind.sense!r}: must be 'min' or 'max'")
    _KINDS[kind.name] = kind
    return kind


def register_bound(name: str, bound: Callable[[Any], float], bound_name: str = "") -> ProblemKind:
    """Make ``bound`` the cheap bound every result of kind ``name`` may use.

    Kinds are defined in :mod:`fabricopt.problems`; their bounds in :mod:`fabricopt.bounds`,
    which registers each one here when it is imported (``import fabricopt`` does).
    """
    kind = dataclasses.replace(get_kind(name), bound=bound, bound_name=bound_name)
    _KINDS[name] = kind
    return kind


def kinds() -> list[str]:
    """Names of the registered problem kinds, sorted.

    Examples
    --------
    >>> {"circuits", "placement", "wavelengths"} <= set(kinds())
    True
    """
    return sorted(_KINDS)


def get_kind(name: str) -> ProblemKind:
    """The kind called ``name``; an unknown name raises ``InvalidInstance``."""
    from fabricopt.errors import InvalidInstance
    from fabricopt.problems._validate import shown

    try:
        return _KINDS[name]
    except (KeyError, TypeError):
        raise InvalidInstance(
            f"problem = {shown(name)}: unknown problem kind (known: {', '.join(kinds())})"
        ) from None


def kind_of(obj: Any) -> ProblemKind:
    """The kind whose instance or solution type ``obj`` is."""
    from fabricopt.errors import InvalidInstance

    for kind in _KINDS.values():
        if isinstance(obj, (kind.instance_type, kind.solution_type)):
            return kind
    raise InvalidInstance(f"{type(obj).__name__} is not a fabricopt instance or solution")
