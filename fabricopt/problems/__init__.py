"""Problem kinds: instance and solution types, JSON, validation, ``check`` and ``evaluate``.

This package is the ground floor and the single source of truth for what a feasible
solution is and what it scores: every method's result is checked and scored here.
"""

from __future__ import annotations

import inspect
from typing import Any, Mapping

from fabricopt.errors import InvalidInstance, InvalidOption, InvalidSolution
from fabricopt.problems._validate import as_seed
from fabricopt.problems._kind import (CheckResult, NamedBound, ProblemKind, get_kind, kind_of,
                                      kinds, register_bound, register_kind)
from fabricopt.problems import circuits  # noqa: F401  (registers the kind)
from fabricopt.problems import topology  # noqa: F401  (registers the kind)
from fabricopt.problems import wavelengths  # noqa: F401  (registers the kind)
from fabricopt.problems import placement  # noqa: F401  (registers the kind)
from fabricopt.problems import crux, priorities  # noqa: F401  (register the Crux kinds)

__all__ = ["CheckResult", "NamedBound", "ProblemKind", "get_kind", "kind_of", "kinds", "register_kind",
           "check", "evaluate", "instance_from_dict", "solution_from_dict", "to_dict",
           "generate", "register_bound"]


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


def _same_kind(instance, solution) -> tuple[ProblemKind, Any, Any]:
    """The kind, instance and solution; JSON objects (dicts) are parsed first, as
    ``solve`` parses them."""
    if isinstance(instance, Mapping):
        instance = instance_from_dict(instance)
    kind = kind_of(instance)
    if not isinstance(instance, kind.instance_type):
        raise InvalidInstance(f"{type(instance).__name__} is a solution, not an instance")
    if isinstance(solution, Mapping):
        solution = kind.solution_from_dict(solution)
    if not isinstance(solution, kind.solution_type):
        raise InvalidSolution(f"{type(solution).__name__} is not a {kind.name} solution")
    return kind, instance, solution


def check(instance, solution) -> CheckResult:
    """Is ``solution`` feasible for ``instance``? The first violated rule in words if not.

    Both may be objects or their JSON (dicts), as for :func:`fabricopt.solve`.

    Examples
    --------
    >>> from fabricopt.problems.circuits import CircuitsInstance, CircuitsSolution
    >>> inst = CircuitsInstance(1, 100.0, [[0, 5e6], [0, 0]])
    >>> check(inst, CircuitsSolution([[None, None]]))
    CheckResult(feasible=False, reason='traffic_bytes[0][1] = 5000000.0 has no circuit 0->1')
    """
    kind, instance, solution = _same_kind(instance, solution)
    return kind.check(instance, solution)


def evaluate(instance, solution) -> float:
    """The objective of ``solution`` on ``instance`` as docs/formats.rst defines it.

    Examples
    --------
    >>> from fabricopt.problems.circuits import CircuitsInstance, CircuitsSolution
    >>> inst = CircuitsInstance(1, 8.0, [[0, 1e9], [0, 0]])
    >>> evaluate(inst, CircuitsSolution([[1, None]]))  # 8e9 bits over one 8 Gbps circuit
    1.0
    """
    kind, instance, solution = _same_kind(instance, solution)
    return float(kind.evaluate(instance, solution))


def generate(kind: str, seed: int = 0, **sizes) -> Any:
    """A seeded, realistic instance of ``kind`` (see each kind's ``generate``).

    Examples
    --------
    >>> generate("circuits", seed=1, gpus=4, switches=2).gpus
    4
    """
    problem = get_kind(kind)
    seed = as_seed("seed", seed, InvalidOption)
    if problem.generate is None:
        raise InvalidInstance(f"problem = {kind!r}: has no instance generator")
    params = inspect.signature(problem.generate).parameters
    for name in sizes:
        if name not in params or name == "seed":
            options = ", ".join(n for n in params if n != "seed")
            raise InvalidOption(f"{name}: not a size option of the {kind} generator "
                             f"(options: {options})")
    return problem.generate(seed=seed, **sizes)
