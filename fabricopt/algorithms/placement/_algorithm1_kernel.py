"""Algorithm 1 of SiP-ML compiled: the same decisions as
:func:`fabricopt.algorithms.placement.sipml.algorithm1_python`, on arrays.

The pure-Python ``algorithm1_python`` is the reference: every rule here (the window as
lifts, the cascades and their size limits, the restart from a snapshot of the GPUs'
free times, the far-back re-placement against the last known timings) mirrors a line
of it, and tests check both give the same GPUs on generated graphs. Only the data
structures differ:

* adjacency as CSR arrays (``*_ptr``, ``*_idx``);
* an unplaced op is ``placed[v] == False``; the interval's open ends are the
  sentinels ``_NEG`` and ``_POS`` (lifts stay far inside them);
* a cascade's new lifts live in ``new_lift[side]``, an entry being current when
  ``stamp[side, v]`` holds the cascade's number; ``touched[side]`` lists them in the
  order set (the dict's insertion order);
* snapshots of the free times are kept in a ring of rows: a restart reads at most
  ``_REPLAY`` positions back, so older ones are never read;
* the positions of each GPU's ops are a bit set (``bits[g]``, one bit a position, and
  ``summary[g]``, one bit a non-zero word), so that moving an op and finding the last op
  of a GPU before a position take a few word operations: ``gpus * ops / 8`` bytes.

Compiled with numba (``cache=True``); with ``NUMBA_DISABLE_JIT=1`` the same code runs
as Python.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# the same constants as the Python reference (see sipml.algorithm1_python)
SNAP = 32
REPLAY = 1024
_ROWS = REPLAY // SNAP + 2       # snapshot rows a restart may read, and the current one
_NEG = -(1 << 62)                # -inf of an interval
_POS = 1 << 62                   # +inf of an interval


@njit(cache=True)
def _interval(v, lift, placed, span, cpar_ptr, cpar_idx, cch_ptr, cch_idx):
    lo, hi = _NEG, _POS
    for e in range(cpar_ptr[v], cpar_ptr[v + 1]):
        u = cpar_idx[e]
        if placed[u]:
            a = lift[u]
            if a > lo:
                lo = a
            if a + span < hi:
                hi = a + span
    for e in range(cch_ptr[v], cch_ptr[v + 1]):
        c = cch_idx[e]
        if placed[c]:
            a = lift[c]
            if a - span > lo:
                lo = a - span
            if a < hi:
                hi = a
    return lo, hi


@njit(cache=True)
def _bounded(lo, hi, ref, k):
    if hi == _POS:
        if lo == _NEG:
            lo = ref
        return lo, lo + k - 1
    if lo == _NEG or hi - lo >= k:
        lo = hi - k + 1
    return lo, hi


@njit(cache=True)
def _earliest_now(lo, hi, k, free):
    best, best_free = lo, np.inf
    for a in range(lo, hi + 1):
        f = free[a % k]
        if f < best_free:
            best, best_free = a, f
    return best


@njit(cache=True)
def _high_bit(word):
    """Index of the highest set bit of a non-zero uint64."""
    at = 0
    for width in (32, 16, 8, 4, 2, 1):
        if word >> np.uint64(width):
            word >>= np.uint64(width)
            at += width
    return at


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
def _hold(bits, summary, g, q):
    w = q >> 6
    bits[g, w] |= np.uint64(1) << np.uint64(q & 63)
    summary[g, w >> 6] |= np.uint64(1) << np.uint64(w & 63)


@njit(cache=True)
def _release(bits, summary, g, q):
    w = q >> 6
    bits[g, w] &= ~(np.uint64(1) << np.uint64(q & 63))
    if not bits[g, w]:
        summary[g, w >> 6] &= ~(np.uint64(1) << np.uint64(w & 63))


@njit(cache=True)
def _free_before(g, q, bits, summary, order, end):
    """End of the last op on GPU ``g`` placed before position ``q`` (0 if none)."""
    at = _last_before(bits, summary, g, q)
    return end[order[at]] if at >= 0 else 0.0


@njit(cache=True)
def _earliest_before(lo, hi, k, q, bits, summary, order, end):
    best, best_free = lo, np.inf
    for a in range(lo, hi + 1):
        f = _free_before(a % k, q, bits, summary, order, end)
        if f < best_free:
            best, best_free = a, f
    return best


@njit(cache=True)
def _move(v, a, k, lift, dev, pos, bits, summary):
    g, h = dev[v], a % k
    lift[v] = a
    dev[v] = h
    if g != h:
        _release(bits, summary, g, pos[v])
        _hold(bits, summary, h, pos[v])


@njit(cache=True)
def _advance(v, free_g, dev, end, par_ptr, par_idx, par_delay, compute):
    """End of ``v`` on ``dev[v]`` free from ``free_g``: the reference's ``advance``."""
    g = dev[v]
    t = free_g
    for e in range(par_ptr[v], par_ptr[v + 1]):
        u = par_idx[e]
        ready = end[u] + par_delay[e] if dev[u] != g else end[u]
        if ready > t:
            t = ready
    end[v] = t + compute[v]
    return end[v]


@njit(cache=True)
def _cascade(side, start_v, start_val, up, frozen, limit, lift, placed, span,
             cpar_ptr, cpar_idx, cch_ptr, cch_idx, new_lift, stamp, mark, touched):
    """The reference's ``_Lifts.cascade``: how many ops it sets (listed in
    ``touched[side]``), or -1 past ``limit``."""
    size = max(16, 4 * start_v.shape[0])
    stack_v = np.empty(size, dtype=np.int64)
    stack_val = np.empty(size, dtype=np.int64)
    top = 0
    for s in range(start_v.shape[0]):
        stack_v[top] = start_v[s]
        stack_val[top] = start_val[s]
        top += 1
    n_new = 0
    while top > 0:
        top -= 1
        v = stack_v[top]
        value = stack_val[top]
        current = new_lift[side, v] if stamp[side, v] == mark else lift[v]
        if up:
            if value <= current:
                continue
        elif value >= current:
            continue
        if stamp[side, v] != mark:
            stamp[side, v] = mark
            touched[side, n_new] = v
            n_new += 1
        new_lift[side, v] = value
        if n_new > limit:
            return -1
        need = top + (cch_ptr[v + 1] - cch_ptr[v]) + (cpar_ptr[v + 1] - cpar_ptr[v])
        if need > stack_v.shape[0]:
            size = max(2 * stack_v.shape[0], need)
            grown_v = np.empty(size, dtype=np.int64)
            grown_val = np.empty(size, dtype=np.int64)
            grown_v[:top] = stack_v[:top]
            grown_val[:top] = stack_val[:top]
            stack_v, stack_val = grown_v, grown_val
        if up:
            for e in range(cch_ptr[v], cch_ptr[v + 1]):
                c = cch_idx[e]
                if c != frozen and placed[c]:
                    cur = new_lift[side, c] if stamp[side, c] == mark else lift[c]
                    if cur < value:
                        stack_v[top] = c
                        stack_val[top] = value
                        top += 1
            for e in range(cpar_ptr[v], cpar_ptr[v + 1]):
                u = cpar_idx[e]
                cur = new_lift[side, u] if stamp[side, u] == mark else lift[u]
                if cur < value - span:
                    stack_v[top] = u
                    stack_val[top] = value - span
                    top += 1
        else:
            for e in range(cpar_ptr[v], cpar_ptr[v + 1]):
                u = cpar_idx[e]
                cur = new_lift[side, u] if stamp[side, u] == mark else lift[u]
                if cur > value:
                    stack_v[top] = u
                    stack_val[top] = value
                    top += 1
            for e in range(cch_ptr[v], cch_ptr[v + 1]):
                c = cch_idx[e]
                if c != frozen and placed[c]:
                    cur = new_lift[side, c] if stamp[side, c] == mark else lift[c]
                    if cur > value + span:
                        stack_v[top] = c
                        stack_val[top] = value + span
                        top += 1
    return n_new


@njit(cache=True)
def _relocation(x, lift, placed, pos, span, cpar_ptr, cpar_idx, cch_ptr, cch_idx,
                new_lift, stamp, marks, touched):
    """The reference's ``_Lifts.relocation``: ``(side, ops moved)``, the moves being
    ``new_lift[side, touched[side, :moved]]`` (side 0 raises, 1 lowers)."""
    first, last = cpar_ptr[x], cpar_ptr[x + 1]
    top, bottom = _NEG, _POS
    for e in range(first, last):
        a = lift[cpar_idx[e]]
        top = max(top, a)
        bottom = min(bottom, a)
    n_up = n_down = 0
    for e in range(first, last):
        a = lift[cpar_idx[e]]
        if a < top - span:
            n_up += 1
        if a > bottom + span:
            n_down += 1
    up_v = np.empty(n_up, dtype=np.int64)
    down_v = np.empty(n_down, dtype=np.int64)
    n_up = n_down = 0
    for e in range(first, last):
        u = cpar_idx[e]
        if lift[u] < top - span:
            up_v[n_up] = u
            n_up += 1
        if lift[u] > bottom + span:
            down_v[n_down] = u
            n_down += 1
    up_val = np.full(n_up, top - span, dtype=np.int64)
    down_val = np.full(n_down, bottom + span, dtype=np.int64)
    limit = 2 * (last - first)
    while True:
        marks[0] += 1
        raised = _cascade(0, up_v, up_val, True, x, limit, lift, placed, span, cpar_ptr,
                          cpar_idx, cch_ptr, cch_idx, new_lift, stamp, marks[0], touched)
        marks[1] += 1
        lowered = _cascade(1, down_v, down_val, False, x, limit, lift, placed, span, cpar_ptr,
                           cpar_idx, cch_ptr, cch_idx, new_lift, stamp, marks[1], touched)
        if raised >= 0 or lowered >= 0:
            break
        limit *= 4
    if raised < 0:
        return 1, lowered
    if lowered < 0:
        return 0, raised
    first_raised = first_lowered = pos.shape[0]
    for t in range(raised):
        first_raised = min(first_raised, pos[touched[0, t]])
    for t in range(lowered):
        first_lowered = min(first_lowered, pos[touched[1, t]])
    # cheaper: fewer ops moved, then the later earliest move, then raising
    if raised < lowered or (raised == lowered and first_raised >= first_lowered):
        return 0, raised
    return 1, lowered


@njit(cache=True)
def unconstrained_kernel(k, order, par_ptr, par_idx, par_delay, compute):
    """Algorithm 1 when the window is the whole ring: each op on the GPU free first
    (ties: the smallest index)."""
    n = order.shape[0]
    dev = np.full(compute.shape[0], -1, dtype=np.int64)
    end = np.zeros(compute.shape[0])
    free = np.zeros(k)
    for i in range(n):
        x = order[i]
        best, best_free = -1, np.inf
        for g in range(k):
            if free[g] < best_free:
                best, best_free = g, free[g]
        dev[x] = best
        free[best] = _advance(x, free[best], dev, end, par_ptr, par_idx, par_delay, compute)
    return dev


@njit(cache=True)
def windowed_kernel(k, degree, order, par_ptr, par_idx, par_delay, compute,
                    cpar_ptr, cpar_idx, cch_ptr, cch_idx):
    """Algorithm 1 with the window of ``degree`` GPUs on a ring of ``k``: returns
    ``(gpu of each op, relocations, ops they moved)``."""
    n = order.shape[0]
    span = degree - 1
    dev = np.full(n, -1, dtype=np.int64)
    end = np.zeros(n)
    free = np.zeros(k)
    pos = np.empty(n, dtype=np.int64)
    for i in range(n):
        pos[order[i]] = i
    lift = np.zeros(n, dtype=np.int64)
    placed = np.zeros(n, dtype=np.bool_)
    words = (n + 63) >> 6
    bits = np.zeros((k, words), dtype=np.uint64)
    summary = np.zeros((k, (words + 63) >> 6), dtype=np.uint64)
    snaps = np.zeros((_ROWS, k))
    new_lift = np.zeros((2, n), dtype=np.int64)
    stamp = np.zeros((2, n), dtype=np.int64)
    touched = np.zeros((2, n), dtype=np.int64)
    marks = np.zeros(2, dtype=np.int64)
    moved_at = np.full(n, -1, dtype=np.int64)   # the turn whose relocation moved the op
    relocations = relocated_ops = 0
    front = 0
    for i in range(n):
        x = order[i]
        if i % SNAP == 0:
            snaps[(i // SNAP) % _ROWS, :] = free
        lo, hi = _interval(x, lift, placed, span, cpar_ptr, cpar_idx, cch_ptr, cch_idx)
        if lo > hi:
            side, n_moved = _relocation(x, lift, placed, pos, span, cpar_ptr, cpar_idx,
                                        cch_ptr, cch_idx, new_lift, stamp, marks, touched)
            relocations += 1
            relocated_ops += n_moved
            j = n
            for t in range(n_moved):
                v = touched[side, t]
                _move(v, new_lift[side, v], k, lift, dev, pos, bits, summary)
                moved_at[v] = i
                j = min(j, pos[v])
            lo, hi = _interval(x, lift, placed, span, cpar_ptr, cpar_idx, cch_ptr, cch_idx)
            lift[x] = _earliest_now(lo, hi, k, free)
            placed[x] = True
            dev[x] = lift[x] % k
            p = max(j - j % SNAP, i - i % SNAP - REPLAY)
            far = np.empty(n_moved, dtype=np.int64)
            near = np.empty(n_moved + (i - p) // SNAP + 2, dtype=np.int64)
            n_far = n_near = 0
            for t in range(n_moved):
                q = pos[touched[side, t]]
                if q < p:
                    far[n_far] = q
                    n_far += 1
                else:
                    near[n_near] = q
                    n_near += 1
            for q in np.sort(far[:n_far]):
                v = order[q]            # far back: against the last known timings
                a, b = _interval(v, lift, placed, span, cpar_ptr, cpar_idx, cch_ptr, cch_idx)
                a, b = _bounded(a, b, lift[v] - lift[v] % k, k)
                _move(v, _earliest_before(a, b, k, q, bits, summary, order, end), k, lift,
                      dev, pos, bits, summary)
                _advance(v, _free_before(dev[v], q, bits, summary, order, end), dev, end,
                         par_ptr, par_idx, par_delay, compute)
            free[:] = snaps[(p // SNAP) % _ROWS, :]
            # the restart: re-time from p in runs between snapshots and moved ops,
            # re-placing each moved op at its turn
            for q in range(p, i, SNAP):
                near[n_near] = q
                n_near += 1
            near[n_near] = i
            n_near += 1
            stops = np.unique(near[:n_near])
            for s in range(stops.shape[0] - 1):
                a, b = stops[s], stops[s + 1]
                if a % SNAP == 0:
                    snaps[(a // SNAP) % _ROWS, :] = free
                v = order[a]
                if moved_at[v] == i:
                    lo_v, hi_v = _interval(v, lift, placed, span, cpar_ptr, cpar_idx,
                                           cch_ptr, cch_idx)
                    lo_v, hi_v = _bounded(lo_v, hi_v, lift[v] - lift[v] % k, k)
                    _move(v, _earliest_now(lo_v, hi_v, k, free), k, lift, dev, pos, bits,
                          summary)
                for q in range(a, b):
                    w = order[q]
                    g = dev[w]
                    free[g] = _advance(w, free[g], dev, end, par_ptr, par_idx, par_delay,
                                       compute)
            if i % SNAP == 0:
                snaps[(i // SNAP) % _ROWS, :] = free
            lo, hi = _interval(x, lift, placed, span, cpar_ptr, cpar_idx, cch_ptr, cch_idx)
        lo, hi = _bounded(lo, hi, front - front % k, k)
        lift[x] = _earliest_now(lo, hi, k, free)
        placed[x] = True
        dev[x] = lift[x] % k
        front = lift[x]
        _hold(bits, summary, dev[x], i)
        g = dev[x]
        free[g] = _advance(x, free[g], dev, end, par_ptr, par_idx, par_delay, compute)
    return dev, relocations, relocated_ops
