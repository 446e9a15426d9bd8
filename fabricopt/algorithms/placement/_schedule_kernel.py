"""The list schedule of an assignment, compiled: the loop of
:func:`fabricopt.problems.placement.advance` (every op held by its GPU), which also
records the op whose end fixed each start.

Compiled with numba (``cache=True``); with ``NUMBA_DISABLE_JIT=1`` the same code runs
as Python. Tests check it against the pure-Python loops it mirrors.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from fabricopt.problems.placement import PlacementInstance

__all__ = ["parent_arrays", "child_arrays", "list_schedule", "schedule_arrays"]


def parent_arrays(instance: PlacementInstance, carries_bytes: bool = False
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(ptr, parent, delay_s)``: the parents of op ``v`` are
    ``parent[ptr[v]:ptr[v + 1]]``, in the order of ``instance.parents[v]`` (the order
    decides which of two parents ending together is the binding one); with
    ``carries_bytes`` only those whose dep carries bytes."""
    return _grouped(instance, instance.dep_dst, instance.dep_src, carries_bytes)


def child_arrays(instance: PlacementInstance, carries_bytes: bool = False
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`parent_arrays` of the children, in the order of ``instance.children[u]``."""
    return _grouped(instance, instance.dep_src, instance.dep_dst, carries_bytes)


def schedule_arrays(instance: PlacementInstance, placed: dict, parents: tuple | None = None
                    ) -> dict:
    """Key -> ``(start, end)`` arrays (indexed like ``instance.ops``) of the list schedule
    of each ``placed[key] = (gpu, order)``: :func:`list_schedule`, the loop and the
    arithmetic of :func:`~fabricopt.problems.placement.schedule_times` with every op
    held by its GPU (tested equal, bit for bit). ``parents``: the
    :func:`parent_arrays` of ``instance`` if at hand."""
    parents = parent_arrays(instance) if parents is None else parents
    out = {}
    for key, (gpu, order) in placed.items():
        start, end, _ = list_schedule(instance.gpus, np.asarray(order, dtype=np.int64),
                                      np.asarray(gpu, dtype=np.int64), *parents,
                                      instance.compute)
        out[key] = (start, end)
    return out


def _grouped(instance: PlacementInstance, at: np.ndarray, other: np.ndarray,
             carries_bytes: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    delay = instance.delay_s
    if carries_bytes:
        keep = instance._dep_bytes > 0
        at, other, delay = at[keep], other[keep], delay[keep]
    by = np.argsort(at, kind="stable")
    ptr = np.zeros(instance.size + 1, dtype=np.int64)
    np.cumsum(np.bincount(at, minlength=instance.size), out=ptr[1:])
    return (ptr, np.ascontiguousarray(other[by], dtype=np.int64),
            np.ascontiguousarray(delay[by]))


@njit(cache=True)
def list_schedule(k, order, gpu, par_ptr, par_idx, par_delay, compute):
    """Each op of ``order`` in turn as early as its GPU (of ``k``) and its parents (their
    end, plus the transfer from another GPU) allow: ``(start, end, binding)``, where
    ``binding[v]`` is the op whose end fixed ``v``'s start (the GPU's previous op or the
    first parent to arrive last; -1 when ``v`` starts at 0)."""
    n = compute.shape[0]
    start = np.zeros(n)
    end = np.zeros(n)
    binding = np.full(n, -1, dtype=np.int64)
    free = np.zeros(k)
    last = np.full(k, -1, dtype=np.int64)
    for i in range(order.shape[0]):
        v = order[i]
        g = gpu[v]
        t, why = free[g], last[g]
        for e in range(par_ptr[v], par_ptr[v + 1]):
            u = par_idx[e]
            ready = end[u] + par_delay[e] if gpu[u] != g else end[u]
            if ready > t:
                t, why = ready, u
        start[v] = t
        binding[v] = why
        end[v] = t + compute[v]
        free[g] = end[v]
        last[g] = v
    return start, end, binding
