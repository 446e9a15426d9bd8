"""Property-test methods with the invariants fabricopt holds its own methods to.

Needs the ``dev`` extra (hypothesis); ``import fabricopt`` never imports this package.

- :func:`instances` / :func:`invalid_instances`: hypothesis strategies of valid
  instances of any kind (feasible where the kind requires it, shrinking to small
  readable counterexamples) and of JSON objects the kind must reject, each an
  :class:`InvalidExample` that knows the field its error message must name.
- :func:`assert_valid`: the envelope rules for one result.
- :func:`check_method`: runs a registered method on generated instances and asserts
  the envelope rules, determinism, and that it never beats an exact method's proven
  optimum.
- :mod:`fabricopt.testing.pytest_plugin`: a ``check_method`` fixture, and a
  ``temporary_method`` fixture that registers a method for one test.

A kind's hand-written strategies live in ``fabricopt.testing.kinds.<kind>`` (found by
name) or are registered with :func:`register_strategies`; other kinds fall back on
their ``generate``.

Examples
--------
>>> from fabricopt.testing import check_method
>>> check_method("circuits", "exact", examples=3)
"""

from fabricopt.testing.checks import EXAMPLES_ENV_VAR, MethodCheckError, assert_valid, check_method
from fabricopt.testing.strategies import (InvalidExample, KindStrategies, generated_instances,
                                          generic_instances, generic_invalid_instances, instances,
                                          invalid_instances, register_strategies)

__all__ = ["instances", "invalid_instances", "InvalidExample", "register_strategies",
           "KindStrategies", "generated_instances", "generic_instances",
           "generic_invalid_instances",
           "assert_valid", "check_method", "MethodCheckError", "EXAMPLES_ENV_VAR"]
