"""The priorities MILP: equals brute force (HiGHS and CBC) and never loses to Crux's DP."""

import pytest
from hypothesis import given, settings, strategies as st

import fabricopt
from fabricopt.problems import check
from fabricopt.problems.priorities import generate
from fabricopt.methods.milp_method import cbc_available

from crux_helpers import brute_force_priorities


@settings(max_examples=20)
@given(seed=st.integers(0, 10**6), jobs=st.integers(1, 8), levels=st.integers(1, 3),
       links=st.integers(1, 4))
def test_milp_equals_brute_force(seed, jobs, levels, links):
    inst = generate(seed, jobs=jobs, levels=levels, links=links, links_per_job=1)
    milp = fabricopt.solve(inst, "milp", warm_start=False)
    assert milp.status == "optimal" and check(inst, milp.solution)
    assert milp.objective == pytest.approx(brute_force_priorities(inst), rel=1e-9, abs=1e-9)
    heuristic = fabricopt.solve(inst, "crux", seed=seed)
    assert heuristic.objective <= milp.objective + 1e-9


@pytest.mark.skipif(not cbc_available(), reason="PuLP's CBC binary is not installed")
@pytest.mark.parametrize("seed", range(3))
def test_milp_cbc_equals_highs(seed):
    inst = generate(seed, jobs=10, levels=3)
    highs = fabricopt.solve(inst, "milp")
    cbc = fabricopt.solve(inst, "milp", backend="cbc")
    assert cbc.status == highs.status == "optimal"
    assert cbc.objective == pytest.approx(highs.objective, rel=1e-9)


def test_warm_started_time_limited_milp_is_never_worse_than_crux():
    inst = generate(4, jobs=60, levels=4)
    dp = fabricopt.solve(inst, "crux")
    milp = fabricopt.solve(inst, "milp", time_limit=1.0)
    assert milp.status in ("optimal", "feasible") and check(inst, milp.solution)
    assert milp.objective >= dp.objective - 1e-9
    assert milp.bound >= milp.objective - 1e-9


@pytest.mark.parametrize("contention", [[], [["a", "b"]]])
def test_jobs_in_no_edge_get_level_zero(contention):
    # Without contention the model has no variables at all (HiGHS: kModelEmpty).
    from fabricopt.problems.priorities import PrioritiesInstance

    inst = PrioritiesInstance(3, [{"id": name, "priority": p, "intensity": 1.0}
                                  for name, p in zip("abc", [3.0, 2.0, 1.0])], contention)
    milp = fabricopt.solve(inst, "milp", warm_start=False)
    assert milp.status == "optimal" and check(inst, milp.solution)
    assert milp.objective == milp.bound == float(len(contention))
    assert milp.solution.level["c"] == 0
