"""fabricopt/problems/crux_clos.py: the Clos microbenchmark cases, by hand and by rule."""

import re

import pytest
from hypothesis import given, strategies as st

from fabricopt import InvalidInstance
from fabricopt.problems.crux import CruxInstance
from fabricopt.problems.crux_clos import GPUS_PER_HOST, MODELS, clos_case, clos_links, ring_flows


def test_clos_links_by_hand():
    links = clos_links(2, 2, 2, 100.0, 400.0)
    host = {f"h{i}-tor{i // 2}" for i in range(4)} | {f"tor{i // 2}-h{i}" for i in range(4)}
    up = {f"tor{t}-agg{a}" for t in range(2) for a in range(2)}
    down = {f"agg{a}-tor{t}" for t in range(2) for a in range(2)}
    assert set(links) == host | up | down and len(links) == 8 + 8
    assert all(links[name] == 100.0 for name in host)
    assert all(links[name] == 400.0 for name in up | down)


def test_ring_flows_by_hand():
    # Hosts 7, 0, 3 with 4 per ToR: the ring 0 -> 3 -> 7 -> 0; 0 and 3 share tor0.
    flows = ring_flows([7, 0, 3], 4, 2, 3e9)
    assert [f["bytes"] for f in flows] == [4e9] * 3         # 2 (n-1)/n of 3e9, n = 3
    assert flows[0]["paths"] == [["h0-tor0", "tor0-h3"]]
    assert flows[1]["paths"] == [["h3-tor0", "tor0-agg0", "agg0-tor1", "tor1-h7"],
                                 ["h3-tor0", "tor0-agg1", "agg1-tor1", "tor1-h7"]]
    assert flows[2]["paths"] == [["h7-tor1", "tor1-agg0", "agg0-tor0", "tor0-h0"],
                                 ["h7-tor1", "tor1-agg1", "agg1-tor0", "tor0-h0"]]
    assert ring_flows([5], 4, 2, 3e9) == []                 # one host: NVLink only


def job_hosts(job):
    """The hosts a job's ring visits, read back from its flows' first links."""
    return {int(re.match(r"h(\d+)-", flow["paths"][0][0]).group(1)) for flow in job["flows"]}


@given(seed=st.integers(0, 10**6), jobs=st.integers(1, 8), tors=st.none() | st.integers(1, 4),
       aggs=st.integers(1, 3), placement=st.sampled_from(["packed", "random"]))
def test_cases_are_valid_seeded_and_place_jobs_on_disjoint_hosts(seed, jobs, tors, aggs,
                                                                  placement):
    hosts_per_tor = 3
    if tors is not None and jobs > tors * hosts_per_tor:
        with pytest.raises(InvalidInstance, match=r"jobs = \d+: exceeds the \d+ hosts"):
            clos_case(seed, jobs=jobs, tors=tors, aggs=aggs, hosts_per_tor=hosts_per_tor,
                      placement=placement)
        return
    try:
        case = clos_case(seed, jobs=jobs, tors=tors, aggs=aggs, hosts_per_tor=hosts_per_tor,
                         placement=placement)
    except InvalidInstance as exc:  # the seed drew fewer ToRs than the jobs need
        assert tors is None and "exceeds the" in str(exc)
        return
    assert case == clos_case(seed, jobs=jobs, tors=tors, aggs=aggs,
                             hosts_per_tor=hosts_per_tor, placement=placement)
    inst = CruxInstance.from_dict(case)               # a valid crux instance
    n_tors = len({name.split("-")[0] for name in inst.links if name.startswith("tor")})
    assert tors is None and 2 <= n_tors <= 4 or n_tors == tors
    taken = set()
    for job in case["jobs"]:
        hosts = job_hosts(job)
        size = job["gpus"] // GPUS_PER_HOST
        assert job["gpus"] % GPUS_PER_HOST == 0 and 1 <= size <= 4
        assert len(hosts) == (size if size > 1 else 0) == len(job["flows"])
        assert not hosts & taken
        taken |= hosts
        model = job["id"].split("-", 1)[1]
        params, width, compute_s = MODELS[model]
        assert 0.7 * compute_s - 1e-4 <= job["compute_s"] <= 1.3 * compute_s + 1e-4
        assert job["overlap"] in (0.5, 1.0)
        for flow in job["flows"]:
            assert flow["bytes"] == round(2 * (size - 1) / size * params * width)
            assert len(flow["paths"]) in (1, aggs)
    assert sum(j["gpus"] for j in case["jobs"]) <= n_tors * hosts_per_tor * GPUS_PER_HOST


def test_a_packed_job_on_an_empty_cluster_stays_in_one_tor():
    for seed in range(10):
        [job] = clos_case(seed, jobs=1, tors=3, hosts_per_tor=5, placement="packed")["jobs"]
        assert all(len(flow["paths"]) == 1 for flow in job["flows"])


@pytest.mark.parametrize("kwargs, message", [
    (dict(tors=0), "tors = 0: must be >= 1"),
    (dict(aggs=0), "aggs = 0: must be >= 1"),
    (dict(jobs=0), "jobs = 0: must be >= 1"),
    (dict(jobs=11, tors=2), "jobs = 11: exceeds the 10 hosts"),
    (dict(host_gbps=0.0), "host_gbps = 0.0: must be > 0"),
    (dict(placement="spread"), "placement = 'spread': must be 'packed' or 'random'"),
])
def test_bad_sizes_name_the_field(kwargs, message):
    with pytest.raises(InvalidInstance, match=re.escape(message)):
        clos_case(0, **kwargs)
