"""The longest path of a placed step, compiled: :func:`fabricopt.fabrics.iteration`'s
critical path (every op as soon as its GPU is free and its inputs have arrived, the
per-GPU order fixed), for all ``l`` groups at once.

Compiled with numba (``cache=True``); with ``NUMBA_DISABLE_JIT=1`` the same code runs
as Python. Tests check it against the pure-Python loop of the iteration module.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["longest_path_s"]


@njit(cache=True)
def longest_path_s(k, gpu, compute, par_ptr, par_idx, par_delay):
    """Ops ``0..n-1`` in turn (a topological order), op ``i`` on GPU ``gpu[i]`` of ``k``
    for ``compute[i]`` seconds, after each parent ``par_idx[p]`` (``p`` in
    ``par_ptr[i]:par_ptr[i + 1]``) has ended plus ``par_delay[p, c]`` in group ``c``:
    the latest end over the groups (0 without ops)."""
    n = compute.shape[0]
    groups = par_delay.shape[1]
    free = np.zeros((k, groups))
    end = np.zeros((n, groups))
    latest = 0.0
    for i in range(n):
        g = gpu[i]
        for c in range(groups):
            s = free[g, c]
            for p in range(par_ptr[i], par_ptr[i + 1]):
                ready = end[par_idx[p], c] + par_delay[p, c]
                if ready > s:
                    s = ready
            e = s + compute[i]
            end[i, c] = e
            free[g, c] = e
    for g in range(k):
        for c in range(groups):
            if free[g, c] > latest:
                latest = free[g, c]
    return latest
