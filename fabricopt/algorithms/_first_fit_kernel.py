"""First-fit colouring of arcs on a line, compiled: the loop of
:func:`fabricopt.algorithms.wavelengths.first_fit` over a bitmask of colours per
segment, ``words`` uint64 words wide. The Python loop in
:mod:`fabricopt.algorithms.wavelengths` makes the same choices and is the reference the
tests check it against.

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
    mask = np.empty(words, np.uint64)
    for k in order:
        a, b = start[k], ends[k]
        mask[:] = 0
        for p in range(a, b):
            s = p if p < n else p - n
            for j in range(words):
                mask[j] |= used[s, j]
        word = 0
        while mask[word] == _ALL:
            word += 1
        free = ~mask[word]
        low = free & (~free + np.uint64(1))      # the lowest free colour of the word
        offset = 0
        while low > np.uint64(1):
            low >>= np.uint64(1)
            offset += 1
        bit = np.uint64(1) << np.uint64(offset)
        for p in range(a, b):
            s = p if p < n else p - n
            used[s, word] |= bit
        colours[k] = 64 * word + offset
    return colours, used
