"""The compiled event loop of the fluid step simulation.

:func:`run_groups` is ``_Schedule.run`` of :mod:`fabricopt.fabrics.flows` on flat numpy
arrays, compiled by numba. It does the same floating-point operations in the same order
as the Python path (same events, same ``heapq`` order, same progressive filling with the
same ties and shortcuts, same subtractions), so both give bit-for-bit the same step;
the Python path stays the oracle its tests compare against. Fills are not cached:
compiled, a fill costs less than building a key to look it up.

With ``NUMBA_DISABLE_JIT=1`` the same code runs as plain Python.
"""

from __future__ import annotations

import heapq
import math

import numpy as np
from numba import njit, types

__all__ = ["run_groups", "fixed_rate_ends"]

_F = types.float64[::1]
_I = types.int64[::1]
_B = types.boolean[::1]
_f, _i = types.float64, types.int64

# The value of fabricopt.fabrics.flows._EVENT_RTOL (flows imports this module).
_EVENT_RTOL = 1e-12


@njit(types.void(_i, _I, _I, _I, _F, _F, _I, _I, _I, _I, _F, _I, _I, _B), cache=True)
def _fill(n_flows, flow_route, route_ptr, route_idx, capacity, rate, local, links_seen,
          users_ptr, users, residual, count, scratch, frozen):
    """Max-min fair rates of ``flow_route[:n_flows]`` into ``rate`` (``flows._fill``'s
    operations: links numbered by first use, the first tightest link wins a tie).

    ``local`` (one entry per link, all -1) is restored before returning."""
    n_links = 0
    total = 0
    single = True
    for f in range(n_flows):
        e = flow_route[f]
        if route_ptr[e + 1] - route_ptr[e] != 1:
            single = False
        for p in range(route_ptr[e], route_ptr[e + 1]):
            r = route_idx[p]
            total += 1
            if local[r] < 0:
                local[r] = n_links
                links_seen[n_links] = r
                count[n_links] = 0
                n_links += 1
            count[local[r]] += 1
    if n_links == total:                    # no link shared: each its own
        for f in range(n_flows):
            e = flow_route[f]
            best = capacity[route_idx[route_ptr[e]]]
            for p in range(route_ptr[e] + 1, route_ptr[e + 1]):
                c = capacity[route_idx[p]]
                if c < best:
                    best = c
            rate[f] = best
    elif single:                            # one link each: an even split
        for f in range(n_flows):
            e = flow_route[f]
            r = route_idx[route_ptr[e]]
            rate[f] = capacity[r] / count[local[r]]
    else:
        # users of each link, in flow order
        users_ptr[0] = 0
        for j in range(n_links):
            users_ptr[j + 1] = users_ptr[j] + count[j]
            scratch[j] = users_ptr[j]
            residual[j] = capacity[links_seen[j]]
        for f in range(n_flows):
            e = flow_route[f]
            for p in range(route_ptr[e], route_ptr[e + 1]):
                j = local[route_idx[p]]
                at = scratch[j]
                users[at] = f
                scratch[j] = at + 1
        for f in range(n_flows):
            frozen[f] = False
        live = n_links
        while live:
            tight = -1
            best = 0.0
            for j in range(n_links):
                if count[j] > 0:
                    x = residual[j] / count[j]
                    if tight < 0 or x < best:
                        tight, best = j, x
            share = residual[tight] / count[tight]
            for u in range(users_ptr[tight], users_ptr[tight + 1]):
                f = users[u]
                if frozen[f]:
                    continue
                frozen[f] = True
                rate[f] = share
                e = flow_route[f]
                for p in range(route_ptr[e], route_ptr[e + 1]):
                    j = local[route_idx[p]]
                    residual[j] -= share
                    count[j] -= 1
                    if count[j] == 0:
                        live -= 1
    for j in range(n_links):
        local[links_seen[j]] = -1


@njit(_f(_i, _i, _F, _I, _I, _I, _I, _I, _I, _F, _I, _I, _F), cache=True)
def run_groups(k, groups, compute, gpu, order_ptr, order_idx, inputs, out_ptr, out_dst,
               out_bits, route_ptr, route_idx, capacity):
    """The step of ``groups`` groups of ``k`` GPUs simulated together.

    Op ``i`` runs on GPU ``gpu[i]`` for ``compute[i]`` s; GPU ``g`` runs ops
    ``order_idx[order_ptr[g]:order_ptr[g + 1]]`` in turn; op ``i`` waits for
    ``inputs[i]`` arrivals. Its outputs ``e`` in ``out_ptr[i]:out_ptr[i + 1]`` go to op
    ``out_dst[e]`` carrying ``out_bits[e]`` bits (0: no transfer); in group ``c`` the
    transfer crosses links ``route_idx[route_ptr[c * m + e]:route_ptr[c * m + e + 1]]``
    (``m`` outputs) of ``capacity`` Gbps. Returns when the last op ends, ``inf`` if a
    transfer crosses a link of no capacity or an op never runs.
    """
    n = compute.shape[0]
    m = out_dst.shape[0]
    slots = k * groups
    pending = np.empty(n * groups, dtype=np.int64)
    for c in range(groups):
        for i in range(n):
            pending[c * n + i] = inputs[i]
    cursor = np.zeros(slots, dtype=np.int64)
    busy = np.zeros(slots, dtype=np.bool_)
    running = [(0.0, 0)]                    # heap of (end, group * n + op)
    running.pop()
    most = max(m * groups, 1)
    bits_left = np.empty(most)
    flow_route = np.empty(most, dtype=np.int64)
    flow_dst = np.empty(most, dtype=np.int64)
    rate = np.empty(most)
    n_flows = 0
    local = np.full(capacity.shape[0], -1, dtype=np.int64)
    span = max(route_idx.shape[0], 1)
    links_seen = np.empty(span, dtype=np.int64)
    users_ptr = np.empty(span + 1, dtype=np.int64)
    users = np.empty(span, dtype=np.int64)
    residual = np.empty(span)
    count = np.empty(span, dtype=np.int64)
    scratch = np.empty(span, dtype=np.int64)
    frozen = np.empty(most, dtype=np.bool_)
    touched = np.empty(slots, dtype=np.int64)
    is_touched = np.zeros(slots, dtype=np.bool_)
    done = 0
    clock = 0.0
    for slot in range(slots):
        c = slot // k
        g = slot - c * k
        if order_ptr[g] < order_ptr[g + 1]:
            op = order_idx[order_ptr[g]]
            if pending[c * n + op] == 0:
                cursor[slot] = 1
                busy[slot] = True
                heapq.heappush(running, (0.0 + compute[op], c * n + op))
    changed = False
    while len(running) > 0 or n_flows > 0:
        if changed:
            _fill(n_flows, flow_route, route_ptr, route_idx, capacity, rate, local,
                  links_seen, users_ptr, users, residual, count, scratch, frozen)
            changed = False
        next_op = running[0][0] if len(running) > 0 else math.inf
        next_flow = math.inf
        first = -1
        for f in range(n_flows):
            r = rate[f]
            if r > 0:
                t = clock + bits_left[f] / (r * 1e9)
                if t < next_flow:
                    next_flow, first = t, f
        now = next_op if next_op <= next_flow else next_flow
        if next_op < next_flow:
            first = -1
        if math.isinf(now):
            return math.inf
        horizon = now + _EVENT_RTOL * max(abs(now), 1e-300)
        n_touched = 0
        if n_flows > 0:
            elapsed = now - clock
            kept = 0
            for f in range(n_flows):
                r = rate[f]
                if r > 0 and (f == first or clock + bits_left[f] / (r * 1e9) <= horizon):
                    x = flow_dst[f]
                    pending[x] -= 1
                    c = x // n
                    slot = c * k + gpu[x - c * n]
                    if not is_touched[slot]:
                        is_touched[slot] = True
                        touched[n_touched] = slot
                        n_touched += 1
                    changed = True
                else:
                    bits_left[kept] = bits_left[f] - r * 1e9 * elapsed
                    flow_route[kept] = flow_route[f]
                    flow_dst[kept] = flow_dst[f]
                    rate[kept] = r
                    kept += 1
            n_flows = kept
        clock = now
        while len(running) > 0 and running[0][0] <= horizon:
            x = heapq.heappop(running)[1]
            done += 1
            c = x // n
            op = x - c * n
            slot = c * k + gpu[op]
            busy[slot] = False
            if not is_touched[slot]:
                is_touched[slot] = True
                touched[n_touched] = slot
                n_touched += 1
            for e in range(out_ptr[op], out_ptr[op + 1]):
                d = out_dst[e]
                if out_bits[e] != 0.0:
                    bits_left[n_flows] = out_bits[e]
                    flow_route[n_flows] = c * m + e
                    flow_dst[n_flows] = c * n + d
                    n_flows += 1
                    changed = True
                else:
                    pending[c * n + d] -= 1
                    s = c * k + gpu[d]
                    if not is_touched[s]:
                        is_touched[s] = True
                        touched[n_touched] = s
                        n_touched += 1
        for t_ in range(n_touched):
            slot = touched[t_]
            is_touched[slot] = False
            if busy[slot]:
                continue
            c = slot // k
            g = slot - c * k
            at = order_ptr[g] + cursor[slot]
            if at >= order_ptr[g + 1]:
                continue
            op = order_idx[at]
            if pending[c * n + op] != 0:
                continue
            cursor[slot] += 1
            busy[slot] = True
            heapq.heappush(running, (clock + compute[op], c * n + op))
    if done < n * groups:
        return math.inf
    return clock


@njit(types.float64[:, ::1](_i, _i, _F, _I, _I, _I, _I, types.float64[:, ::1]), cache=True)
def fixed_rate_ends(k, l, compute, gpu, in_ptr, in_src, in_row, delay):
    """Each op's end in each of ``l`` groups with every transfer at its pair's whole rate:
    ``_Schedule.fixed_rate``'s loop (an op starts when its GPU is free and its inputs
    have arrived, ``end[src] + delay[in_row]``, or ``end[src]`` where ``in_row`` is -1)."""
    n = compute.shape[0]
    end = np.zeros((n, l))
    free = np.zeros((k, l))
    for op in range(n):
        g = gpu[op]
        for c in range(l):
            t = free[g, c]
            for e in range(in_ptr[op], in_ptr[op + 1]):
                r = in_row[e]
                x = end[in_src[e], c] if r < 0 else end[in_src[e], c] + delay[r, c]
                if x > t:
                    t = x
            end[op, c] = t + compute[op]
            free[g, c] = end[op, c]
    return end
