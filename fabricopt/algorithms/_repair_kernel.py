"""The repair step of SiP-Ring's ``mcf`` rounding, compiled: remove lightpaths from
rounded counts until no segment carries more than W and no node uses more than W
transceivers, each removal from the pair that stays fastest, as
:func:`fabricopt.algorithms.wavelengths._repair` documents. The plain Python repair
of the tests' oracle (``tests/algorithms/_wavelengths_reference.py``) makes the same
choices and is the reference the tests check it against.

Compiled with numba (``cache=True``); with ``NUMBA_DISABLE_JIT=1`` the same code runs
as Python.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def repair(alloc, pair_of, first, hops, size, pairs, n, w, seg_start, seg_members,
           end_visit, end_start, end_members):
    """Lower the rounded counts ``alloc`` (one per arc, in place) until they fit.

    Parameters
    ----------
    alloc : int64 array
        Lightpaths per arc; arc ``a`` is of pair ``pair_of[a]`` and uses segments
        ``first[a] .. first[a] + hops[a] - 1`` (mod ``n``) of its fiber.
    size : float64 array
        Bytes per pair (``pairs`` of them).
    n, w : int
        Segments per fiber, wavelengths per fiber (and transceivers per node).
    seg_start, seg_members : int64 arrays
        The arcs crossing segment s of fiber d, ascending:
        ``seg_members[seg_start[d * n + s]:seg_start[d * n + s + 1]]``.
    end_visit, end_start, end_members : int64 arrays
        Per end e (0 source, 1 destination): the nodes in the order they are visited
        (``end_visit[e]``, -1 past the last), and the arcs of node v at that end,
        ascending: ``end_members[e, end_start[e, v]:end_start[e, v + 1]]``.
    """
    count = np.zeros(pairs, np.int64)
    for a in range(len(alloc)):
        count[pair_of[a]] += alloc[a]
    load = np.zeros(n, np.int64)
    for fiber in range(2):
        base = fiber * n
        for s in range(n):
            total = 0
            for i in range(seg_start[base + s], seg_start[base + s + 1]):
                total += alloc[seg_members[i]]
            load[s] = total
        for s in range(n):
            # loads only fall: a segment within W at the start of the pass stays so
            while load[s] > w:
                a = _victim(seg_members, seg_start[base + s], seg_start[base + s + 1],
                            alloc, pair_of, count, size)
                alloc[a] -= 1
                count[pair_of[a]] -= 1
                for t in range(first[a], first[a] + hops[a]):
                    load[t if t < n else t - n] -= 1
    for e in range(2):
        members = end_members[e]
        for v in end_visit[e]:
            if v < 0:
                break
            lo, hi = end_start[e, v], end_start[e, v + 1]
            left = 0
            for i in range(lo, hi):
                left += alloc[members[i]]
            while left > w:
                a = _victim(members, lo, hi, alloc, pair_of, count, size)
                alloc[a] -= 1
                count[pair_of[a]] -= 1
                left -= 1


@njit(cache=True)
def _victim(members, lo, hi, alloc, pair_of, count, size):
    """Of the arcs ``members[lo:hi]`` (ascending) with a lightpath, the one whose pair
    stays fastest after losing one: pairs with a spare first, then the least
    ``size / (count - 1)``, then the first."""
    best, best_last, best_harm = -1, True, 0.0
    for i in range(lo, hi):
        a = members[i]
        if alloc[a] <= 0:
            continue
        c = count[pair_of[a]]
        last = c <= 1
        harm = size[pair_of[a]] / (c - 1) if c > 1 else 0.0
        if best < 0 or (best_last and not last) or (last == best_last and harm < best_harm):
            best, best_last, best_harm = a, last, harm
    return best
