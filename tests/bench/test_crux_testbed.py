"""The Crux testbed cases: scenario data, instance shape, scoring and the calibration."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fabricopt.algorithms.crux.crux import crux, ecmp
from fabricopt.bench.crux_testbed import (build_instance, job_flows, load_case, pair_changes,
                                          replay, replay_alone, nic_clos_links)
from fabricopt.bench.scenario import load_scenario
from fabricopt.bounds.crux import capacity_bound, utilization_bound
from fabricopt.errors import InvalidArgument
from fabricopt.problems.crux import CruxInstance, check, evaluate

TESTBED = load_scenario("crux", "testbed").values


def test_every_case_places_the_papers_gpu_counts():
    counts = {("fig19", 0): [32, 8, 8], ("fig19", 1): [32, 8, 8, 8],
              ("fig19", 2): [32, 8, 8, 8, 8], ("fig20", 0): [48, 16, 16, 8, 8],
              ("pair22", 0): [64, 16]}
    for (figure, index), gpus in counts.items():
        case = load_case(figure, index)
        assert [job.gpus for job in case.instance.jobs] == gpus


def test_testbed_has_four_nic_links_per_host_and_an_uplink_per_aggregation_switch():
    inst = load_case("fig20", 0).instance
    assert len(inst.links) == 2 * 12 * 4 + 2 * 6 * 8
    assert all(gbps == 200.0 for gbps in inst.links.values())
    gpt = inst.jobs[0]
    # 6 hosts, one per ToR: 4 channels x 6 hops, each with 8 ECMP choices
    assert len(gpt.flows) == 24 and {len(f.paths) for f in gpt.flows} == {8}


def test_a_ring_hop_carries_its_channels_share_of_2_n_minus_1_over_n():
    # 3 hosts under 3 ToRs, all 8 GPUs each: 4 channels, 3 hops per channel
    flows = job_flows([[0, 0, 8], [2, 0, 8], [4, 0, 8]], 2, 8, 2, 12e9)
    assert len(flows) == 12
    assert {f["bytes"] for f in flows} == {2 * 2 / 3 * 12e9 / 4}
    # a hop inside one ToR has one path and touches no uplink
    inner = job_flows([[0, 0, 8], [1, 0, 8]], 2, 8, 2, 1e9)
    assert {len(f["paths"]) for f in inner} == {1}
    assert not any("agg" in e for f in inner for e in f["paths"][0])


def test_a_job_on_one_host_has_no_network_flows():
    assert job_flows([[3, 0, 8]], 2, 8, 2, 1e9) == []


@settings(max_examples=25, deadline=None)
@given(hosts=st.lists(st.integers(0, 11), min_size=2, max_size=6, unique=True),
       first=st.integers(0, 7), data=st.data())
def test_every_hop_starts_and_ends_on_the_nic_links_of_the_jobs_gpus(hosts, first, data):
    count = data.draw(st.integers(1, 8 - first))
    flows = job_flows([[h, first, count] for h in hosts], 2, 8, 2, 1e9)
    nics = {g // 2 for g in range(first, first + count)}
    links = nic_clos_links(6, 2, 4, 8, 200.0, 200.0)
    assert len(flows) == len(hosts) * len(nics)
    for flow in flows:
        for path in flow["paths"]:
            assert all(e in links for e in path)
            assert int(path[0].split("n")[1].split(">")[0]) in nics
    # bytes leaving all hosts per iteration: channels x hosts x hop = 2 (H - 1) x gradient
    assert sum(f["bytes"] for f in flows) == pytest.approx(2 * (len(hosts) - 1) * 1e9)


@pytest.mark.parametrize("jobs, match", [
    ([{"id": "a", "model": "llama", "placement": [[0, 0, 8]]}],
     r"jobs\[0\]\.model = 'llama': the testbed models are gpt, bert, resnet"),
    ([{"id": "a", "model": "bert", "placement": [[12, 0, 8]]}],
     r"jobs\[0\]\.placement: host = 12: the testbed has hosts 0\.\.11"),
    ([{"id": "a", "model": "bert", "placement": [[0, 6, 4]]}],
     r"jobs\[0\]\.placement = \[0, 6, 4\]: GPUs 6\.\.9 are not on a 8-GPU host"),
    ([{"id": "a", "model": "bert", "placement": [[0, 0, 4], [0, 2, 4]]}],
     r"GPU 2 of host 0 is placed twice"),
])
def test_a_bad_placement_is_named(jobs, match):
    with pytest.raises(InvalidArgument, match=match):
        build_instance(TESTBED, jobs)


def test_bad_overrides_and_cases_are_named():
    with pytest.raises(InvalidArgument, match=r"bytes_scale = -1\.0: must be > 0"):
        load_case("fig19", 0, bytes_scale=-1.0)
    with pytest.raises(InvalidArgument, match=r"case = 3: crux/fig19 has cases 0\.\.2"):
        load_case("fig19", 3)
    with pytest.raises(InvalidArgument, match=r"leaves no compute"):
        load_case("fig19", 0, bytes_scale=1e4)


def test_gpt_alone_takes_the_measured_iteration_in_the_calibration_pair():
    inst = load_case("pair22", 0).instance
    assert inst.standalone_iteration_s[0] == pytest.approx(1.53)


@pytest.mark.parametrize("figure, index", [("fig19", 0), ("fig20", 0)])
def test_crux_ecmp_and_the_ideal_stay_under_the_bounds(figure, index):
    inst = load_case(figure, index).instance
    solution = crux(inst)
    assert check(inst, solution)
    u_crux, busy = replay(inst, solution, jitter=0.0, seed=0)
    # without jitter the replay is evaluate's number
    assert u_crux == pytest.approx(evaluate(inst, solution))
    u_ecmp, _ = replay(inst, ecmp(inst, seed=1), jitter=0.0, seed=0)
    u_ideal, alone = replay_alone(inst, jitter=0.0, seed=0)
    edge = utilization_bound(inst)
    assert max(u_crux, u_ecmp, u_ideal) <= edge + 1e-9
    # the LP counts steady-state rates; a window holds at most one compute more per job
    slack = sum(job.gpus * job.compute_s for job in inst.jobs) / (
        sum(job.gpus for job in inst.jobs) * inst.window)
    assert max(u_crux, u_ecmp) <= capacity_bound(inst) + slack
    # no job runs faster than alone
    assert all(b <= a + 1e-9 for b, a in zip(busy, alone))


def test_capacity_bound_splits_a_flow_over_parallel_paths():
    # one job, one flow of 2 s at 8 Gbps that may take either of two 8 Gbps links:
    # split, it needs 1 s per iteration on each, so it is compute-bound (C = 3 s)
    inst = CruxInstance(1, {"a": 8.0, "b": 8.0}, [
        {"id": "j", "gpus": 4, "compute_s": 3.0, "overlap": 1.0,
         "flows": [{"bytes": 2e9, "paths": [["a"], ["b"]]}]}])
    # the standalone iteration takes one path: 3 + 2 = 5 s, so U <= 3/5
    assert capacity_bound(inst) == pytest.approx(3.0 / 5.0)
    # two such jobs on the two links fit exactly
    two = CruxInstance(1, {"a": 8.0, "b": 8.0}, [
        {"id": f"j{k}", "gpus": 4, "compute_s": 3.0, "overlap": 1.0,
         "flows": [{"bytes": 2e9, "paths": [["a"], ["b"]]}]} for k in range(2)])
    assert capacity_bound(two) == pytest.approx(3.0 / 5.0)
    # six cannot: 6 jobs x 2 link-s per 5 s = 2.4 link-s per s on 2 links, so the
    # iteration rates sum to at most 1 per s, and U = 4 GPUs x 3 s x 1 / 24 GPUs
    six = CruxInstance(1, {"a": 8.0, "b": 8.0}, [
        {"id": f"j{k}", "gpus": 4, "compute_s": 3.0, "overlap": 1.0,
         "flows": [{"bytes": 2e9, "paths": [["a"], ["b"]]}]} for k in range(6)])
    assert capacity_bound(six) == pytest.approx(0.5)


def test_the_shipped_bytes_scale_reproduces_the_calibration_target_on_fresh_draws():
    target = load_scenario("crux", "pair22")["cases"][0]["paper"]["gpt_iteration_change"]
    changes = pair_changes(hashes=range(100, 108), seeds=range(2))
    assert changes["gpt_iteration_change"] == pytest.approx(target, abs=0.03)
    # GPT's throughput follows; the utilization check lands near the paper's -9.5 %
    assert changes["gpt_throughput_change"] < 0 and changes["utilization_change"] < 0


def test_more_bytes_slow_the_pair_more():
    low = pair_changes(10.0, hashes=range(4), seeds=range(1))
    high = pair_changes(40.0, hashes=range(4), seeds=range(1))
    assert 0 < low["gpt_iteration_change"] < high["gpt_iteration_change"]


def test_jitter_changes_the_replay_but_not_the_ideal_order():
    inst = load_case("fig19", 0).instance
    solution = ecmp(inst, seed=0)
    a = replay(inst, solution, jitter=0.1, seed=0)[0]
    b = replay(inst, solution, jitter=0.1, seed=1)[0]
    assert a != b
    assert np.isclose(replay(inst, solution, jitter=0.1, seed=0)[0], a)
