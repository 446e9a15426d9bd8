"""SiP-Ring wavelength scheduling without a MILP: first-fit colouring, a greedy, and
the rounding half of SiP-ML's min-cost-flow scheduler.

A schedule is built on a bitmask per (fiber, segment) of the wavelengths in use, so
"the lowest wavelength free on every segment of an arc" is a handful of integer ORs.
The LP half of ``mcf`` (fractional lightpath counts) is a formulation; the wiring in
:mod:`fabricopt.methods.wavelengths` solves it and hands the counts to
:func:`mcf_schedule`.

References
----------
.. [1] M. Khani et al., "SiP-ML", SIGCOMM 2021, §3.3 and Appendix A.1; the authors'
   ``RingInterconnect::allocate_episode_bw_mcf`` (fabricopt docs, *Departures*, sipml-2.3).
.. [2] A. Tucker, "Coloring a family of circular arcs", SIAM J. Appl. Math. 29(3),
   1975 (circular arcs of load L need at most 2L-1 colours).
"""

from __future__ import annotations

import math
import time
from functools import reduce
from operator import itemgetter, or_
from typing import Mapping

import numpy as np

from fabricopt.algorithms._eviction_kernel import best_eviction
from fabricopt.algorithms._fill_kernel import fill_up
from fabricopt.algorithms._first_fit_kernel import colour_line, hold
from fabricopt.algorithms._repair_kernel import repair
from fabricopt.errors import InvalidArgument
from fabricopt.models.wavelengths import ArcFlows
from fabricopt.problems.wavelengths import (WavelengthsInstance, WavelengthsSolution, arc,
                                            require_feasible)

__all__ = ["first_fit", "greedy", "mcf_schedule"]


def first_fit(nodes: int, first, hops) -> list[int]:
    """Colour arcs of one fiber so that arcs sharing a segment get different colours.

    The ring is cut at the node v that the fewest arcs pass through (use the
    segments on both sides of it); those c arcs get colours 0..c-1, and the other
    arcs — intervals of the line the cut leaves — are coloured first-fit (lowest
    colour free on all their segments) in order of their left end from v.

    Parameters
    ----------
    nodes : int
        N, the number of segments of the fiber.
    first, hops : sequence of int
        Arc k uses segments ``first[k], first[k]+1, ..., first[k]+hops[k]-1`` (mod N),
        as :func:`fabricopt.problems.wavelengths.arc` gives them; ``1 <= hops < N``.

    Returns
    -------
    list of int
        A colour (wavelength) per arc.

    Notes
    -----
    With L the largest segment load, the colours used are exactly L when some node
    has no arc passing through it (a *line* instance, e.g. one segment unused), and at
    most 2L-1 on a ring: some arc starts at some node, so the fewest arcs through a node
    is c <= L-1, and an interval coloured first-fit conflicts with at most L-1 earlier
    intervals (all cover its first segment) and c cut arcs (Tucker, 1975). Runs in O(A·h) for A
    arcs of at most h hops.

    Examples
    --------
    >>> first_fit(6, [0, 1, 2, 4], [2, 2, 2, 2])   # a line (node 0 is not passed through)
    [0, 1, 0, 0]
    >>> first_fit(3, [0, 1, 2], [2, 2, 2])         # pairwise overlapping: 2L-1 = 3 colours
    [1, 2, 0]
    """
    return _colour_arcs(nodes, first, hops)[0]


def _colour_arcs(nodes: int, first, hops, *,
                 compiled: bool = True) -> tuple[list[int], list[int]]:
    """:func:`first_fit`'s colours and the bitmask of colours in use per segment;
    ``compiled=False`` runs the Python loop (the reference of the compiled one)."""
    n = nodes
    if not len(first):
        return [], [0] * n
    v, start, ends, order = _cut(n, first, hops)
    if compiled:
        colours, used = _compiled_line(n, start, ends, order)
        return colours.tolist(), _bitmasks(np.roll(used, v, axis=0))
    colours, used = _python_line(n, start.tolist(), ends.tolist(), order.tolist())
    return colours, used[n - v:] + used[:n - v]


def _colour_fiber(nodes: int, first, hops, w: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_colour_arcs` (compiled) for one fiber of a schedule: the colours as an
    array, and per segment the ``(w + 63) // 64`` uint64 words of the colours below
    ``w`` in use (as :meth:`_Schedule.used_words` holds them)."""
    n, size = nodes, (w + 63) // 64
    words = np.zeros((n, size), np.uint64)
    if not len(first):
        return np.zeros(0, np.int64), words
    v, start, ends, order = _cut(n, first, hops)
    colours, used = _compiled_line(n, start, ends, order)
    common = min(size, used.shape[1])
    # The bits of colours 0 .. w-1 in each word.
    below = np.clip(w - 64 * np.arange(common), 0, 64)
    keep = np.array([(1 << int(b)) - 1 for b in below], np.uint64)
    words[:, :common] = used[:, :common] & keep
    return colours, np.roll(words, v, axis=0)


def _cut(n: int, first, hops) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """Where :func:`first_fit` cuts the ring (node v), each arc's ends on the line it
    leaves (``start``, ``ends``: positions from v, past n for arcs through v), and the
    order it colours them in."""
    first = np.asarray(first, np.int64) % n
    hops = np.asarray(hops, np.int64)
    # Arcs passing through node v use segments v-1 and v: interior nodes first+1 .. first+hops-1.
    through = _arcs_per_segment(n, (first + 1) % n, hops - 1)
    v = int(np.argmin(through))
    start = (first - v) % n                      # left end on the line cut at v
    crosses = start + hops > n
    # Crossing arcs first, then by left end, longer first, then by index (stable sort).
    order = np.argsort((np.where(crosses, 0, n) + start) * n + (n - hops), kind="stable")
    return v, start, start + hops, order


def _arcs_per_segment(n: int, first: np.ndarray, hops: np.ndarray) -> np.ndarray:
    """:func:`~fabricopt.problems.wavelengths.segment_load` of unit weights, counted
    in integers (``first + hops < 2n``)."""
    ends = np.bincount(first, minlength=2 * n + 1) - np.bincount(first + hops,
                                                                  minlength=2 * n + 1)
    load = np.cumsum(ends)[:2 * n]
    return load[:n] + load[n:]


def _bitmasks(words: np.ndarray) -> list[int]:
    """Per row of uint64 ``words`` (word j holds bits 64j .. 64j+63), one Python int."""
    if words.shape[1] == 1:
        return words[:, 0].tolist()
    raw = np.ascontiguousarray(words, dtype="<u8").tobytes()
    step = 8 * words.shape[1]
    return [int.from_bytes(raw[at:at + step], "little") for at in range(0, len(raw), step)]


def _python_line(n: int, start: list, ends: list, order: list) -> tuple[list, list]:
    """First-fit on the line cut open: arc k covers positions start[k] .. ends[k]-1,
    wrapping past n (only arcs through the cut do). Returns colours and, per position,
    the bitmask of colours in use."""
    used = [0] * n
    colours = [0] * len(start)
    for k in order:
        a, b = start[k], ends[k]
        if b <= n:
            mask = reduce(or_, used[a:b], 0)
        else:
            mask = reduce(or_, used[a:], reduce(or_, used[:b - n], 0))
        colour = (~mask & (mask + 1)).bit_length() - 1   # lowest zero bit
        bit = 1 << colour
        if b <= n:
            used[a:b] = [u | bit for u in used[a:b]]
        else:
            used[a:] = [u | bit for u in used[a:]]
            used[:b - n] = [u | bit for u in used[:b - n]]
        colours[k] = colour
    return colours, used


def _compiled_line(n: int, start, ends, order) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_python_line` by the compiled kernel: colours, and per position the uint64
    words of the bitmask. First-fit uses at most 2L-1 colours (:func:`first_fit`,
    Notes), L the most arcs on one position, which sizes the bitmask."""
    load = _arcs_per_segment(n, start, ends - start)
    words = (2 * int(load.max())) // 64 + 1
    return colour_line(n, start, ends, order, words)


def _circular(first: int, hops: int, n: int) -> tuple:
    """The segments ``first, first+1, ..., first+hops-1`` (mod n)."""
    if first + hops <= n:
        return tuple(range(first, first + hops))
    return tuple(range(first, n)) + tuple(range(first + hops - n))


class _Pairs:
    """The demanded pairs with their sizes and the arcs within reach, shorter first."""

    def __init__(self, instance: WavelengthsInstance):
        src, dst, size, cw_hops, ccw_hops = instance.pairs
        n, reach = instance.nodes, instance.max_hops
        self.src, self.dst, self.size = src.tolist(), dst.tolist(), size.tolist()
        #: [pair] -> [(ccw, segments)], shorter first, cw on ties (segments: arc(), unrolled)
        self.options = _PerPair(len(self.src), self._options)
        #: [pair][ccw] -> segments (None out of reach)
        self.segs = _PerPair(len(self.src), self._segs)
        self._n, self._reach = n, reach
        self._cw_hops, self._ccw_hops = cw_hops.tolist(), ccw_hops.tolist()
        # The same as arrays, for the compiled eviction search.
        self.src_array = np.asarray(src, np.int64)
        self.dst_array = np.asarray(dst, np.int64)
        self.size_array = np.asarray(size, np.float64)
        # Row-major pairs: ``src * n + dst`` ascending, to find a pair by its ends.
        self.code = self.src_array * n + self.dst_array
        # The arcs as arrays, for the compiled fill-up: per pair and fiber (cw, ccw) the
        # first segment and the length, 0 out of reach; ccw is tried first when shorter.
        self.arc_first = np.stack([src, (dst + 1) % n], axis=1).astype(np.int64)
        self.arc_hops = np.stack([np.where(cw_hops <= reach, cw_hops, 0),
                                  np.where(ccw_hops <= reach, ccw_hops, 0)],
                                 axis=1).astype(np.int64)
        self.ccw_first = np.asarray(ccw_hops < cw_hops, bool)

    def __len__(self) -> int:
        return len(self.src)

    def _segs(self, k: int) -> tuple:
        n, reach = self._n, self._reach
        cw, ccw = self._cw_hops[k], self._ccw_hops[k]
        return (_circular(self.src[k], cw, n) if cw <= reach else None,
                _circular((self.dst[k] + 1) % n, ccw, n) if ccw <= reach else None)

    def _options(self, k: int) -> list:
        cw, ccw = self.segs[k]
        ordered = ((True, ccw), (False, cw)) if self._ccw_hops[k] < self._cw_hops[k] \
            else ((False, cw), (True, ccw))
        return [(d, segs) for d, segs in ordered if segs is not None]

    def find(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """The pair of each (``src``, ``dst``) of integer arrays, -1 where none is."""
        n = self._n
        code = src * n + dst
        at = np.searchsorted(self.code, code)
        found = (src >= 0) & (src < n) & (dst >= 0) & (dst < n) & (at < len(self.code))
        found[found] = self.code[at[found]] == code[found]
        return np.where(found, at, -1)


class _PerPair:
    """A value per pair, made by ``make(k)`` when first asked for: a rounding looks up
    the segments of the few pairs it repairs or evicts for, not of all of them."""

    def __init__(self, size: int, make):
        self._size, self._make, self._made = size, make, {}

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, k):
        made = self._made.get(k)
        if made is None:
            if not 0 <= k < self._size:
                raise IndexError(k)
            made = self._made[k] = self._make(int(k))
        return made


class _Schedule:
    """Lightpaths placed so far, with a bitmask of busy wavelengths per (fiber, segment)
    and the id of the lightpath holding each (fiber, segment, wavelength)."""

    def __init__(self, instance: WavelengthsInstance, pairs: _Pairs):
        n, w = instance.nodes, instance.wavelengths
        self.w = w
        self.full = (1 << w) - 1
        self._used = ([0] * n, [0] * n)
        self._words = None   # the same as uint64 words, when those were changed last
        self.tx = [0] * n
        self.rx = [0] * n
        self.pairs = pairs
        self.count = [0] * len(pairs)
        self.count_array = np.zeros(len(pairs), np.int64)   # ``count``, for compiled code
        #: [ccw, segment, wavelength] -> id of the lightpath using it, -1 where free.
        self.owner = np.full((2, n, w), -1, np.int64)
        # Per lightpath id (ids are never reused; grown as they are handed out): its
        # pair, fiber and wavelength, and whether it is still in place.
        self.pid_pair = np.zeros(max(16, len(pairs)), np.int64)
        self.pid_ccw = np.zeros(len(self.pid_pair), bool)
        self.pid_wl = np.zeros(len(self.pid_pair), np.int64)
        self.alive = np.zeros(len(self.pid_pair), bool)
        #: Per node, the ids of the lightpaths it sources (sinks), for the eviction step.
        self.sourced = _ByNode(self, pairs.src_array)
        self.sunk = _ByNode(self, pairs.dst_array)
        self._next_id = 0

    @property
    def used(self) -> tuple[list[int], list[int]]:
        """Per fiber (cw, ccw) and segment, the bitmask of the busy wavelengths: Python
        ints, which the one-lightpath steps change in place."""
        if self._words is not None:
            self._used = tuple(_bitmasks(words) for words in self._words)
            self._words = None
        return self._used

    def used_words(self) -> np.ndarray:
        """:attr:`used` as (fiber, segment, word) uint64 words, ``(w + 63) // 64`` per
        segment, for compiled steps to change in place: :attr:`used` is read from them
        when next asked for."""
        if self._words is None:
            words = (self.w + 63) // 64
            self._words = np.stack([_words(self._used[ccw], words) for ccw in (0, 1)])
        return self._words

    def hold_words(self, words: np.ndarray) -> None:
        """Make ``words`` (as :meth:`used_words` gives them) the busy wavelengths."""
        self._words = words

    def ids(self) -> np.ndarray:
        """The ids of the lightpaths in place, ascending."""
        return np.flatnonzero(self.alive[:self._next_id])

    def path(self, pid: int) -> tuple[int, bool, tuple, int]:
        """Lightpath ``pid`` as (pair, ccw, segments, wavelength)."""
        k, ccw = int(self.pid_pair[pid]), bool(self.pid_ccw[pid])
        return k, ccw, self.pairs.segs[k][ccw], int(self.pid_wl[pid])

    @property
    def paths(self) -> dict[int, tuple[int, bool, tuple, int]]:
        """Every lightpath in place, id -> :meth:`path` (built on each call)."""
        return {pid: self.path(pid) for pid in self.ids().tolist()}

    def _reserve(self, ids: int) -> None:
        """Room in the per-id arrays for ``ids`` more lightpath ids."""
        need = self._next_id + ids
        if need > len(self.pid_pair):
            size = max(need, 2 * len(self.pid_pair))
            for name in ("pid_pair", "pid_ccw", "pid_wl", "alive"):
                old = getattr(self, name)
                grown = np.zeros(size, old.dtype)
                grown[:self._next_id] = old[:self._next_id]
                setattr(self, name, grown)

    def free(self, ccw: bool, segs) -> int:
        used = self.used[ccw]
        mask = 0
        for s in segs:
            mask |= used[s]
        return ~mask & self.full

    def add(self, k: int, ccw: bool, segs, wl: int) -> int:
        bit = 1 << wl
        used = self.used[ccw]
        for s in segs:
            used[s] |= bit
        return self.record(k, ccw, segs, wl)

    def record(self, k: int, ccw: bool, segs, wl: int) -> int:
        """Count a lightpath whose wavelength the caller has marked busy on ``used``."""
        self.tx[self.pairs.src[k]] += 1
        self.rx[self.pairs.dst[k]] += 1
        self.count[k] += 1
        self.count_array[k] += 1
        pid = self._next_id
        self._reserve(1)
        self.pid_pair[pid], self.pid_ccw[pid], self.pid_wl[pid] = k, ccw, wl
        self.alive[pid] = True
        self._own(ccw, segs, wl, pid)
        self.sourced.add(self.pairs.src[k], pid)
        self.sunk.add(self.pairs.dst[k], pid)
        self._next_id += 1
        return pid

    def record_all(self, ks, ccw, first, hops, wls) -> None:
        """:meth:`record` of every lightpath i of pair ``ks[i]`` on fiber ``ccw[i]``, its
        arc from segment ``first[i]``, ``hops[i]`` long, on wavelength ``wls[i]``, in
        order, at once (arrays)."""
        start = self._next_id
        m = len(ks)
        self._reserve(m)
        ids = np.arange(start, start + m, dtype=np.int64)
        held = slice(start, start + m)
        self.pid_pair[held], self.pid_ccw[held], self.pid_wl[held] = ks, ccw, wls
        self.alive[held] = True
        for fiber in (0, 1):
            mine = ccw == fiber
            hold(self.owner[fiber], first[mine], hops[mine], wls[mine], ids[mine])
        self._next_id += m
        self.sourced.forget()
        self.sunk.forget()
        for total, ends in ((self.tx, self.pairs.src_array), (self.rx, self.pairs.dst_array)):
            add = np.bincount(ends[ks], minlength=len(total))
            total[:] = (np.asarray(total, np.int64) + add).tolist()
        self.count_array += np.bincount(ks, minlength=len(self.count))
        self.count[:] = self.count_array.tolist()

    def _own(self, ccw: bool, segs: tuple, wl: int, pid: int) -> None:
        """Mark ``segs`` (a circular range, :func:`_circular`) of fiber ``ccw`` on
        wavelength ``wl`` as held by ``pid`` (-1: free), by slices rather than a list."""
        first, end = segs[0], segs[0] + len(segs)
        column = self.owner[int(ccw), :, wl]
        if end <= len(column):
            column[first:end] = pid
        else:
            column[first:] = pid
            column[:end - len(column)] = pid

    def remove(self, pid: int) -> None:
        k, ccw, segs, wl = self.path(pid)
        self.alive[pid] = False
        keep = ~(1 << wl)
        used = self.used[ccw]
        for s in segs:
            used[s] &= keep
        self._own(ccw, segs, wl, -1)
        self.sourced.discard(self.pairs.src[k], pid)
        self.sunk.discard(self.pairs.dst[k], pid)
        self.tx[self.pairs.src[k]] -= 1
        self.rx[self.pairs.dst[k]] -= 1
        self.count[k] -= 1
        self.count_array[k] -= 1

    def place(self, k: int) -> int | None:
        """One more lightpath for pair k on the lowest free wavelength: on the shorter
        fiber if it has one, of two equally long ones the one with more free. Returns
        its id, or None when no arc of k has a free wavelength or an end no transceiver."""
        if self.tx[self.pairs.src[k]] >= self.w or self.rx[self.pairs.dst[k]] >= self.w:
            return None
        best = None
        for ccw, segs in self.pairs.options[k]:
            free = self.free(ccw, segs)
            if free and (best is None or (len(segs) == len(best[1])
                                          and free.bit_count() > best[2].bit_count())):
                best = (ccw, segs, free)
        if best is None:
            return None
        ccw, segs, free = best
        return self.add(k, ccw, segs, (free & -free).bit_length() - 1)

    def solution(self) -> WavelengthsSolution:
        """The lightpaths, sorted by (src, dst, fiber cw first, wavelength)."""
        ids = self.ids()
        pair, ccw, wl = self.pid_pair[ids], self.pid_ccw[ids], self.pid_wl[ids]
        src, dst = self.pairs.src_array[pair], self.pairs.dst_array[pair]
        order = np.lexsort((wl, ccw, dst, src))
        return WavelengthsSolution.from_arrays(src[order], dst[order], ccw[order], wl[order])


class _ByNode:
    """Per node, the ids of the lightpaths of a schedule whose pair ends there (source
    or destination, as ``ends`` gives each pair's): a node's set is made when first
    asked for and kept up to date from then on; only the few nodes whose transceivers
    run out in the eviction step are ever asked for."""

    def __init__(self, state: _Schedule, ends: np.ndarray):
        self.state, self.ends = state, ends
        self.held: dict[int, set] = {}

    def __getitem__(self, node: int) -> set:
        held = self.held.get(node)
        if held is None:
            ids = self.state.ids()
            held = self.held[node] = set(ids[self.ends[self.state.pid_pair[ids]] == node]
                                         .tolist())
        return held

    def add(self, node: int, pid: int) -> None:
        if node in self.held:
            self.held[node].add(pid)

    def discard(self, node: int, pid: int) -> None:
        if node in self.held:
            self.held[node].discard(pid)

    def forget(self) -> None:
        """Drop every set (after lightpaths were recorded in bulk)."""
        self.held = {}


def _augment(state: _Schedule, *, evict: bool = False) -> None:
    """Give one more lightpath to the slowest pair until the slowest pair cannot get one.

    Without eviction, resources only shrink, so once the slowest pair is stuck the
    objective is final. With ``evict``, a stuck slowest pair may take a wavelength from
    lightpaths of pairs that stay strictly faster than it is now (:func:`_force`); each
    such move leaves one pair fewer at the current maximum, so the loop ends. Runs as the
    compiled :func:`~fabricopt.algorithms._fill_kernel.fill_up` on the schedule's arrays.
    """
    pairs = state.pairs
    used = state.used_words()
    tx, rx = np.array(state.tx, np.int64), np.array(state.rx, np.int64)
    # A heap of (-T/n, pair), least first: the slowest pair, ties to the lower pair.
    heap_key = -pairs.size_array / state.count_array
    heap_pair = np.arange(len(pairs), dtype=np.int64)
    done = False
    while not done:                   # the kernel stops when the id arrays are full
        state._reserve(1)
        done, state._next_id = fill_up(
            used, state.owner, tx, rx, state.count_array, state.pid_pair, state.pid_ccw,
            state.pid_wl, state.alive, state._next_id, pairs.arc_first, pairs.arc_hops,
            pairs.ccw_first, pairs.src_array, pairs.dst_array, pairs.size_array, heap_key,
            heap_pair, state.w, evict)
    state.tx[:], state.rx[:] = tx.tolist(), rx.tolist()
    state.count[:] = state.count_array.tolist()
    state.sourced.forget()
    state.sunk.forget()


def _words(masks: list[int], words: int) -> np.ndarray:
    """:func:`_bitmasks` inverted: per Python int of ``masks``, ``words`` uint64 words."""
    if words == 1:
        return np.array(masks, np.uint64).reshape(len(masks), 1)
    raw = b"".join(mask.to_bytes(8 * words, "little") for mask in masks)
    return np.frombuffer(raw, "<u8").reshape(len(masks), words).astype(np.uint64)


def _relocate(state: _Schedule, k: int) -> bool:
    """One more lightpath for pair k on a wavelength whose users can all move elsewhere.

    For each arc of k and wavelength, the lightpaths in the way are lifted, k takes
    the wavelength, and each lifted one is placed again (any fiber, lowest free
    wavelength); if one cannot be, everything is put back as it was.
    """
    pairs = state.pairs
    if state.tx[pairs.src[k]] >= state.w or state.rx[pairs.dst[k]] >= state.w:
        return False
    for ccw, segs in pairs.options[k]:
        for wl in range(state.w):
            blockers = sorted(set(state.owner[int(ccw), list(segs), wl].tolist()) - {-1})
            lifted = [state.path(pid) for pid in blockers]
            if any(p == k for p, *_ in lifted):
                continue
            for pid in blockers:
                state.remove(pid)
            mine = state.add(k, ccw, segs, wl)
            placed = []
            for p, *_ in lifted:
                pid = state.place(p)
                if pid is None:
                    break
                placed.append(pid)
            else:
                return True
            for pid in placed + [mine]:
                state.remove(pid)
            for path in lifted:
                state.add(*path)
    return False


# Random orders tried, after the two fixed ones, before giving up on serving every pair.
_COVER_RESTARTS = 30


def _cover(instance: WavelengthsInstance, pairs: _Pairs, seed: int) -> _Schedule | None:
    """A schedule that gives every demanded pair one lightpath, or None.

    Pairs are placed one by one (lowest free wavelength, shorter fiber first, moving
    lightpaths out of the way where that helps, :func:`_relocate`) in the greedy's own
    order, largest transfer first; if that strands a pair, the most constrained first
    (fewest directions, then longest arcs); then in seeded random orders. Serving
    every pair is itself a ring colouring problem, NP-hard in general, hence restarts.
    """
    m = len(pairs)
    rng = np.random.default_rng(seed)
    orders = [sorted(range(m), key=lambda k: (-pairs.size[k], k)),
              sorted(range(m), key=lambda k: (len(pairs.options[k]),
                                               -min(len(s) for _, s in pairs.options[k]), k))]
    for attempt in range(len(orders) + _COVER_RESTARTS):
        order = orders[attempt] if attempt < len(orders) else rng.permutation(m).tolist()
        state = _Schedule(instance, pairs)
        if all(state.place(k) is not None or _relocate(state, k) for k in order):
            return state
    return None


def greedy(instance: WavelengthsInstance, *, seed: int = 0) -> WavelengthsSolution | None:
    """The greedy baseline: repeatedly give the slowest pair one more lightpath.

    Every demanded pair first gets one lightpath, largest transfer first (ours, so
    that tight instances are still served: lightpaths in the way are moved to other
    wavelengths where they can be, and other orders are tried, see :func:`_cover`);
    then the pair with the largest current transfer time ``T_ij / n_ij`` gets
    another, on its shorter fiber if a wavelength is free along the whole arc there
    (of two equally long ones, the one with more free), else on the other, always on
    the lowest free wavelength and only while both ends have a free transceiver. It
    stops when the slowest pair cannot get one more: the objective is then final.

    Parameters
    ----------
    instance : WavelengthsInstance
    seed : int
        Seed of the random orders tried when the fixed ones cannot serve every pair.

    Returns
    -------
    WavelengthsSolution or None
        None when no order tried serves every demanded pair (the instance may still
        be feasible: the ``milp`` method decides).

    Raises
    ------
    InfeasibleInstance
        When :func:`~fabricopt.problems.wavelengths.require_feasible` finds a proof.

    References
    ----------
    SiP-ML (SIGCOMM 2021) §3.3 states the objective; this baseline is ours.

    Examples
    --------
    >>> from fabricopt.problems.wavelengths import generate, check
    >>> inst = generate(seed=2, nodes=8, wavelengths=4, max_hops=2)
    >>> check(inst, greedy(inst)).feasible
    True
    """
    require_feasible(instance)
    state = _cover(instance, _Pairs(instance), seed)
    if state is None:
        return None
    _augment(state)
    return state.solution()


def _round(flows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Randomized rounding: up with probability equal to the fractional part."""
    base = np.floor(flows + 1e-9)
    frac = np.clip(flows - base, 0.0, 1.0)
    return (base + (rng.random(len(flows)) < frac)).astype(np.int64)


class _Arcs:
    """The arcs the rounding sizes: one per (pair, fiber) the flows name, in the flows'
    sorted order (the order every tie of the rounding steps falls back on), with what
    the repair looks up round after round, as arrays: ``pair_array``, ``ccw``,
    ``first``, ``hops`` and ``values`` per arc."""

    def __init__(self, instance: WavelengthsInstance, pairs: _Pairs, flows: Mapping):
        n = instance.nodes
        pair, ccw, values = _sorted_flows(flows, pairs)
        keep = np.flatnonzero(pair >= 0)
        keep = keep[pairs.arc_hops[pair[keep], ccw[keep].astype(np.int64)] > 0]  # in reach
        self.pair_array, self.ccw = pair[keep], ccw[keep]
        fiber = self.ccw.astype(np.int64)
        self.first = pairs.arc_first[self.pair_array, fiber]
        self.hops = pairs.arc_hops[self.pair_array, fiber]
        self.values = np.where(0.0 > values[keep], 0.0, values[keep])  # max(value, 0.0)
        m = len(keep)
        # Per pair, its arc of the largest flow (ties: the first), -1 without arcs.
        order = np.lexsort((np.arange(m), -self.values, self.pair_array))
        head = order[np.r_[True, self.pair_array[order][1:] != self.pair_array[order][:-1]]] \
            if m else order
        self.best_arc = np.full(len(pairs), -1, np.int64)
        self.best_arc[self.pair_array[head]] = head
        # The arcs crossing each (fiber, segment), ascending: a CSR over d * n + s.
        arc = np.repeat(np.arange(m, dtype=np.int64), self.hops)
        offset = np.arange(len(arc)) - np.repeat(np.cumsum(self.hops) - self.hops, self.hops)
        key = fiber[arc] * n + (self.first[arc] + offset) % n
        by_key = np.argsort(key, kind="stable")
        self.seg_members = arc[by_key]
        self.seg_start = np.searchsorted(key[by_key], np.arange(2 * n + 1))
        # Per end (source, destination): the nodes in order of their first arc, and the
        # arcs of each node, ascending.
        self.end_visit = np.full((2, n), -1, np.int64)
        self.end_start = np.zeros((2, n + 1), np.int64)
        self.end_members = np.zeros((2, m), np.int64)
        for e, ends in enumerate((pairs.src_array, pairs.dst_array)):
            end = ends[self.pair_array]
            nodes, first_arc = np.unique(end, return_index=True)
            self.end_visit[e, :len(nodes)] = nodes[np.argsort(first_arc)]
            by_node = np.argsort(end, kind="stable")
            self.end_members[e] = by_node
            self.end_start[e] = np.searchsorted(end[by_node], np.arange(n + 1))

    def __len__(self) -> int:
        return len(self.pair_array)


def _sorted_flows(flows: Mapping, pairs: _Pairs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per key ``(i, j, direction)`` of ``flows``, in sorted key order: the pair (i, j)
    (-1 where it is not demanded), whether direction is ``"ccw"``, and ``float(value)``."""
    m = len(flows)
    if not m:
        return np.zeros(0, np.int64), np.zeros(0, bool), np.zeros(0)
    if isinstance(flows, ArcFlows):   # a count model's: its arrays, keys (i, j, "ccw" < "cw")
        order = np.lexsort((~flows.ccw, flows.dst, flows.src))
        pair = pairs.find(flows.src.astype(np.int64), flows.dst.astype(np.int64))
        return pair[order], flows.ccw[order], flows.values[order]
    keys = list(flows)
    values = np.fromiter(flows.values(), np.float64, m)
    if any(length != 3 for length in set(map(len, keys))):
        bad = next(key for key in keys if len(key) != 3)
        raise InvalidArgument(f"flows key {bad!r}: must be (src, dst, direction)")
    src, dst, direction = (list(map(itemgetter(at), keys)) for at in range(3))
    ccw = np.array([d == "ccw" for d in direction], bool)
    i, j = np.array(src), np.array(dst)
    if i.dtype.kind in "iub" and j.dtype.kind in "iub" \
            and all(type(d) is str for d in direction):
        # Code-point order of str, as Python sorts them.
        rank = np.unique(np.array(direction), return_inverse=True)[1]
        order = np.lexsort((rank, j, i))
        pair = pairs.find(i.astype(np.int64), j.astype(np.int64))
    else:   # keys numpy cannot hold as integers: Python's order and lookup
        order = np.array(sorted(range(m), key=keys.__getitem__), np.int64)
        index = {end: k for k, end in enumerate(zip(pairs.src, pairs.dst))}
        pair = np.array([index.get((a, b), -1) for a, b in zip(src, dst)], np.int64)
    return pair[order], ccw[order], values[order]


def _repair(instance, pairs: _Pairs, arcs: _Arcs, alloc) -> None:
    """Remove lightpaths until no segment carries more than W and no node uses more than W
    transceivers; each removal hits the pair that stays fastest (SiP-ML's repair step).

    Segments are visited fiber by fiber in order, then sources, then destinations (in
    order of their first arc); each removal takes, among the arcs with a lightpath
    there, the one of a pair with a spare, then of the least ``T / (n - 1)``, then the
    first. Runs as the compiled :func:`~fabricopt.algorithms._repair_kernel.repair`."""
    repair(alloc, arcs.pair_array, arcs.first, arcs.hops, pairs.size_array, len(pairs),
           instance.nodes, instance.wavelengths, arcs.seg_start, arcs.seg_members,
           arcs.end_visit, arcs.end_start, arcs.end_members)


def _force(state: _Schedule, k: int, limit: float = float("inf")) -> bool:
    """One more lightpath for pair k, evicting lightpaths of other pairs if need be.

    Every pair that loses lightpaths must keep at least one and end strictly faster
    than ``limit`` (per-lightpath bytes ``T/n``). Among all (direction, wavelength)
    choices, take the one whose evictions leave the affected pairs fastest (ties: the
    earlier arc of k, then the lower wavelength): :func:`_eviction_compiled`, whose
    reference is :func:`_eviction_python`.
    """
    if state.place(k) is not None:
        return True
    victims = _eviction_compiled(state, k, limit)
    if victims is None:
        return False
    for v in victims:
        state.remove(v)
    return state.place(k) is not None


def _others(state: _Schedule, k: int) -> list:
    """Per end of pair k (source, then destination): that end's node, its transceivers
    in use, and the ids of the lightpaths of other pairs it sources (sinks)."""
    pairs = state.pairs
    pair_of = state.pid_pair
    return [(end, end[k], load, [pid for pid in at[end[k]] if pair_of[pid] != k])
            for end, load, at in ((pairs.src, state.tx, state.sourced),
                                  (pairs.dst, state.rx, state.sunk))]


def _eviction_python(state: _Schedule, k: int, limit: float):
    """The lightpaths :func:`_force` evicts for pair k, or None when no choice qualifies."""
    pairs, count, size = state.pairs, state.count, state.pairs.size
    pair_of = state.pid_pair.tolist()
    best = None
    ends = _others(state, k)   # the sets do not change while the choices are weighed
    for ccw, segs in pairs.options[k]:
        column = state.owner[int(ccw), list(segs)]
        for wl in range(state.w):
            victims = set(column[:, wl].tolist())
            victims.discard(-1)
            for end, node, load, others in ends:
                if load[node] - sum(end[pair_of[v]] == node for v in victims) >= state.w:
                    extra = [pid for pid in others if pid not in victims]
                    if extra:
                        victims.add(_least_harm(state, victims, extra))
            lost: dict[int, int] = {}
            for v in victims:
                lost[pair_of[v]] = lost.get(pair_of[v], 0) + 1
            if k in lost or any(count[p] - m < 1 for p, m in lost.items()):
                continue
            harm = max((size[p] / (count[p] - m) for p, m in lost.items()), default=0.0)
            if harm < limit and (best is None or harm < best[0]):
                best = (harm, victims)
    return None if best is None else best[1]


def _eviction_compiled(state: _Schedule, k: int, limit: float):
    """:func:`_eviction_python` by the compiled kernel, arc by arc of k."""
    pairs, w = state.pairs, state.w
    src, dst = pairs.src[k], pairs.dst[k]
    src_load, dst_load = state.tx[src], state.rx[dst]
    # The lightpaths at an end are weighed only when all its transceivers are busy.
    src_others = dst_others = _NO_IDS
    if src_load >= w or dst_load >= w:
        (_, _, _, at_src), (_, _, _, at_dst) = _others(state, k)
        src_others = np.array(at_src if src_load >= w else (), np.int64)
        dst_others = np.array(at_dst if dst_load >= w else (), np.int64)
    count = state.count_array
    best = None
    for ccw, segs in pairs.options[k]:
        wl, harm, victims = best_eviction(
            state.owner[int(ccw)], np.asarray(segs, np.int64), state.pid_pair, pairs.src_array, pairs.dst_array,
            count, pairs.size_array, k, src_load, dst_load, src_others, dst_others, w,
            float(limit))
        if wl >= 0 and (best is None or harm < best[0]):
            best = (harm, victims.tolist())
    return None if best is None else best[1]


_NO_IDS = np.zeros(0, np.int64)


def _least_harm(state: _Schedule, victims, candidates) -> int:
    """The candidate lightpath whose eviction (with ``victims``') leaves its pair
    fastest; ties to the lowest id. Every lightpath of a pair harms it alike, so
    only each pair's lowest id is weighed."""
    pair_of = state.pid_pair
    lost: dict[int, int] = {}
    for v in victims:
        lost[int(pair_of[v])] = lost.get(int(pair_of[v]), 0) + 1
    lowest: dict[int, int] = {}
    for pid in candidates:
        p = int(pair_of[pid])
        if pid < lowest.get(p, pid + 1):
            lowest[p] = pid

    def harm(pid):
        p = int(pair_of[pid])
        left = state.count[p] - lost.get(p, 0) - 1
        return (left < 1, state.pairs.size[p] / left if left >= 1 else 0.0, pid)
    return min(lowest.values(), key=harm)


def mcf_schedule(instance: WavelengthsInstance, flows: Mapping[tuple, float], *,
                 seed: int = 0, fill: bool = True, rounds: int = 8,
                 deadline: float | None = None) -> WavelengthsSolution | None:
    """The rounding half of SiP-ML's fast scheduler: fractional counts to a schedule.

    Steps: randomized rounding of each pair's fractional lightpaths per fiber (up with
    probability equal to the fraction; a pair left with none gets one on its
    larger-flow fiber); repair — while a segment carries more than W lightpaths or a
    node uses more than W transceivers, remove one from the pair that stays fastest;
    first-fit wavelength assignment with continuity per fiber (:func:`first_fit`) —
    lightpaths coloured beyond W are dropped; pairs left unserved are served by
    evicting spare lightpaths of other pairs; finally (ours, ``fill``) leftover
    wavelengths go to the slowest pair as in :func:`greedy`, and when the slowest pair
    is stuck it may take a wavelength from pairs that stay faster than it. The rounding
    is drawn ``rounds`` times and the schedule with the shortest longest transfer
    (:func:`~fabricopt.problems.wavelengths.evaluate`) is kept, the usual way to make
    randomized rounding reliable; a rounding drawn twice is scheduled once.

    Parameters
    ----------
    instance : WavelengthsInstance
    flows : mapping
        ``{(src, dst, "cw" | "ccw"): lightpaths}``, fractional, e.g. the LP of
        :func:`fabricopt.models.wavelengths.build_count` with ``integer=False``.
        Arcs beyond ``max_hops`` or of pairs without traffic are ignored.
    seed : int
        Seed of the randomized rounding: same seed, same schedule.
    fill : bool
        Run the fill-up step; False stops after SiP-ML's own steps.
    rounds : int
        Independent roundings tried (>= 1); each costs a few milliseconds per hundred
        pairs, next to the LP's tenths of a second.
    deadline : float, optional
        A ``time.perf_counter()`` value: no rounding starts after it, once one has
        given a schedule (so ``rounds`` cannot outlast a time limit).

    Returns
    -------
    WavelengthsSolution or None
        None when some demanded pair could not be served.

    Raises
    ------
    InfeasibleInstance
        When :func:`~fabricopt.problems.wavelengths.require_feasible` finds a proof.

    Notes
    -----
    [R]'s version writes its rounded allocation nowhere and offsets ccw segments by
    ``n - offset`` instead of ``n + offset`` (*Departures*, sipml-2.3); here arcs come from
    :func:`~fabricopt.problems.wavelengths.arc`, the same map the checker uses.

    Examples
    --------
    >>> from fabricopt.problems.wavelengths import WavelengthsInstance, evaluate
    >>> inst = WavelengthsInstance(4, 2, 8.0, 1, [[0, 2e9, 0, 0], [0] * 4, [0] * 4, [0] * 4])
    >>> sol = mcf_schedule(inst, {(0, 1, "cw"): 1.5}, seed=0)
    >>> evaluate(inst, sol)   # rounding gave 1 or 2, the fill-up gives 2 in any case
    1.0
    """
    require_feasible(instance)
    return _mcf_rounds(instance, flows, seed=seed, fill=fill, rounds=rounds, deadline=deadline)


def _mcf_rounds(instance: WavelengthsInstance, flows: Mapping[tuple, float], *, seed: int,
                fill: bool, rounds: int, deadline: float | None) -> WavelengthsSolution | None:
    """:func:`mcf_schedule` of an instance :func:`require_feasible` has passed."""
    pairs = _Pairs(instance)
    arcs = _Arcs(instance, pairs, flows)
    rng = np.random.default_rng(seed)
    best, best_time = None, math.inf
    drawn = set()
    for _ in range(rounds):
        if best is not None and deadline is not None and time.perf_counter() >= deadline:
            break
        alloc = _round(arcs.values, rng)
        # The rest of a round is deterministic: a rounding drawn before gives the same
        # schedule, which cannot beat the kept one (ties keep the earlier).
        if alloc.tobytes() in drawn:
            continue
        drawn.add(alloc.tobytes())
        state = _schedule_rounded(instance, pairs, arcs, alloc, seed)
        if state is None:
            continue
        if fill:
            _augment(state, evict=True)
        time_s = _longest_transfer_s(instance, state)
        if time_s < best_time:
            best, best_time = state, time_s
    return None if best is None else best.solution()


def _longest_transfer_s(instance: WavelengthsInstance, state: _Schedule) -> float:
    """:func:`~fabricopt.problems.wavelengths.evaluate` of the schedule ``state`` holds,
    from its per-pair counts (the same arithmetic, in the same row-major pair order),
    without building its lightpaths: a round that is not kept costs no solution."""
    if not len(state.count):
        return 0.0
    with np.errstate(divide="ignore"):
        times = 8.0 * state.pairs.size_array / (state.count_array
                                                * instance.wavelength_gbps * 1e9)
    return float(times.max())


def _schedule_rounded(instance, pairs, arcs: _Arcs, alloc, seed) -> _Schedule | None:
    """Repair rounded counts, colour them first-fit, serve the pairs left without."""
    served = np.zeros(len(pairs), bool)
    served[arcs.pair_array[alloc > 0]] = True
    # a pair rounded to nothing: one lightpath on its larger-flow fiber
    rescued = arcs.best_arc[~served]
    alloc[rescued[rescued >= 0]] += 1
    _repair(instance, pairs, arcs, alloc)
    state = _Schedule(instance, pairs)
    w = instance.wavelengths
    used = np.zeros((2, instance.nodes, (w + 63) // 64), np.uint64)
    kept, wls = [], []
    for ccw in (False, True):
        mine = np.flatnonzero(arcs.ccw == ccw)
        drawn = np.repeat(mine, alloc[mine])
        # colours >= W are dropped
        colours, used[int(ccw)] = _colour_fiber(instance.nodes, arcs.first[drawn],
                                                arcs.hops[drawn], w)
        kept.append(drawn[colours < w])
        wls.append(colours[colours < w])
    state.hold_words(used)
    kept = np.concatenate(kept)
    state.record_all(arcs.pair_array[kept], arcs.ccw[kept], arcs.first[kept], arcs.hops[kept],
                     np.concatenate(wls))
    unserved = sorted(np.flatnonzero(np.array(state.count) == 0), key=lambda k: -pairs.size[k])
    if all(_force(state, int(k)) or _relocate(state, int(k)) for k in unserved):
        return state
    # The rounded schedule cannot be completed: start again from one that serves all.
    return _cover(instance, pairs, seed)
