"""Installed plug-ins (entry points) join a benchmark only when the run names them; the
report says which plug-ins ran."""

import pytest

from fabricopt.algorithms.circuits import greedy
from fabricopt.bench import plan
from fabricopt.bench.job import execute
from fabricopt.bench.report import plugin_line
from fabricopt.bench.suites import Row, Suite
from fabricopt.methods import plugins, register_method
from fabricopt.methods.registry import _METHODS

SOURCE = "thirdparty-methods 1.0"


@pytest.fixture
def installed_method():
    """A circuits method as an installed distribution's entry point would register it."""
    def third(instance, *, time_limit=None, seed=0):
        return greedy(instance)

    register_method("circuits", "third", third, source=SOURCE)
    plugins._ENTRY_POINT_SOURCES[SOURCE] = {"thirdparty", "thirdparty.methods",
                                            "thirdparty.methods:third"}
    yield "third"
    _METHODS.pop(("circuits", "third"), None)
    plugins._ENTRY_POINT_SOURCES.pop(SOURCE, None)


def _suite():
    return Suite("opt-in", (Row("circuits", "tiny", {"gpus": 4, "switches": 2}, (0,)),))


def test_an_installed_method_does_not_join_all_unless_named(installed_method):
    row = _suite().rows[0]
    assert "third" not in row.method_names()
    assert "third" in row.method_names(["thirdparty.methods"])
    assert "third" in row.method_names(entry_points=True)
    assert {s.method for s in plan(_suite())} == {"exact", "greedy", "milp"}
    assert "third" in {s.method for s in plan(_suite(), plugins=["thirdparty.methods"])}
    assert {s.method for s in plan(_suite(), methods="third,exact")} == {"third", "exact"}


def test_a_method_from_the_command_line_joins_all(installed_method):
    # Registered by a --plugin file or FABRICOPT_PLUGINS: named for the run, so it runs.
    register_method("circuits", "local", lambda inst: greedy(inst), source="my_methods.py")
    try:
        assert "local" in _suite().rows[0].method_names()
    finally:
        _METHODS.pop(("circuits", "local"), None)


def test_a_run_records_its_plugin_and_the_report_lists_it(installed_method):
    spec = plan(_suite(), methods="third,exact")
    rows = []
    for s in spec:
        out = execute(s)
        assert out["status"] in ("optimal", "feasible"), out["message"]
        rows.append({"kind": s.kind, "method": s.method, "info": out["info"]})
    by_method = {r["method"]: r["info"].get("method_source") for r in rows}
    assert by_method == {"third": SOURCE, "exact": None}
    assert plugin_line(rows) == f"Plug-ins that ran: {SOURCE} (circuits/third)."
