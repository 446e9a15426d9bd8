"""The wavelength MILP and SiP-ML's count ILP against brute force, CBC, the fast count
bound and a ring where continuity decides feasibility."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import fabricopt
from milp_helpers import assert_time_limited_milp_keeps_warm_start
from fabricopt.models.wavelengths import build, build_count
from fabricopt.problems import check
from fabricopt.problems.wavelengths import WavelengthsInstance, infeasibility
from fabricopt.bounds.wavelengths import count_bound
from fabricopt.methods.milp_method import cbc_available, run_milp


def brute_force_optimum(inst):
    """Try every set of lightpaths of demanded pairs (tiny cases only); inf if none serves all."""
    n, w, b = inst.nodes, inst.wavelengths, inst.wavelength_gbps * 1e9
    pairs = list(inst.demanded)
    candidates = []
    for i, j in pairs:
        for d, hops in (("cw", (j - i) % n), ("ccw", (i - j) % n)):
            if hops <= inst.max_hops:
                step = 1 if d == "cw" else -1
                used = {(d, (i + step * t) % n) for t in range(hops)}
                candidates += [(i, j, c, used) for c in range(w)]
    best = math.inf
    for chosen in itertools.product((0, 1), repeat=len(candidates)):
        taken, count, out, into, ok = set(), {}, [0] * n, [0] * n, True
        for bit, (i, j, c, used) in zip(chosen, candidates):
            if bit:
                keys = {(d, s, c) for d, s in used}
                if keys & taken:
                    ok = False
                    break
                taken |= keys
                count[i, j] = count.get((i, j), 0) + 1
                out[i] += 1
                into[j] += 1
        if ok and max(out) <= w and max(into) <= w and all(count.get(p) for p in pairs):
            best = min(best, max(8 * inst.traffic[p] / (count[p] * b) for p in pairs))
    return best


@st.composite
def tiny_instances(draw):
    n = draw(st.integers(3, 4))
    w = draw(st.integers(1, 2))
    hops = draw(st.integers(1, n - 1))
    cells = [(i, j) for i in range(n) for j in range(n) if i != j]
    chosen = draw(st.lists(st.sampled_from(cells), min_size=1, max_size=3, unique=True))
    t = np.zeros((n, n))
    for i, j in chosen:
        t[i, j] = draw(st.sampled_from([1e6, 2e6, 3e6, 5e6]))
    return WavelengthsInstance(n, w, 25.0, hops, t.tolist())


BACKENDS = ["highs", pytest.param("cbc", marks=pytest.mark.skipif(
    not cbc_available(), reason="PuLP's CBC binary is not installed"))]


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=25)
@given(tiny_instances())
def test_milp_equals_brute_force(backend, inst):
    # each backend's proof checked against enumeration, not against the other solver
    truth = brute_force_optimum(inst)
    result = fabricopt.solve(inst, "milp", warm_start=False, backend=backend)
    if math.isinf(truth):
        assert result.status == "infeasible"
        return
    assert result.status == "optimal" and check(inst, result.solution)
    assert result.objective == pytest.approx(truth, rel=1e-9)
    bound = fabricopt.solve(inst, "count-bound")
    assert bound.bound <= truth * (1 + 1e-9)


SMALL = [dict(nodes=10, wavelengths=4, max_hops=3), dict(nodes=10, wavelengths=4, max_hops=5,
                                                        group=10, mp_peers=5),
         dict(nodes=8, wavelengths=6, max_hops=4, group=8, mp_peers=4)]


@pytest.mark.parametrize("sizes", SMALL)
@pytest.mark.parametrize("seed", range(3))
def test_count_bound_le_milp_le_heuristics(sizes, seed):
    inst = fabricopt.generate("wavelengths", seed=seed, **sizes)
    milp = fabricopt.solve(inst, "milp")
    assert milp.status == "optimal" and milp.gap == 0.0
    counts = fabricopt.solve(inst, "count-bound")
    assert counts.status == "no_solution" and counts.solution is None
    assert count_bound(inst) <= counts.bound * (1 + 1e-9)          # the fast bound is valid
    assert counts.bound <= milp.objective * (1 + 1e-9)
    for method in ("mcf", "greedy"):
        heuristic = fabricopt.solve(inst, method)
        assert heuristic.status == "feasible", heuristic.info
        assert milp.objective <= heuristic.objective * (1 + 1e-9)


@settings(max_examples=15)
@given(seed=st.integers(0, 10**6), nodes=st.integers(5, 16), wavelengths=st.integers(1, 6))
def test_fast_count_bound_is_the_count_ilp_when_directions_are_forced(seed, nodes, wavelengths):
    max_hops = (nodes - 1) // 2          # nodes > 2 * max_hops: each pair has one way in reach
    inst = fabricopt.generate("wavelengths", seed=seed, nodes=nodes, wavelengths=wavelengths,
                              max_hops=max_hops)
    ilp = fabricopt.solve(inst, "count-bound")
    assert ilp.bound == pytest.approx(count_bound(inst), rel=1e-9)
    model = build_count(inst, integer=False)                      # the mcf LP: weaker still
    lp = run_milp(model.problem)
    assert model.bound_from_raw(lp.bound) <= ilp.bound * (1 + 1e-9)


def test_continuity_decides_feasibility():
    # Five 2-hop cw arcs around a 5-ring, W = 2, reach 2: counts fit every segment (twice),
    # the overlaps form an odd cycle, so no wavelength assignment exists.
    t = np.zeros((5, 5))
    for i in range(5):
        t[i, (i + 2) % 5] = 1e6
    inst = WavelengthsInstance(5, 2, 25.0, 2, t.tolist())
    assert infeasibility(inst) is None
    counts = fabricopt.solve(inst, "count-bound")
    assert counts.status == "no_solution" and counts.bound == pytest.approx(8 * 1e6 / 25e9)
    assert fabricopt.solve(inst, "milp").status == "infeasible"
    for method in ("greedy", "mcf"):
        assert fabricopt.solve(inst, method).status == "no_solution"


@pytest.mark.skipif(not cbc_available(), reason="PuLP's CBC binary is not installed")
@pytest.mark.parametrize("seed", range(3))
def test_highs_and_cbc_agree(seed):
    inst = fabricopt.generate("wavelengths", seed=seed, nodes=8, wavelengths=3, max_hops=4,
                              group=8, mp_peers=4)
    highs = fabricopt.solve(inst, "milp")
    cbc = fabricopt.solve(inst, "milp", backend="cbc")
    assert cbc.info["solver"] == "cbc" and cbc.status == highs.status == "optimal"
    assert cbc.objective == pytest.approx(highs.objective, rel=1e-7)
    count_highs = fabricopt.solve(inst, "count-bound")
    count_cbc = fabricopt.solve(inst, "count-bound", backend="cbc")
    assert count_cbc.bound == pytest.approx(count_highs.bound, rel=1e-7)


def test_warm_start_is_accepted_and_kept_under_a_time_limit():
    inst = fabricopt.generate("wavelengths", seed=1, nodes=24, wavelengths=8, max_hops=12,
                              group=12, mp_peers=6)
    model = build(inst)
    start = model.encode(fabricopt.solve(inst, "greedy").solution)
    assert set(model.problem.value("x", start).ravel().tolist()) <= {0.0, 1.0}
    assert_time_limited_milp_keeps_warm_start(inst, "greedy", time_limit=1.0)


def test_symmetry_breaking_keeps_the_optimum():
    inst = fabricopt.generate("wavelengths", seed=5, nodes=8, wavelengths=3, max_hops=3)
    with_rows = fabricopt.solve(inst, "milp")
    without = fabricopt.solve(inst, "milp", symmetry_breaking=False)
    assert with_rows.objective == pytest.approx(without.objective, rel=1e-9)


def test_models_skip_pairs_without_traffic():
    idle = WavelengthsInstance(4, 2, 25.0, 1, [[0] * 4] * 4)
    assert fabricopt.solve(idle, "milp").objective == 0.0
    assert len(build(idle).problem.arrays().names) == 1     # only t
