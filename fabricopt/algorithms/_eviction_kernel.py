"""The eviction search of SiP-Ring's fill-up step, compiled: for one arc of a pair,
every wavelength weighed as in :func:`fabricopt.algorithms.wavelengths._force` (the
lightpaths in the way, one more at each end whose transceivers are all busy, the harm
to the pairs that lose them). The Python search in :mod:`fabricopt.algorithms.wavelengths`
makes the same choices and is the reference the tests check it against.

Compiled with numba (``cache=True``); with ``NUMBA_DISABLE_JIT=1`` the same code runs
as Python.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_NONE = -1


@njit(cache=True)
def best_eviction(owner, segs, pid_pair, pair_src, pair_dst, count, size, k, src_load,
                  dst_load, src_others, dst_others, w, limit):
    """The least harmful wavelength of one arc of pair ``k``, and what it evicts.

    Parameters
    ----------
    owner : int64 array, shape (N, W)
        Lightpath id per (segment, wavelength) of the arc's fiber, -1 where free.
    segs : int64 array
        The arc's segments.
    pid_pair : int64 array
        The pair of each lightpath id.
    pair_src, pair_dst, count : int64 arrays
        Per pair: its ends and its lightpaths; ``size`` (float64) its bytes.
    k : int
        The pair that wants one more lightpath.
    src_load, dst_load : int
        Lightpaths sourced at k's source and sunk at k's destination.
    src_others, dst_others : int64 arrays
        The lightpaths of other pairs at those ends (may be empty when the end has a
        free transceiver: they are only weighed at a full end).
    w : int
        Wavelengths per fiber (and transceivers per node).
    limit : float
        Every pair that loses lightpaths must end strictly faster than this.

    Returns
    -------
    (int, float, int64 array)
        The wavelength (-1 when none qualifies), its harm (the slowest per-lightpath
        bytes among the pairs that lose lightpaths, 0 when none does), the ids evicted.
        Ties go to the lowest wavelength.
    """
    h = len(segs)
    victims = np.empty(h + 2, np.int64)
    best_victims = np.empty(h + 2, np.int64)
    lost = np.zeros(len(count), np.int64)
    best_wl, best_harm, best_n = _NONE, 0.0, 0
    for wl in range(w):
        nv = 0
        for t in range(h):
            pid = owner[segs[t], wl]
            if pid != _NONE and not _among(victims, nv, pid):
                victims[nv] = pid
                nv += 1
        for side in range(2):
            ends = pair_src if side == 0 else pair_dst
            load = src_load if side == 0 else dst_load
            others = src_others if side == 0 else dst_others
            node = ends[k]
            if load < w:
                continue
            at_node = 0
            for u in range(nv):
                if ends[pid_pair[victims[u]]] == node:
                    at_node += 1
            if load - at_node < w:
                continue
            pick = _least_harm(victims, nv, others, pid_pair, count, size, lost)
            if pick != _NONE:
                victims[nv] = pick
                nv += 1
        for u in range(nv):
            lost[pid_pair[victims[u]]] += 1
        ok = lost[k] == 0
        harm = 0.0
        for u in range(nv):
            p = pid_pair[victims[u]]
            left = count[p] - lost[p]
            if left < 1:
                ok = False
            elif size[p] / left > harm:
                harm = size[p] / left
        for u in range(nv):
            lost[pid_pair[victims[u]]] = 0
        if ok and harm < limit and (best_wl == _NONE or harm < best_harm):
            best_wl, best_harm, best_n = wl, harm, nv
            best_victims[:nv] = victims[:nv]
    return best_wl, best_harm, best_victims[:best_n].copy()


@njit(cache=True)
def _least_harm(victims, nv, candidates, pid_pair, count, size, lost):
    """The candidate not among ``victims[:nv]`` whose eviction (with theirs) leaves its
    pair fastest: least ``(left < 1, size / left, id)``; -1 when there is none.
    ``lost`` is all zeros on entry and on return."""
    for u in range(nv):
        lost[pid_pair[victims[u]]] += 1
    best, best_stuck, best_harm = _NONE, True, 0.0
    for pid in candidates:
        if _among(victims, nv, pid):
            continue
        p = pid_pair[pid]
        left = count[p] - lost[p] - 1
        stuck = left < 1
        harm = size[p] / left if not stuck else 0.0
        if (best == _NONE or (not stuck and best_stuck)
                or (stuck == best_stuck and (harm < best_harm
                                             or (harm == best_harm and pid < best)))):
            best, best_stuck, best_harm = pid, stuck, harm
    for u in range(nv):
        lost[pid_pair[victims[u]]] = 0
    return best


@njit(cache=True)
def _among(victims, nv, pid):
    """Whether ``pid`` is one of ``victims[:nv]`` (a handful: a linear scan)."""
    for u in range(nv):
        if victims[u] == pid:
            return True
    return False
