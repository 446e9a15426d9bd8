"""Algorithm 1's per-GPU position bit sets against plain Python sets."""

import numpy as np
from hypothesis import given, settings, strategies as st

from fabricopt.algorithms.placement._position_bits import (_first_after, _hold, _last_before,
                                                          _release)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 3), st.integers(1, 9000), st.data())
def test_bit_sets_answer_as_python_sets(gpus, positions, data):
    words = (positions + 63) >> 6
    bits = np.zeros((gpus, words), dtype=np.uint64)
    summary = np.zeros((gpus, (words + 63) >> 6), dtype=np.uint64)
    held = [set() for _ in range(gpus)]
    moves = data.draw(st.lists(st.tuples(st.booleans(), st.integers(0, gpus - 1),
                                         st.integers(0, positions - 1)), max_size=40))
    for add, g, q in moves:
        if add:
            _hold(bits, summary, g, q)
            held[g].add(q)
        elif q in held[g]:
            _release(bits, summary, g, q)
            held[g].discard(q)
    for g in range(gpus):
        for q in data.draw(st.lists(st.integers(0, positions - 1), min_size=1, max_size=8)):
            before = max((p for p in held[g] if p < q), default=-1)
            assert _last_before(bits, summary, g, q) == before
            stop = data.draw(st.integers(q + 1, positions))
            after = min((p for p in held[g] if q < p < stop), default=stop)
            assert _first_after(bits, summary, g, q, stop) == after
