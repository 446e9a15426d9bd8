"""The fill-up step of SiP-Ring's schedulers, compiled: the loop of
:func:`fabricopt.algorithms.wavelengths._augment` (give the slowest pair one more
lightpath, evicting lightpaths of faster pairs when it is stuck) over a schedule's
arrays. It makes the choices of the Python ``place`` / ``_force`` of
:mod:`fabricopt.algorithms.wavelengths`; the Python loop in
``tests/algorithms/_fill_reference.py`` is the oracle the tests check it against.

Compiled with numba (``cache=True``); with ``NUMBA_DISABLE_JIT=1`` the same code runs
as Python.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from fabricopt.algorithms._eviction_kernel import best_eviction

_NONE = -1
_ONE = np.uint64(1)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)


@njit(cache=True)
def fill_up(used, owner, tx, rx, count, pid_pair, pid_ccw, pid_wl, alive, next_id,
            arc_first, arc_hops, ccw_first, pair_src, pair_dst, size, heap_key, heap_pair,
            w, evict):
    """Run the fill-up loop until the slowest pair is stuck or the id arrays are full.

    Parameters
    ----------
    used : uint64 array, shape (2, N, words)
        Per fiber (cw, ccw) and segment, the busy wavelengths (wavelength c is bit
        ``c % 64`` of word ``c // 64``); updated in place, as are the arrays below.
    owner : int64 array, shape (2, N, W)
        The lightpath id per (fiber, segment, wavelength), -1 where free.
    tx, rx, count : int64 arrays
        Lightpaths sourced and sunk per node, lightpaths per pair.
    pid_pair, pid_wl : int64 arrays; pid_ccw, alive : bool arrays
        Per lightpath id: its pair, wavelength, fiber, and whether it is in place;
        ids ``< next_id`` are handed out, the arrays' length is the room for more.
    next_id : int
        The next lightpath id.
    arc_first, arc_hops : int64 arrays, shape (pairs, 2)
        Per pair and fiber, the arc's first segment and length (0: out of reach).
    ccw_first : bool array
        Per pair, whether its ccw arc is tried first (it is the shorter).
    pair_src, pair_dst : int64 arrays; size : float64 array
        Per pair, its ends and bytes.
    heap_key, heap_pair : float64, int64 arrays
        A binary heap of every pair, least ``(heap_key, heap_pair)`` first, the key
        ``-size / count`` when the pair was last pushed; kept across calls.
    w : int
        Wavelengths per fiber (and transceivers per node).
    evict : bool
        Whether a stuck slowest pair may evict lightpaths of faster pairs.

    Returns
    -------
    (bool, int)
        Whether the loop ended (False: it stopped for room, call again with larger id
        arrays and the same heap), and the next lightpath id.
    """
    m = len(heap_pair)
    _heapify(heap_key, heap_pair, m)
    # Per node, the ids of the lightpaths it sources (sinks), at most W (transceivers).
    width = max(w, max(tx.max(), rx.max()) if len(tx) else w)
    by_src = np.empty((len(tx), width), np.int64)
    by_dst = np.empty((len(rx), width), np.int64)
    n_src = np.zeros(len(tx), np.int64)
    n_dst = np.zeros(len(rx), np.int64)
    for pid in range(next_id):
        if alive[pid]:
            _push_id(by_src, n_src, pair_src[pid_pair[pid]], pid)
            _push_id(by_dst, n_dst, pair_dst[pid_pair[pid]], pid)
    words = used.shape[2]
    full = np.empty(words, np.uint64)
    for j in range(words):
        left = w - 64 * j
        full[j] = _ALL if left >= 64 else (_ONE << np.uint64(left)) - _ONE
    free = np.empty(words, np.uint64)
    while m > 0:
        if next_id >= len(pid_pair):
            return False, next_id
        k = heap_pair[0]
        _pop(heap_key, heap_pair, m)
        placed = _place(k, used, owner, tx, rx, count, pid_pair, pid_ccw, pid_wl, alive,
                        next_id, arc_first, arc_hops, ccw_first, pair_src, pair_dst, w, full,
                        free, by_src, n_src, by_dst, n_dst)
        if placed == _NONE and evict:
            victims = _eviction(k, size[k] / count[k], owner, tx, rx, count, pid_pair,
                                arc_first, arc_hops, ccw_first, pair_src, pair_dst, size, w,
                                by_src, n_src, by_dst, n_dst)
            if len(victims):
                for v in victims:
                    _remove(v, used, owner, tx, rx, count, pid_pair, pid_ccw, pid_wl, alive,
                            arc_first, arc_hops, pair_src, pair_dst, by_src, n_src, by_dst,
                            n_dst)
                placed = _place(k, used, owner, tx, rx, count, pid_pair, pid_ccw, pid_wl,
                                alive, next_id, arc_first, arc_hops, ccw_first, pair_src,
                                pair_dst, w, full, free, by_src, n_src, by_dst, n_dst)
        if placed == _NONE:
            return True, next_id
        next_id += 1
        heap_key[m - 1], heap_pair[m - 1] = -size[k] / count[k], k
        _sift_up(heap_key, heap_pair, m - 1)
    return True, next_id


@njit(cache=True)
def _place(k, used, owner, tx, rx, count, pid_pair, pid_ccw, pid_wl, alive, pid, arc_first,
           arc_hops, ccw_first, pair_src, pair_dst, w, full, free, by_src, n_src, by_dst,
           n_dst):
    """``_Schedule.place``: lightpath ``pid`` for pair k on the lowest wavelength free
    on its shorter arc (of two equally long, the one with more free); returns ``pid``,
    or -1 when no arc has one free or an end has no free transceiver."""
    src, dst = pair_src[k], pair_dst[k]
    if tx[src] >= w or rx[dst] >= w:
        return _NONE
    n, words = used.shape[1], used.shape[2]
    best_ccw, best_hops, best_free, best_wl = -1, 0, 0, 0
    for j in range(2):
        ccw = (1 - j) if ccw_first[k] else j
        h = arc_hops[k, ccw]
        if h == 0:
            continue
        a = arc_first[k, ccw]
        for word in range(words):
            mask = np.uint64(0)
            for p in range(a, a + h):
                mask |= used[ccw, p if p < n else p - n, word]
            free[word] = ~mask & full[word]
        lowest, total = -1, 0
        for word in range(words):
            if free[word] != 0:
                if lowest < 0:
                    lowest = 64 * word + _low_bit(free[word])
                total += _popcount(free[word])
        if total and (best_ccw < 0 or (h == best_hops and total > best_free)):
            best_ccw, best_hops, best_free, best_wl = ccw, h, total, lowest
    if best_ccw < 0:
        return _NONE
    ccw, wl = best_ccw, best_wl
    a = arc_first[k, ccw]
    bit = _ONE << np.uint64(wl % 64)
    for p in range(a, a + best_hops):
        s = p if p < n else p - n
        used[ccw, s, wl // 64] |= bit
        owner[ccw, s, wl] = pid
    tx[src] += 1
    rx[dst] += 1
    count[k] += 1
    pid_pair[pid], pid_ccw[pid], pid_wl[pid], alive[pid] = k, ccw == 1, wl, True
    _push_id(by_src, n_src, src, pid)
    _push_id(by_dst, n_dst, dst, pid)
    return pid


@njit(cache=True)
def _remove(pid, used, owner, tx, rx, count, pid_pair, pid_ccw, pid_wl, alive, arc_first,
            arc_hops, pair_src, pair_dst, by_src, n_src, by_dst, n_dst):
    """``_Schedule.remove``: take lightpath ``pid`` out, freeing its wavelength."""
    k, ccw, wl = pid_pair[pid], int(pid_ccw[pid]), pid_wl[pid]
    n = used.shape[1]
    alive[pid] = False
    keep = ~(_ONE << np.uint64(wl % 64))
    a = arc_first[k, ccw]
    for p in range(a, a + arc_hops[k, ccw]):
        s = p if p < n else p - n
        used[ccw, s, wl // 64] &= keep
        owner[ccw, s, wl] = _NONE
    _drop_id(by_src, n_src, pair_src[k], pid)
    _drop_id(by_dst, n_dst, pair_dst[k], pid)
    tx[pair_src[k]] -= 1
    rx[pair_dst[k]] -= 1
    count[k] -= 1


@njit(cache=True)
def _eviction(k, limit, owner, tx, rx, count, pid_pair, arc_first, arc_hops, ccw_first,
              pair_src, pair_dst, size, w, by_src, n_src, by_dst, n_dst):
    """``_eviction_compiled``: the ids to evict for one more lightpath of pair k, the
    least harmful choice over its arcs (ties: the earlier arc); empty when none
    qualifies (a qualifying choice evicts at least one lightpath, else k was placed)."""
    src, dst = pair_src[k], pair_dst[k]
    src_load, dst_load = tx[src], rx[dst]
    src_others = _others(by_src, n_src, src, pid_pair, k, src_load >= w)
    dst_others = _others(by_dst, n_dst, dst, pid_pair, k, dst_load >= w)
    n = owner.shape[1]
    found, best_harm = False, 0.0
    best = np.zeros(0, np.int64)
    for j in range(2):
        ccw = (1 - j) if ccw_first[k] else j
        h = arc_hops[k, ccw]
        if h == 0:
            continue
        segs = (arc_first[k, ccw] + np.arange(h)) % n
        wl, harm, victims = best_eviction(owner[ccw], segs, pid_pair, pair_src, pair_dst,
                                          count, size, k, src_load, dst_load, src_others,
                                          dst_others, w, limit)
        if wl >= 0 and (not found or harm < best_harm):
            found, best_harm, best = True, harm, victims
    return best


@njit(cache=True)
def _others(by_node, n_at, node, pid_pair, k, full):
    """The ids of lightpaths of pairs other than k at ``node`` when ``full`` (its
    transceivers are all busy), else none; the eviction search weighs them in any
    order (its ties go to the lowest id)."""
    out = np.empty(n_at[node] if full else 0, np.int64)
    got = 0
    for i in range(len(out)):
        pid = by_node[node, i]
        if pid_pair[pid] != k:
            out[got] = pid
            got += 1
    return out[:got]


@njit(cache=True)
def _push_id(by_node, n_at, node, pid):
    by_node[node, n_at[node]] = pid
    n_at[node] += 1


@njit(cache=True)
def _drop_id(by_node, n_at, node, pid):
    last = n_at[node] - 1
    for i in range(last + 1):
        if by_node[node, i] == pid:
            by_node[node, i] = by_node[node, last]
            n_at[node] = last
            return


@njit(cache=True)
def _less(key, pair, i, j):
    """Whether heap entry i comes before j: ``(key, pair)`` compared as Python tuples."""
    return key[i] < key[j] or (key[i] == key[j] and pair[i] < pair[j])


@njit(cache=True)
def _swap(key, pair, i, j):
    key[i], key[j] = key[j], key[i]
    pair[i], pair[j] = pair[j], pair[i]


@njit(cache=True)
def _sift_up(key, pair, i):
    while i > 0:
        parent = (i - 1) // 2
        if not _less(key, pair, i, parent):
            return
        _swap(key, pair, i, parent)
        i = parent


@njit(cache=True)
def _sift_down(key, pair, i, m):
    while True:
        least, left = i, 2 * i + 1
        if left < m and _less(key, pair, left, least):
            least = left
        if left + 1 < m and _less(key, pair, left + 1, least):
            least = left + 1
        if least == i:
            return
        _swap(key, pair, i, least)
        i = least


@njit(cache=True)
def _heapify(key, pair, m):
    for i in range(m // 2 - 1, -1, -1):
        _sift_down(key, pair, i, m)


@njit(cache=True)
def _pop(key, pair, m):
    """Move the least entry of the heap ``[:m]`` to position m-1; ``[:m-1]`` stays a heap."""
    _swap(key, pair, 0, m - 1)
    _sift_down(key, pair, 0, m - 1)


@njit(cache=True)
def _low_bit(x):
    """The index of the lowest set bit of the nonzero uint64 ``x``."""
    low = x & (~x + _ONE)
    offset = 0
    for width in (32, 16, 8, 4, 2, 1):
        if low >= _ONE << np.uint64(width):
            low >>= np.uint64(width)
            offset += width
    return offset


@njit(cache=True)
def _popcount(x):
    """The set bits of the uint64 ``x`` (SWAR)."""
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2))
                                              & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return int((x * np.uint64(0x0101010101010101)) >> np.uint64(56))
