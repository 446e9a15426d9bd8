"""Hypothesis strategies for the instances of every problem kind, valid and invalid.

Strategies are looked up per kind, in this order:

1. one registered with :func:`register_strategies` (by a user, or by
2. the module ``fabricopt.testing.kinds.<kind>``, imported on first use: a kind's
   hand-written strategies live there — this package may import hypothesis,
   ``fabricopt.problems`` may not);
3. a generic fallback built on the kind's ``generate(seed, **sizes)``: hypothesis
   draws the seed and every integer size option between 1 and ``max_size``, and the
   invalid instances are generic mutations of the JSON of a valid one (a missing
   required field, an unknown field, a value of the wrong type, an unknown problem).

A hand-written strategy should draw instances field by field so that hypothesis
shrinks a failure to a small, readable counterexample.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import re
from dataclasses import dataclass
from numbers import Real
from typing import Any, Callable

from hypothesis import reject, strategies as st

from fabricopt.errors import InvalidArgument, InvalidInstance
from fabricopt.problems import get_kind, instance_from_dict

__all__ = ["InvalidExample", "KindStrategies", "register_strategies", "instances",
           "invalid_instances", "generic_instances", "generic_invalid_instances",
           "generated_instances"]

#: ``max_size`` when neither the caller nor the kind's strategies give one: small
#: enough for the exact MILPs to prove optimality in a fraction of a second.
DEFAULT_MAX_SIZE = 5


@dataclass(frozen=True)
class InvalidExample:
    """A JSON object that must be rejected, and how.

    Attributes
    ----------
    data : dict
        An instance's JSON object with one thing wrong.
    field : str
        The field the error message must name, e.g. ``"traffic_bytes[1][0]"``.
    match : str
        A regular expression the ``InvalidInstance`` message must match
        (``re.search``); it starts at the field name.
    """

    data: dict
    field: str
    match: str

    def assert_rejected(self) -> InvalidInstance:
        """Assert ``fabricopt.problems.instance_from_dict(data)`` raises the expected
        ``InvalidInstance`` and return it."""
        try:
            instance_from_dict(self.data)
        except InvalidInstance as exc:
            if not re.search(self.match, str(exc)):
                raise AssertionError(f"the message {str(exc)!r} does not match "
                                     f"{self.match!r} (it should name {self.field})") from exc
            return exc
        except Exception as exc:
            raise AssertionError(f"expected InvalidInstance naming {self.field}, got "
                                 f"{type(exc).__name__}: {exc}") from exc
        raise AssertionError(f"accepted an invalid instance (bad {self.field}): {self.data!r}")


def expect(data: dict, field: str, rule: str = "") -> InvalidExample:
    """An :class:`InvalidExample` whose message starts with ``field`` and contains ``rule``."""
    pattern = "^" + re.escape(field) + r"(?![\w\[.])"
    if rule:
        pattern += ".*" + re.escape(rule)
    return InvalidExample(data, field, pattern)


@dataclass(frozen=True)
class KindStrategies:
    """The strategies of one kind.

    Attributes
    ----------
    instances : callable
        ``instances(max_size, **options) -> SearchStrategy`` of valid instances.
    invalid : callable or None
        ``invalid(max_size) -> SearchStrategy`` of :class:`InvalidExample`; None uses the
        generic mutations of ``instances``.
    max_size : int
        The default ``max_size``.
    """

    instances: Callable[..., st.SearchStrategy]
    invalid: Callable[..., st.SearchStrategy] | None = None
    max_size: int = DEFAULT_MAX_SIZE


_STRATEGIES: dict[str, KindStrategies] = {}


def register_strategies(kind: str, instances: Callable[..., st.SearchStrategy], *,
                        invalid: Callable[..., st.SearchStrategy] | None = None,
                        max_size: int = DEFAULT_MAX_SIZE) -> KindStrategies:
    """Use hand-written strategies for ``kind`` instead of the generic fallback.

    Parameters
    ----------
    kind : str
        A registered problem kind.
    instances : callable
        ``instances(max_size, **options)`` returning a strategy of valid instances,
        each guaranteed to satisfy the format's rules (and feasible where the kind
        requires it); ``max_size`` bounds the kind's main size (GPUs, ops, ...).
    invalid : callable, optional
        ``invalid(max_size)`` returning a strategy of :class:`InvalidExample`.
    max_size : int
        The default ``max_size`` of this kind.

    Returns
    -------
    KindStrategies
    """
    get_kind(kind)
    record = KindStrategies(instances, invalid, max_size)
    _STRATEGIES[kind] = record
    return record


def _strategies_of(kind: str) -> KindStrategies | None:
    get_kind(kind)
    if kind not in _STRATEGIES:
        module = f"{__package__}.kinds.{kind}"
        try:
            importlib.import_module(module)  # registers the kind's strategies
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
    return _STRATEGIES.get(kind)


def instances(kind: str, max_size: int | None = None, **options) -> st.SearchStrategy:
    """A strategy of valid instances of ``kind``.

    Parameters
    ----------
    kind : str
        A registered problem kind.
    max_size : int, optional
        Upper bound on the kind's main size (GPUs for ``circuits``; for the generic
        fallback, every integer size option of ``generate``). Default: the kind's.
    **options
        Passed to the kind's hand-written strategy (e.g. ``feasible=False`` for
        ``circuits``).

    Returns
    -------
    hypothesis.strategies.SearchStrategy

    Examples
    --------
    >>> from hypothesis import find
    >>> find(instances("circuits"), lambda inst: inst.gpus >= 3).gpus
    3
    """
    record = _strategies_of(kind)
    if record is None:
        if options:
            raise InvalidArgument(f"{kind} has no hand-written strategy; options "
                            f"{sorted(options)} are not understood")
        return generic_instances(kind, DEFAULT_MAX_SIZE if max_size is None else max_size)
    return record.instances(record.max_size if max_size is None else max_size, **options)


def invalid_instances(kind: str, max_size: int | None = None) -> st.SearchStrategy:
    """A strategy of :class:`InvalidExample`: JSON objects ``kind`` must reject, each
    with the field its ``InvalidInstance`` message must name.

    Examples
    --------
    >>> from hypothesis import find
    >>> bad = find(invalid_instances("circuits"), lambda e: e.field == "switches")
    >>> str(bad.assert_rejected()).startswith("switches")
    True
    """
    record = _strategies_of(kind)
    size = (record.max_size if record else DEFAULT_MAX_SIZE) if max_size is None else max_size
    if record is not None and record.invalid is not None:
        return record.invalid(size)
    return generic_invalid_instances(kind, instances(kind, size))


def _size_options(generate: Callable[..., Any]) -> dict[str, int]:
    """Integer options of a generator (bools excluded), with their defaults."""
    out = {}
    for name, param in inspect.signature(generate).parameters.items():
        default = param.default
        if name != "seed" and isinstance(default, int) and not isinstance(default, bool):
            out[name] = default
    return out


def generic_instances(kind: str, max_size: int = DEFAULT_MAX_SIZE) -> st.SearchStrategy:
    """Instances from the kind's ``generate``: a drawn seed and drawn integer sizes.

    Every integer option of ``generate`` is drawn from 1..min(default, max_size);
    combinations the generator rejects (``InvalidInstance`` / ``ValueError``) are
    discarded.
    """
    problem = get_kind(kind)
    if problem.generate is None:
        raise InvalidInstance(f"problem = {kind!r}: has no generator and no strategy in "
                              f"fabricopt.testing")
    sizes = {name: st.integers(1, max(1, min(default, max_size)))
             for name, default in _size_options(problem.generate).items()}

    @st.composite
    def draw_instance(draw):
        seed = draw(st.integers(0, 2**32 - 1))
        chosen = {name: draw(strategy) for name, strategy in sizes.items()}
        try:
            return problem.generate(seed=seed, **chosen)
        except (InvalidInstance, ValueError):
            reject()

    return draw_instance()


def generated_instances(kind: str, sizes: Callable[[Callable, int], dict]
                        ) -> Callable[[int], st.SearchStrategy]:
    """``instances(max_size)`` drawing a seed and ``sizes(draw, max_size)`` for ``generate``.

    For kinds whose generator already makes realistic, valid instances: ``sizes``
    draws the size options so that the kind's constraints bind (more ops than GPUs,
    a degree below n - 1, ...), which a uniform draw of every size from 1 does not.
    Combinations the generator rejects are discarded.
    """
    problem = get_kind(kind)

    def strategy(max_size: int) -> st.SearchStrategy:
        @st.composite
        def draw_instance(draw):
            seed = draw(st.integers(0, 2**32 - 1))
            chosen = sizes(draw, max_size)
            try:
                return problem.generate(seed=seed, **chosen)
            except (InvalidInstance, ValueError):
                reject()

        return draw_instance()

    return strategy


def _required_fields(instance_type: type) -> set[str]:
    return {f.name for f in dataclasses.fields(instance_type)
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}


def generic_invalid_instances(kind: str, valid: st.SearchStrategy) -> st.SearchStrategy:
    """Mutations of a valid instance's JSON that every kind must reject.

    A required field removed (``<field>: missing required field``), an unknown field
    added (``<field>: unknown field``), a field given a value of the wrong type
    (a string for a number, a number for a list or object; the message must start
    with the field), or an unknown ``problem``.
    """
    required = _required_fields(get_kind(kind).instance_type)

    @st.composite
    def mutate(draw):
        data = draw(valid).to_dict()
        keys = sorted(k for k in data if k != "problem")
        options = ["unknown_field", "unknown_problem"]
        if any(k in required for k in keys):
            options.append("missing")
        typed = [k for k in keys if data[k] is None or isinstance(data[k], (Real, list, dict))]
        if typed:
            options.append("wrong_type")
        how = draw(st.sampled_from(options))
        if how == "unknown_field":
            data["bogus_field"] = 1
            return expect(data, "bogus_field", "unknown field")
        if how == "unknown_problem":
            data["problem"] = "no-such-kind"
            return expect(data, "problem", "unknown problem kind")
        if how == "missing":
            key = draw(st.sampled_from([k for k in keys if k in required]))
            del data[key]
            return expect(data, key, "missing required field")
        key = draw(st.sampled_from(typed))
        data[key] = 7 if isinstance(data[key], (list, dict)) else "many"
        return expect(data, key)

    return mutate()
