"""Property: the priorities MILP warm, cold and on CBC agree on the optimum."""

import pytest
from hypothesis import given, settings, strategies as st

import fabricopt
from fabricopt.methods.milp_method import cbc_available


@pytest.mark.skipif(not cbc_available(), reason="PuLP's CBC binary is not installed")
@settings(max_examples=12)
@given(seed=st.integers(0, 2**31 - 1), jobs=st.integers(2, 45), levels=st.integers(2, 4))
def test_milp_warm_cold_and_cbc_agree_on_priorities(seed, jobs, levels):
    inst = fabricopt.generate("priorities", seed=seed, jobs=jobs, levels=levels)
    runs = [fabricopt.solve(inst, "milp"), fabricopt.solve(inst, "milp", warm_start=False),
            fabricopt.solve(inst, "milp", backend="cbc")]
    optima = [r.objective for r in runs if r.status == "optimal"]
    best = max(r.objective for r in runs)
    # every proven optimum is the best objective any of the three found
    assert all(value == pytest.approx(best, rel=1e-6, abs=1e-9) for value in optima)
    assert all(r.bound is None or r.bound >= best * (1 - 1e-6) - 1e-9 for r in runs)
