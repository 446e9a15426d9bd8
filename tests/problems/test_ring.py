"""fabricopt/problems/_ring.py: the two fibers' segment arithmetic, by brute force."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

from fabricopt.problems._ring import DIRECTIONS, arc, segment_load, segment_name


def used_segments(n, src, dst, ccw):
    """Walk the fiber hop by hop (docs/formats.rst, wavelengths): the segment indices it crosses."""
    step = -1 if ccw else 1
    out, node = [], src
    while node != dst:
        out.append(node)            # cw segment s is s -> s+1; ccw segment s is s -> s-1
        node = (node + step) % n
    return out


@st.composite
def arcs(draw, max_n=12):
    n = draw(st.integers(2, max_n))
    k = draw(st.integers(0, 8))
    first = draw(st.lists(st.integers(0, n - 1), min_size=k, max_size=k))
    hops = draw(st.lists(st.integers(0, n), min_size=k, max_size=k))
    weight = draw(st.lists(st.floats(0, 100, allow_nan=False), min_size=k, max_size=k))
    return n, first, hops, weight


@given(arcs())
def test_segment_load_is_the_sum_over_each_arcs_segments(case):
    n, first, hops, weight = case
    want, ones = np.zeros(n), np.zeros(n)
    for f, h, w in zip(first, hops, weight):
        for t in range(h):
            want[(f + t) % n] += w
            ones[(f + t) % n] += 1
    assert segment_load(n, first, hops, weight) == pytest.approx(want, abs=1e-9)
    assert segment_load(n, first, hops).tolist() == ones.tolist()


@given(st.integers(2, 16).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), st.booleans()),
                         min_size=1, max_size=10))))
def test_arc_on_arrays_is_arc_of_each_lightpath(case):
    n, lightpaths = case
    src, dst, ccw = (np.array(v) for v in zip(*lightpaths))
    first, hops = arc(n, src, dst, ccw)
    for k, (a, b, c) in enumerate(lightpaths):
        assert (int(first[k]), int(hops[k])) == arc(n, a, b, c)
        segments = used_segments(n, a, b, c)
        assert hops[k] == len(segments)
        assert sorted((first[k] + t) % n for t in range(hops[k])) == sorted(segments)


def test_segment_names_follow_their_fiber():
    assert DIRECTIONS.index("cw") == 0 and DIRECTIONS.index("ccw") == 1
    assert segment_name(0, 5, 6) == "cw segment 5 (5->0)"
    assert segment_name(1, 0, 6) == "ccw segment 0 (0->5)"
    assert segment_name(1, 3, 6) == "ccw segment 3 (3->2)"
