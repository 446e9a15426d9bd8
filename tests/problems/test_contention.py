"""The fluid contention simulator against the Crux paper's worked examples and theory."""

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

import fabricopt
from crux_helpers import small_crux_case
from scaling import scale_times
from fabricopt.problems import evaluate, instance_from_dict
from fabricopt.problems._flowstate import fill_array, fill_list
from fabricopt.problems.contention import (SimJob, _fastest_iteration_s, link_components,
                                           simulate, utilization)

LINK = {"l": 8.0}   # 8 Gbps: 1e9 bytes take 1 s


def example1(level1, level2, warmup=120.0, window=60.0):
    """Crux Example 1 (Fig. 11; docs/departures.rst, crux-2.3): 10 GPUs each, compute =
    send = 2 s and 1 s."""
    jobs = [SimJob(10, 2.0, 1.0, level1, ((2e9, ("l",)),)),
            SimJob(10, 1.0, 1.0, level2, ((1e9, ("l",)),))]
    return simulate(LINK, jobs, warmup, window)


@pytest.mark.parametrize("levels, expected", [
    ((1, 0), 0.375),       # Job 1 first
    ((0, 1), 5 / 12),      # Job 2 first: 41.67 %
    ((0, 0), 0.40),        # one shared level
])
def test_example1_utilization_is_exact(levels, expected):
    result = example1(*levels)
    assert utilization(result, [10, 10]) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("levels, link_s, intensity_integral", [
    ((1, 0), (6.0, 3.0), 45.0),   # per 12 s; F = 5*6 + 5*3 Gflops
    ((0, 1), (4.0, 6.0), 50.0),
])
def test_example1_link_seconds_and_intensity_integral(levels, link_s, intensity_integral):
    result = example1(*levels, window=12.0)
    sent_s = result.sent_bytes / 1e9          # seconds on the 8 Gbps link
    assert sent_s.tolist() == pytest.approx(link_s)
    assert result.compute_s.tolist() == pytest.approx(link_s)   # compute = send here
    assert 5.0 * sent_s.sum() == pytest.approx(intensity_integral)  # I = 5 Gflops/s each


def test_example1_cold_start_window_is_the_documented_pitfall():
    # docs/departures.rst, crux-2.2: measuring [0, 12) from a cold start gives 41.7 % and
    # 45.8 %.
    assert utilization(example1(1, 0, 0.0, 12.0), [10, 10]) == pytest.approx(5 / 12)
    assert utilization(example1(0, 1, 0.0, 12.0), [10, 10]) == pytest.approx(11 / 24)


def example2(level1, level2, warmup, window, **kw):
    """Crux Example 2 (Fig. 12; docs/departures.rst, crux-2.4): overlap 0.5; Job 1 2 GPUs,
    Job 2 12 GPUs."""
    jobs = [SimJob(2, 4.0, 0.5, level1, ((1e9, ("l",)),)),
            SimJob(12, 2.0, 0.5, level2, ((3e9, ("l",)),))]
    return simulate(LINK, jobs, warmup, window, **kw)


@pytest.mark.parametrize("levels, idle_s, ends", [
    ((1, 0), 7.0, (5.0, 10.0)),    # Job 1 first: Job 2's iterations end at 5, 10, 14, ...
    ((0, 1), 6.0, (4.0, 8.0, 12.0)),
])
def test_example2_idle_time_of_job2_over_13_s(levels, idle_s, ends):
    result = example2(*levels, 0.0, 13.0, trace=True)
    assert 13.0 - result.compute_s[1] == pytest.approx(idle_s)
    assert result.iteration_ends[1] == pytest.approx(ends)


@pytest.mark.parametrize("levels", [(1, 0), (0, 1)])
def test_example2_deterministic_steady_state_ties(levels):
    assert utilization(example2(*levels, 400.0, 400.0), [2, 12]) == pytest.approx(4 / 7)


def test_jitter_is_seeded():
    a = example2(1, 0, 40.0, 200.0, jitter=0.1, seed=3)
    b = example2(1, 0, 40.0, 200.0, jitter=0.1, seed=3)
    c = example2(1, 0, 40.0, 200.0, jitter=0.1, seed=4)
    assert a.compute_s.tolist() == b.compute_s.tolist() != c.compute_s.tolist()


def test_rejects_empty_window():
    with pytest.raises(ValueError, match="window_s = 0.0"):
        simulate(LINK, [], 0.0, 0.0)


@st.composite
def single_link_jobs(draw):
    n = draw(st.integers(1, 4))
    jobs = []
    for _ in range(n):
        jobs.append(SimJob(draw(st.integers(1, 16)),
                           draw(st.floats(0.2, 3.0)),
                           draw(st.sampled_from([0.0, 0.25, 0.5, 1.0])),
                           draw(st.integers(0, 2)),
                           ((draw(st.floats(0.1e9, 3e9)), ("l",)),)))
    return jobs


@given(single_link_jobs(), st.sampled_from([0.0, 7.3]))
def test_theorem1_bound(jobs, warmup):
    """|U_T - F_T| <= sum_j W_j from t = 0 (Appendix A); a warm-up can cut an
    iteration at both ends of the window, which doubles the slack."""
    window = 60.0
    result = simulate(LINK, jobs, warmup, window)
    work = np.array([job.gpus * job.compute_s for job in jobs])        # W_j, GPU-seconds
    t = np.array([job.flows[0][0] / 1e9 for job in jobs])              # seconds on the link
    u = float(np.array([job.gpus for job in jobs]) @ result.compute_s)
    f = float((work / t) @ (result.sent_bytes / 1e9))                  # sum_j I_j S_j
    slack = work.sum() * (1 if warmup == 0 else 2)
    assert abs(u - f) <= slack * (1 + 1e-9)


@st.composite
def network_jobs(draw):
    links = [f"e{k}" for k in range(draw(st.integers(1, 5)))]
    jobs = []
    for _ in range(draw(st.integers(1, 4))):
        flows = tuple((draw(st.floats(0.1e9, 2e9)),
                       tuple(draw(st.lists(st.sampled_from(links), min_size=1, max_size=3,
                                           unique=True))))
                      for _ in range(draw(st.integers(0, 3))))
        jobs.append(SimJob(draw(st.integers(1, 8)), draw(st.floats(0.2, 2.0)),
                           draw(st.sampled_from([0.0, 0.5, 1.0])), draw(st.integers(0, 2)), flows))
    caps = {e: draw(st.sampled_from([4.0, 8.0, 16.0])) for e in links}
    return caps, jobs


@given(network_jobs())
def test_list_and_array_back_ends_agree(case):
    caps, jobs = case
    a = simulate(caps, jobs, 5.0, 30.0, backend="list")
    b = simulate(caps, jobs, 5.0, 30.0, backend="array")
    assert a.compute_s.tolist() == b.compute_s.tolist()
    assert a.iterations.tolist() == b.iterations.tolist()
    assert np.allclose(a.sent_bytes, b.sent_bytes, rtol=1e-12, atol=1e-3)


@given(network_jobs())
def test_components_are_independent(case):
    caps, jobs = case
    whole = simulate(caps, jobs, 5.0, 30.0)
    for group in link_components(jobs):
        alone = simulate(caps, [jobs[j] for j in group], 5.0, 30.0)
        assert alone.compute_s.tolist() == whole.compute_s[group].tolist()


@given(network_jobs())
def test_links_never_carry_more_than_their_capacity(case):
    caps, jobs = case
    # one flow per job, so that a job's bytes are that flow's bytes
    jobs = [SimJob(j.gpus, j.compute_s, j.overlap, j.level, j.flows[:1]) for j in jobs]
    window = 30.0
    result = simulate(caps, jobs, 5.0, window)
    for link, gbps in caps.items():
        carried = sum(result.sent_bytes[j] for j, job in enumerate(jobs)
                      if job.flows and link in job.flows[0][1])
        assert carried <= gbps * 1e9 / 8 * window * (1 + 1e-9)


def allocation(kernel, cap, flows, levels):
    """Rates of all flows active at once (rate 0 is starved: not moving)."""
    return {f: r for f, r in enumerate(kernel(cap, flows, [math.inf] * len(flows), levels))
            if r > 0}


@pytest.mark.parametrize("back_end", [fill_list, fill_array])
def test_max_min_fair_allocation(back_end):
    # Bertsekas & Gallager's example shape: f0 on links 0 and 1, f1 on 0, f2 on 1.
    rates = allocation(back_end, [1.0, 2.0], [(0, 1), (0,), (1,)], [0, 0, 0])
    assert rates == pytest.approx({0: 0.5, 1: 0.5, 2: 1.5})


@pytest.mark.parametrize("back_end", [fill_list, fill_array])
def test_strict_priority_starves_lower_levels(back_end):
    rates = allocation(back_end, [1.0], [(0,), (0,), (0,)], [2, 1, 1])
    assert rates == pytest.approx({0: 1.0})   # flows 1, 2 get 0 and are not moving


@pytest.mark.parametrize("back_end", [fill_list, fill_array])
def test_lower_level_takes_what_is_left(back_end):
    # f0 (high) is limited by link 1 to 0.25; f1 (low) gets the rest of link 0.
    rates = allocation(back_end, [1.0, 0.25], [(0, 1), (0,)], [1, 0])
    assert rates == pytest.approx({0: 0.25, 1: 0.75})


@given(st.integers(0, 2**32 - 1), st.integers(1, 12), st.integers(1, 6))
def test_clusters_fill_like_the_whole(seed, n_flows, n_links):
    """What the incremental state relies on: max-min rates of flows joined by no shared
    link are independent, so filling each cluster apart equals filling them all."""
    rng = np.random.default_rng(seed)
    paths = [tuple(sorted(set(rng.integers(0, n_links, size=rng.integers(1, 3)).tolist())))
             for _ in range(n_flows)]
    cap = rng.choice([1.0, 2.0, 3.5], size=n_links).tolist()
    fcap = [math.inf if rng.random() < 0.7 else float(rng.choice([0.3, 1.0])) for _ in paths]
    level = rng.integers(0, 3, size=n_flows).tolist()
    whole = fill_list(cap, paths, fcap, level)
    clusters = link_components([SimJob(1, 1.0, 1.0, 0, ((1.0, tuple(map(str, p))),))
                                for p in paths])
    for members in clusters:
        part = fill_list(cap, [paths[f] for f in members], [fcap[f] for f in members],
                         [level[f] for f in members])
        assert part == pytest.approx([whole[f] for f in members], rel=1e-12)


@pytest.mark.parametrize("factor", [1e4, 2.0**70])
def test_simulation_work_is_bounded_in_evaluate_and_check(factor, tmp_path):
    # one job 10^4 times slower stretches the default window over
    # millions of the others' iterations (22 s before; 2**70 ran forever): refused
    # before any work, in one line naming the ratio.
    import json
    import subprocess
    import sys

    from fabricopt import InvalidInstance
    from fabricopt.algorithms.crux.crux import ecmp
    from fabricopt.problems.crux import CruxInstance, evaluate, generate

    data = generate(0, jobs=5).to_dict()
    data["jobs"][0]["compute_s"] *= factor
    # Refused at load by the instance's own span check (problems/crux.py), or, for an
    # instance built otherwise, by the simulator's event cap: either way one line.
    with pytest.raises(InvalidInstance, match=r"iterations to simulate|iteration of job") as err:
        inst = CruxInstance.from_dict(data)
        evaluate(inst, ecmp(inst))
    assert "\n" not in str(err.value)
    (tmp_path / "i.json").write_text(json.dumps(data))
    (tmp_path / "s.json").write_text(json.dumps(ecmp(generate(0, jobs=5)).to_dict()))
    done = subprocess.run([sys.executable, "-m", "fabricopt", "check", str(tmp_path / "i.json"),
                           str(tmp_path / "s.json")], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2 and "iteration" in done.stderr and done.stderr.count("\n") == 1
    assert len(done.stderr.strip().splitlines()) == 1


def test_simulation_work_bound_names_the_ratio():
    job = SimJob(1, 1e-6, 1.0, 0, ((1.0, ("l",)),))
    with pytest.raises(ValueError, match=r"iteration of job '#0' = 9.99e\+08: simulating it "
                                         r"takes up to 3e\+09 events, over the limit"):
        simulate({"l": 8.0}, [job], 0.0, 1e3)


@given(network_jobs(), st.floats(0.0, 0.5))
def test_events_stay_within_the_bound(case, jitter):
    # what the cap relies on: iterations <= span / fastest iteration + 1 for every job
    caps, jobs = case
    span = 35.0
    result = simulate(caps, jobs, 0.0, span, jitter=jitter, trace=True)
    for job, ends in zip(jobs, result.iteration_ends):
        fastest = _fastest_iteration_s(caps, job, jitter)
        assert len(ends) <= span / fastest + 1


@pytest.mark.parametrize("scale", [1e-15, 1e-12, 1e-6, 1e6, 1e12])
def test_crux_utilization_is_the_same_at_every_time_scale(scale):
    # at 1e-12 the compute times are ~1e-13 s: an absolute event epsilon would merge events
    inst = small_crux_case(1)
    solution = fabricopt.solve(inst, "crux").solution
    scaled = instance_from_dict(scale_times(inst.to_dict(), scale))
    assert evaluate(scaled, solution) == pytest.approx(evaluate(inst, solution), rel=1e-9)
