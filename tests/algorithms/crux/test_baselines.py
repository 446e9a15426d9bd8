"""Whole coflow schedulers: Sincronia's BSSI order, Varys's SEBF order and MADD rates."""

import itertools

import pytest
from hypothesis import given, settings, strategies as st

from fabricopt.algorithms.crux.baselines import (bssi_order, capped_sim_jobs, madd_caps_gbps,
                                                 sebf_order, sincronia_schedule, varys_schedule)
from fabricopt.errors import InvalidArgument
from fabricopt.problems.contention import SimJob, simulate, utilization
from fabricopt.problems.crux import CruxInstance, check, generate


def _example_1():
    """Crux Example 1 (Fig. 11): one 8 Gbps link; Job 1 computes 2 s and sends 2 s,
    Job 2 computes 1 s and sends 1 s, 10 GPUs each."""
    return CruxInstance(8, {"l": 8.0}, [
        {"id": "j1", "gpus": 10, "compute_s": 2.0, "overlap": 1.0,
         "flows": [{"bytes": 2e9, "paths": [["l"]]}]},
        {"id": "j2", "gpus": 10, "compute_s": 1.0, "overlap": 1.0,
         "flows": [{"bytes": 1e9, "paths": [["l"]]}]}], warmup_s=120.0, window_s=12.0)


def _weighted_cct(order, sizes, weights):
    t = total = 0.0
    for c in order:
        t += sizes[c]
        total += weights[c] * t
    return total


@settings(max_examples=60, deadline=None)
@given(sizes=st.lists(st.floats(0.1, 10.0), min_size=1, max_size=6),
       data=st.data())
def test_bssi_on_one_port_minimizes_weighted_completion_time(sizes, data):
    weights = data.draw(st.lists(st.floats(0.1, 10.0), min_size=len(sizes),
                                 max_size=len(sizes)))
    order = bssi_order([{"p": s} for s in sizes], weights)
    assert sorted(order) == list(range(len(sizes)))
    best = min(_weighted_cct(p, sizes, weights)
               for p in itertools.permutations(range(len(sizes))))
    assert _weighted_cct(order, sizes, weights) == pytest.approx(best, rel=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from("abcd"), st.floats(0.0, 5.0), max_size=4),
                min_size=1, max_size=7))
def test_bssi_and_sebf_return_permutations(load):
    for order in (bssi_order(load), sebf_order(load)):
        assert sorted(order) == list(range(len(load)))


def test_varys_on_one_link_serves_the_smaller_coflow_first_as_the_closed_form_says():
    # SEBF puts Job 2 (1 s bottleneck) above Job 1 (2 s); the steady state over 12 s:
    # Job 2 computes 6 s and Job 1 4 s, U = 100 / 240 (Crux Example 1, Job 2 first)
    inst = _example_1()
    solution, caps = varys_schedule(inst)
    assert solution.level["j2"] > solution.level["j1"]
    # one flow per coflow: MADD's rate is the whole link
    assert caps == {"j1": (8.0,), "j2": (8.0,)}
    result = simulate(inst.links, capped_sim_jobs(inst, solution, caps), 120.0, 12.0)
    assert utilization(result, [10, 10]) == pytest.approx(100 / 240)


def test_sincronia_on_one_link_is_smallest_first_too():
    inst = _example_1()
    solution = sincronia_schedule(inst)
    assert solution.level["j2"] > solution.level["j1"] and check(inst, solution)


def test_madd_finishes_every_flow_of_a_coflow_at_its_bottleneck_time():
    # coflow A: 2 GB on x (2 s at 8 Gbps) and 1 GB on y; MADD caps y's flow at 4 Gbps,
    # so both of A's flows end 2 s after release, and the lower coflow B on y gets the
    # other 4 Gbps meanwhile: its 1 GB also takes 2 s
    inst = CruxInstance(8, {"x": 8.0, "y": 8.0}, [
        {"id": "a", "gpus": 1, "compute_s": 10.0, "overlap": 1.0,
         "flows": [{"bytes": 2e9, "paths": [["x"]]}, {"bytes": 1e9, "paths": [["y"]]}]},
        {"id": "b", "gpus": 1, "compute_s": 10.0, "overlap": 1.0,
         "flows": [{"bytes": 1e9, "paths": [["y"]]}]}])
    caps = madd_caps_gbps(inst, {"a": (0, 0), "b": (0,)})
    assert caps == {"a": (8.0, 4.0), "b": (8.0,)}
    jobs = [SimJob(1, 10.0, 1.0, 1, ((2e9, ("x",)), (1e9, ("y",))), caps["a"]),
            SimJob(1, 10.0, 1.0, 0, ((1e9, ("y",)),), caps["b"])]
    result = simulate(inst.links, jobs, 0.0, 25.0, trace=True)
    assert result.iteration_ends[0][0] == pytest.approx(12.0)
    assert result.iteration_ends[1][0] == pytest.approx(12.0)
    # y carries A at 4 Gbps and B at 4 Gbps over [10, 12): 1 GB each
    assert result.sent_bytes.tolist() == pytest.approx([3e9 * 2, 1e9 * 2])


def test_a_rate_cap_slows_a_lone_flow_to_its_cap():
    # 1 GB at a 2 Gbps cap on an 8 Gbps link: 4 s, so an iteration is 1 + 4 s
    job = SimJob(1, 1.0, 1.0, 0, ((1e9, ("l",)),), (2.0,))
    result = simulate({"l": 8.0}, [job], 0.0, 20.0, trace=True)
    assert result.iteration_ends[0][:3] == pytest.approx((5.0, 10.0, 15.0))


@pytest.mark.parametrize("caps", [(1.0, 2.0), (0.0,), (-1.0,)])
def test_bad_rate_caps_are_named(caps):
    job = SimJob(1, 1.0, 1.0, 0, ((1e9, ("l",)),), caps)
    with pytest.raises(InvalidArgument, match=r"jobs\[0\]\.flow_cap_gbps = .*one limit > 0 "
                                              r"per flow \(1\)"):
        simulate({"l": 8.0}, [job], 0.0, 20.0)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), jobs=st.integers(1, 6), levels=st.integers(1, 4))
def test_both_schedules_are_valid_crux_solutions(seed, jobs, levels):
    inst = generate(seed=seed, jobs=jobs, tors=2, levels=levels)
    assert check(inst, sincronia_schedule(inst, seed=seed))
    solution, caps = varys_schedule(inst, seed=seed)
    assert check(inst, solution)
    for job in inst.jobs:
        assert len(caps[job.id]) == (len(job.flows) if job.flows else 0)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), jobs=st.integers(1, 6), levels=st.integers(2, 4))
def test_jobs_without_flows_take_no_level_from_a_coflow(seed, jobs, levels):
    # the first K-1 coflows of the order get a level of their own above the rest; a job
    # without flows is never above a coflow
    from fabricopt.algorithms.crux.baselines import link_seconds

    inst = generate(seed=seed, jobs=jobs, tors=2, levels=levels)
    for solution in (sincronia_schedule(inst, seed=seed), varys_schedule(inst, seed=seed)[0]):
        load = link_seconds(inst, solution.path)
        coflows = [j.id for x, j in enumerate(inst.jobs) if load[x]]
        idle = [j.id for x, j in enumerate(inst.jobs) if not load[x]]
        if coflows:
            assert all(solution.level[j] <= min(solution.level[c] for c in coflows)
                       for j in idle)
        assert len({solution.level[j] for j in coflows}) == min(levels, len(coflows))


def test_sincronia_orders_the_coflows_of_a_cluster_with_an_idle_job():
    # the quick suite's crux/j3-clos/1: vgg16 and resnet50 share link agg0-tor0 and
    # j1-resnet50 has no flows; on 2 levels BSSI's first coflow (the smaller resnet50)
    # goes above vgg16, so the schedule is not ECMP's single level
    from fabricopt.algorithms.crux.crux import ecmp
    from fabricopt.problems.crux import evaluate

    inst = generate(seed=1, jobs=3, levels=2, hosts_per_tor=3)
    solution = sincronia_schedule(inst, seed=1)
    assert solution.level == {"j0-vgg16": 0, "j1-resnet50": 0, "j2-resnet50": 1}
    assert evaluate(inst, solution) != evaluate(inst, ecmp(inst, seed=1))
