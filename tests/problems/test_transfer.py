"""fabricopt/problems/_transfer.py: longest-transfer arithmetic against plain loops."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, strategies as st

from fabricopt.problems._transfer import (links_needed, max_transfer_time, smallest_feasible_load,
                                          unserved_pair)


@st.composite
def traffic_and_counts(draw):
    n = draw(st.integers(1, 5))
    cells = st.lists(st.sampled_from([0.0, 1e6, 2.5e9, 7e9]), min_size=n, max_size=n)
    traffic = np.array(draw(st.lists(cells, min_size=n, max_size=n)))
    counts = np.array(draw(st.lists(st.lists(st.integers(0, 3), min_size=n, max_size=n),
                                    min_size=n, max_size=n)))
    return traffic, counts


@given(traffic_and_counts(), st.sampled_from([8.0, 25.0, 400.0]))
def test_max_transfer_time_and_unserved_pair_by_loops(case, gbps):
    traffic, counts = case
    n = len(traffic)
    times, missing = [], None
    for i in range(n):
        for j in range(n):
            if traffic[i, j] > 0:
                if counts[i, j] == 0:
                    times.append(math.inf)
                    missing = missing or (i, j)
                else:
                    times.append(8 * traffic[i, j] / (counts[i, j] * gbps * 1e9))
    assert max_transfer_time(traffic, counts, gbps) == pytest.approx(max(times, default=0.0),
                                                                      rel=1e-12)
    assert unserved_pair(traffic, counts) == missing


@given(st.lists(st.integers(1, 10**6), min_size=1, max_size=6), st.integers(1, 10**6))
def test_links_needed_is_the_fewest_links_within_the_load(sizes, load):
    # Exact rationals: the fewest m >= 1 with T / m <= load.
    want = [max(1, math.ceil(Fraction(t, load))) for t in sizes]
    got = links_needed(np.array(sizes, float), float(load), most=10**7)
    assert got.tolist() == want and got.dtype == np.int64
    assert all(Fraction(t, int(m)) <= load for t, m in zip(sizes, got))
    capped = links_needed(np.array(sizes, float), float(load), most=3)
    assert capped.tolist() == [min(m, 4) for m in want]


def test_links_needed_does_not_overflow_on_huge_ratios():
    # 1e3 / 3e-20 links would overflow int64; anything above `most` is just "too many".
    assert links_needed(np.array([1e3, 3e-20]), 3e-20, most=16).tolist() == [17, 1]


@given(st.lists(st.integers(1, 1000), min_size=1, max_size=5), st.integers(1, 6), st.data())
def test_smallest_feasible_load_is_the_least_feasible_candidate(sizes, most, data):
    candidates = sorted({Fraction(t, m) for t in sizes for m in range(1, most + 1)})
    threshold = data.draw(st.sampled_from(candidates))
    if data.draw(st.booleans()):  # a threshold strictly between candidates
        below = [c for c in candidates if c < threshold]
        threshold = (threshold + below[-1]) / 2 if below else threshold / 2
    calls = []

    def feasible(u):
        calls.append(u)
        return u >= threshold * (1 - 1e-12)

    want = min(c for c in candidates if c >= threshold)
    got = smallest_feasible_load(np.array(sizes, float), most, feasible)
    assert got == pytest.approx(float(want), rel=1e-12)
    assert len(calls) <= math.ceil(math.log2(len(candidates))) + 1  # bisection, not a scan
