"""``fabrics.compare`` and ``fabricopt compare``: named fabrics, sweeps, table, CSV, plot."""

import csv

import pytest

from fabricopt import InvalidInstance
from fabricopt.cli import main
from fabricopt.bench.plots import iteration_vs_bandwidth
from fabricopt.fabrics import comparison
from fabricopt.fabrics.comparison import (FABRIC_NAMES, Row, compare, make_fabric, markdown_table,
                                          write_csv)
from fabricopt.fabrics.iteration import iteration_time, search_iteration_time
from fabricopt.fabrics.models import DirectConnect, ElectFlat, method_available
from tests.fabrics.test_iteration import TOY

needs_placement = pytest.mark.skipif(
    not (method_available("placement", "sipml") and method_available("placement", "unconstrained")),
    reason="placement/sipml is not registered yet")


@pytest.mark.parametrize("name", FABRIC_NAMES)
def test_every_named_fabric_is_built(name):
    f = make_fabric(name, 400.0, 128)
    assert f.cost_usd(128) > 0
    if name == "elect-flat-half":
        assert f == ElectFlat(200.0)
    elif name == "fat-tree-cost-matched":
        assert f.cost_usd(128) == pytest.approx(DirectConnect(4, 100.0).cost_usd(128))
    else:
        assert f.per_node_gbps == pytest.approx(400.0)


def test_sweep_rows_never_rise_with_bandwidth():
    names = ["elect-flat", "elect-flat-half", "elect-cluster-200", "fat-tree", "sip-ocs"]
    rows = compare("transformer", 16, [128.0, 512.0, 2048.0], names, k_values=[1])
    assert len(rows) == 15 and all(r.iteration_s is not None for r in rows)
    for name in names:
        times = [r.iteration_s for r in rows if r.fabric == name]
        assert times == sorted(times, reverse=True)
    by = {(r.fabric, r.gbps): r.iteration_s for r in rows}
    for b in (128.0, 512.0, 2048.0):
        assert by[("elect-flat", b)] <= min(by[(n, b)] for n in names)


@needs_placement
def test_a_point_is_never_slower_than_the_previous_point_s_plan_priced_there(monkeypatch):
    # At 1,024 Gbps Elect-Flat keeps a k = 4 placement found for SiP-OCS; at 2,048 Gbps
    # its own search alone keeps k = 1, slower than that placement priced there.
    kept = []

    def search(*args, **kwargs):
        found = search_iteration_time(*args, **kwargs)
        kept.append(found)
        return found

    monkeypatch.setattr(comparison, "search_iteration_time", search)
    rows = compare("transformer", 256, [1024.0, 2048.0], ["elect-flat", "sip-ocs"])
    low, high = (r for r in rows if r.fabric == "elect-flat")
    plan = next(t.plan for t in kept if t.fabric == ElectFlat(1024.0)
                and t.total_s == low.iteration_s)
    again = iteration_time("transformer", ElectFlat(2048.0), 256, plan.k, plan.l, plan=plan)
    assert (low.k, high.k, plan.method) == (4, 4, "sipml")
    assert high.iteration_s <= again.total_s


def test_infeasible_and_unavailable_points_are_reported():
    flat, = compare("megatron", 8, [100.0], ["elect-flat"], k_values=[1])
    assert flat.iteration_s is None and flat.note.startswith("infeasible: no feasible (k, l)")
    assert "- elect-flat: infeasible" in markdown_table([flat])
    ring = compare("resnet50", 8, [100.0, 200.0], ["sip-ring"], k_values=[1])
    if method_available("wavelengths", "mcf"):
        assert all(r.iteration_s is not None for r in ring)
    else:
        assert all(r.note.startswith("unavailable: sip-ring needs method 'mcf'") for r in ring)


def test_table_csv_and_plot(tmp_path):
    rows = compare("resnet50", 8, [100.0, 200.0], ["elect-flat", "fat-tree"], k_values=[1])
    table = markdown_table(rows)
    assert table.count("\n| resnet50 | 8 |") == 4
    write_csv(rows, tmp_path / "r.csv")
    with open(tmp_path / "r.csv") as f:
        read = list(csv.DictReader(f))
    assert [float(r["iteration_s"]) for r in read] == [r.iteration_s for r in rows]
    assert iteration_vs_bandwidth(rows, tmp_path / "r.png") == tmp_path / "r.png"
    assert (tmp_path / "r.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "r.pdf").read_bytes()[:5] == b"%PDF-"
    iteration_vs_bandwidth(
        [Row("w", 1, "f", 1.0, 1.0, None, None, None, None, None, None, None, 0.0, "x")],
        tmp_path / "empty.png")
    assert (tmp_path / "empty.png").exists()


def test_cli_compare_writes_table_csv_and_plot(tmp_path, capsys):
    prefix = tmp_path / "out"
    code = main(["compare", "resnet50", "--gpus", "8", "--k", "1", "--bandwidths", "100,400",
                 "--fabrics", "elect-flat,sip-ocs", "--out", str(prefix), "--quiet"])
    assert code == 0
    out = capsys.readouterr().out
    assert out.startswith("| workload |") and out.count("| resnet50 | 8 |") == 4
    for ext in ("md", "csv", "png", "pdf"):
        assert (tmp_path / f"out.{ext}").stat().st_size > 0


@pytest.mark.parametrize("args, message", [
    (["--fabrics", "token-ring"], "fabric = 'token-ring': unknown fabric"),
    (["--bandwidths", "fast"], "--bandwidths = 'fast': expected comma-separated numbers"),
    (["--gpus-per-node", "0"], "--gpus-per-node = 0: must be >= 1"),
])
def test_cli_compare_bad_input_is_one_line(tmp_path, capsys, args, message):
    code = main(["compare", "resnet50", "--gpus", "8", "--k", "1", "--out",
                 str(tmp_path / "x"), "--quiet", *args])
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1


def test_make_fabric_validates():
    with pytest.raises(InvalidInstance, match="bandwidth = 0.0: must be > 0"):
        make_fabric("elect-flat", 0.0, 8)


@needs_placement
def test_elect_flat_wins_the_search_with_model_parallelism():
    names = ["elect-flat", "elect-cluster-200", "fat-tree", "sip-ocs"]
    rows = compare(TOY, 8, [50.0, 400.0], names, switches=2, tau_s=1e-4)
    by = {(r.fabric, r.gbps): r for r in rows}
    for b in (50.0, 400.0):
        flat = by[("elect-flat", b)].iteration_s
        for name in names[1:]:
            other = by[(name, b)].iteration_s
            assert other is None or flat <= other * (1 + 1e-12), (name, b)
