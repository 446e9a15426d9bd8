"""The circulant list schedule compiled, for rings of at most 64 GPUs (a domain is one
uint64): the same decisions and the same count of work as the Python loop of
:func:`fabricopt.algorithms.placement.circulant_schedule.circulant_schedule`, which is
the reference tests check it against.

:func:`run` places the ops of ``order[first:stop]`` and returns where it stopped:
the caller checks its deadline between calls (the loop checks the work limit after
every op, as the reference does).

Compiled with numba (``cache=True``); with ``NUMBA_DISABLE_JIT=1`` the same code runs
as Python.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: What :func:`run` returns first.
PLACED, DEAD_END, SPENT = 0, 1, 2


@njit(cache=True)
def _popcount(x):
    count = 0
    while x:
        x &= x - np.uint64(1)
        count += 1
    return count


@njit(cache=True)
def _turn(mask, by, k, full):
    by %= k
    if by == 0:
        return mask
    return ((mask << np.uint64(by)) | (mask >> np.uint64(k - by))) & full


@njit(cache=True)
def _around(domain, cache, table, offsets, circulant, sign, k, full, used):
    """``(reach or feeds of domain, used)``, cached as in the reference (a miss costs
    ``min(offsets, GPUs of the domain)`` units)."""
    if domain in cache:
        return cache[domain], used
    out = np.uint64(0)
    size = _popcount(domain)
    used += min(offsets.shape[0], size)
    if circulant and offsets.shape[0] < size:
        for s in offsets:
            out |= _turn(domain, sign * s, k, full)
    else:
        rest = domain
        while rest:
            g = _low_bit(rest)
            rest &= rest - np.uint64(1)
            out |= table[g]
    cache[domain] = out
    return out, used


@njit(cache=True)
def _low_bit(x):
    at = 0
    while not (x >> np.uint64(at)) & np.uint64(1):
        at += 1
    return at


@njit(cache=True)
def _grow(a, size):
    if size < a.shape[0]:
        return a
    grown = np.empty(2 * a.shape[0], dtype=a.dtype)
    grown[:a.shape[0]] = a
    return grown


@njit(cache=True)
def run(k, first, stop, used, limit, order, domain, gpu, end, free,
        send_ptr, send_idx, read_ptr, read_idx, par_ptr, par_idx, par_delay, compute,
        masks, inverse, offsets, circulant, reach_cache, feeds_cache):
    """Place ``order[first:stop]``: ``(PLACED, stop, used)``, or ``(DEAD_END or SPENT,
    position, used)`` where the reference returns None."""
    full = np.uint64(0xFFFFFFFFFFFFFFFF) >> np.uint64(64 - k)
    finish = np.empty(k)
    gs = np.empty(k, dtype=np.int64)
    queue = np.empty(64, dtype=np.int64)
    trail_v = np.empty(64, dtype=np.int64)
    trail_old = np.empty(64, dtype=np.uint64)
    for i in range(first, stop):
        v = order[i]
        parents = par_ptr[v + 1] - par_ptr[v]
        ng = 0
        rest = domain[v]
        while rest:
            g = _low_bit(rest)
            rest &= rest - np.uint64(1)
            used += 1 + parents
            t = free[g]
            for e in range(par_ptr[v], par_ptr[v + 1]):
                u = par_idx[e]
                at = end[u] + par_delay[e] if gpu[u] != g else end[u]
                if at > t:
                    t = at
            finish[ng] = t + compute[v]
            gs[ng] = g
            ng += 1
        # earliest finish first, ties to the lowest GPU (gs is increasing)
        ranked = np.argsort(finish[:ng], kind="mergesort")
        placed = False
        for r in range(ng):
            g = gs[ranked[r]]
            used += 1
            n_trail = 1
            trail_v[0] = v
            trail_old[0] = domain[v]
            domain[v] = np.uint64(1) << np.uint64(g)
            # AC-3 from v (the reference's propagate)
            consistent = True
            queue[0] = v
            n_queue = 1
            while n_queue and consistent:
                n_queue -= 1
                x = queue[n_queue]
                used += 1 + (send_ptr[x + 1] - send_ptr[x]) + (read_ptr[x + 1] - read_ptr[x])
                here = domain[x]
                for side in range(2):
                    if side == 0:
                        lo, hi, idx = send_ptr[x], send_ptr[x + 1], send_idx
                    else:
                        lo, hi, idx = read_ptr[x], read_ptr[x + 1], read_idx
                    if lo == hi:
                        continue
                    if side == 0:
                        keep, used = _around(here, reach_cache, masks, offsets, circulant, 1,
                                             k, full, used)
                    else:
                        keep, used = _around(here, feeds_cache, inverse, offsets, circulant,
                                             -1, k, full, used)
                    for e in range(lo, hi):
                        y = idx[e]
                        was = domain[y]
                        shrunk = was & keep
                        if shrunk != was:
                            if not shrunk:
                                consistent = False
                                break
                            trail_v = _grow(trail_v, n_trail)
                            trail_old = _grow(trail_old, n_trail)
                            trail_v[n_trail] = y
                            trail_old[n_trail] = was
                            n_trail += 1
                            domain[y] = shrunk
                            queue = _grow(queue, n_queue)
                            queue[n_queue] = y
                            n_queue += 1
                    if not consistent:
                        break
            if consistent:
                gpu[v] = g
                end[v] = finish[ranked[r]]
                free[g] = end[v]
                placed = True
                break
            for t in range(n_trail - 1, -1, -1):
                domain[trail_v[t]] = trail_old[t]
        if not placed:
            return DEAD_END, i, used
        if used >= limit:
            return SPENT, i, used
    return PLACED, stop, used
