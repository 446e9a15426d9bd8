"""SiP-ML's count relaxation of wavelength scheduling and the infeasibility proofs it
gives (the bound it gives is :func:`fabricopt.bounds.wavelengths.count_bound`).

The relaxation counts lightpaths per pair and fiber under per-segment capacity W and
transceiver limits, forgetting which wavelength each one takes (fabricopt docs,
*Departures*, sipml-2.2).
Every schedule's counts satisfy it, so its optimum bounds the longest transfer time from
below, and an instance it cannot serve has no schedule.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from fabricopt.errors import InfeasibleInstance
from fabricopt.problems._ring import DIRECTIONS, arc, segment_load, segment_name

if TYPE_CHECKING:
    from fabricopt.problems.wavelengths import WavelengthsInstance

__all__ = ["infeasibility", "require_feasible", "shortest_hops", "violation"]


def _directions(instance: WavelengthsInstance):
    """For each demanded pair: may it go cw, may it go ccw (within max_hops)?"""
    _, _, _, cw_hops, ccw_hops = instance.pairs
    return cw_hops <= instance.max_hops, ccw_hops <= instance.max_hops


def _forced_loads(instance: WavelengthsInstance, counts: np.ndarray) -> list[np.ndarray]:
    """Segment loads of the pairs that can use only one fiber, given their counts."""
    src, dst, _, _, _ = instance.pairs
    can_cw, can_ccw = _directions(instance)
    loads = []
    for ccw, only in ((False, can_cw & ~can_ccw), (True, can_ccw & ~can_cw)):
        first, hops = arc(instance.nodes, src[only], dst[only], ccw)
        loads.append(segment_load(instance.nodes, first, hops, counts[only]))
    return loads


def _arc_exits(n: int, src, dst, counts) -> tuple[np.ndarray, np.ndarray]:
    """For every arc of consecutive nodes ``a, a+1, ..., a+L-1`` (``1 <= L < N``): the
    lightpaths leaving it, ``out[a, L-1]``, and its last node."""
    c = np.zeros((n, n))
    np.add.at(c, (src, dst), counts)
    tiled = np.zeros((2 * n + 1, 2 * n + 1))
    tiled[1:, 1:] = np.tile(c, (2, 2)).cumsum(0).cumsum(1)
    rows = np.concatenate(([0.0], np.tile(c.sum(1), 2).cumsum()))
    a = np.arange(n)[:, None]
    b = a + np.arange(1, n)[None, :]
    inside = tiled[b, b] - tiled[a, b] - tiled[b, a] + tiled[a, a]
    return rows[b] - rows[a] - inside, (b - 1) % n


def violation(instance: WavelengthsInstance, counts: np.ndarray, shortest: np.ndarray
               ) -> str | None:
    """The first rule of the count relaxation that ``counts`` per demanded pair breaks.

    The rules, each implied by every schedule: at most W lightpaths per node each way;
    at most W on a segment from the pairs that only its fiber reaches; at most 2W
    leaving any arc of consecutive nodes (one cw and one ccw segment leave it); at most
    2*N*W segment-wavelengths in all, each lightpath taking at least its shortest way.
    The last two matter only when some pair can go both ways. The messages read for
    one lightpath per pair (``counts`` all 1).
    """
    src, dst = instance.pairs[:2]
    n, w = instance.nodes, instance.wavelengths
    for ends, verb in ((src, "sends to"), (dst, "receives from")):
        load = np.bincount(ends, counts, n)
        if load.max(initial=0) > w:
            node = int(np.argmax(load))
            return (f"node {node} {verb} {int(load[node])} nodes but has only {w} "
                    f"transceivers (wavelengths = {w})")
    for direction, load in enumerate(_forced_loads(instance, counts)):
        if load.max(initial=0) > w:
            s = int(np.argmax(load))
            return (f"{segment_name(direction, s, n)} is crossed by {int(load[s])} "
                    f"demanded pairs that can only go {DIRECTIONS[direction]}, more than "
                    f"wavelengths = {w}")
    can_cw, can_ccw = _directions(instance)
    if not (can_cw & can_ccw).any():
        return None  # every arc is forced: the segment loads above imply the rest
    exits, last = _arc_exits(n, src, dst, counts)
    if exits.max(initial=0) > 2 * w:
        a, k = np.unravel_index(int(np.argmax(exits)), exits.shape)
        return (f"nodes {a}..{int(last[a, k])} send to {int(exits[a, k])} nodes beyond them, "
                f"more than the 2 x {w} wavelengths leaving them")
    volume = float(np.asarray(counts, float) @ shortest)
    if volume > 2 * n * w:
        return (f"the demanded pairs need {int(volume)} segment-wavelengths, more than the "
                f"ring's 2 x {n} x {w}")
    return None


def shortest_hops(instance: WavelengthsInstance) -> np.ndarray:
    """Hops of each demanded pair's shortest arc within reach (both ways out of reach: inf)."""
    _, _, _, cw_hops, ccw_hops = instance.pairs
    can_cw, can_ccw = _directions(instance)
    return np.minimum(np.where(can_cw, cw_hops, np.inf), np.where(can_ccw, ccw_hops, np.inf))


def infeasibility(instance: WavelengthsInstance) -> str | None:
    """A short proof that no schedule serves every demanded pair, or None.

    Checks that every demanded pair is within ``max_hops`` in some direction, then that
    one lightpath per demanded pair fits the count relaxation (:func:`fabricopt.bounds.wavelengths.count_bound`):
    at most W peers per node each way, at most W pairs on a segment that only its
    fiber can serve, at most 2W pairs leaving any arc of consecutive nodes, the ring's
    total capacity. None does not prove feasibility: wavelength continuity can still
    make an instance infeasible (the ``milp`` method decides).

    Examples
    --------
    >>> from fabricopt.problems.wavelengths import WavelengthsInstance
    >>> t = [[0.0] * 6 for _ in range(6)]
    >>> t[0][3] = 1e6
    >>> print(infeasibility(WavelengthsInstance(6, 2, 25.0, 2, t)))
    traffic_bytes[0][3] = 1000000.0: node 3 is 3 hops from node 0 clockwise and 3 counter-clockwise, more than max_hops = 2
    """
    src, dst, size, cw_hops, ccw_hops = instance.pairs
    can_cw, can_ccw = _directions(instance)
    far = np.flatnonzero(~can_cw & ~can_ccw)
    if len(far):
        k = int(far[0])
        i, j = int(src[k]), int(dst[k])
        return (f"traffic_bytes[{i}][{j}] = {float(size[k])!r}: node {j} is {int(cw_hops[k])} hops "
                f"from node {i} clockwise and {int(ccw_hops[k])} counter-clockwise, "
                f"more than max_hops = {instance.max_hops}")
    return violation(instance, np.ones(len(src)), shortest_hops(instance))


def require_feasible(instance: WavelengthsInstance) -> None:
    """Raise ``InfeasibleInstance`` with :func:`infeasibility`'s reason, if there is one."""
    reason = infeasibility(instance)
    if reason is not None:
        raise InfeasibleInstance(reason)


