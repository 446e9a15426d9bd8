"""The crux experiment's scoring: gains pair draws by jitter seed, JCT from work done."""

import pytest

from fabricopt.bench.experiments.crux import _gains, _jct_changes, _sd


def _run(utils, busy, hashes=(None,)):
    draws = [{"hash": h, "seed": s, "utilization": u, "busy": b}
             for h in hashes for s, (u, b) in enumerate(zip(utils, busy))]
    return {"ids": ["gpt", "bert1"], "draws": draws}


def test_a_gain_pairs_each_ecmp_draw_with_crux_under_the_same_jitter_seed():
    crux = _run([0.6, 0.8], [[0.6, 0.6], [0.8, 0.8]])
    ecmp = _run([0.5, 0.4], [[0.5, 0.5], [0.4, 0.4]], hashes=(0, 1))
    assert _gains(crux, ecmp) == pytest.approx([0.2, 1.0, 0.2, 1.0])


def test_jct_change_is_the_inverse_ratio_of_busy_fractions():
    # GPT busy 0.5 -> 0.625 of the window under crux: 20 % less time per iteration
    crux = _run([0.6], [[0.625, 0.4]])
    ecmp = _run([0.5], [[0.5, 0.5]])
    (gpt, gpt_change, gpt_sd), (bert, bert_change, _) = _jct_changes(crux, ecmp)
    assert (gpt, bert) == ("gpt", "bert1")
    assert gpt_change == pytest.approx(-0.2) and gpt_sd == 0.0
    assert bert_change == pytest.approx(0.25)


def test_sd_is_the_sample_standard_deviation():
    assert _sd([1.0, 3.0]) == pytest.approx(2 ** 0.5)
    assert _sd([2.0]) == 0.0
