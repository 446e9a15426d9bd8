"""The simai rules against SimAI-Analytical's rows (tests/fabrics/simai/differential)."""

import ast
import json
import operator
from pathlib import Path

import pytest

from fabricopt.fabrics.resolve import resolve_workload
from fabricopt.fabrics.simai.analytical import SimAICluster, simai_analytical_time
from fabricopt.fabrics.simai.workload import read_simai

HERE = Path(__file__).parent / "differential"
ROWS = json.loads((HERE / "rows.json").read_text())["rows"]
UNITS = {"G": 2 ** 30, "MiB": 2 ** 20, "ms": 1e-3, "us": 1e-6}
_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.Div: operator.truediv}
GROUPS = ("DP", "DP_EP", "TP", "EP", "PP")


def _value(text: str) -> float:
    """An expression of numbers, + - * / and the units above (the fixtures' arithmetic)."""
    def walk(node):
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return float(node.value)
        if isinstance(node, ast.Name) and node.id in UNITS:
            return float(UNITS[node.id])
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](walk(node.left), walk(node.right))
        raise ValueError(f"not fixture arithmetic: {ast.dump(node)}")
    return walk(ast.parse(text, mode="eval"))


def _workload(name: str):
    return read_simai(HERE / "workloads" / name) if name.endswith(".txt") else \
        resolve_workload(name)


def _priced(row):
    return simai_analytical_time(_workload(row["workload"]), SimAICluster(**row["cluster"]),
                                 row["gpus"], overlap=row.get("overlap"),
                                 pp_overlap=row.get("pp_overlap", 1.0))


def test_the_fixtures_cover_what_simai_runs():
    workloads = [_workload(r["workload"]) for r in ROWS]
    assert {w.tp for w in workloads} >= {1, 2, 4, 8, 16}
    assert any(w.ep > 1 for w in workloads) and any(w.pp > 1 for w in workloads)
    assert len({r["gpus"] for r in ROWS}) >= 6
    assert {r["source"].split(":")[0] for r in ROWS} == {"measured", "derived"}
    assert all(r["command"].startswith("SimAI_analytical -w ") for r in ROWS)


@pytest.mark.parametrize("row", ROWS, ids=[r["id"] for r in ROWS])
def test_simai_rules_match_simai_within_one_percent(row):
    t = _priced(row)
    expected = {k: _value(v) for k, v in row["expected"].items()}
    assert t.compute_s == pytest.approx(expected["compute"], rel=0.01)
    for group in GROUPS:
        assert t.exposed_by_group_s[group] == pytest.approx(expected[group], rel=0.01,
                                                            abs=1e-6), group
    assert t.bubble_s == pytest.approx(expected["bubble"], rel=0.01, abs=1e-6)
    total = expected.get("iteration", expected["compute"] + expected["bubble"]
                         + sum(expected[g] for g in GROUPS))
    assert t.iteration_s == pytest.approx(total, rel=0.01)
