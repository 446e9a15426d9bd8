"""The fill-up loop of fabricopt.algorithms.wavelengths in plain Python, on the
package's own schedule (its ``place`` and ``_force``, one lightpath at a time): the
oracle of the compiled :func:`fabricopt.algorithms._fill_kernel.fill_up`."""

import copy
import heapq
from collections import Counter

from fabricopt.algorithms import wavelengths as heuristics


def augment(state, *, evict=False, seen: Counter | None = None) -> None:
    """``_augment`` one lightpath at a time; ``seen`` counts the branches taken:
    ``placed`` (a free wavelength), ``evicted`` (a lightpath after evicting others),
    ``several`` (of those, after evicting two or more), ``stuck`` (the end of the
    loop, with ``evict`` after a search that found none or whose eviction did not free
    a place)."""
    seen = Counter() if seen is None else seen
    size, count = state.pairs.size, state.count
    heap = [(-size[k] / count[k], k) for k in range(len(count))]
    heapq.heapify(heap)
    while heap:
        _, k = heapq.heappop(heap)
        lightpaths = len(state.ids())
        if state.place(k) is not None:
            seen["placed"] += 1
        elif evict and heuristics._force(state, k, size[k] / count[k]):
            seen["evicted"] += 1
            seen["several"] += len(state.ids()) < lightpaths
        else:
            seen["stuck"] += 1
            break
        heapq.heappush(heap, (-size[k] / count[k], k))


def schedule_state(state):
    """Everything a schedule holds, comparable with ==."""
    upto = state._next_id
    nodes = len(state.tx)
    return (upto, state.ids().tolist(), state.pid_pair[:upto].tolist(),
            state.pid_ccw[:upto].tolist(), state.pid_wl[:upto].tolist(),
            state.owner.tolist(), [list(u) for u in state.used], list(state.tx),
            list(state.rx), list(state.count), state.count_array.tolist(),
            [sorted(state.sourced[v]) for v in range(nodes)],
            [sorted(state.sunk[v]) for v in range(nodes)])


def checked(seen: Counter):
    """An ``_augment`` that runs the compiled fill-up and the Python loop on a copy of
    the same schedule, asserts they end alike, and counts the Python loop's branches."""
    compiled = heuristics._augment

    def both(state, *, evict=False):
        python = copy.deepcopy(state)
        augment(python, evict=evict, seen=seen)
        compiled(state, evict=evict)
        assert schedule_state(state) == schedule_state(python)
        seen["runs"] += 1
    return both
