"""SiP-ML's circuits MILP: agrees with ``exact`` under HiGHS and CBC."""

import pytest
from hypothesis import given, settings, strategies as st

import fabricopt
from milp_helpers import assert_time_limited_milp_keeps_warm_start
from fabricopt.problems import check
from fabricopt.methods.milp_method import cbc_available


@settings(max_examples=15)
@given(seed=st.integers(0, 10**6), gpus=st.integers(2, 6), switches=st.integers(1, 3))
def test_milp_equals_exact_highs(seed, gpus, switches):
    inst = fabricopt.generate("circuits", seed=seed, gpus=gpus, switches=switches)
    exact = fabricopt.solve(inst, "exact")
    milp = fabricopt.solve(inst, "milp", warm_start=False)
    assert milp.status == "optimal" and check(inst, milp.solution)
    assert milp.objective == pytest.approx(exact.objective, rel=1e-7)
    assert milp.bound == pytest.approx(milp.objective, rel=1e-7)


@pytest.mark.skipif(not cbc_available(), reason="PuLP's CBC binary is not installed")
@pytest.mark.parametrize("seed", range(4))
def test_milp_equals_exact_cbc(seed):
    inst = fabricopt.generate("circuits", seed=seed, gpus=5, switches=2)
    exact = fabricopt.solve(inst, "exact")
    cbc = fabricopt.solve(inst, "milp", backend="cbc")
    assert cbc.status == "optimal"
    assert cbc.info["solver"] == "cbc"
    assert cbc.objective == pytest.approx(exact.objective, rel=1e-7)


def test_time_limited_milp_keeps_warm_start():
    inst = fabricopt.generate("circuits", seed=1, gpus=24, switches=6)
    assert_time_limited_milp_keeps_warm_start(inst, "greedy", time_limit=0.5)


def test_milp_serves_a_pair_far_below_the_largest():
    # T̂ = 1 / 2e6 is below HiGHS's feasibility tolerance: without an explicit
    # "at least one circuit" row the MILP left pair 0->1 unserved (found by check_method).
    from fabricopt.problems.circuits import CircuitsInstance

    inst = CircuitsInstance(2, 400.0, [[0, 1.0, 2e6], [0, 0, 0], [0, 0, 0]])
    milp = fabricopt.solve(inst, "milp", warm_start=False)
    assert milp.status == "optimal" and check(inst, milp.solution)
    assert milp.objective == pytest.approx(fabricopt.solve(inst, "exact").objective, rel=1e-9)
