"""The compiled event loop of the contention simulator against its Python oracle: the
same numbers, bit for bit, on every drawn case (levels, per-flow caps, jitter, traces,
time scales 1e-12 to 1e12)."""

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from fabricopt.errors import InvalidOption
from fabricopt.problems.contention import SimJob, simulate

SCALES = [1e-12, 1e-6, 1.0, 1e6, 1e12]


@st.composite
def cases(draw):
    """Jobs on up to 6 links (some shared, some one flow's own), caps on some flows,
    every knob of ``simulate``, and a time scale for compute, bytes and the window."""
    links = [f"e{k}" for k in range(draw(st.integers(1, 6)))]
    scale = draw(st.sampled_from(SCALES))
    jobs = []
    for _ in range(draw(st.integers(1, 6))):
        n_flows = draw(st.integers(0, 4))
        # round sizes and times as well as arbitrary ones: round ones make events coincide
        flows = tuple((draw(st.one_of(st.floats(1e7, 2e9), st.sampled_from([5e8, 1e9, 2e9])))
                       * scale,
                       tuple(draw(st.lists(st.sampled_from(links), min_size=1, max_size=3,
                                           unique=True))))
                      for _ in range(n_flows))
        caps = ()
        if flows and draw(st.booleans()):
            caps = tuple(draw(st.sampled_from([math.inf, 0.5, 2.0, 7.3]))
                         for _ in range(n_flows))
        jobs.append(SimJob(draw(st.integers(1, 8)),
                           draw(st.one_of(st.floats(0.2, 3.0), st.sampled_from([0.5, 1.0, 2.0])))
                           * scale,
                           draw(st.sampled_from([0.0, 0.3, 0.5, 1.0])),
                           draw(st.integers(0, 3)), flows, caps))
    link_gbps = {e: draw(st.sampled_from([4.0, 8.0, 16.0, 100.0])) for e in links}
    knobs = {"warmup_s": draw(st.sampled_from([0.0, 3.7])) * scale,
             "window_s": draw(st.sampled_from([10.0, 25.0])) * scale,
             "jitter": draw(st.sampled_from([0.0, 0.1, 0.3])),
             "seed": draw(st.integers(0, 2**40)), "trace": True}
    return link_gbps, jobs, knobs


def assert_identical(a, b):
    assert a.compute_s.tolist() == b.compute_s.tolist()
    assert a.sent_bytes.tolist() == b.sent_bytes.tolist()
    assert a.iterations.tolist() == b.iterations.tolist()
    assert a.iteration_ends == b.iteration_ends


@given(cases())
def test_compiled_loop_equals_the_python_loop(case):
    link_gbps, jobs, knobs = case
    compiled = simulate(link_gbps, jobs, backend="compiled", **knobs)
    assert_identical(compiled, simulate(link_gbps, jobs, backend="python", **knobs))
    assert_identical(compiled, simulate(link_gbps, jobs, **knobs))   # the default


def test_compiled_loop_equals_the_python_loop_on_a_clos_cluster():
    # a generated Clos cluster: many jobs per component, clusters of tens of flows,
    # 8 levels, each job's ring on shared host and uplinks
    from fabricopt.algorithms.crux.crux import ecmp
    from fabricopt.problems.crux import generate, sim_jobs

    inst = generate(0, jobs=40, tors=12, hosts_per_tor=16, aggs=8, levels=8)
    solution = ecmp(inst)
    jobs = sim_jobs(inst, solution.path, solution.level)
    runs = [simulate(inst.links, jobs, inst.warmup, inst.window, backend=backend, trace=True)
            for backend in ("compiled", "list", "array")]
    assert_identical(runs[0], runs[1])
    assert_identical(runs[0], runs[2])
    assert runs[0].iterations.sum() > 1000    # the case exercises many events


@pytest.mark.parametrize("first_draws", [1, 3])
def test_jitter_draws_past_the_first_ones_continue_the_same_stream(monkeypatch, first_draws):
    # a kernel given too few draws says so and is run again with more: the numbers are
    # those of one stream per job, as the Python loop draws them one start at a time
    from fabricopt.problems import contention

    jobs = [SimJob(1, 0.01, 1.0, 0, ((4e9, ("l",)),)), SimJob(1, 0.05, 0.5, 1, ()),
            SimJob(2, 0.3, 0.5, 1, ((1e9, ("l", "m")),))]
    caps = {"l": 8.0, "m": 4.0}
    python = simulate(caps, jobs, 2.0, 30.0, jitter=0.9, seed=11, trace=True,
                      backend="python")
    monkeypatch.setattr(contention, "_draws_per_job",
                        lambda b, fastest_s: [first_draws] * len(fastest_s))
    compiled = simulate(caps, jobs, 2.0, 30.0, jitter=0.9, seed=11, trace=True)
    assert_identical(compiled, python)
    assert len(python.iteration_ends[1]) > 100


def test_unknown_back_end_is_refused_in_one_line():
    with pytest.raises(InvalidOption, match=r"backend = 'fast': must be one of None, "
                                            r"'compiled', 'python', 'list', 'array'"):
        simulate({"l": 8.0}, [], 0.0, 1.0, backend="fast")


def test_the_kernel_runs_as_plain_python():
    # NUMBA_DISABLE_JIT's path: the kernel's own Python source gives the same numbers
    from fabricopt.problems import _simkernel

    jobs = [SimJob(10, 2.0, 1.0, 1, ((2e9, ("l",)),)), SimJob(10, 1.0, 1.0, 0, ((1e9, ("l",)),))]
    args = (np.array([8e9]), np.array([0, 1, 2]), np.array([0, 0]), np.array([16e9, 8e9]),
            np.array([0, 1]), np.array([math.inf, math.inf]), np.array([1, 0]),
            np.array([0, 1, 2]), np.array([2.0, 1.0]), np.array([1.0, 1.0]), np.zeros(0),
            np.zeros(3, dtype=np.int64), False, 120.0, 132.0, 132e-12, True)
    kernel = _simkernel.run_component
    plain = getattr(kernel, "py_func", kernel)(*args)   # itself under NUMBA_DISABLE_JIT
    compiled = _simkernel.run_component(*args)
    for x, y in zip(plain, compiled):
        assert np.asarray(x).tolist() == np.asarray(y).tolist()
    reference = simulate({"l": 8.0}, jobs, 120.0, 12.0)
    assert plain[0].tolist() == reference.compute_s.tolist() == [6.0, 3.0]
