"""SiP-ML's degree-aware parallelization (SIGCOMM 2021, §3.2, Algorithm 1, §4.2).

* :func:`balance` splits every op of an op graph into sub-ops of about ``tau_s``: the
  balanced computation graph, as a ``placement`` instance.
* :func:`feasible_set` is the forward distance window: a sub-op on GPU j may read from a
  parent on GPU p only if ``(j - p) mod k < D``, so every GPU sends to at most ``D - 1``
  others and receives from at most ``D - 1``.
* :func:`algorithm1` is Algorithm 1: sub-ops in topological order, each on the earliest
  available GPU of its window (ties to the least drift around the ring), with the
  paper's backward relocation when the window is empty — which the authors' code never
  implemented — made to terminate by construction (monotone cascades over "lifts").
* :func:`sipml` runs it and, by default, keeps the best of the ring of all GPUs, the
  ring of ``D`` GPUs and one GPU.
* :func:`unconstrained` is Algorithm 1 without the window: SiP-ML's electrical baseline.

The search for the model- and data-parallel degrees (k, l) (SiP-ML §4.2) is
:func:`fabricopt.fabrics.iteration.search_iteration_time`: one search, with the
fabric's own cost model, for the placement API and ``fabricopt compare``.

The window size is ``D = max_peers + 1``: SiP-ML's degree D less the circuit kept for
the data-parallel ring is ``max_peers``.

References
----------
.. [1] M. Khani et al., "SiP-ML: High-Bandwidth Optical Network Interconnects for
   Machine Learning Training", SIGCOMM 2021, §3.2 and §4.2; fabricopt docs,
   *Departures*, sipml-1.
"""

from __future__ import annotations

import math
from bisect import bisect_left, insort
from typing import Iterable

import numpy as np

from fabricopt.problems._validate import as_float, as_int, fail
from fabricopt.problems.opgraph import OpGraph
from fabricopt.problems.placement import (PlacementInstance, PlacementSolution, advance,
                                          split_op_graph)

__all__ = ["sub_op_count", "balance", "feasible_set", "algorithm1", "sipml", "unconstrained",
           "degree_safe_gpus", "RINGS"]

# floor(compute/tau) must not lose a whole step to rounding (4e-5 / 1e-5 = 3.9999...).
_SPLIT_RTOL = 1e-9


def sub_op_count(compute_s: float, tau_s: float, k: int) -> int:
    """How many sub-ops SiP-ML splits an op into: ``2**floor(log2(compute/tau))``,
    clamped to ``1..k``.

    Examples
    --------
    >>> [sub_op_count(c, 1e-5, 8) for c in (0.0, 1e-5, 3.9e-5, 4e-5, 1e-3)]
    [1, 1, 2, 4, 8]
    """
    raw = max(int(math.floor(compute_s / tau_s * (1 + _SPLIT_RTOL))), 1)
    return min(1 << (raw.bit_length() - 1), k)


def balance(op_graph: OpGraph, tau_s: float, k: int, *, max_peers: int | None = None,
            link_gbps: float = 100.0) -> PlacementInstance:
    """SiP-ML's balanced computation graph of ``op_graph`` on ``k`` GPUs.

    Each op is split into :func:`sub_op_count` equal sub-ops; edges become block
    mappings between sub-op lists with the source's bytes split evenly over its
    sub-ops (:func:`fabricopt.problems.placement.split_op_graph`).

    Parameters
    ----------
    op_graph : OpGraph
        Compute times at the local batch of one model-parallel group.
    tau_s : float
        The compute quantum τ (> 0); the paper uses 10 µs.
    k : int
        Model-parallel degree: GPUs of the group, and the most sub-ops an op gets.
    max_peers : int, optional
        Degree limit of the instance; default ``k - 1`` (none).
    link_gbps : float
        GPU-to-GPU bandwidth of the instance.

    Returns
    -------
    PlacementInstance

    References
    ----------
    .. [1] SiP-ML §3.2 (i) "Partitioning" and Fig. 4(b); RostAM ``OpPartitionerAttribute``
       (fabricopt docs, *Departures*, sipml-1.1). RostAM's τ is 1 µs (or 0 through an
       integer truncation); we use the τ passed in.

    Examples
    --------
    >>> g = OpGraph([{"id": "A", "compute_s": 1e-5}, {"id": "C", "compute_s": 4.5e-5}],
    ...             [{"src": "A", "dst": "C", "bytes": 1e6}])
    >>> [op.id for op in balance(g, 1e-5, 4).ops]
    ['A/0', 'C/0', 'C/1', 'C/2', 'C/3']
    """
    tau_s = as_float("tau_s", tau_s, positive=True)
    k = as_int("k", k, minimum=1)
    max_peers = max(k - 1, 1) if max_peers is None else max_peers  # >= 1 even for k = 1
    splits = {op.id: sub_op_count(op.compute_s, tau_s, k) for op in op_graph.ops}
    return split_op_graph(op_graph, splits, gpus=k, max_peers=max_peers, link_gbps=link_gbps)


def _window_masks(k: int, degree: int, backward: bool = False) -> list[int]:
    """Bit masks of ``{p, p+1, ..., p+degree-1} mod k`` (or ``{p-degree+1, ..., p}``)."""
    full = (1 << k) - 1
    base = (1 << min(degree, k)) - 1
    masks = []
    for p in range(k):
        shift = p if not backward else (p - min(degree, k) + 1) % k
        masks.append(((base << shift) | (base >> (k - shift))) & full)
    return masks


def _bits(mask: int) -> Iterable[int]:
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def feasible_set(parent_gpus: Iterable[int], k: int, degree: int) -> list[int]:
    """GPUs a sub-op may run on given its parents' GPUs: the intersection of the forward
    windows ``{(p + t) mod k : t = 0..degree-1}`` (all GPUs without parents).

    Parameters
    ----------
    parent_gpus : iterable of int
        GPUs of the parents that send it bytes.
    k : int
        GPUs in the group.
    degree : int
        D, the window size (``max_peers + 1``).

    Returns
    -------
    list of int
        Sorted; empty when the parents span more than ``degree - 1`` (relocation needed).

    Notes
    -----
    The authors' code treats a wrapping parent set such as {0, 7} as unconstrained and an
    empty intersection as "all GPUs" (fabricopt docs, *Departures*, sipml-1.3); both
    break the degree bound, and neither is copied. For {0, 7} with k = 8, D = 3 the
    windows are {0, 1, 2} and {7, 0, 1}, so the answer is {0, 1} ({7, 0, 1} would let
    GPU 0 send to GPU 7, seven hops back).

    Examples
    --------
    >>> [feasible_set(p, 8, 3) for p in ([], [1], [6], [1, 2], [1, 3], [1, 4], [6, 7], [0, 7])]
    [[0, 1, 2, 3, 4, 5, 6, 7], [1, 2, 3], [0, 6, 7], [2, 3], [3], [], [0, 7], [0, 1]]
    """
    masks = _window_masks(k, degree)
    mask = (1 << k) - 1
    for p in set(parent_gpus):
        mask &= masks[p]
    return sorted(_bits(mask))


def degree_safe_gpus(instance: PlacementInstance) -> int:
    """How many GPUs can all talk to each other: ``min(gpus, max_peers + 1)``."""
    return min(instance.gpus, instance.max_peers + 1)


def _earliest(mask: int, free: list) -> int:
    """The GPU of ``mask`` that is free first; ties to the smallest index ([P] §3.2)."""
    best, best_free = -1, math.inf
    while mask:                       # bits in increasing order: ties keep the smaller
        low = mask & -mask
        g = low.bit_length() - 1
        mask ^= low
        if free[g] < best_free:
            best, best_free = g, free[g]
    return best


class _Lifts:
    """Placed ops as *lifts*: integers whose residue mod k is the GPU.

    A dep u -> v satisfies the forward window iff ``0 <= lift[v] - lift[u] < D`` for
    some lifts of its ends; keeping one lift per op for which this holds on every dep
    turns the window into difference constraints on a line, ``lift[u] <= lift[v] <=
    lift[u] + D - 1``, that a relocation can repair by monotone propagation (see
    :meth:`cascade`). ``NONE`` marks an op not placed yet.
    """

    NONE = None

    def __init__(self, k: int, degree: int, comm_parents: list, comm_children: list):
        self.k, self.span = k, degree - 1
        self.parents, self.children = comm_parents, comm_children
        self.lift: list = [None] * len(comm_parents)

    def interval(self, v: int, skip: int = -1) -> tuple[float, float]:
        """The lifts ``v`` may take given its placed parents and its placed children
        other than ``skip``: ``[max parent, min parent + D - 1] ∩ [max child - D + 1,
        min child]`` (unbounded ends are infinite)."""
        lift, span = self.lift, self.span
        lo, hi = -math.inf, math.inf
        for u in self.parents[v]:
            a = lift[u]
            if a is not None:
                if a > lo:
                    lo = a
                if a + span < hi:
                    hi = a + span
        for c in self.children[v]:
            a = lift[c]
            if a is not None and c != skip:
                if a - span > lo:
                    lo = a - span
                if a < hi:
                    hi = a
        return lo, hi

    def cascade(self, starts: dict, up: bool, frozen: int, limit: float = math.inf
                ) -> dict | None:
        """New lifts that restore the window on every dep between placed ops after
        setting the ``starts`` (op -> lift), only raising (``up``) or only lowering.

        Raising ``v`` can break ``lift[c] >= lift[v]`` for a child (raise it to
        ``lift[v]``) and ``lift[v] <= lift[u] + D - 1`` for a parent (raise it to
        ``lift[v] - D + 1``); lowering is the mirror image. Every value set is a start
        value or another op's new value minus (plus) a non-negative amount, so no op
        goes above the largest start (below the smallest), each change is a strict
        integer step in one direction, and the propagation ends; at its end no dep
        between placed ops is broken (each change queued its possibly broken deps).
        ``frozen`` (the op being placed) is left out: it has no placed children and
        takes its lift afterwards.
        """
        lift, span = self.lift, self.span
        parents, children = self.parents, self.children
        new: dict = {}
        stack = list(starts.items())
        while stack:
            v, value = stack.pop()
            current = new.get(v, lift[v])
            if (value <= current) if up else (value >= current):
                continue
            new[v] = value
            if len(new) > limit:
                return None
            if up:
                for c in children[v]:
                    if c != frozen and lift[c] is not None and new.get(c, lift[c]) < value:
                        stack.append((c, value))
                for u in parents[v]:
                    if new.get(u, lift[u]) < value - span:
                        stack.append((u, value - span))
            else:
                for u in parents[v]:
                    if new.get(u, lift[u]) > value:
                        stack.append((u, value))
                for c in children[v]:
                    if c != frozen and lift[c] is not None and new.get(c, lift[c]) > value + span:
                        stack.append((c, value + span))
        return new

    def relocation(self, x: int, pos: list) -> dict:
        """The cheaper repair that makes ``x``'s parents fit in one window: raise the
        parents more than ``D - 1`` below the highest, or lower those more than
        ``D - 1`` above the lowest, each with its cascade. Cheaper: fewer ops moved,
        then a later earliest move (a shorter restart), then raising. Both cascades run
        under a size limit that grows fourfold until one fits, so the dearer one is cut
        off early."""
        lift, span, parents = self.lift, self.span, self.parents[x]
        top = max(lift[u] for u in parents)
        bottom = min(lift[u] for u in parents)
        up = {u: top - span for u in parents if lift[u] < top - span}
        down = {u: bottom + span for u in parents if lift[u] > bottom + span}
        limit = 2 * len(parents)
        while True:
            raised = self.cascade(up, True, x, limit)
            lowered = self.cascade(down, False, x, limit)
            if raised is not None or lowered is not None:
                break
            limit *= 4
        if raised is None or lowered is None:
            return raised if lowered is None else lowered

        def cost(moves):
            return len(moves), -min(pos[v] for v in moves)

        return raised if cost(raised) <= cost(lowered) else lowered


# Algorithm 1 keeps the GPUs' free times every _SNAP positions, so that a restart
# re-times from there; it replays at most _REPLAY positions back (see algorithm1).
_SNAP = 32
_REPLAY = 1024


def _bounded(lo: float, hi: float, ref: int, k: int) -> tuple[int, int]:
    """At most k lifts of ``[lo, hi]``: from ``lo`` (or from ``ref`` when both ends are
    open) up, or down from ``hi`` when only it is finite."""
    if hi == math.inf:
        lo = ref if lo == -math.inf else lo
        return int(lo), int(lo) + k - 1
    if lo == -math.inf or hi - lo >= k:
        lo = hi - k + 1
    return int(lo), int(hi)


def _earliest_lift(lo: int, hi: int, k: int, free) -> int:
    """The lift in ``[lo, hi]`` (at most k of them) whose GPU is free first (``free``
    maps a GPU to its free time); ties to the smallest lift, the least drift around
    the ring (the paper: the smallest index, the same while the ring has not wrapped)."""
    best, best_free = lo, math.inf
    for a in range(lo, hi + 1):
        f = free(a % k)
        if f < best_free:
            best, best_free = a, f
    return best


def algorithm1(instance: PlacementInstance, *, gpus: int | None = None,
               degree: int | None = None, compiled: bool = True
               ) -> tuple[list[int], list[int], dict]:
    """Algorithm 1 of SiP-ML: a GPU for every op, in a topological placement order.

    Parameters
    ----------
    instance : PlacementInstance
    gpus : int, optional
        Use GPUs ``0..gpus-1`` only, as a ring of that size (default: all).
    degree : int, optional
        Window size D (default ``max_peers + 1``); ``degree >= gpus`` removes the window.
    compiled : bool
        Run the numba kernel (:mod:`._algorithm1_kernel`, the default) or the pure-Python
        reference it mirrors; both make the same decisions.

    Returns
    -------
    gpu : list of int
        GPU of each op (indexed like ``instance.ops``).
    order : list of int
        The placement order (ops listed in topological order give ``0..n-1``).
    info : dict
        ``relocations`` (empty windows met) and ``relocated_ops`` (ops they moved).

    Notes
    -----
    The placement order is the topological order of ``instance`` with ties by position,
    which for a balanced graph from :func:`balance` is the paper's "ops in topological
    order, sub-ops in index order". Each op goes to the earliest available GPU of its
    window (:func:`_earliest_lift`). Only deps with bytes > 0 constrain the window: the
    degree limit counts only those. An op starts when its GPU is free and its parents
    have ended plus their transfers across GPUs (the paper's line 10 leaves out the
    transfer; a schedule cannot).

    Relocation. When the parents of ``x`` span more than ``D - 1`` GPUs, the cheaper of
    two repairs moves them into one window (:meth:`_Lifts.relocation`): raise the low
    ones or lower the high ones, and propagate — the paper's backward process, plus
    the placed children a move strands. ``x`` takes the earliest available GPU of its
    now non-empty window, and the paper's restart follows: from the first op moved on,
    every op is re-timed and every moved one re-placed, at its turn, on the earliest
    available GPU among those that keep all its placed deps (re-placing all ops there
    was measured too: no better on average, twice the time); then ``x`` is placed
    again by the same rule. The restart replays at most the last ``_REPLAY`` positions; an op moved
    further back is re-placed by the same rule against the GPUs' last known timings
    (an op's GPU then feeds only the guidance of later choices: the schedule
    returned by :func:`sipml` is computed afresh).

    Termination (the paper leaves convergence open). Invariant: before each op's turn,
    every dep with bytes > 0 between placed ops satisfies the window. A placement in
    the window keeps it; a cascade ends (values move monotonically within the range of
    its start values) and restores it; a re-placement stays within a set of GPUs that
    keeps it and holds the op's current GPU. So no decision the forward pass has
    passed is ever reopened: it ends after n turns with at most one relocation each,
    and every dep of the output satisfies the window.

    Examples
    --------
    Op c needs a's 4 bytes, b is independent: b takes the second GPU, c joins a.

    >>> from fabricopt.problems.placement import Dep, SubOp
    >>> inst = PlacementInstance(2, 1, 8.0, [SubOp("a", 1.0), SubOp("b", 1.0), SubOp("c", 1.0)],
    ...                          [Dep("a", "c", 4.0)])
    >>> gpu, order, info = algorithm1(inst)
    >>> gpu, order, info["relocations"]
    ([0, 1, 0], [0, 1, 2], 0)
    """
    k = instance.gpus if gpus is None else gpus
    degree = instance.max_peers + 1 if degree is None else degree
    if compiled:
        return _algorithm1_compiled(instance, k, degree)
    return _algorithm1_python(instance, k, degree)


def _csr(rows: np.ndarray, cols: np.ndarray, n: int, by: np.ndarray,
         *values: np.ndarray) -> tuple:
    """``(ptr, cols, *values)`` of the entries ``(rows[e], cols[e])`` grouped by row,
    each row's in increasing ``cols``: ``by`` is their order by ``(rows, cols)``, the
    instance's (:attr:`PlacementInstance._deps_by_ends`, sorted once per graph)."""
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=ptr[1:])
    return (ptr, np.ascontiguousarray(cols[by], dtype=np.int64),
            *(np.ascontiguousarray(v[by]) for v in values))


def _scheduled(instance: PlacementInstance, placed: dict) -> dict:
    """Ring size -> ``(start, end)`` of ``placed[ring] = (gpu, order)``: the compiled
    list schedule, the same loop and arithmetic as :func:`schedule_times` (tested equal,
    bit for bit)."""
    from fabricopt.algorithms.placement._schedule_kernel import schedule_arrays

    return schedule_arrays(instance, placed)


def _algorithm1_compiled(instance: PlacementInstance, k: int, degree: int) -> tuple:
    """:func:`algorithm1` on arrays, in the numba kernels."""
    gpu, order, info = _algorithm1_arrays(instance, k, degree, _KernelArrays(instance))
    return gpu.tolist(), order.tolist(), info


class _KernelArrays:
    """The arrays of ``instance`` that Algorithm 1's kernels read, each made once for
    all the rings one :func:`sipml` call places."""

    def __init__(self, instance: PlacementInstance):
        self.instance = instance
        self._parents = self._children = self._comm = None

    @property
    def parents(self) -> tuple:
        """``(ptr, parent, delay_s)`` of every dep, each op's parents by index."""
        if self._parents is None:
            inst = self.instance
            self._parents = _csr(inst.dep_dst, inst.dep_src, inst.size,
                                 inst._deps_by_ends[0], inst.delay_s)
        return self._parents

    @property
    def children(self) -> tuple:
        """``(ptr, child)`` of every dep, each op's children by index."""
        if self._children is None:
            inst = self.instance
            self._children = _csr(inst.dep_src, inst.dep_dst, inst.size,
                                  inst._deps_by_ends[1])
        return self._children

    @property
    def comm(self) -> tuple:
        """``(parent ptr, parent, child ptr, child)`` of the deps that carry bytes."""
        if self._comm is None:
            inst = self.instance
            carries = inst._dep_bytes > 0
            # the orders of all deps, less those without bytes: the same (row, col) order
            by_dst, by_src = (by[carries[by]] for by in inst._deps_by_ends)
            src, dst = inst.dep_src, inst.dep_dst
            self._comm = (_csr(dst[carries], src, inst.size, by_dst)
                          + _csr(src[carries], dst, inst.size, by_src))
        return self._comm


def _algorithm1_arrays(instance: PlacementInstance, k: int, degree: int,
                       arrays: _KernelArrays) -> tuple[np.ndarray, np.ndarray, dict]:
    """:func:`algorithm1` in the numba kernels, its GPUs and order as arrays."""
    from fabricopt.algorithms.placement import _algorithm1_kernel as kernel

    order = instance._order_array
    compute = instance.compute
    info = {"relocations": 0, "relocated_ops": 0}
    if degree >= k:
        dev = kernel.unconstrained_kernel(k, order, *arrays.parents, compute)
        return dev, order, info
    dev, info["relocations"], info["relocated_ops"] = kernel.windowed_kernel(
        k, degree, order, *arrays.parents, compute, *arrays.children, *arrays.comm)
    return dev, order, {key: int(value) for key, value in info.items()}


def _algorithm1_python(instance: PlacementInstance, k: int, degree: int) -> tuple:
    """:func:`algorithm1` in pure Python: the reference the kernel mirrors."""
    n = instance.size
    order = instance.topological_order()
    dev, end, free = [-1] * n, [0.0] * n, [0.0] * k
    info = {"relocations": 0, "relocated_ops": 0}
    if degree >= k:
        full = (1 << k) - 1
        for x in order:
            dev[x] = _earliest(full, free)
            advance(instance, (x,), dev, end, free)
        return dev, order, info
    pos = [0] * n
    for i, v in enumerate(order):
        pos[v] = i
    comm_parents = [sorted({u for u, _, b in instance.parents[v] if b}) for v in range(n)]
    comm_children = [sorted({w for w, _, b in instance.children[v] if b}) for v in range(n)]
    lifts = _Lifts(k, degree, comm_parents, comm_children)
    lift = lifts.lift
    on_gpu: list[list[int]] = [[] for _ in range(k)]   # positions of each GPU's ops
    snaps: dict[int, list] = {}
    front = 0                     # the last lift given: where a parentless op goes
    free_now = free.__getitem__

    def move(v: int, a: int) -> None:
        """Give ``v`` (placed) the lift ``a``, keeping ``on_gpu`` in step."""
        g, h = dev[v], a % k
        lift[v], dev[v] = a, h
        if g != h:
            del on_gpu[g][bisect_left(on_gpu[g], pos[v])]
            insort(on_gpu[h], pos[v])

    def replace(v: int, free_at) -> None:
        a, b = lifts.interval(v)          # holds lift[v]: never empty
        move(v, _earliest_lift(*_bounded(a, b, lift[v] - lift[v] % k, k), k, free_at))

    for i, x in enumerate(order):
        if i % _SNAP == 0:
            snaps[i] = list(free)
        lo, hi = lifts.interval(x)
        if lo > hi:
            moves = lifts.relocation(x, pos)
            info["relocations"] += 1
            info["relocated_ops"] += len(moves)
            for v, a in moves.items():
                move(v, a)
            # x holds a GPU of its now non-empty window while the restart re-places
            # the ops before it, so that they keep feeding it ("place x on t")
            lo, hi = lifts.interval(x)
            lift[x] = _earliest_lift(int(lo), int(hi), k, free_now)
            dev[x] = lift[x] % k
            j = min(pos[v] for v in moves)
            p = max(j - j % _SNAP, i - i % _SNAP - _REPLAY)
            for q in sorted(pos[v] for v in moves if pos[v] < p):
                v = order[q]            # far back: against the last known timings

                def free_before(g: int, q=q) -> float:
                    at = bisect_left(on_gpu[g], q)
                    return end[order[on_gpu[g][at - 1]]] if at else 0.0

                replace(v, free_before)
                advance(instance, (v,), dev, end, [free_before(dev[v])] * k)
            free[:] = snaps[p]
            # the restart: re-time from p in runs between snapshots and moved ops,
            # re-placing each moved op at its turn
            stops = sorted({pos[v] for v in moves if pos[v] >= p}
                           | set(range(p, i, _SNAP)) | {i})
            for a, b in zip(stops, stops[1:]):
                if a % _SNAP == 0:
                    snaps[a] = list(free)
                if order[a] in moves:
                    replace(order[a], free_now)
                advance(instance, order[a:b], dev, end, free)
            if i % _SNAP == 0:
                snaps[i] = list(free)
            lo, hi = lifts.interval(x)
        lift[x] = _earliest_lift(*_bounded(lo, hi, front - front % k, k), k, free_now)
        dev[x] = lift[x] % k
        front = lift[x]
        on_gpu[dev[x]].append(i)
        advance(instance, (x,), dev, end, free)
    return dev, order, info


def unconstrained(instance: PlacementInstance) -> PlacementSolution:
    """Algorithm 1 without the window (SiP-ML's electrical baseline) on the GPUs that
    can all talk to each other.

    With ``max_peers >= gpus - 1`` this is exactly the paper's electrical baseline on
    all GPUs. Otherwise it keeps to ``max_peers + 1`` GPUs, among which no degree limit
    can bind, so the answer is always feasible (ours: list scheduling that ignores the
    degree would break it).

    Examples
    --------
    >>> from fabricopt.problems.placement import SubOp
    >>> inst = PlacementInstance(4, 1, 8.0, [SubOp("a", 1.0), SubOp("b", 1.0), SubOp("c", 1.0)])
    >>> dict(unconstrained(inst).gpu)   # max_peers = 1: GPUs 0 and 1 only
    {'a': 0, 'b': 1, 'c': 0}
    """
    k = degree_safe_gpus(instance)
    gpu, order, _ = _algorithm1_arrays(instance, k, k, _KernelArrays(instance))
    start, _ = _scheduled(instance, {k: (gpu, order)})[k]
    return PlacementSolution._of_instance(instance, gpu, start)


#: ``rings`` values of :func:`sipml`.
RINGS = ("search", "full")


def sipml(instance: PlacementInstance, *, rings: str = "search"
          ) -> tuple[PlacementSolution, dict]:
    """SiP-ML's Algorithm 1 with backward relocation, scheduled as early as possible.

    Parameters
    ----------
    instance : PlacementInstance
    rings : {"search", "full"}
        ``"full"``: Algorithm 1 on the ring of all ``gpus`` (the paper). ``"search"``
        (ours, the default): also on the ring of the first ``D = max_peers + 1`` GPUs
        — where the window is the whole ring, so Algorithm 1 needs no relocation —
        and on one GPU (every op back to back), and keep the placement whose
        schedule ends first (ties: the larger ring). The paper searches the
        model-parallel degree k (§4.2); this extends that search to the placement: a
        group may leave GPUs idle when the window or the transfers cost more than
        they bring (on the generator's families, measured in BENCHMARKS.md, the full
        ring alone is 0.8-2.5x the D-GPU schedule; the earliest-available rule,
        blind to transfers, can make a 2-GPU group slower than one GPU).

    Returns
    -------
    solution : PlacementSolution
        Every dep with bytes > 0 goes from GPU p to one of p .. p + max_peers (mod the
        ring size), so no GPU has more than ``max_peers`` peers in either direction.
    info : dict
        ``relocations`` and ``relocated_ops`` of the full ring (see
        :func:`algorithm1`), ``ring_gpus`` (the ring kept) and, with ``"search"``,
        ``ring_makespans_s`` (ring size -> makespan of its schedule).

    Raises
    ------
    InvalidInstance
        If ``rings`` is not one of :data:`RINGS`.

    References
    ----------
    .. [1] SiP-ML, SIGCOMM 2021, §3.2 "Placement" and Algorithm 1, §4.2 (the search
       over k); fabricopt docs, *Departures*, sipml-1.3 and sipml-1.4.

    Examples
    --------
    >>> from fabricopt.problems.placement import SubOp, Dep
    >>> ops = [SubOp(name, 1.0) for name in "abcd"]
    >>> deps = [Dep(src, "d", 1.0) for src in "abc"]
    >>> sol, info = sipml(PlacementInstance(4, 1, 8.0, ops, deps), rings="full")
    >>> dict(sol.gpu), info["relocations"]   # d's parents on GPUs 0, 1, 2: c moves back
    ({'a': 0, 'b': 1, 'c': 0, 'd': 1}, 1)
    """
    if rings not in RINGS:
        fail("rings", rings, f"must be one of {', '.join(RINGS)}")
    # algorithm1 on arrays, each ring's placement kept as arrays for its schedule
    arrays = _KernelArrays(instance)
    gpu, order, info = _algorithm1_arrays(instance, instance.gpus, instance.max_peers + 1,
                                          arrays)
    info["ring_gpus"] = instance.gpus
    if rings == "search" and instance.gpus > 1:
        placed = {instance.gpus: (gpu, order),
                  1: (np.zeros(instance.size, dtype=np.int64), order)}
        small = degree_safe_gpus(instance)
        if small < instance.gpus:
            placed[small] = _algorithm1_arrays(instance, small, small, arrays)[:2]
        timed = _scheduled(instance, placed)
        makespans = {ring: float(end.max()) if end.size else 0.0
                     for ring, (_, end) in timed.items()}
        info["ring_makespans_s"] = makespans
        kept = min(makespans, key=lambda ring: (makespans[ring], -ring))
        (gpu, order), info["ring_gpus"] = placed[kept], kept
        start = timed[kept][0]
    else:
        start = _scheduled(instance, {instance.gpus: (gpu, order)})[instance.gpus][0]
    return PlacementSolution._of_instance(instance, gpu, start), info
