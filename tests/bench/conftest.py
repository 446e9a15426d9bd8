"""Fixture: a plug-in file registering misbehaving methods, unregistered afterwards."""

import sys
import textwrap

import pytest

from fabricopt.methods.registry import _METHODS

from .support import PLUGIN, PLUGIN_METHODS


@pytest.fixture
def plugin(tmp_path):
    """Path of a plug-in file registering the misbehaving methods; unregistered after."""
    pids = tmp_path / "pids"
    pids.mkdir()
    path = tmp_path / "bad_methods.py"
    path.write_text(textwrap.dedent(PLUGIN.format(pids=str(pids))))
    before = set(sys.modules)
    yield path
    for name in PLUGIN_METHODS:
        _METHODS.pop(("circuits", name), None)
    for name in set(sys.modules) - before:
        if name.startswith("fabricopt_plugin_"):
            del sys.modules[name]
