"""The cluster with arrivals and departures: every job finishes its work, alone it runs
at its standalone speed, and bad traces are named."""

import pytest

from fabricopt.bench.crux_cluster import SCHEDULERS, ClusterJob, draw_jobs, run_cluster
from fabricopt.bench.crux_testbed import model_compute_s
from fabricopt.bench.scenario import load_scenario
from fabricopt.errors import InvalidArgument

TESTBED = load_scenario("crux", "testbed").values
COMPUTE = model_compute_s(TESTBED)
SHAPE = {"tors": 2, "hosts_per_tor": 2, "aggs": 2, "uplink_gbps": 200.0}


def test_a_job_alone_inside_one_tor_runs_at_its_compute_speed():
    # 2 hosts under one ToR: a ring inside the ToR never shares a link, and with no
    # jitter its iteration is compute + one hop alone
    job = ClusterJob("b", "bert", 16, 0.0, 50)
    out = run_cluster([job], SCHEDULERS["ecmp"], TESTBED,
                      {"tors": 1, "hosts_per_tor": 2, "aggs": 2, "uplink_gbps": 200.0}, COMPUTE)
    model = TESTBED["models"]["bert"]
    hop_s = 8 * (2 * 1 / 2 * model["params"] * model["gradient_bytes_per_param"]
                 * TESTBED["bytes_scale"] / 4) / 200e9
    period = COMPUTE["bert"] + hop_s
    assert out["jct_s"]["b"] == pytest.approx(50 * period, rel=1e-9)
    assert out["utilization"] == pytest.approx(COMPUTE["bert"] / period, rel=1e-9)


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_every_job_finishes_no_sooner_than_alone(name):
    jobs = draw_jobs(3, 5, 32, 30.0, COMPUTE, (5.0, 10.0))
    out = run_cluster(jobs, SCHEDULERS[name], TESTBED, SHAPE, COMPUTE, seed=1)
    assert set(out["jct_s"]) == {j.id for j in jobs}
    for job in jobs:
        # an iteration lasts at least its compute
        assert out["jct_s"][job.id] >= job.iterations * COMPUTE[job.model] - 1e-9
    assert 0 < out["utilization"] <= 1
    assert out["makespan_s"] >= max(j.arrival_s for j in jobs)


def test_a_job_waits_for_free_hosts():
    # two 32-GPU jobs on a 32-GPU cluster: the second starts when the first ends
    first = ClusterJob("a", "resnet", 32, 0.0, 20)
    second = ClusterJob("b", "resnet", 32, 0.1, 20)
    out = run_cluster([first, second], SCHEDULERS["ecmp"], TESTBED, SHAPE, COMPUTE)
    assert out["start_s"]["b"] == pytest.approx(out["jct_s"]["a"])
    assert out["jct_s"]["b"] >= out["jct_s"]["a"] - 0.1 + 20 * COMPUTE["resnet"]


@pytest.mark.parametrize("gpus, match", [(12, "gpus = 12: whole 8-GPU hosts"),
                                         (64, "gpus = 64: whole 8-GPU hosts, at most the "
                                              "cluster's 32")])
def test_a_job_that_cannot_fit_is_named(gpus, match):
    with pytest.raises(InvalidArgument, match=match):
        run_cluster([ClusterJob("x", "bert", gpus, 0.0, 5)], SCHEDULERS["ecmp"], TESTBED,
                    SHAPE, COMPUTE)


def test_sizes_respect_the_cluster_and_the_papers_large_job_share():
    jobs = draw_jobs(0, 2000, 512, 100.0, COMPUTE)
    sizes = [j.gpus for j in jobs]
    assert max(sizes) <= 512 and min(sizes) >= 8
    assert sum(s >= 128 for s in sizes) / len(sizes) > 0.10
    assert all(a.arrival_s <= b.arrival_s for a, b in zip(jobs, jobs[1:]))
