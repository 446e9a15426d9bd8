"""The compiled event loop of the fluid contention simulator (one component).

:func:`run_component` is the event loop of :mod:`fabricopt.problems.contention` and the
flow state of :mod:`fabricopt.problems._flowstate` on flat numpy arrays, compiled by
numba. It does the same floating-point operations in the same order as the Python path
(same events, same heap order, same progressive filling, same sums), so both give
bit-for-bit the same results; the Python path stays the oracle its tests compare against.
Fills are not cached: compiled, a cluster's fill costs less than looking it up.

With ``NUMBA_DISABLE_JIT=1`` the same code runs as plain Python.
"""

from __future__ import annotations

import heapq
import math

import numpy as np
from numba import njit, types

# Every argument's type, so that importing this module loads (or compiles) the kernel
# once: a process forked after the import, as the bench's runs are, starts warm.
_F = types.float64[::1]
_I = types.int64[::1]
_B = types.boolean[::1]
_f, _i, _b = types.float64, types.int64, types.boolean

__all__ = ["run_component", "RAN_OUT_OF_DRAWS"]

# Links whose fair share is within this relative distance of the minimum saturate
# together (the value of fabricopt.problems._flowstate._SAT_RTOL).
_SAT_RTOL = 1e-12

#: Status of :func:`run_component` when a job needed more jitter draws than it was given.
RAN_OUT_OF_DRAWS = 1


@njit((_I, _i, _I, _I, _F, _I, _F, _F, _I, _I, _B, _I, _I, _F), cache=True)
def _fill(members, n_members, path_ptr, path_links, fcap, flevel, link_cap, residual,
          count, taken, saturated, unfrozen, keep, rates):
    """Progressive filling of ``members[:n_members]`` (``fill_list``'s operations);
    writes ``rates[k]`` for member k."""
    for k in range(n_members):
        f = members[k]
        rates[k] = 0.0
        for p in range(path_ptr[f], path_ptr[f + 1]):
            residual[path_links[p]] = link_cap[path_links[p]]
    # levels from the highest down
    first = True
    done_level = 0
    while True:
        found = False
        lev = 0
        for k in range(n_members):
            x = flevel[members[k]]
            if (first or x < done_level) and (not found or x > lev):
                lev, found = x, True
        if not found:
            break
        first = False
        done_level = lev
        n_unfrozen = 0
        for k in range(n_members):
            if flevel[members[k]] == lev:
                unfrozen[n_unfrozen] = k
                n_unfrozen += 1
        while n_unfrozen:
            for i in range(n_unfrozen):
                f = members[unfrozen[i]]
                for p in range(path_ptr[f], path_ptr[f + 1]):
                    count[path_links[p]] = 0
                    taken[path_links[p]] = 0
            for i in range(n_unfrozen):
                f = members[unfrozen[i]]
                for p in range(path_ptr[f], path_ptr[f + 1]):
                    count[path_links[p]] += 1
            share_min = math.inf
            cap_min = math.inf
            for i in range(n_unfrozen):
                f = members[unfrozen[i]]
                cap_min = min(cap_min, fcap[f])
                for p in range(path_ptr[f], path_ptr[f + 1]):
                    e = path_links[p]
                    share_min = min(share_min, residual[e] / count[e])
            s = min(share_min, cap_min)
            limit = s * (1.0 + _SAT_RTOL)
            for i in range(n_unfrozen):
                f = members[unfrozen[i]]
                for p in range(path_ptr[f], path_ptr[f + 1]):
                    e = path_links[p]
                    saturated[e] = residual[e] / count[e] <= limit
            n_keep = 0
            for i in range(n_unfrozen):
                k = unfrozen[i]
                f = members[k]
                freeze = fcap[f] <= limit
                if not freeze:
                    for p in range(path_ptr[f], path_ptr[f + 1]):
                        if saturated[path_links[p]]:
                            freeze = True
                            break
                if freeze:
                    rates[k] = s
                    for p in range(path_ptr[f], path_ptr[f + 1]):
                        taken[path_links[p]] += 1
                else:
                    keep[n_keep] = k
                    n_keep += 1
            for i in range(n_unfrozen):
                f = members[unfrozen[i]]
                for p in range(path_ptr[f], path_ptr[f + 1]):
                    e = path_links[p]
                    t_e = taken[e]
                    if t_e:
                        residual[e] = 0.0 if saturated[e] else max(0.0, residual[e] - t_e * s)
                        taken[e] = 0    # each link once
            for i in range(n_keep):
                unfrozen[i] = keep[i]
            n_unfrozen = n_keep


@njit((_I, _i), cache=True)
def _sort_prefix(values, n):
    """Sort ``values[:n]`` in place (insertion sort for the few due jobs or cluster
    members of an event, without allocating; numpy's sort past 32)."""
    if n > 32:
        values[:n] = np.sort(values[:n])
        return
    for i in range(1, n):
        x = values[i]
        k = i - 1
        while k >= 0 and values[k] > x:
            values[k + 1] = values[k]
            k -= 1
        values[k + 1] = x


@njit((_i, _f, _f, _f, _F, _F, _F, _I, _F), cache=True)
def _settle(f, t, a, b, rate, rem, t0, fjob, sent_bits):
    r = rate[f]
    if r > 0:
        dt = t - t0[f]
        rem[f] -= r * dt
        inside = min(t, b) - max(t0[f], a)
        if inside > 0:
            sent_bits[fjob[f]] += r * inside
    t0[f] = t


@njit((_i, _f, _f, _f, _F, _F, _F, _I, _b, _I, _F, _F, _B, _I, _I, _F), cache=True)
def _start(j, t, a, b, compute_s, overlap, draws, draw_ptr, jitter_on, drawn, comp_end, elig,
           released, left, job_ptr, compute_in):
    """Job j starts an iteration at t; False if it has no jitter draw left."""
    c = compute_s[j]
    if jitter_on:
        if drawn[j] >= draw_ptr[j + 1] - draw_ptr[j]:
            return False
        c = compute_s[j] * (1.0 + draws[draw_ptr[j] + drawn[j]])
        drawn[j] += 1
    comp_end[j] = t + c
    elig[j] = t + overlap[j] * c
    released[j] = False
    left[j] = job_ptr[j + 1] - job_ptr[j]
    compute_in[j] += max(0.0, min(t + c, b) - max(t, a))
    return True


@njit((_F, _I, _I, _F, _I, _F, _I, _I, _F, _F, _F, _I, _b, _f, _f, _f, _b), cache=True)
def run_component(link_cap, path_ptr, path_links, bits, fjob, fcap, flevel, job_ptr,
                  compute_s, overlap, draws, draw_ptr, jitter_on, a, b, eps, trace):
    """The event loop of one component, on arrays.

    Parameters
    ----------
    link_cap : float64[L]
        Capacity (bit/s) of each shared link.
    path_ptr, path_links : int64[F + 1], int64[P]
        Flow f's shared links are ``path_links[path_ptr[f]:path_ptr[f + 1]]``.
    bits, fcap : float64[F]
        Bits per iteration and own rate limit (bit/s, ``inf`` for none) of each flow.
    fjob, flevel : int64[F]
        Job and priority level of each flow; a job's flows are contiguous.
    job_ptr : int64[J + 1]
        Job j's flows are ``job_ptr[j]:job_ptr[j + 1]``.
    compute_s, overlap : float64[J]
    draws, draw_ptr : float64[D], int64[J + 1]
        When ``jitter_on``, job j's k-th iteration computes
        ``compute_s[j] * (1 + draws[draw_ptr[j] + k])``.
    a, b, eps : float
        The window ``[a, b)`` and the event epsilon.
    trace : bool
        Record every iteration end.

    Returns
    -------
    (compute_in, sent_bits, done_iters, end_job, end_t, status)
        ``status`` is 0, or :data:`RAN_OUT_OF_DRAWS` (the results are then void).
    """
    F = bits.shape[0]
    J = compute_s.shape[0]
    L = link_cap.shape[0]
    # flow state
    active = np.zeros(F, dtype=np.bool_)
    rem = np.zeros(F)
    t0 = np.zeros(F)
    rate = np.zeros(F)
    version = np.zeros(F, dtype=np.int64)
    sent_bits = np.zeros(J)
    # active flows of each link: path entries, in the link's slice of on_entry
    link_ptr = np.zeros(L + 1, dtype=np.int64)
    for p in range(path_links.shape[0]):
        link_ptr[path_links[p] + 1] += 1
    for e in range(L):
        link_ptr[e + 1] += link_ptr[e]
    on_entry = np.zeros(path_links.shape[0], dtype=np.int64)
    on_count = np.zeros(L, dtype=np.int64)
    entry_pos = np.zeros(path_links.shape[0], dtype=np.int64)
    entry_flow = np.zeros(path_links.shape[0], dtype=np.int64)
    for f in range(F):
        for p in range(path_ptr[f], path_ptr[f + 1]):
            entry_flow[p] = f
    # cluster search and fill scratch
    touched = np.zeros(2 * F + 1, dtype=np.int64)   # released and finished
    n_touched = 0
    flow_stamp = np.zeros(F, dtype=np.int64)
    link_stamp = np.zeros(L, dtype=np.int64)
    stamp = 0
    stack = np.zeros(F + 1, dtype=np.int64)
    members = np.zeros(F + 1, dtype=np.int64)
    residual = np.zeros(L)
    count = np.zeros(L, dtype=np.int64)
    taken = np.zeros(L, dtype=np.int64)
    saturated = np.zeros(L, dtype=np.bool_)
    unfrozen = np.zeros(F + 1, dtype=np.int64)
    keep = np.zeros(F + 1, dtype=np.int64)
    rates = np.zeros(F + 1)
    # finish times (time, version, flow) and job timers (time, job)
    heap = [(0.0, 0, 0)]
    heap.pop()
    timers = [(0.0, 0)]
    timers.pop()
    # job state
    compute_in = np.zeros(J)
    done_iters = np.zeros(J, dtype=np.int64)
    comp_end = np.zeros(J)
    elig = np.zeros(J)
    released = np.zeros(J, dtype=np.bool_)
    left = np.zeros(J, dtype=np.int64)
    drawn = np.zeros(J, dtype=np.int64)
    due = np.zeros(J, dtype=np.int64)
    is_due = np.zeros(J, dtype=np.bool_)
    end_job = [0]
    end_job.pop()
    end_t = [0.0]
    end_t.pop()
    dirty = False
    status = 0

    for j in range(J):
        if not _start(j, 0.0, a, b, compute_s, overlap, draws, draw_ptr, jitter_on, drawn,
                      comp_end, elig, released, left, job_ptr, compute_in):
            status = RAN_OUT_OF_DRAWS
            break
        due[j] = j
    n_due = J
    t = 0.0
    while status == 0:
        _sort_prefix(due, n_due)
        for d in range(n_due):
            j = due[d]
            is_due[j] = False
            # settle(j, t): whatever job j does at t, up to its next timer or its flows
            limit = t + eps
            while True:
                if not released[j]:
                    if elig[j] > limit:
                        heapq.heappush(timers, (elig[j], j))
                        break
                    released[j] = True
                    # release: the job's flows become active with all their bits
                    for f in range(job_ptr[j], job_ptr[j + 1]):
                        active[f] = True
                        rem[f] = bits[f]
                        t0[f] = t
                        rate[f] = 0.0
                        for p in range(path_ptr[f], path_ptr[f + 1]):
                            e = path_links[p]
                            pos = link_ptr[e] + on_count[e]
                            on_entry[pos] = p
                            entry_pos[p] = pos
                            on_count[e] += 1
                        touched[n_touched] = f
                        n_touched += 1
                    if job_ptr[j + 1] > job_ptr[j]:
                        dirty = True
                if left[j]:
                    break
                if comp_end[j] > limit:
                    heapq.heappush(timers, (comp_end[j], j))
                    break
                if a <= t and t < b:
                    done_iters[j] += 1
                if trace:
                    end_job.append(j)
                    end_t.append(t)
                if not _start(j, t, a, b, compute_s, overlap, draws, draw_ptr, jitter_on,
                              drawn, comp_end, elig, released, left, job_ptr, compute_in):
                    status = RAN_OUT_OF_DRAWS
                    break
            if status:
                break
        if status:
            break
        if dirty:
            # allocate(t): refill the active flows connected to a touched flow
            stamp += 1
            n_members = 0
            n_stack = 0
            for i in range(n_touched):
                f = touched[i]
                if flow_stamp[f] != stamp:
                    flow_stamp[f] = stamp
                    stack[n_stack] = f
                    n_stack += 1
            n_touched = 0
            while n_stack:
                n_stack -= 1
                f = stack[n_stack]
                if active[f]:
                    members[n_members] = f
                    n_members += 1
                for p in range(path_ptr[f], path_ptr[f + 1]):
                    e = path_links[p]
                    if link_stamp[e] != stamp:
                        link_stamp[e] = stamp
                        for q in range(link_ptr[e], link_ptr[e] + on_count[e]):
                            g = entry_flow[on_entry[q]]
                            if flow_stamp[g] != stamp:
                                flow_stamp[g] = stamp
                                stack[n_stack] = g
                                n_stack += 1
            if n_members:
                _sort_prefix(members, n_members)
                _fill(members, n_members, path_ptr, path_links, fcap, flevel, link_cap,
                      residual, count, taken, saturated, unfrozen, keep, rates)
                for k in range(n_members):
                    f = members[k]
                    r = rates[k]
                    if r == rate[f]:
                        continue      # same rate: same trajectory, keep its finish time
                    _settle(f, t, a, b, rate, rem, t0, fjob, sent_bits)
                    rate[f] = r
                    version[f] += 1
                    if r > 0:
                        heapq.heappush(heap, (t + rem[f] / r, version[f], f))
            dirty = False
        # next event
        while len(heap) and heap[0][1] != version[heap[0][2]]:
            heapq.heappop(heap)
        t_next = math.inf
        if len(timers):
            t_next = timers[0][0]
        if len(heap):
            t_next = min(t_next, heap[0][0])
        if t_next >= b:
            # close: count the bits the still-moving flows send until the window ends
            for f in range(F):
                if active[f]:
                    _settle(f, b, a, b, rate, rem, t0, fjob, sent_bits)
            break
        n_due = 0
        # advance(t_next): finish every flow due by t_next (within eps)
        while len(heap) and heap[0][0] <= t_next + eps:
            item = heapq.heappop(heap)
            f = item[2]
            if item[1] != version[f]:
                continue
            _settle(f, t_next, a, b, rate, rem, t0, fjob, sent_bits)
            rem[f] = 0.0
            rate[f] = 0.0
            active[f] = False
            version[f] += 1
            for p in range(path_ptr[f], path_ptr[f + 1]):
                e = path_links[p]
                last = link_ptr[e] + on_count[e] - 1
                moved = on_entry[last]
                pos = entry_pos[p]
                on_entry[pos] = moved
                entry_pos[moved] = pos
                on_count[e] -= 1
            touched[n_touched] = f
            n_touched += 1
            j = fjob[f]
            left[j] -= 1
            dirty = True
            if not left[j] and not is_due[j]:
                is_due[j] = True
                due[n_due] = j
                n_due += 1
        while len(timers) and timers[0][0] <= t_next + eps:
            j = heapq.heappop(timers)[1]
            if not is_due[j]:
                is_due[j] = True
                due[n_due] = j
                n_due += 1
        t = t_next
    n_ends = len(end_t)
    end_job_arr = np.zeros(n_ends, dtype=np.int64)
    end_t_arr = np.zeros(n_ends)
    for i in range(n_ends):
        end_job_arr[i] = end_job[i]
        end_t_arr[i] = end_t[i]
    return compute_in, sent_bits, done_iters, end_job_arr, end_t_arr, status
