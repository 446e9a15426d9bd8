"""Scenario files: every number carries a source, and the loader says which one lacks it."""

import json

import pytest

from fabricopt.bench.scenario import FORMAT, load_scenario, scenarios
from fabricopt.errors import InvalidArgument


def _write(tmp_path, values, **top):
    doc = {"format": FORMAT, "paper": "demo", "name": "x", "title": "t", "values": values}
    doc.update(top)
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    return str(path)


def test_values_are_unwrapped_and_sources_kept(tmp_path):
    s = load_scenario(_write(tmp_path, {
        "hosts": {"value": 12, "source": "paper: Crux §6.1"},
        "label": "testbed",
        "cases": [{"bert": {"value": 2, "source": "paper: Crux Fig. 19"}},
                  {"bert": {"value": 4, "source": "paper: Crux Fig. 19"}}],
        "curve": {"value": [[1, 2], [3, 4]], "source": "artifact: steps.csv"}}))
    assert s["hosts"] == 12 and s["label"] == "testbed"
    assert [c["bert"] for c in s["cases"]] == [2, 4]
    assert s.source("cases[1].bert") == "paper: Crux Fig. 19"
    assert s["curve"] == [[1, 2], [3, 4]]
    paths = [p for p, _, _ in s.items()]
    assert paths == ["hosts", "cases[0].bert", "cases[1].bert", "curve"]
    assert "| `cases[1].bert` | 4 | paper: Crux Fig. 19 |" in s.table()


@pytest.mark.parametrize("values, match", [
    ({"hosts": 12}, r"values\.hosts = 12: a number without a source"),
    ({"a": [{"b": 1.5}]}, r"values\.a\[0\]\.b = 1\.5: a number without a source"),
    ({"hosts": {"value": 12, "source": "the paper"}}, r"values\.hosts\.source = 'the paper': "
                                                      r"must start with one of paper:"),
    ({"hosts": {"value": 12, "source": "paper: x", "unit": "s"}}, r"unknown keys \['unit'\]"),
    ({"h": {"value": [{"value": 1, "source": "paper: x"}], "source": "paper: y"}},
     r"values\.h\.value: a sourced value holds plain data only"),
])
def test_a_number_without_a_source_is_refused_by_path(tmp_path, values, match):
    with pytest.raises(InvalidArgument, match=match):
        load_scenario(_write(tmp_path, values))


def test_the_envelope_fields_are_checked(tmp_path):
    with pytest.raises(InvalidArgument, match="format = 'v0': expected 'fabricopt-scenario/1'"):
        load_scenario(_write(tmp_path, {}, format="v0"))
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"format": FORMAT, "paper": "p", "name": "n", "values": {}}))
    with pytest.raises(InvalidArgument, match="title: missing required field"):
        load_scenario(str(path))


def test_unknown_and_unsafe_names_are_refused():
    with pytest.raises(InvalidArgument, match="scenario crux/nothing: not shipped"):
        load_scenario("crux", "nothing")
    with pytest.raises(InvalidArgument, match="not a shipped scenario name"):
        load_scenario("..", "x")


@pytest.mark.parametrize("full_name", scenarios() or ["(none shipped)"])
def test_every_shipped_scenario_validates(full_name):
    if full_name == "(none shipped)":
        pytest.skip("no scenario shipped")
    paper, name = full_name.split("/")
    s = load_scenario(paper, name)
    assert (s.paper, s.name) == (paper, name)
    assert s.sources, "a scenario with no sourced number"
