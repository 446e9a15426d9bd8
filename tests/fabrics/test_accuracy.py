"""Steps-to-target tables and time to accuracy."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fabricopt.bench.experiments.sipml import time_to_accuracy
from fabricopt.errors import InvalidInstance
from fabricopt.fabrics.accuracy import (IMAGENET_TRAIN_IMAGES, STEPS_TO_TARGET, StepsToTarget,
                                        critical_batch_table, load_steps_table,
                                        steps_to_target)


def test_builtin_tables_cite_their_source():
    for name, table in STEPS_TO_TARGET.items():
        assert table.workload == name and table.source and table.target
    assert STEPS_TO_TARGET["megatron"].points == ((1024, 240_000.0),)
    resnet = STEPS_TO_TARGET["resnet50"]
    assert resnet.batches == (256, 512, 1024, 2048, 4096, 8192)
    for b, steps in resnet.points:  # 90 epochs of ImageNet-1k at every batch
        assert steps * b == pytest.approx(90 * IMAGENET_TRAIN_IMAGES)


@given(st.integers(256, 8192))
def test_interpolation_lies_between_the_neighbouring_measurements(batch):
    table = STEPS_TO_TARGET["resnet50"]
    steps = steps_to_target(table, batch)
    below = max(b for b in table.batches if b <= batch)
    above = min(b for b in table.batches if b >= batch)
    measured = dict(table.points)
    assert measured[above] <= steps * (1 + 1e-12) and steps <= measured[below] * (1 + 1e-12)
    # On ResNet-50's table the samples to target stay 90 epochs in between, too.
    assert steps * batch == pytest.approx(90 * IMAGENET_TRAIN_IMAGES)


def test_no_extrapolation():
    with pytest.raises(InvalidInstance, match=r"^batch = 128: outside the measured batches "
                                              r"256 \.\.\. 8192 of resnet50"):
        steps_to_target(STEPS_TO_TARGET["resnet50"], 128)
    with pytest.raises(InvalidInstance, match="outside the measured batches 1024 ... 1024"):
        steps_to_target(STEPS_TO_TARGET["megatron"], 2048)
    assert steps_to_target(STEPS_TO_TARGET["megatron"], 1024) == 240_000.0


@pytest.mark.parametrize("points, match", [
    ((), r"^points = \[\]: must list at least one"),
    (((1024, 5.0), (512, 9.0)), r"^points\[1\]\[0\] = 512: batches must increase strictly"),
    (((1024, -1.0),), r"^points\[0\]\[1\] = -1\.0"),
    (((1024,),), r"^points\[0\] = \(1024,\): must be a \[batch, steps\] pair"),
])
def test_bad_tables_name_the_field(points, match):
    with pytest.raises(InvalidInstance, match=match):
        StepsToTarget("x", "t", points, "s")


def test_load_a_table_from_json(tmp_path):
    path = tmp_path / "steps.json"
    path.write_text(json.dumps({"workload": "transformer", "target": "loss 3.9",
                                "source": "my runs", "points": [[256, 8e4], [1024, 3e4]]}))
    table = load_steps_table(path)
    assert table.batches == (256, 1024) and steps_to_target(table, 1024) == 3e4
    with pytest.raises(InvalidInstance, match="missing field 'points'"):
        load_steps_table({"workload": "w", "target": "t", "source": "s"})


def test_time_to_accuracy_picks_the_fastest_batch():
    def point(iteration_s):
        return {"iteration_s": iteration_s, "k": 1, "l": 8}

    # Batch 4096 takes 1.5x the iteration of 8192 but twice the steps: 8192 wins;
    # batch 512 is 10x faster per iteration for 16x the steps: 8192 still wins by 1.6x.
    curves = {"resnet50": {("elect-flat", 100.0, 8192): point(1.0),
                           ("elect-flat", 100.0, 4096): point(1.5),
                           ("elect-flat", 100.0, 512): point(0.1),
                           ("sip-ocs", 100.0, 512): point(0.01),
                           ("sip-ocs", 100.0, 16384): point(0.001)},  # unmeasured: ignored
              "transformer": {("elect-flat", 100.0, 1024): point(1.0)}}  # no table: ignored
    tta = time_to_accuracy(curves)
    assert set(tta) == {"resnet50"}
    seconds, batch, _ = tta["resnet50"][("elect-flat", 100.0)]
    assert batch == 8192 and seconds == pytest.approx(90 * IMAGENET_TRAIN_IMAGES / 8192)
    seconds, batch, _ = tta["resnet50"][("sip-ocs", 100.0)]
    assert batch == 512 and seconds == pytest.approx(0.01 * 90 * IMAGENET_TRAIN_IMAGES / 512)


@given(st.integers(0, 12).map(lambda e: 2 ** e), st.floats(1e2, 1e7),
       st.sampled_from([256, 1024, 16384]))
def test_critical_batch_steps_fall_below_the_critical_batch_and_flatten_above(b0, s0, critical):
    table = critical_batch_table("w", baseline_batch=b0, baseline_steps=s0,
                                 critical_batch=critical, batches=[2 ** e for e in range(18)],
                                 target="t", source="s")
    steps = dict(table.points)
    assert steps[b0] == pytest.approx(s0)
    for b in steps:
        if 2 * b not in steps:
            continue
        halving = steps[2 * b] / steps[b]
        assert halving < 1.0                       # more batch, never more steps
        if 8 * b <= critical:                      # far below: about half the steps
            assert halving < 0.56
        if b >= 8 * critical:                      # far above: about the same steps
            assert halving > 0.94


def test_the_sipml_scenario_curves_are_critical_batch_tables_with_sources():
    from fabricopt.bench.experiments.sipml import steps_tables

    tables = steps_tables()
    assert set(tables) == {"resnet50", "transformer", "megatron"}
    resnet = tables["resnet50"]
    assert steps_to_target(resnet, 256) == pytest.approx(90 * IMAGENET_TRAIN_IMAGES / 256,
                                                         rel=1e-5)
    assert "Goyal" in resnet.source and "assumption" in resnet.source
    assert steps_to_target(resnet, 1024) / steps_to_target(resnet, 2048) > 1.8
    assert steps_to_target(resnet, 65536) / steps_to_target(resnet, 131072) < 1.15
    assert tables["megatron"].points == ((1024, 240_000.0),)
    # log-log interpolation between the tabulated powers of 2 stays between them
    assert steps_to_target(resnet, 4096) < steps_to_target(resnet, 3000) \
        < steps_to_target(resnet, 2048)


def test_time_to_accuracy_takes_a_smaller_batch_when_steps_flatten():
    from fabricopt.bench.experiments.sipml import steps_tables

    table = steps_tables()["transformer"]           # critical batch 2048
    point = lambda s: {"iteration_s": s, "k": 8, "l": 8}  # noqa: E731
    # 4096 runs 1.2x faster per iteration than 1024 but needs far fewer than 1/1.2 steps...
    curves = {"transformer": {("sip-ocs", 1.0, 1024): point(1.0),
                              ("sip-ocs", 1.0, 4096): point(1 / 1.2),
                              ("elect-flat", 1.0, 1024): point(1.0),
                              ("elect-flat", 1.0, 4096): point(3.9)}}
    tta = time_to_accuracy(curves, {"transformer": table})["transformer"]
    assert tta[("sip-ocs", 1.0)][1] == 4096
    # ...and a batch 4x larger that costs 3.9x per iteration never pays: samples grow
    assert tta[("elect-flat", 1.0)][1] == 1024
