"""First-fit colouring of arcs on a line, compiled: the loop of
:func:`fabricopt.algorithms.wavelengths.first_fit` over a bitmask of colours per
segment, ``words`` uint64 words wide. The Python loop in
:mod:`fabricopt.algorithms.wavelengths` makes the same choices and is the reference the
tests check it against. :func:`hold` writes the coloured arcs into a schedule's owner
array.

Compiled with numba (``cache=True``); with ``NUMBA_DISABLE_JIT=1`` the same code runs
as Python.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)


@njit(cache=True)
def colour_line(n, start, ends, order, words):
    """Colour arcs ``[start[k], ends[k])`` of a line of ``n`` positions (positions
    ``>= n`` wrap to ``p - n``) in ``order``, each with the lowest colour free on all
    its positions. Returns ``(colours, used)``: a colour per arc and, per position,
    the ``words`` uint64 words of the colours in use (colour c is bit ``c % 64`` of
    word ``c // 64``); ``words`` must exceed the largest colour // 64."""
    used = np.zeros((n, words), np.uint64)
    colours = np.empty(len(start), np.int64)
    for k in order:
        a, b = start[k], ends[k]
        # Word by word, up to the first with a colour free on every position.
        word = 0
        while True:
            mask = np.uint64(0)
            for p in range(a, b):
                mask |= used[p if p < n else p - n, word]
            if mask != _ALL:
                break
            word += 1
        free = ~mask
        low = free & (~free + np.uint64(1))      # the lowest free colour of the word
        offset = 0
        for width in (32, 16, 8, 4, 2, 1):      # the bit's index, by halving
            if low >= np.uint64(1) << np.uint64(width):
                low >>= np.uint64(width)
                offset += width
        bit = np.uint64(1) << np.uint64(offset)
        for p in range(a, b):
            s = p if p < n else p - n
            used[s, word] |= bit
        colours[k] = 64 * word + offset
    return colours, used


@njit(cache=True)
def hold(owner, first, hops, wavelengths, ids):
    """``owner[s, wavelengths[i]] = ids[i]`` for every segment s of arc i, the circular
    range ``first[i] .. first[i] + hops[i] - 1`` of ``len(owner)`` segments."""
    n = owner.shape[0]
    for i in range(len(first)):
        for p in range(first[i], first[i] + hops[i]):
            owner[p if p < n else p - n, wavelengths[i]] = ids[i]
