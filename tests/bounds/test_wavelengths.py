"""fabricopt/bounds/wavelengths.py: the count relaxation's proofs are sound.

Truths: the exact ``milp`` (wavelength continuity included) on tiny rings, and a
brute-force count of the lightpaths that leave each arc of consecutive nodes.
"""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import fabricopt
from fabricopt import InfeasibleInstance
from fabricopt.problems import _wavelength_counts as counts_module
from fabricopt.bounds.wavelengths import count_bound
from fabricopt.problems._wavelength_counts import infeasibility, require_feasible
from fabricopt.problems.wavelengths import WavelengthsInstance


@given(st.integers(2, 9).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1),
                                   st.integers(1, 3)), max_size=12))))
def test_arc_exits_count_what_leaves_each_arc(case):
    n, lightpaths = case
    src, dst, count = (np.array(v, dtype=np.int64) for v in zip(*lightpaths)) if lightpaths \
        else (np.zeros(0, np.int64),) * 3
    exits, last = counts_module._arc_exits(n, src, dst, count)
    assert exits.shape == last.shape == (n, n - 1)
    for a in range(n):
        for length in range(1, n):
            inside = {(a + t) % n for t in range(length)}
            want = sum(c for s, d, c in lightpaths if s in inside and d not in inside)
            assert exits[a, length - 1] == want
            assert last[a, length - 1] == (a + length - 1) % n


@st.composite
def tiny_instances(draw):
    n = draw(st.integers(3, 6))
    traffic = np.zeros((n, n))
    for _ in range(draw(st.integers(1, 6))):
        i, j = draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))
        if i != j:
            traffic[i, j] = draw(st.sampled_from([1e6, 4e6]))
    # Reach of at least half the ring: most draws are feasible, some are proven not.
    return WavelengthsInstance(n, draw(st.integers(1, 2)), 25.0,
                               draw(st.integers(n // 2, n - 1)), traffic.tolist())


@settings(max_examples=30)
@given(tiny_instances())
def test_every_proof_is_sound_and_the_bound_is_below_the_optimum(inst):
    milp = fabricopt.solve(inst, "milp", warm_start=False)
    reason = infeasibility(inst)
    if reason is not None:
        assert milp.status == "infeasible"          # the exact method agrees: no schedule
        assert count_bound(inst) == np.inf
        with pytest.raises(InfeasibleInstance) as raised:
            require_feasible(inst)
        assert str(raised.value) == reason
        return
    require_feasible(inst)  # no proof, no exception
    assert milp.status in ("optimal", "infeasible")  # continuity can still forbid it
    if milp.status == "optimal":
        assert count_bound(inst) <= milp.objective * (1 + 1e-9)
