"""pytest fixtures for testing methods: ``check_method`` and ``temporary_method``.

Installing fabricopt registers this module as a pytest plugin (entry point group
``pytest11``), so the fixtures are there in every test run. Where fabricopt is only
on ``sys.path`` (not installed), load it with
``pytest_plugins = ["fabricopt.testing.pytest_plugin"]`` in a test module or the root
``conftest.py``; with both, the line is harmless.

A whole test file for a plug-in method::

    import mine  # noqa: F401  (registers the method "mine" of circuits)
    def test_mine(check_method): check_method("circuits", "mine")
"""

from __future__ import annotations

import pytest

__all__ = ["check_method", "temporary_method"]


@pytest.fixture
def check_method():
    """:func:`fabricopt.testing.check_method`: property-test a registered method."""
    from fabricopt.testing import checks

    return checks.check_method


@pytest.fixture
def temporary_method():
    """``temporary_method(kind, name, fn, **kw)`` registers a method for this test only.

    Takes the arguments of :func:`fabricopt.register_method` and returns the record;
    the registry is restored when the test ends, so a throwaway or deliberately
    broken method never leaks into other tests.
    """
    from fabricopt.methods import registry

    registry.all_methods()  # load built-ins and plug-ins first: they are not ours to undo
    saved = dict(registry._METHODS)

    def register(kind, name, fn, **kw):
        return registry.register_method(kind, name, fn, **kw)

    yield register
    registry._METHODS.clear()
    registry._METHODS.update(saved)
