"""Sets of positions as bits, one set per GPU, for Algorithm 1's kernel: ``bits[g]``
has one bit a position, ``summary[g]`` one bit a non-zero word of ``bits[g]``, so that
adding or removing a position and finding a GPU's last position before one (or its
first after one) take a few word operations. The functions are private: they are
compiled into the kernel that calls them."""

from __future__ import annotations

import numpy as np
from numba import config, njit
from numba.cpython.unsafe.numbers import leading_zeros, trailing_zeros


if config.DISABLE_JIT:          # the bit-count intrinsics have no Python form
    def _high_bit(word):
        """Index of the highest set bit of a non-zero uint64."""
        return int(word).bit_length() - 1

    def _low_bit(word):
        """Index of the lowest set bit of a non-zero uint64."""
        return (int(word) & -int(word)).bit_length() - 1
else:
    @njit(cache=True)
    def _high_bit(word):
        """Index of the highest set bit of a non-zero uint64."""
        return 63 - np.int64(leading_zeros(word))

    @njit(cache=True)
    def _low_bit(word):
        """Index of the lowest set bit of a non-zero uint64."""
        return np.int64(trailing_zeros(word))


@njit(cache=True)
def _below(word, b):
    """The bits of ``word`` below bit ``b`` (0 <= b < 64)."""
    return word & ((np.uint64(1) << np.uint64(b)) - np.uint64(1))


@njit(cache=True)
def _last_before(bits, summary, g, q):
    """The largest position below ``q`` held by GPU ``g``, or -1."""
    w = q >> 6
    word = _below(bits[g, w], q & 63)
    if word:
        return (w << 6) + _high_bit(word)
    sw = w >> 6
    mask = _below(summary[g, sw], w & 63)
    while not mask:
        sw -= 1
        if sw < 0:
            return -1
        mask = summary[g, sw]
    w = (sw << 6) + _high_bit(mask)
    return (w << 6) + _high_bit(bits[g, w])


@njit(cache=True)
def _above(word, b):
    """The bits of ``word`` above bit ``b`` (0 <= b < 64)."""
    bit = np.uint64(1) << np.uint64(b)
    return word & ~((bit - np.uint64(1)) | bit)


@njit(cache=True)
def _first_after(bits, summary, g, q, stop):
    """The smallest position in ``(q, stop)`` held by GPU ``g``, or ``stop``."""
    w = q >> 6
    word = _above(bits[g, w], q & 63)
    if word:
        return min((w << 6) + _low_bit(word), stop)
    sw = w >> 6
    mask = _above(summary[g, sw], w & 63)
    last = (stop - 1) >> 12
    while not mask:
        sw += 1
        if sw > last:
            return stop
        mask = summary[g, sw]
    w = (sw << 6) + _low_bit(mask)
    return min((w << 6) + _low_bit(bits[g, w]), stop)


@njit(cache=True)
def _hold(bits, summary, g, q):
    """Add position ``q`` to GPU ``g``'s set."""
    w = q >> 6
    bits[g, w] |= np.uint64(1) << np.uint64(q & 63)
    summary[g, w >> 6] |= np.uint64(1) << np.uint64(w & 63)


@njit(cache=True)
def _release(bits, summary, g, q):
    """Remove position ``q`` from GPU ``g``'s set."""
    w = q >> 6
    bits[g, w] &= ~(np.uint64(1) << np.uint64(q & 63))
    if not bits[g, w]:
        summary[g, w >> 6] &= ~(np.uint64(1) << np.uint64(w & 63))
