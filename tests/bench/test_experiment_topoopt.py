"""``reproduce topoopt``: the artifact's scenario, its model graphs, the co-search task
and the section it renders."""

import pytest

from fabricopt.bench.experiments import get_experiment, suite_name
from fabricopt.bench.experiments.topoopt_artifact import (QUICK, cosearch_task, model_graph,
                                                          sweep_task)
from fabricopt.bench.scenario import load_scenario
from fabricopt.fabrics.workloads import parameter_count

SCENARIO = load_scenario("topoopt", "artifact")


def test_the_scenario_is_the_artifacts_setup():
    v = SCENARIO.values
    assert v["servers"] == 128 and v["gpus_per_server"] == 4 and v["degrees"] == [4, 8]
    assert [m["name"] for m in v["models"]] == ["candle", "vgg16", "bert", "resnet50", "dlrm",
                                                "ncf"]
    batches = {m["name"]: 128 * 4 * m["local_batch"] for m in v["models"]}
    assert batches["vgg16"] == 32768 and batches["resnet50"] == 65536
    assert SCENARIO.source("models[4].shape.rows_per_table").startswith("artifact:")
    for m in v["models"]:
        if m["name"] != "resnet50":
            assert 2.0 <= m["paper_ratio"] <= 3.0


def test_dlrm_has_the_artifacts_64_tables_of_10m_rows():
    dlrm = next(m for m in SCENARIO["models"] if m["name"] == "dlrm")
    graph, batch = model_graph(dlrm, 128, 4, 156e12)
    tables = [op for op in graph.ops if op.id.startswith("emb")]
    assert batch == 65536 and len(tables) == 64
    assert parameter_count(graph) > 64 * 10_000_000 * 128


@pytest.mark.slow
def test_quick_cosearch_prices_every_fabric_and_records_rounds():
    out = cosearch_task("dlrm", 4, quick=True)
    f = out["fabrics"]
    assert out["servers"] == QUICK["servers"]
    # The ideal switch prices every strategy found, so it is never slower.
    assert f["ideal-switch"]["iteration_s"] <= f["direct-connect"]["iteration_s"] * (1 + 1e-9)
    assert f["direct-connect"]["iteration_s"] <= min(f["direct-connect"]["rounds_s"]) + 1e-12
    assert f["direct-connect"]["strategy"].startswith("hybrid")   # embeddings model-parallel
    assert f["direct-connect"]["cost_usd"] == pytest.approx(f["fat-tree"]["cost_usd"])


def test_quick_sweep_and_render(tmp_path):
    sweep = sweep_task("vgg16", 4, quick=True)
    assert len(sweep["points"]) == 4
    row = {"status": "feasible", "info": cosearch_task("vgg16", 4, quick=True)}
    e = get_experiment("topoopt")
    text = e.render([row, {"status": "feasible", "info": sweep}], tmp_path, True)
    assert "| vgg16 | 4096 | 4 |" in text and "2.8" in text
    assert (tmp_path / "topoopt-where.png").exists()
    assert "`models[1].local_batch` | 64 | artifact:" in text


def test_quick_plan_covers_six_models_both_degrees():
    e = get_experiment("topoopt")
    plan = e.plan(suite_name(e, True), True)
    assert len([s for s in plan if s.task == "topoopt.cosearch"]) == 12
    assert len([s for s in plan if s.task == "topoopt.sweep"]) == 6
