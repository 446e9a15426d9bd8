"""``fabricopt compare`` and ``fabrics.compare`` on traffic (SimAI/AICB) workloads."""

import csv
import json

import pytest

from fabricopt import InvalidInstance
from fabricopt.cli import main
from fabricopt.fabrics import compare
from fabricopt.fabrics.resolve import simai_data_path
from fabricopt.fabrics.simai.comparison import compare_simai, make_simai_fabric
from fabricopt.fabrics.simai.iteration import gib_per_s_to_gbps

MOE = simai_data_path("workload_analytical.txt")
PRESET = ["--model", "simai", "--fabric", "elect-cluster", "--nvlink-GBps", "360",
          "--nic-GBps", "48.5", "--nics-per-server", "8", "--gpus-per-server", "8"]


def test_cli_preset_prints_simai_analytical_breakdown(capsys):
    code = main(["compare", str(MOE), "--gpus", "384", *PRESET, "--json", "--quiet"])
    assert code == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 1
    r = rows[0]
    assert r["fabric"] == "elect-cluster" and r["gpus"] == 384
    assert r["gbps"] == pytest.approx(gib_per_s_to_gbps(48.5))   # 8 NICs / 8 GPUs
    for key, expected in {"compute_s": 4.5428, "exposed_comm_s": 1.5874, "bubble_s": 0.3460,
                          "iteration_s": 6.4762}.items():
        assert r[key] == pytest.approx(expected, rel=0.01), key
    for group, expected in {"DP": 0.0379, "TP": 0.3267, "EP": 1.2228}.items():
        assert r["exposed_comm_by_group_s"][group] == pytest.approx(expected, rel=0.01)
    assert r["exposed_comm_by_group_s"]["DP_EP"] == 0.0


def test_cli_compare_takes_the_simai_file_by_path_with_defaults(tmp_path, capsys):
    prefix = tmp_path / "moe"
    assert main(["compare", str(MOE), "--gpus", "384", "--out", str(prefix), "--quiet"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("| workload |") and "| elect-cluster |" in captured.out
    assert captured.err == ""  # --quiet: the files are written without a word
    for ext in ("md", "csv", "png"):
        assert (tmp_path / f"moe.{ext}").stat().st_size > 0
    with open(tmp_path / "moe.csv") as f:
        row = next(csv.DictReader(f))
    assert float(row["iteration_s"]) == pytest.approx(6.4762, rel=0.01)
    assert float(row["exposed_EP_s"]) == pytest.approx(1.2228, rel=0.01)


def test_cli_compare_by_name_on_several_fabrics(capsys):
    code = main(["compare", "simai-micro", "--gpus", "8", "--fabrics",
                 "elect-cluster,elect-flat,sip-ocs", "--switches", "2", "--bandwidths", "400",
                 "--json", "--quiet"])
    assert code == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["fabric"] for r in rows] == ["elect-cluster", "elect-flat", "sip-ocs"]
    assert all(r["iteration_s"] > r["compute_s"] for r in rows)


@pytest.mark.parametrize("args, message", [
    (["simai-micro", "--gpus", "8", "--model", "sipml"], "--model sipml places op graphs"),
    (["resnet50", "--gpus", "8", "--model", "simai"], "--model simai prices traffic workloads"),
    (["simai-micro", "--gpus", "8", "--fabric", "token-ring"], "fabric = 'token-ring'"),
    (["simai-micro", "--gpus", "8", "--overlap", "TP"], "--overlap 'TP': expected GROUP=FRACTION"),
    (["simai-micro", "--gpus", "8", "--overlap", "XP=1"], "overlap = 'XP': is not a group"),
    (["simai-micro", "--gpus", "8", "--mode", "serial", "--efficiency", "/nope"], "cannot read"),
    (["simai-micro", "--gpus", "12"], "gpus = 12: must be a multiple of TP*PP = 8"),
    (["no-such-workload", "--gpus", "8"], "unknown workload"),
])
def test_cli_compare_simai_bad_input_is_one_line(tmp_path, capsys, args, message):
    code = main(["compare", *args, "--out", str(tmp_path / "x"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1, err


def test_an_infeasible_fabric_is_a_row_with_its_reason_and_the_option_to_change():
    rows = compare_simai(MOE, 384, [400.0], ["sip-ocs", "sip-ring"], switches=16, max_hops=16)
    assert [r.iteration_s for r in rows] == [None, None]
    assert "has only 16 ports" in rows[0].note and "hops apart" in rows[1].note
    assert "set switches (--switches) to at least 18" in rows[0].note
    assert "set max_hops (--max-hops) to at least 32" in rows[1].note


def test_optical_defaults_carry_the_job_and_say_so():
    rows = compare_simai(MOE, 384, [400.0], ["sip-ocs", "sip-ring"])
    assert all(r.iteration_s is not None for r in rows)
    assert "switches = 18: the job's busiest GPU has 18 peers" in rows[0].note
    assert "max_hops = 32: the job's farthest pair is 32 hops apart" in rows[1].note


def test_compare_dispatches_traffic_workloads():
    rows = compare("simai-micro", 8, [400.0, 800.0], ["elect-flat"])
    assert [r.gbps for r in rows] == [400.0, 800.0]
    assert rows[1].iteration_s < rows[0].iteration_s
    with pytest.raises(InvalidInstance, match="apply only to traffic workloads"):
        compare("resnet50", 8, [400.0], ["elect-flat"], k_values=[1], mode="serial")


def test_elect_cluster_at_the_nic_bandwidth_is_simai_cluster():
    from fabricopt.fabrics.simai.iteration import simai_cluster

    f = make_simai_fabric("elect-cluster", gib_per_s_to_gbps(48.5), 384)
    g = simai_cluster()
    assert (f.intra_gbps, f.gpus_per_server) == (g.intra_gbps, g.gpus_per_server)
    assert f.inter_gbps == pytest.approx(g.inter_gbps)
    ring = make_simai_fabric("sip-ring", 400.0, 384, max_hops=200)
    assert ring.max_hops == 200 and ring.wavelengths == 16


@pytest.mark.parametrize("workload, option, message", [
    ("simai-micro", ["--k", "2"], "--k: simai-micro is a traffic workload (AICB/SimAI): its "
                                  "parallelism and compute come from its file"),
    ("simai-micro", ["--max-k=2"], "--max-k: simai-micro is a traffic workload"),
    ("simai-micro", ["--seed", "0"], "--seed: simai-micro is a traffic workload"),
    ("simai-micro", ["--gpu-tfl", "100"], "--gpu-tflops: simai-micro is a traffic workload"),
    ("resnet50", ["--nic-GBps", "3"], "--nic-GBps: applies to traffic workloads (AICB/SimAI) "
                                      "only; resnet50 is an op-graph workload"),
])
def test_cli_compare_refuses_options_its_model_would_ignore(tmp_path, capsys, workload,
                                                            option, message):
    code = main(["compare", workload, "--gpus", "8", *option, "--out", str(tmp_path / "x"),
                 "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(f"fabricopt: error: {message}"), err
    assert err.count("\n") == 1


def test_cli_simai_rules_reproduce_simai_and_refuse_other_fabrics(capsys):
    code = main(["compare", str(MOE), "--gpus", "384", *PRESET, "--rules", "simai", "--json",
                 "--quiet"])
    assert code == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["rules"] == "simai"
    assert row["iteration_s"] == pytest.approx(6.4762, rel=0.01)
    code = main(["compare", str(MOE), "--gpus", "384", "--fabrics", "elect-cluster,sip-ocs",
                 "--rules", "simai", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "rules = 'simai': prices only elect-cluster" in err, err
    assert err.count("\n") == 1
