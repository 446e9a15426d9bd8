"""The shortest-path walk of :func:`~fabricopt.algorithms.topology.routing.route_shortest`
compiled: for each demanded pair, the paths
:meth:`~fabricopt.algorithms.topology.routing.ShortestPaths.paths` finds (the reference
tests check it against), with the same draws from the same generator in the same order.

Compiled, :func:`_permute` is numpy's shuffle (its ``random_interval`` draws, the one
numba translates, on the generator's own bit generator), so the draws advance the
caller's generator exactly as ``Generator.permutation`` in the Python walk does; numba's
own ``Generator.permutation`` gives the same draws but takes seconds longer to compile.

The breadth-first search from a source goes only as far as its targets: the walk back
from a target at distance d reads whether a server is at distance ``d - 1`` or less,
and once a server at distance d is labelled every server nearer than d is labelled with
its final distance (servers still unlabelled are -1, which no walk step asks for).

Compiled with numba (``cache=True``) on the first call, not on import, so that a command
that routes nothing does not load it (:func:`fabricopt.bench.warm.warm` loads it before
a benchmark's clock starts); with ``NUMBA_DISABLE_JIT=1`` the same code runs as Python.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.extending import overload
from numba.np.random.random_methods import random_interval

__all__ = ["shortest_paths"]


def _permute(rng, items):
    """``rng.permutation(items)`` (what runs without the compiler)."""
    return rng.permutation(items)


@overload(_permute)
def _permute_compiled(rng, items):
    def impl(rng, items):
        # numpy's _shuffle_raw: from the last position down to the second, swap with a
        # uniform position at or before it
        out = np.empty(items.shape[0], np.int64)
        for i in range(items.shape[0]):
            out[i] = items[i]
        for i in range(out.shape[0] - 1, 0, -1):
            j = np.intp(random_interval(rng.bit_generator, i))
            out[i], out[j] = out[j], out[i]
        return out
    return impl


@njit(cache=True)
def _room(a, need):
    """``a`` (int64), or a copy twice as long (or ``need`` long), holding at least
    ``need``."""
    if need <= a.shape[0]:
        return a
    out = np.empty(max(need, 2 * a.shape[0]), np.int64)
    for i in range(a.shape[0]):  # a loop: slice assignment takes seconds to compile
        out[i] = a[i]
    return out


@njit(cache=True)
def _sort_paths(nodes, start, count, length):
    """Sort the ``count`` paths of ``length`` servers at ``nodes[start:]`` in place,
    ascending as tuples compare (insertion sort: there are few)."""
    for a in range(1, count):
        b = a
        while b > 0:
            x = start + (b - 1) * length
            y = start + b * length
            m = 0
            while m < length and nodes[x + m] == nodes[y + m]:
                m += 1
            if m == length or nodes[x + m] < nodes[y + m]:
                break
            for m in range(length):
                nodes[x + m], nodes[y + m] = nodes[y + m], nodes[x + m]
            b -= 1


@njit(cache=True)
def shortest_paths(indptr, indices, src, dst, k, rng):
    """Up to ``k`` shortest paths for each pair ``src[i] -> dst[i]``, in pair order.

    Parameters
    ----------
    indptr, indices : int64 arrays
        The adjacency in CSR form, each row's neighbours ascending, no repeats.
    src, dst : int64 arrays
        The pairs; consecutive pairs of one source share its search.
    k : int
        Most paths per pair.
    rng : numpy.random.Generator
        Orders the predecessors where several are one hop closer (advanced in place).

    Returns
    -------
    routed : int
        Pairs routed: the index of the first pair whose target is unreachable (the walk
        stops there), or ``len(src)``.
    pair_paths : int64 array, shape (routed + 1,)
        Pair i's paths are ``pair_paths[i]:pair_paths[i + 1]``, in ascending order of
        their node sequences.
    path_nodes : int64 array
        Path j's servers (source first) are ``nodes[path_nodes[j]:path_nodes[j + 1]]``.
    nodes : int64 array
    """
    n = indptr.shape[0] - 1
    pairs = src.shape[0]
    widest = 1
    for v in range(n):
        widest = max(widest, indptr[v + 1] - indptr[v])
    preds = np.empty(widest, np.int64)
    dist = np.empty(n, np.int64)
    for v in range(n):
        dist[v] = -1
    queue = np.empty(n, np.int64)
    labelled, head, source = 0, 0, -1
    pair_paths = np.zeros(pairs + 1, np.int64)
    path_nodes = np.zeros(2 * pairs + 1, np.int64)
    nodes = np.empty(4 * pairs + 2, np.int64)
    stack_v = np.empty(16, np.int64)
    stack_after = np.empty(16, np.int64)
    trail_v = np.empty(16, np.int64)
    trail_after = np.empty(16, np.int64)
    paths, used = 0, 0
    for i in range(pairs):
        s, t = src[i], dst[i]
        if s != source:
            for q in range(labelled):
                dist[queue[q]] = -1
            source = s
            dist[s] = 0
            queue[0] = s
            labelled, head = 1, 0
        while dist[t] < 0 and head < labelled:
            v = queue[head]
            head += 1
            for e in range(indptr[v], indptr[v + 1]):
                u = indices[e]
                if dist[u] < 0:
                    dist[u] = dist[v] + 1
                    queue[labelled] = u
                    labelled += 1
        if dist[t] < 0:
            return i, pair_paths[:i + 1], path_nodes[:paths + 1], nodes[:used]
        # Walk back from t over predecessors (one hop closer to s); every walk reaches
        # s, so the first k walks are k distinct shortest paths. A stack entry is
        # (server, index of its successor's entry in the trail).
        length = dist[t] + 1
        start = used
        found, top, trail = 0, 1, 0
        stack_v[0], stack_after[0] = t, -1
        while top > 0 and found < k:
            top -= 1
            v, after = stack_v[top], stack_after[top]
            if v == s:
                nodes = _room(nodes, used + length)
                path_nodes = _room(path_nodes, paths + 2)
                nodes[used] = v
                used += 1
                while after >= 0:
                    nodes[used] = trail_v[after]
                    used += 1
                    after = trail_after[after]
                paths += 1
                path_nodes[paths] = used
                found += 1
                continue
            trail_v = _room(trail_v, trail + 1)
            trail_after = _room(trail_after, trail + 1)
            trail_v[trail], trail_after[trail] = v, after
            here = trail
            trail += 1
            closer = dist[v] - 1
            count = 0
            for e in range(indptr[v], indptr[v + 1]):
                u = indices[e]
                if dist[u] == closer:
                    preds[count] = u
                    count += 1
            stack_v = _room(stack_v, top + count)
            stack_after = _room(stack_after, top + count)
            if count == 1:  # a permutation of one draws nothing from the generator
                stack_v[top], stack_after[top] = preds[0], here
                top += 1
            elif count > 1:
                order = _permute(rng, preds[:count])
                for j in range(count - 1, -1, -1):
                    stack_v[top], stack_after[top] = order[j], here
                    top += 1
        _sort_paths(nodes, start, found, length)
        pair_paths[i + 1] = paths
    return pairs, pair_paths, path_nodes[:paths + 1], nodes[:used]
