"""List scheduling on a fixed circulant peer topology (ours): a start for ``sipml-ls``.

The degree limit is a property of the whole step: every GPU keeps at most ``max_peers``
peers each way, over all its ops. Placing ops greedily lets the first ops claim peers
that later ones need, and on the generator's 2,000-op family every method of v0.1
ended up on one clique of ``max_peers + 1`` GPUs (BENCHMARKS.md, *Bounds*). Here the
topology comes first: GPUs ``0..r-1`` form a ring and GPU ``h`` may send to
``h + s (mod r)`` for each offset ``s`` of a set of ``max_peers + 1`` distinct offsets
(0 included), so every GPU has exactly ``max_peers`` peers each way whatever is placed
— SiP-ML's forward window (§3.2) is the offsets ``0..max_peers``. Then ops are
list-scheduled on it.

:func:`circulant_schedule` takes ops in longest-remaining-work order and puts each on
the GPU where it ends first (transfers counted: HEFT's earliest-finish rule [2]_) among
those still open to it. What is open is kept arc-consistent [3]_: every unplaced op
has a *domain* of GPUs, and a dep ``u -> v`` with bytes > 0 keeps in ``v``'s domain
only GPUs some GPU of ``u``'s may send to, and in ``u``'s only GPUs that may send to
one of ``v``'s. Placing an op shrinks its domain to one GPU and the shrinking is
propagated (AC-3); a GPU that would empty some domain is refused and the next-best one
tried. Arc consistency does not see every conflict, so an op can still be left with no
GPU (a dead end, rare on the generator's families): the schedule then returns
``None``. :func:`circulant_search` tries every ring size from ``max_peers + 2`` up for
three offset families and keeps the schedule that ends first; the ring of
``max_peers + 1`` GPUs, where every GPU may talk to every other, never dead-ends, so
the search always has an answer unless a deadline passes first.

References
----------
.. [1] M. Khani et al., "SiP-ML", SIGCOMM 2021, §3.2 (the forward window on a ring).
.. [2] H. Topcuoglu, S. Hariri and M.-Y. Wu, "Performance-effective and low-complexity
   task scheduling for heterogeneous computing", IEEE TPDS 13(3), 2002 (HEFT's
   earliest-finish-time rule).
.. [3] A. K. Mackworth, "Consistency in networks of relations", Artificial
   Intelligence 8(1), 1977 (arc consistency, AC-3).
"""

from __future__ import annotations

from fabricopt.errors import InvalidOption

from typing import Iterator, Sequence

import numpy as np

from fabricopt.algorithms._budget import Budget
from fabricopt.problems.placement import PlacementInstance, schedule_times
from fabricopt.bounds.placement import heads_and_tails

__all__ = ["OFFSET_FAMILIES", "circulant_offsets", "circulant_masks", "circulant_schedule",
           "circulant_search", "longest_work_first"]

#: Offset families of :func:`circulant_offsets`.
OFFSET_FAMILIES = ("forward", "centred", "powers-of-two")
# A family's ring sizes are tried upwards until this many in a row dead-end.
_DEAD_ENDS_IN_A_ROW = 3
# Ring sizes tried per family, at most (evenly spread beyond that).
_RING_SIZES = 48
# Cliques of more GPUs than this are scheduled with numpy (one vector op per op).
_CLIQUE_FAST = 64
# Rings of at most this many GPUs (a domain in one uint64) run in the compiled kernel,
# which checks a deadline every _DEADLINE_EVERY ops.
_COMPILED_GPUS = 64
_DEADLINE_EVERY = 1024
# Work of one search (a Budget's units), at most, in units of about a microsecond of CPython: GPUs tried
# (and their parents read), domains visited and narrowed, neighbourhoods computed, ring
# topologies built. A deterministic budget; the clique's schedule is counted but only a
# deadline cuts it. The 2,000-op family's whole search is about 8 million (3-4 CPU s);
# 5,000 ops on 64 GPUs, or 200 ops on 4,096 GPUs with 100 peers, stop at the budget.
_MAX_WORK = 10_000_000


def circulant_offsets(family: str, max_peers: int) -> tuple[int, ...]:
    """``max_peers + 1`` distinct offsets, 0 first, of an offset family.

    ``forward`` is SiP-ML's window ``0, 1, ..., max_peers``; ``centred`` the same
    width around 0 (``-floor(p/2) .. p - floor(p/2)``), so neighbours talk both ways;
    ``powers-of-two`` is ``0, 1, -1, 2, -2, 4, -4, ...``, which reaches further round
    the ring in few hops.

    Examples
    --------
    >>> circulant_offsets("forward", 3), circulant_offsets("centred", 3)
    ((0, 1, 2, 3), (0, -1, 1, 2))
    >>> circulant_offsets("powers-of-two", 5)
    (0, 1, -1, 2, -2, 4)
    """
    if family == "forward":
        return tuple(range(max_peers + 1))
    if family == "centred":
        low = max_peers // 2
        return (0,) + tuple(s for s in range(-low, max_peers - low + 1) if s)
    if family == "powers-of-two":
        out, step = [0], 1
        while len(out) <= max_peers:
            out.append(step)
            if len(out) <= max_peers:
                out.append(-step)
            step *= 2
        return tuple(out)
    raise InvalidOption(f"family: unknown offset family {family!r}")


def circulant_masks(ring_gpus: int, offsets: Sequence[int]) -> list[int] | None:
    """``masks[h]``: the bit set of GPUs ``h`` may send to (itself included) on a ring
    of ``ring_gpus`` GPUs, or ``None`` if two offsets coincide modulo ``ring_gpus``.

    Every GPU then sends to ``len(offsets) - 1`` others and, the offsets being the
    same for all, receives from as many.

    Examples
    --------
    >>> [bin(m) for m in circulant_masks(4, (0, 1))]
    ['0b11', '0b110', '0b1100', '0b1001']
    >>> circulant_masks(4, (0, 2, -2)) is None     # +2 and -2 are one GPU on 4
    True
    """
    residues = {s % ring_gpus for s in offsets}
    if len(residues) < len(offsets):
        return None
    return [sum(1 << ((h + s) % ring_gpus) for s in residues) for h in range(ring_gpus)]


def _bits(mask: int) -> Iterator[int]:
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def longest_work_first(instance: PlacementInstance) -> list[int]:
    """The topological order that takes the op with the most compute still ahead of it
    (its own and its tail's, :func:`~fabricopt.problems.placement.heads_and_tails`)
    first: list scheduling's critical-path priority."""
    _, tail = heads_and_tails(instance)
    return instance.topological_order(priority=-(tail + instance.compute))


def _start_on(g: int, near: Sequence[tuple], gpu: list, end: list, free_at: float) -> float:
    """When an op whose parents are ``near`` (``(op, delay, bytes)``) may start on GPU
    ``g``, free from ``free_at``: a parent on another GPU adds its transfer."""
    start = free_at
    for u, delay, _ in near:
        at = end[u] + delay if gpu[u] != g else end[u]
        if at > start:
            start = at
    return start


def circulant_schedule(instance: PlacementInstance, masks: Sequence[int],
                       order: Sequence[int] | None = None, *, compiled: bool = True,
                       _work: Budget | None = None) -> list[int] | None:
    """A GPU for every op on the peer topology ``masks`` (see :func:`circulant_masks`),
    or ``None`` at a dead end (or when the search's budget runs out).

    Parameters
    ----------
    instance : PlacementInstance
    masks : sequence of int
        ``masks[h]``: bit set of the GPUs ``h`` may send to, ``h`` included; its
        length is the number of GPUs used. No GPU may have more than ``max_peers``
        others in its mask or be in more than ``max_peers`` others' masks: the
        answer then keeps the degree limit whatever it is.
    order : sequence of int, optional
        A topological order (default: longest remaining work first).
    compiled : bool
        On at most 64 GPUs, run the numba kernel (:mod:`._circulant_kernel`, the
        default) or the pure-Python loop it mirrors: the same GPUs and the same work
        counted. A deadline is then checked every 1,024 ops instead of every op.

    Returns
    -------
    list of int or None
        GPU of each op, indexed like ``instance.ops``; every dep with bytes > 0 goes
        from GPU ``h`` to a GPU of ``masks[h]``.

    Examples
    --------
    >>> from fabricopt.problems.placement import SubOp, Dep
    >>> ops = [SubOp(c, 1.0) for c in "abcd"]
    >>> deps = [Dep("a", "b", 1.0), Dep("a", "c", 1.0), Dep("a", "d", 1.0)]
    >>> inst = PlacementInstance(4, 1, 8.0, ops, deps)
    >>> circulant_schedule(inst, circulant_masks(4, (0, 1)))   # a's children: a's GPU or the next
    [0, 0, 1, 0]
    """
    n, k = instance.size, len(masks)
    if order is None:
        order = longest_work_first(instance)
    work = _work if _work is not None else Budget()
    if k > _CLIQUE_FAST and all(m == (1 << k) - 1 for m in masks):
        return _clique_schedule(instance, k, order, work)
    if compiled and k <= _COMPILED_GPUS:
        return _compiled_schedule(instance, masks, order, work)
    sends = [[w for w, _, b in near if b] for near in instance.children]
    reads = [[u for u, _, b in near if b] for near in instance.parents]
    reach, feeds = _neighbourhoods(masks, work)
    domain = [(1 << k) - 1] * n
    trail: list = []

    def propagate(v: int) -> bool:
        """AC-3 from ``v``; False (domains half-narrowed, see ``trail``) on a wipe-out."""
        queue = [v]
        while queue:
            x = queue.pop()
            work.used += 1 + len(sends[x]) + len(reads[x])
            here = domain[x]
            for near, narrow in ((sends[x], reach), (reads[x], feeds)):
                if not near:
                    continue
                keep = narrow(here)
                for y in near:
                    was = domain[y]
                    shrunk = was & keep
                    if shrunk != was:
                        if not shrunk:
                            return False
                        trail.append((y, was))
                        domain[y] = shrunk
                        queue.append(y)
        return True

    compute, parents = instance.compute_list, instance.parents
    gpu, end, free = [-1] * n, [0.0] * n, [0.0] * k
    for v in order:
        ready = []
        for g in _bits(domain[v]):
            work.used += 1 + len(parents[v])
            ready.append((_start_on(g, parents[v], gpu, end, free[g]) + compute[v], g))
        ready.sort()                    # earliest finish first, ties to the lowest GPU
        for finish, g in ready:
            work.used += 1
            del trail[:]
            trail.append((v, domain[v]))
            domain[v] = 1 << g
            if propagate(v):
                gpu[v], end[v], free[g] = g, finish, finish
                break
            for x, old in reversed(trail):
                domain[x] = old
        else:
            return None
        if work.spent():
            return None
    return gpu


def _neighbourhoods(masks: Sequence[int], work: Budget | None = None):
    """``reach(domain)``: the GPUs some GPU of ``domain`` may send to; ``feeds(domain)``:
    those that may send to some GPU of it. Cached per domain; a miss is a union over the
    domain's GPUs or, on a circulant topology (``masks[h]`` is ``masks[0]`` turned by
    ``h``) when that is fewer, over turns of the domain by each offset."""
    k = len(masks)
    if work is None:
        work = Budget()
    inverse, offsets, circulant = _topology(masks, work)

    def cached(table: Sequence[int], sign: int):
        cache: dict[int, int] = {}

        def of(domain: int) -> int:
            out = cache.get(domain)
            if out is None:
                out = 0
                work.used += min(len(offsets), domain.bit_count())
                if circulant and len(offsets) < domain.bit_count():
                    for s in offsets:
                        out |= _turn(domain, sign * s, k)
                else:
                    for g in _bits(domain):
                        out |= table[g]
                cache[domain] = out
            return out
        return of

    return cached(masks, 1), cached(inverse, -1)


def _turn(mask: int, by: int, k: int) -> int:
    by %= k
    return ((mask << by) | (mask >> (k - by))) & ((1 << k) - 1) if by else mask


def _topology(masks: Sequence[int], work: Budget) -> tuple[list[int], list[int], bool]:
    """``(inverse, offsets, circulant)`` of a peer topology: ``inverse[g]``, the GPUs
    that may send to ``g``; the offsets of GPU 0's mask; whether every ``masks[h]`` is
    ``masks[0]`` turned by ``h``. Charges ``gpus * offsets`` units of work."""
    k = len(masks)
    inverse = [0] * k
    for h, mask in enumerate(masks):
        for g in _bits(mask):
            inverse[g] |= 1 << h
    offsets = list(_bits(masks[0]))
    circulant = all(masks[h] == _turn(masks[0], h, k) for h in range(k))
    work.used += k * len(offsets)
    return inverse, offsets, circulant


def _compiled_schedule(instance: PlacementInstance, masks: Sequence[int],
                       order: Sequence[int], work: Budget) -> list[int] | None:
    """:func:`circulant_schedule` in the numba kernel (at most 64 GPUs)."""
    from numba import types
    from numba.typed import Dict

    from fabricopt.algorithms.placement import _circulant_kernel as kernel
    from fabricopt.algorithms.placement._schedule_kernel import child_arrays, parent_arrays

    n, k = instance.size, len(masks)
    inverse, offsets, circulant = _topology(masks, work)
    words = lambda values: np.array(values, dtype=np.uint64)
    caches = [Dict.empty(key_type=types.uint64, value_type=types.uint64) for _ in range(2)]
    domain = np.full(n, (1 << k) - 1, dtype=np.uint64)
    gpu, end, free = np.full(n, -1, dtype=np.int64), np.zeros(n), np.zeros(k)
    sends, reads = child_arrays(instance, True)[:2], parent_arrays(instance, True)[:2]
    order_array = np.array(order, dtype=np.int64)
    limit = float(work.limit)
    step = n if work.deadline is None else _DEADLINE_EVERY
    at = 0
    while at < n:
        status, at, work.used = kernel.run(
            k, at, min(at + step, n), work.used, limit, order_array, domain, gpu, end, free,
            *sends, *reads, *parent_arrays(instance), instance.compute, words(masks),
            words(inverse), np.array(offsets, dtype=np.int64), circulant, *caches)
        work.used = int(work.used)
        if status != kernel.PLACED or work.spent():
            return None
    return gpu.tolist()


def _clique_schedule(instance: PlacementInstance, k: int, order: Sequence[int],
                     work: Budget) -> list[int] | None:
    """:func:`circulant_schedule` on ``k`` GPUs that may all talk to each other, in
    O(parents + k) numpy work per op instead of a Python loop over the ``k`` GPUs:
    nothing narrows, and a GPU without a parent of the op is ready at the latest
    arrival, so the best of those is the one free first (ties: the lowest index, as
    in the loop)."""
    compute = instance.compute_list
    gpu, end = [-1] * instance.size, [0.0] * instance.size
    free = np.zeros(k)
    for v in order:
        work.used += k
        near = instance.parents[v]
        latest = max((end[u] + delay for u, delay, _ in near), default=0.0)
        finish = np.maximum(free, latest) + compute[v]
        for g in {gpu[u] for u, _, _ in near}:     # a parent's GPU skips its transfer
            finish[g] = _start_on(g, near, gpu, end, free[g]) + compute[v]
        best = int(np.argmin(finish))
        gpu[v], end[v] = best, float(finish[best])
        free[best] = end[v]
        if work.spent():
            return None
    return gpu


def circulant_search(instance: PlacementInstance, *, deadline: float | None = None
                     ) -> tuple[list[int], list[int], dict]:
    """The best :func:`circulant_schedule` over ring sizes and offset families.

    The ring of ``D = min(max_peers + 1, gpus)`` GPUs (every GPU may talk to every
    other) is tried first; then, for each family of :data:`OFFSET_FAMILIES`, rings of
    ``D + 1``, ``D + 2``, ... up to ``gpus`` GPUs (48 sizes evenly spread where there
    are more), until three in a row dead-end, a budget of 10 million units of work
    (about a microsecond each: GPUs tried, domains narrowed, topologies built; the
    clique's count towards it) is spent, or ``deadline`` (a ``time.perf_counter()``
    value) passes — the only way the answer can depend on the machine.

    Returns
    -------
    gpu : list of int or None
        The assignment whose as-early-as-possible schedule in ``order`` ends first
        (ties: the ring tried first); None only if ``deadline`` passed before the
        clique's schedule was done.
    order : list of int
        Longest remaining work first.
    info : dict
        ``ring_gpus`` and ``offsets`` (family) of the answer, ``makespan_s`` of its
        schedule, ``rings_tried`` and ``dead_ends``.

    Examples
    --------
    >>> from fabricopt.problems.placement import generate
    >>> inst = generate(seed=1, family="k16-p3")
    >>> gpu, order, info = circulant_search(inst)
    >>> info["ring_gpus"] > inst.max_peers + 1     # more GPUs than one clique
    True
    """
    order = longest_work_first(instance)
    work = Budget(_MAX_WORK, deadline)
    clique = min(instance.max_peers + 1, instance.gpus)
    # the clique's schedule never dead-ends: it is charged to the budget but only the
    # deadline cuts it
    uncounted = Budget(deadline=deadline)
    gpu = circulant_schedule(instance, [(1 << clique) - 1] * clique, order, _work=uncounted)
    if gpu is None:
        return None, order, {"ring_gpus": None, "offsets": None, "makespan_s": float("inf"),
                             "rings_tried": 1, "dead_ends": 0}
    work.used = uncounted.used
    best = (max(schedule_times(instance, gpu, order)[1], default=0.0), gpu, clique, "clique")
    tried, dead = 1, 0
    sizes = list(range(clique + 1, instance.gpus + 1))
    if len(sizes) > _RING_SIZES:         # evenly spread, the largest included
        sizes = sorted({sizes[round(i * (len(sizes) - 1) / (_RING_SIZES - 1))]
                        for i in range(_RING_SIZES)})
    for family in OFFSET_FAMILIES:
        offsets = circulant_offsets(family, instance.max_peers)
        in_a_row = 0
        for ring in sizes:
            if in_a_row >= _DEAD_ENDS_IN_A_ROW or work.spent():
                break
            masks = circulant_masks(ring, offsets)
            if masks is None:
                continue
            tried += 1
            found = circulant_schedule(instance, masks, order, _work=work)
            if found is None:
                dead += 1
                in_a_row += 1
                continue
            in_a_row = 0
            makespan = max(schedule_times(instance, found, order)[1], default=0.0)
            if makespan < best[0]:
                best = (makespan, found, ring, family)
    makespan, gpu, ring, family = best
    return gpu, order, {"ring_gpus": ring, "offsets": family, "makespan_s": makespan,
                        "rings_tried": tried, "dead_ends": dead}
