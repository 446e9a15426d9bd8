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
* the positions of each GPU's ops are a bit set (:mod:`._position_bits`), so that
  moving an op and finding the last op of a GPU before a position (or its next after
  one) take a few word operations: ``gpus * ops / 8`` bytes;
* the restart re-times only the ops whose timing a relocation can change (see
  :func:`_retime`), instead of replaying every position from the snapshot: the ends,
  snapshots and free times it leaves are those of the full replay.

Compiled with numba (``cache=True``); with ``NUMBA_DISABLE_JIT=1`` the same code runs
as Python.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from fabricopt.algorithms.placement._position_bits import (_first_after, _hold,
                                                          _last_before, _low_bit, _release)

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
def _cascade(side, up, frozen, limit, stack_v, stack_val, top, n_new, lift, placed, span,
             cpar_ptr, cpar_idx, cch_ptr, cch_idx, new_lift, stamp, mark, touched):
    """The reference's ``_Lifts.cascade`` run until its stack empties or it has set more
    than ``limit`` ops: returns ``(top, ops set, stack_v, stack_val)``, the ops listed in
    ``touched[side]``.

    It stops only after pushing the last op's neighbours, so a call with a larger limit
    resumes exactly where a fresh cascade under that limit would be at that point: the
    reference's growing limits cost one pass, not one per limit."""
    while top > 0 and n_new <= limit:
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
    return top, n_new, stack_v, stack_val


@njit(cache=True)
def _starts(x, lift, span, cpar_ptr, cpar_idx, up):
    """The stack of the reference's cascade starts: the parents of ``x`` more than
    ``span`` below the highest (``up``) or above the lowest, with their target."""
    first, last = cpar_ptr[x], cpar_ptr[x + 1]
    top, bottom = _NEG, _POS
    for e in range(first, last):
        a = lift[cpar_idx[e]]
        top = max(top, a)
        bottom = min(bottom, a)
    size = max(16, 4 * (last - first))
    stack_v = np.empty(size, dtype=np.int64)
    stack_val = np.empty(size, dtype=np.int64)
    n = 0
    for e in range(first, last):
        u = cpar_idx[e]
        if up and lift[u] < top - span:
            stack_v[n], stack_val[n] = u, top - span
            n += 1
        elif not up and lift[u] > bottom + span:
            stack_v[n], stack_val[n] = u, bottom + span
            n += 1
    return n, stack_v, stack_val


@njit(cache=True)
def _relocation(x, lift, placed, pos, span, cpar_ptr, cpar_idx, cch_ptr, cch_idx,
                new_lift, stamp, marks, touched):
    """The reference's ``_Lifts.relocation``: ``(side, ops moved)``, the moves being
    ``new_lift[side, touched[side, :moved]]`` (side 0 raises, 1 lowers)."""
    up_top, up_v, up_val = _starts(x, lift, span, cpar_ptr, cpar_idx, True)
    down_top, down_v, down_val = _starts(x, lift, span, cpar_ptr, cpar_idx, False)
    marks[0] += 1
    marks[1] += 1
    raised = lowered = 0
    limit = 2 * (cpar_ptr[x + 1] - cpar_ptr[x])
    while True:
        up_top, raised, up_v, up_val = _cascade(
            0, True, x, limit, up_v, up_val, up_top, raised, lift, placed, span, cpar_ptr,
            cpar_idx, cch_ptr, cch_idx, new_lift, stamp, marks[0], touched)
        down_top, lowered, down_v, down_val = _cascade(
            1, False, x, limit, down_v, down_val, down_top, lowered, lift, placed, span,
            cpar_ptr, cpar_idx, cch_ptr, cch_idx, new_lift, stamp, marks[1], touched)
        if raised <= limit or lowered <= limit:
            break
        limit *= 4
    if lowered > limit:
        return 0, raised
    if raised > limit:
        return 1, lowered
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
def _free_at(g, q, p, bits, summary, order, end, start_free):
    """Free time of GPU ``g`` at position ``q`` of a restart from ``p``: the end of its
    last op in ``[p, q)``, else its free time in the restart's snapshot."""
    at = _last_before(bits, summary, g, q)
    return end[order[at]] if at >= p else start_free[g]


@njit(cache=True)
def _earliest_at(lo, hi, k, q, p, bits, summary, order, end, start_free):
    best, best_free = lo, np.inf
    for a in range(lo, hi + 1):
        f = _free_at(a % k, q, p, bits, summary, order, end, start_free)
        if f < best_free:
            best, best_free = a, f
    return best


@njit(cache=True)
def _mark(dirty, q):
    dirty[q >> 6] |= np.uint64(1) << np.uint64(q & 63)


@njit(cache=True)
def _mark_children(v, lo, hi, pos, ch_ptr, ch_idx, dirty):
    """Mark the children of ``v`` placed at positions in ``[lo, hi)``."""
    for e in range(ch_ptr[v], ch_ptr[v + 1]):
        r = pos[ch_idx[e]]
        if lo <= r < hi:
            _mark(dirty, r)


@njit(cache=True)
def _carry(g, q, value, i, bits, summary, snaps, free, dirty):
    """GPU ``g`` is free at ``value`` after position ``q``: set it in the snapshots
    up to its next op (marked for re-timing), or up to ``i`` and in ``free``."""
    r = _first_after(bits, summary, g, q, i)
    s = q - q % SNAP + SNAP
    while s <= r:
        snaps[(s // SNAP) % _ROWS, g] = value
        s += SNAP
    if r < i:
        _mark(dirty, r)
    else:
        free[g] = value


@njit(cache=True)
def _retime(p, i, k, order, pos, near, n_near, was, far_v, n_far, lift, placed, dev, end,
            free, snaps, bits, summary, dirty, span, par_ptr, par_idx, par_delay, compute,
            ch_ptr, ch_idx, cpar_ptr, cpar_idx, cch_ptr, cch_idx):
    """The restart from ``p`` to ``i`` of the reference, re-timing only what changed.

    Before it, replaying ``[p, i)`` from the snapshot at ``p`` would reproduce every
    end, snapshot and ``free`` as they are (the restarts and the forward pass keep
    them so), so an op's end can change only if its GPU, a parent's end or GPU, or
    its GPU's previous op or that op's end changed. Those ops are re-timed in
    position order (``dirty`` bits), the moved ones in ``[p, i)`` re-placed at their
    turn; each change is carried into the snapshots and ``free``.
    """
    start_free = snaps[(p // SNAP) % _ROWS]
    for t in range(n_near):
        _mark(dirty, near[t])
    for t in range(n_far):
        _mark_children(far_v[t], p, i, pos, ch_ptr, ch_idx, dirty)
    w = p >> 6
    last = (i - 1) >> 6
    while w <= last:
        word = dirty[w]
        if not word:
            w += 1
            continue
        b = _low_bit(word)
        dirty[w] = word & ~(np.uint64(1) << np.uint64(b))
        q = (w << 6) + b
        v = order[q]
        before = dev[v]
        if placed[v] and was[v] >= 0:     # moved by this relocation: re-placed at its turn
            before = was[v]
            was[v] = -1
            lo, hi = _interval(v, lift, placed, span, cpar_ptr, cpar_idx, cch_ptr, cch_idx)
            lo, hi = _bounded(lo, hi, lift[v] - lift[v] % k, k)
            lift[v] = _earliest_at(lo, hi, k, q, p, bits, summary, order, end, start_free)
            dev[v] = lift[v] % k
            if dev[v] != before:
                _release(bits, summary, before, q)
                _hold(bits, summary, dev[v], q)
        g = dev[v]
        old_end = end[v]
        _advance(v, _free_at(g, q, p, bits, summary, order, end, start_free), dev, end,
                 par_ptr, par_idx, par_delay, compute)
        if g != before:
            _mark_children(v, p, i, pos, ch_ptr, ch_idx, dirty)
            _carry(before, q, _free_at(before, q, p, bits, summary, order, end, start_free),
                   i, bits, summary, snaps, free, dirty)
            _carry(g, q, end[v], i, bits, summary, snaps, free, dirty)
        elif end[v] != old_end:
            _mark_children(v, p, i, pos, ch_ptr, ch_idx, dirty)
            _carry(g, q, end[v], i, bits, summary, snaps, free, dirty)


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
def windowed_kernel(k, degree, order, par_ptr, par_idx, par_delay, compute, ch_ptr, ch_idx,
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
    dirty = np.zeros(words, dtype=np.uint64)
    snaps = np.zeros((_ROWS, k))
    new_lift = np.zeros((2, n), dtype=np.int64)
    stamp = np.zeros((2, n), dtype=np.int64)
    touched = np.zeros((2, n), dtype=np.int64)
    marks = np.zeros(2, dtype=np.int64)
    was = np.full(n, -1, dtype=np.int64)    # a moved op's GPU until its re-placement
    near = np.empty(n, dtype=np.int64)
    far = np.empty(n, dtype=np.int64)
    far_v = np.empty(n, dtype=np.int64)
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
                j = min(j, pos[touched[side, t]])
            p = max(j - j % SNAP, i - i % SNAP - REPLAY)
            n_far = n_near = 0
            for t in range(n_moved):
                v = touched[side, t]
                if pos[v] < p:
                    _move(v, new_lift[side, v], k, lift, dev, pos, bits, summary)
                    far[n_far] = pos[v]
                    n_far += 1
                else:
                    # the bit sets keep its GPU before this turn until its re-placement
                    was[v] = dev[v]
                    lift[v] = new_lift[side, v]
                    dev[v] = lift[v] % k
                    near[n_near] = pos[v]
                    n_near += 1
            lo, hi = _interval(x, lift, placed, span, cpar_ptr, cpar_idx, cch_ptr, cch_idx)
            lift[x] = _earliest_now(lo, hi, k, free)
            placed[x] = True
            dev[x] = lift[x] % k
            far[:n_far].sort()
            for t in range(n_far):
                q = far[t]
                v = order[q]            # far back: against the last known timings
                far_v[t] = v
                a, b = _interval(v, lift, placed, span, cpar_ptr, cpar_idx, cch_ptr, cch_idx)
                a, b = _bounded(a, b, lift[v] - lift[v] % k, k)
                _move(v, _earliest_before(a, b, k, q, bits, summary, order, end), k, lift,
                      dev, pos, bits, summary)
                _advance(v, _free_before(dev[v], q, bits, summary, order, end), dev, end,
                         par_ptr, par_idx, par_delay, compute)
            _retime(p, i, k, order, pos, near, n_near, was, far_v, n_far, lift, placed, dev,
                    end, free, snaps, bits, summary, dirty, span, par_ptr, par_idx,
                    par_delay, compute, ch_ptr, ch_idx, cpar_ptr, cpar_idx, cch_ptr, cch_idx)
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
