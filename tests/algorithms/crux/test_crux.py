"""Crux's building blocks against the paper's examples, and the pipeline's outputs."""


import pytest
from hypothesis import given, settings, strategies as st

from fabricopt.algorithms.crux.crux import (K_MAX, bottleneck_time, correction_factor,
                                            correction_factors, crux, crux_plan, ecmp,
                                            gpu_intensity, ranked_plan, reference_job,
                                            select_paths)
from fabricopt.problems import check, evaluate
from fabricopt.problems.crux import CruxInstance

from crux_helpers import small_crux_case


def one_link(*jobs):
    """Jobs (gpus, compute_s, overlap, link seconds) on one 8 Gbps link."""
    return CruxInstance(2, {"l": 8.0}, [
        {"id": f"j{k + 1}", "gpus": g, "compute_s": c, "overlap": o,
         "flows": [{"bytes": t * 1e9, "paths": [["l"]]}]} for k, (g, c, o, t) in enumerate(jobs)])


EXAMPLE1 = one_link((10, 2.0, 1.0, 2.0), (10, 1.0, 1.0, 1.0))
EXAMPLE2 = one_link((2, 4.0, 0.5, 1.0), (12, 2.0, 0.5, 3.0))
ONE_PATH = {"j1": [0], "j2": [0]}


def test_example1_intensities_tie_and_job1_is_the_reference():
    assert gpu_intensity(EXAMPLE1).tolist() == [10.0, 10.0]
    assert bottleneck_time(EXAMPLE1, ONE_PATH).tolist() == [2.0, 1.0]
    assert reference_job(EXAMPLE1, ONE_PATH) == 0        # more bytes per iteration


def test_example1_correction_factor_puts_job2_first():
    k = correction_factors(EXAMPLE1, ONE_PATH)
    assert k.tolist() == pytest.approx([1.0, 1.5])
    _, priority, _ = crux_plan(EXAMPLE1)
    assert priority.tolist() == pytest.approx([10.0, 15.0])
    sol = crux(EXAMPLE1)
    assert sol.level["j2"] > sol.level["j1"]


def test_example2_reference_is_the_heavier_job():
    assert reference_job(EXAMPLE2, ONE_PATH) == 1


def test_example2_deterministic_replay_ties():
    # In the deterministic steady state both orders give U = 4/7: nobody gains (k = 1).
    assert correction_factor(EXAMPLE2, 0, 1, [1.0, 3.0]) == 1.0


def test_example2_jittered_replay_puts_the_hidden_job_second():
    """docs/departures.rst, crux-2.4: with ±10 % compute jitter k_1 is about 0.62, so Job 2
    goes first."""
    k1 = correction_factor(EXAMPLE2, 0, 1, [1.0, 3.0], jitter=0.1, replays=20)
    assert 0.5 < k1 < 0.7


def test_guards_of_the_correction_factor():
    # The reference hides its 1 s send in its 4 s compute (overlap 0): it never gains by
    # going first, while the other job does -> K_MAX. Jobs that never collide -> 1.
    hidden = one_link((8, 4.0, 0.0, 1.0), (8, 1.5, 1.0, 1.0))
    assert correction_factor(hidden, 1, 0, [1.0, 1.0]) == K_MAX
    light = one_link((8, 10.0, 1.0, 0.01), (8, 10.0, 1.0, 0.01))
    assert correction_factor(light, 1, 0, [0.01, 0.01]) == 1.0


def clos(levels=2):
    """Two ToRs, two aggregation switches; three jobs each with one tor0 -> tor1 flow."""
    links = {f"{a}-{b}": 100.0 for a, b in [("tor0", "agg0"), ("tor0", "agg1"),
                                           ("agg0", "tor1"), ("agg1", "tor1")]}
    paths = [["tor0-agg0", "agg0-tor1"], ["tor0-agg1", "agg1-tor1"]]
    jobs = [{"id": name, "gpus": g, "compute_s": 1.0, "overlap": 1.0,
             "flows": [{"bytes": b, "paths": paths}]}
            for name, g, b in [("big", 32, 2e9), ("mid", 16, 1e9), ("small", 8, 4e9)]]
    return CruxInstance(levels, links, jobs, 10.0, 50.0)


def test_path_selection_spreads_the_most_intense_jobs():
    inst = clos()
    intensity = gpu_intensity(inst)
    assert intensity.tolist() == pytest.approx([200.0, 200.0, 25.0])   # G*C / t
    paths = select_paths(inst)
    # "big" and "mid" tie on intensity (tie -> id: big first), take different aggs;
    # "small" joins the less loaded one ("mid"'s: 0.08 s vs 0.16 s of link time).
    assert paths == {"big": (0,), "mid": (1,), "small": (1,)}
    assert select_paths(inst, load="jobs")["mid"] == (1,)
    assert select_paths(inst, load="time") == paths


def test_utilization_load_sees_short_iterations_as_busy():
    # B (most intense) takes agg0, A takes agg1. A sends little but every 0.12 s (17 % of
    # the link's time); B sends 4x more per iteration but every 1.08 s (7 %). C joins B
    # under the utilization rule and A under the literal link-seconds rule (crux-1).
    links = {e: 100.0 for e in ("tor0-agg0", "tor0-agg1", "agg0-tor1", "agg1-tor1")}
    paths = [["tor0-agg0", "agg0-tor1"], ["tor0-agg1", "agg1-tor1"]]
    inst = CruxInstance(2, links, [
        {"id": name, "gpus": g, "compute_s": c, "overlap": 1.0,
         "flows": [{"bytes": b, "paths": paths}]}
        for name, g, c, b in [("A", 64, 0.1, 0.25e9), ("B", 64, 1.0, 1e9), ("C", 8, 1.0, 1e9)]])
    assert select_paths(inst) == {"B": (0,), "A": (1,), "C": (0,)}
    assert select_paths(inst, load="time") == {"B": (0,), "A": (1,), "C": (1,)}


def test_select_paths_rejects_unknown_rules():
    with pytest.raises(ValueError, match="load = 'weird'"):
        select_paths(clos(), load="weird")


def test_ecmp_is_one_level_and_seeded():
    inst = clos()
    a, b = ecmp(inst, seed=1), ecmp(inst, seed=1)
    assert a == b and set(a.level.values()) == {0}
    assert check(inst, a)


@settings(max_examples=5)
@given(st.integers(0, 10**6))
def test_every_method_is_feasible_and_deterministic(seed):
    inst = small_crux_case(seed)
    for make in (lambda: crux(inst, seed=3), lambda: ecmp(inst, seed=3),
                 lambda: ranked_plan(inst, "sincronia"), lambda: ranked_plan(inst, "varys")):
        sol = make()
        assert check(inst, sol), check(inst, sol).reason
        assert sol == make()
        assert 0.0 <= evaluate(inst, sol) <= 1.0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_exact_compression_cuts_at_least_the_dp(seed):
    from fabricopt.algorithms.priorities.compression import cut_value
    from fabricopt.algorithms.crux.crux import contention_dag
    from fabricopt.problems.crux import generate
    inst = generate(seed, jobs=12, levels=3, hosts_per_tor=6)
    path, priority, intensity = crux_plan(inst)
    edges = contention_dag(inst, path, priority, intensity)
    cuts = {}
    for compression in ("dp", "exact"):
        sol = crux(inst, seed=seed, orders=2, compression=compression)
        assert check(inst, sol), check(inst, sol).reason
        level = [sol.level[j] for j in inst.ids]
        cuts[compression] = cut_value(edges, level)
    assert cuts["exact"] >= cuts["dp"]


def test_unknown_compression_is_rejected():
    with pytest.raises(ValueError, match="compression = 'greedy': must be one of dp, exact"):
        crux(EXAMPLE1, compression="greedy")
