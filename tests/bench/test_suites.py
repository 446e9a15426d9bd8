"""Suites are data: every row names a registered kind, method and generator option."""

import inspect

import pytest

import fabricopt
from fabricopt import SolverUnavailable
from fabricopt.bench import suites
from fabricopt.bench.suites import (ALL, SUITES, TABLES, Row, Suite, get_suite,
                                    kinds_without_rows, load_suite_file)
from fabricopt.bench.runner import plan


@pytest.mark.parametrize("name", list(SUITES))
def test_every_builtin_row_names_a_registered_kind_method_and_size(name):
    suite = get_suite(name)
    assert suite.rows, f"suite {name} is empty"
    for row in suite.rows:
        assert row.kind in fabricopt.kinds()
        assert set(row.method_names()) <= set(fabricopt.methods(row.kind))
        options = inspect.signature(fabricopt.problems.get_kind(row.kind).generate).parameters
        assert set(row.sizes) <= set(options) - {"seed"}


def test_every_table_block_is_a_registered_kind_with_all_three_suites():
    for kind, block in TABLES.items():
        assert kind in fabricopt.kinds(), f"TABLES has a block for unregistered kind {kind}"
        assert set(block) == set(SUITES), kind
        assert all(block[s] for s in SUITES), kind


def test_every_registered_kind_has_benchmark_rows():
    assert kinds_without_rows() == [], (
        "add a block for these kinds to fabricopt/bench/suites.py TABLES")


def test_quick_runs_every_method_and_scale_ends_where_some_cannot_go():
    quick, scale = get_suite("quick"), get_suite("scale")
    for kind in TABLES:
        ran = {m for row in quick.rows if row.kind == kind for m in row.method_names()}
        assert ran == set(fabricopt.methods(kind)), kind
        last = [row for row in scale.rows if row.kind == kind][-1]
        assert set(last.method_names()) < set(fabricopt.methods(kind)), kind


def test_a_row_naming_an_unregistered_kind_fails_not_skips(monkeypatch):
    monkeypatch.setitem(TABLES, "nosuchkind",
                        {"quick": [("tiny", {}, (0,), ALL, 1.0)], "paper": [], "scale": []})
    with pytest.raises(ValueError, match="'nosuchkind': unknown problem kind"):
        get_suite("quick")


@pytest.mark.parametrize("fields, message", [
    (dict(sizes={"gpu": 8}), r"rows\[circuits/r\]\.sizes\.gpu = 8: not a size option "
                             r"of the circuits generator \(options: gpus, switches"),
    (dict(seeds=()), r"rows\[circuits/r\]\.seeds = \(\): must be a non-empty list"),
    (dict(seeds=(0, 0)), r"seeds = \[0, 0\]: must not repeat a seed"),
    (dict(seeds=(-1,)), r"seeds\[0\] = -1: must be >= 0"),
    (dict(time_limit_s=0), r"time_limit_s = 0.0: must be > 0"),
    (dict(methods="exact"), r"methods = 'exact': must be 'all' or a non-empty list"),
    (dict(name="a/b"), r"name = 'a/b': must not contain '/'"),
])
def test_row_validation_names_field_and_value(fields, message):
    base = dict(kind="circuits", name="r", sizes={"gpus": 4}, seeds=(0,))
    with pytest.raises(ValueError, match=message):
        Row(**{**base, **fields})


def test_unknown_method_in_a_row_is_unavailable():
    row = Row("circuits", "r", {"gpus": 4}, (0,), ("exact", "nope"))
    with pytest.raises(SolverUnavailable, match="method = 'nope': no such method"):
        row.method_names()


def test_a_suite_may_not_repeat_an_instance_name():
    row = Row("circuits", "r", {"gpus": 4}, (0,))
    with pytest.raises(ValueError, match="appears twice"):
        Suite("s", (row, row))


def test_toml_suite(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text('[[rows]]\nkind = "circuits"\nname = "tiny"\nsizes = {gpus = 6}\n'
                    'seeds = [1, 2]\nmethods = ["greedy"]\ntime_limit_s = 3\n')
    suite = get_suite(str(path))
    assert suite.name == "mine"
    [row] = suite.rows
    assert (row.seeds, row.methods, row.time_limit_s) == ((1, 2), ("greedy",), 3.0)
    path.write_text('name = "x"\n[[rows]]\nkind = "circuits"\nname = "t"\nseeds = [0]\n')
    with pytest.raises(ValueError, match=r"rows\[0\]\.sizes: missing required field"):
        load_suite_file(path)
    path.write_text('[[rows]]\nkind = "circuits"\nname = "t"\nsizes = {}\nseeds = [0]\n'
                    'limit = 3\n')
    with pytest.raises(ValueError, match=r"rows\[0\]\.limit: unknown field"):
        load_suite_file(path)
    path.write_text("[[rows]\n")
    with pytest.raises(ValueError, match="not valid TOML"):
        load_suite_file(path)
    with pytest.raises(ValueError, match="unknown suite"):
        get_suite("quik")


def test_plan_filters_and_overrides():
    suite = Suite("s", (Row("circuits", "a", {"gpus": 4}, (0, 1)),
                        Row("circuits", "b", {"gpus": 6}, (0,), ("greedy",))))
    specs = plan(suite, methods=["exact", "greedy"], time_limit_s=2.5)
    assert [(s.instance_id, s.method) for s in specs] == [
        ("circuits/a/0", "exact"), ("circuits/a/0", "greedy"), ("circuits/a/1", "exact"),
        ("circuits/a/1", "greedy"), ("circuits/b/0", "greedy")]
    assert {s.time_limit_s for s in specs} == {2.5}
    assert len({s.key for s in specs}) == 5
    a0 = specs[0]
    assert a0.instance == fabricopt.generate("circuits", seed=0, gpus=4).to_dict()
    assert a0.size == 4 and a0.sense == "min" and len(a0.instance_hash) == 64
    with pytest.raises(ValueError, match="--methods sipml: no row of suite 's' runs it"):
        plan(suite, methods="sipml")
    with pytest.raises(ValueError, match="--kinds topology: not in suite 's'"):
        plan(suite, kinds="topology")
    with pytest.raises(ValueError, match=r"time_limit_s = 0.0: must be > 0"):
        plan(suite, time_limit_s=0)
    with pytest.raises(ValueError, match=r"grace_s = -1.0: must be >= 0"):
        plan(suite, grace_s=-1)


def test_quick_suite_is_built_from_the_registered_kinds():
    assert set(get_suite("quick").kinds()) == set(TABLES) <= set(fabricopt.kinds())
    assert suites.kinds_with_rows() == sorted(TABLES)
