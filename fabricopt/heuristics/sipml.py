"""SiP-ML's degree-aware parallelization (SIGCOMM 2021, §3.2, Algorithm 1, §4.2).

* :func:`balance` splits every op of an op graph into sub-ops of about ``tau_s``: the
  balanced computation graph, as a ``placement`` instance.
* :func:`feasible_set` is the forward distance window: a sub-op on GPU j may read from a
  parent on GPU p only if ``(j - p) mod k < D``, so every GPU sends to at most ``D - 1``
  others and receives from at most ``D - 1``.
* :func:`sipml` is Algorithm 1: sub-ops in topological order, each on the earliest
  available GPU of its window (ties to the smallest index), with the paper's backward
  relocation when the window is empty — which the authors' code never implemented.
* :func:`unconstrained` is Algorithm 1 without the window: SiP-ML's electrical baseline.
* :func:`search_parallelism` picks the model- and data-parallel degrees (k, l).

The window size is ``D = max_peers + 1``: SiP-ML's degree D less the circuit kept for
the data-parallel ring is ``max_peers``.

References
----------
.. [1] M. Khani et al., "SiP-ML: High-Bandwidth Optical Network Interconnects for
   Machine Learning Training", SIGCOMM 2021, §3.2 and §4.2; notes/sipml.md §1.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from typing import Iterable

from ..errors import InvalidInstance
from ..problems._validate import as_float, as_int
from ..problems.opgraph import OpGraph
from ..problems.placement import (PlacementInstance, PlacementSolution, advance, evaluate,
                                  schedule, split_op_graph)

__all__ = ["sub_op_count", "balance", "feasible_set", "algorithm1", "sipml", "unconstrained",
           "degree_safe_gpus", "ParallelismPlan", "search_parallelism"]

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
       (notes/sipml.md §1.1). RostAM's τ is 1 µs (or 0 through an integer truncation);
       we use the τ passed in.

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
    empty intersection as "all GPUs" (notes/sipml.md §1.3); both break the degree bound,
    and neither is copied. For {0, 7} with k = 8, D = 3 the windows are {0, 1, 2} and
    {7, 0, 1}, so the answer is {0, 1} (the notes' table says {7, 0, 1}, which would let
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


def _nearest(mask: int, gpu: int, k: int) -> int:
    """The GPU of ``mask`` (non-empty) at the least cyclic distance from ``gpu``
    (ties: smallest index).

    Examples
    --------
    >>> _nearest(0b10000001, 4, 8), _nearest(0b10000010, 4, 8), _nearest(0b00100000, 4, 8)
    (7, 1, 5)
    """
    rotated = ((mask >> gpu) | (mask << (k - gpu))) & ((1 << k) - 1)  # bit i: GPU gpu+i
    ahead = (rotated & -rotated).bit_length() - 1
    if ahead == 0:
        return gpu
    behind = k - (rotated.bit_length() - 1)
    if ahead != behind:
        return (gpu + ahead) % k if ahead < behind else (gpu - behind) % k
    return min((gpu + ahead) % k, (gpu - behind) % k)


# How often the nearest-GPU repair may move one op during one relocation before the
# rest of that relocation collapses conflicts onto the target GPU instead.
_MOVES_PER_OP = 2
_PINNED = 1 << 30


class _Relocator:
    """SiP-ML's backward relocation over the ops placed so far (``dev[v] >= 0``).

    The forward window holds for every dep with bytes > 0 between placed ops before a
    relocation; afterwards it holds again for all of them and for ``x``, so the paper's
    restart only has to re-time ops, never to re-place them, and a relocation can not
    undo an earlier one: Algorithm 1 ends after at most one relocation per op.
    """

    def __init__(self, k: int, degree: int, dev: list, comm_parents: list, comm_children: list):
        self.k, self.degree, self.dev = k, degree, dev
        self.parents, self.children = comm_parents, comm_children
        self.masks = _window_masks(k, degree)                  # GPUs a child of p may use
        self.back_masks = _window_masks(k, degree, backward=True)  # GPUs a parent of c may use

    def ok(self, a: int, b: int) -> bool:
        """Does the dep a -> b satisfy the forward window?"""
        return (self.dev[b] - self.dev[a]) % self.k < self.degree

    def _broken_edges(self, v: int) -> list[tuple[int, int]]:
        """Deps with bytes > 0 between ``v`` and placed ops that break the window."""
        dev, k, degree = self.dev, self.k, self.degree
        d = dev[v]
        return [(u, v) for u in self.parents[v] if dev[u] >= 0 and (d - dev[u]) % k >= degree] \
            + [(v, c) for c in self.children[v] if dev[c] >= 0 and (dev[c] - d) % k >= degree]

    def target(self, x: int, free: list, pos: list) -> int:
        """The parent GPU for ``x`` leaving the fewest parents to move, each weighted by
        the placed children it could upset; ties go to the GPU whose movers were placed
        most recently (an old op drags a long restart and its other children along),
        then to the earliest free, then to the smallest index. The paper's choice is
        garbled in every copy we have."""
        k, degree, dev = self.k, self.degree, self.dev

        def cost(t: int) -> int:
            return sum(1 + sum(c != x and dev[c] >= 0 for c in self.children[u])
                       for u in self.parents[x] if (t - dev[u]) % k >= degree)

        def age(t: int) -> int:
            return -min((pos[u] for u in self.parents[x] if (t - dev[u]) % k >= degree),
                        default=0)

        return min({dev[u] for u in self.parents[x]}, key=lambda t: (cost(t), age(t), free[t], t))

    def relocate(self, x: int, t: int) -> tuple[list[int], bool]:
        """Put ``x`` on ``t`` and repair every window the move breaks.

        Each violated dep moves the end that has moved less in this relocation — first
        the parents of ``x``, then their parents (the paper's backward process) and any
        placed child a move strands (the paper's "re-placing") — to the nearest GPU that
        satisfies it, preferring GPUs that keep all its other placed deps, then those
        that keep the deps to ops moved already. An op moves at most ``_MOVES_PER_OP``
        times; conflicts left then collapse onto ``t`` (both ends of a broken dep go to
        ``t``), which always ends.

        Returns
        -------
        moved : list of int
            Ops given a new GPU, ``x`` excluded.
        collapsed : bool
            Whether the collapse was needed.
        """
        dev, masks, back = self.dev, self.masks, self.back_masks
        parents, children, k, degree = self.parents, self.children, self.k, self.degree
        dev[x] = t
        count = {x: _PINNED}
        queue = deque((u, x) for u in parents[x] if (t - dev[u]) % k >= degree)
        left = []
        while queue:
            a, b = queue.popleft()
            da, db = dev[a], dev[b]
            if (db - da) % k < degree:
                continue
            ca, cb = count.get(a, 0), count.get(b, 0)
            if ca >= _MOVES_PER_OP and cb >= _MOVES_PER_OP:
                left.append((a, b))
                continue
            mover = a if ca <= cb else b          # ties: the parent, backwards
            keep_all = keep_moved = back[db] if mover == a else masks[da]
            for u in parents[mover]:
                if dev[u] >= 0:
                    keep_all &= masks[dev[u]]
                    if u in count:
                        keep_moved &= masks[dev[u]]
            for c in children[mover]:
                if dev[c] >= 0:
                    keep_all &= back[dev[c]]
                    if c in count:
                        keep_moved &= back[dev[c]]
            if not keep_all:
                keep_all = keep_moved or (back[db] if mover == a else masks[da])
            dev[mover] = d = _nearest(keep_all, dev[mover], k)
            count[mover] = count.get(mover, 0) + 1
            for u in parents[mover]:
                if dev[u] >= 0 and (d - dev[u]) % k >= degree:
                    queue.append((u, mover))
            for c in children[mover]:
                if dev[c] >= 0 and (dev[c] - d) % k >= degree:
                    queue.append((mover, c))
        collapsed = False
        while left:
            a, b = left.pop()
            if self.ok(a, b):
                continue
            collapsed = True
            for v in (a, b):
                if dev[v] != t:
                    dev[v] = t
                    count.setdefault(v, 0)
                    left.extend(self._broken_edges(v))
        del count[x]
        return list(count), collapsed


# Algorithm 1 keeps the GPUs' free times every _SNAP positions, so that a relocation
# re-times only the ops after the earliest one it moved.
_SNAP = 256


def algorithm1(instance: PlacementInstance, *, gpus: int | None = None,
               degree: int | None = None) -> tuple[list[int], list[int], dict]:
    """Algorithm 1 of SiP-ML: a GPU for every op, in a topological placement order.

    Parameters
    ----------
    instance : PlacementInstance
    gpus : int, optional
        Use GPUs ``0..gpus-1`` only (default: all).
    degree : int, optional
        Window size D (default ``max_peers + 1``); ``degree >= gpus`` removes the window.

    Returns
    -------
    gpu : list of int
        GPU of each op (indexed like ``instance.ops``).
    order : list of int
        The placement order (ops listed in topological order give ``0..n-1``).
    info : dict
        ``relocations`` (empty windows met), ``relocated_ops`` (moves they made) and
        ``collapses`` (relocations whose nearest-GPU repair ran out of moves and were
        finished by collapsing conflicts onto the target GPU).

    Notes
    -----
    The placement order is the topological order of ``instance`` with ties by position,
    which for a balanced graph from :func:`balance` is the paper's "ops in topological
    order, sub-ops in index order". Only deps with bytes > 0 constrain the window: the
    degree limit counts only those. An op starts when its GPU is free and its parents
    have ended plus their transfers across GPUs (the paper's line 10 leaves out the
    transfer; a schedule cannot).

    The paper repeats relocation and restart "until nothing changes" and leaves
    convergence open. Here a relocation restores the window on every placed dep (see
    :class:`_Relocator`), so the restart only re-times the ops after the earliest moved
    one and the loop ends after at most one relocation per op: the rounds are bounded
    by construction, and ``collapses`` says where the paper's nearest-GPU moves alone
    did not settle.

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
    n = instance.size
    k = instance.gpus if gpus is None else gpus
    degree = instance.max_peers + 1 if degree is None else degree
    order = instance.topological_order()
    pos = [0] * n
    for i, v in enumerate(order):
        pos[v] = i
    comm_parents = [sorted({u for u, _, b in instance.parents[v] if b}) for v in range(n)]
    comm_children = [sorted({w for w, _, b in instance.children[v] if b}) for v in range(n)]
    dev, end, free = [-1] * n, [0.0] * n, [0.0] * k
    relocator = _Relocator(k, degree, dev, comm_parents, comm_children) if degree < k else None
    masks = relocator.masks if relocator else None
    full = (1 << k) - 1
    snaps: dict[int, list] = {}
    info = {"relocations": 0, "relocated_ops": 0, "collapses": 0}

    for i, x in enumerate(order):
        if i % _SNAP == 0:
            snaps[i] = list(free)
        if relocator is None:
            dev[x] = _earliest(full, free)
        else:
            mask = full
            for u in comm_parents[x]:
                mask &= masks[dev[u]]
            if mask:
                dev[x] = _earliest(mask, free)
            else:
                moved, collapsed = relocator.relocate(x, relocator.target(x, free, pos))
                info["relocations"] += 1
                info["relocated_ops"] += len(moved)
                info["collapses"] += collapsed
                j = min(pos[v] for v in moved)
                p = j - j % _SNAP
                free[:] = snaps[p]
                while p < i:                      # re-time; nothing before j moved
                    snaps[p] = list(free)
                    advance(instance, order[p:min(p + _SNAP, i)], dev, end, free)
                    p += _SNAP
                if i % _SNAP == 0:
                    snaps[i] = list(free)
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
    gpu, order, _ = algorithm1(instance, gpus=k, degree=k)
    return schedule(instance, gpu, order)


def sipml(instance: PlacementInstance) -> tuple[PlacementSolution, dict]:
    """SiP-ML's Algorithm 1 with backward relocation, scheduled as early as possible.

    Parameters
    ----------
    instance : PlacementInstance

    Returns
    -------
    solution : PlacementSolution
        Every dep with bytes > 0 goes from GPU p to one of p .. p + max_peers (mod k),
        so no GPU has more than ``max_peers`` peers in either direction.
    info : dict
        ``relocations``, ``relocated_ops``, ``collapses`` (see :func:`algorithm1`).

    References
    ----------
    .. [1] SiP-ML, SIGCOMM 2021, §3.2 "Placement" and Algorithm 1; notes/sipml.md §1.3-1.4.

    Examples
    --------
    >>> from fabricopt.problems.placement import SubOp, Dep
    >>> ops = [SubOp(name, 1.0) for name in "abcd"]
    >>> deps = [Dep(src, "d", 1.0) for src in "abc"]
    >>> sol, info = sipml(PlacementInstance(4, 1, 8.0, ops, deps))
    >>> dict(sol.gpu), info["relocations"]   # d's parents on GPUs 0, 1, 2: c moves next to d
    ({'a': 0, 'b': 1, 'c': 1, 'd': 1}, 1)
    """
    gpu, order, info = algorithm1(instance)
    return schedule(instance, gpu, order), info


@dataclass(frozen=True)
class ParallelismPlan:
    """The chosen hybrid parallelism and what it costs.

    Attributes
    ----------
    mp_degree, dp_degree : int
        k GPUs per model-parallel group, l data-parallel groups (``k * l = gpus``).
    iteration_s : float
        ``makespan_s + allreduce_s``.
    makespan_s : float
        Makespan of the ``sipml`` placement of one group.
    allreduce_s : float
        Ring-AllReduce time of the most loaded GPU's parameters across the l groups.
    instance, solution
        The placement of one group.
    candidates : tuple of dict
        Every (k, l) tried, with its figures or the reason it was skipped.
    """

    mp_degree: int
    dp_degree: int
    iteration_s: float
    makespan_s: float
    allreduce_s: float
    instance: PlacementInstance
    solution: PlacementSolution
    candidates: tuple = ()


def _local_batch(op_graph: OpGraph, dp_degree: int) -> OpGraph:
    """The op graph at a local batch of 1/l: compute and activations scale by 1/l."""
    if dp_degree == 1:
        return op_graph
    return OpGraph([{"id": o.id, "compute_s": o.compute_s / dp_degree,
                     "params_bytes": o.params_bytes} for o in op_graph.ops],
                   [{"src": e.src, "dst": e.dst, "bytes": e.bytes / dp_degree}
                    for e in op_graph.edges])


def _held_params_bytes(op_graph: OpGraph, instance: PlacementInstance,
                       solution: PlacementSolution) -> float:
    """Parameter bytes on the most loaded GPU: each sub-op holds 1/n of its op's."""
    params = {op.id: op.params_bytes for op in op_graph.ops}
    pieces: dict[str, int] = {}
    for op in instance.ops:
        pieces[op.group] = pieces.get(op.group, 0) + 1
    held = [0.0] * instance.gpus
    for op in instance.ops:
        held[solution.gpu[op.id]] += params[op.group] / pieces[op.group]
    return max(held)


def search_parallelism(op_graph: OpGraph, gpus: int, degree: int, link_gbps: float, *,
                       tau_s: float = 1e-5, max_dp: int | None = None) -> ParallelismPlan:
    """SiP-ML's search for the model- and data-parallel degrees on N GPUs.

    For ``l = 1, 2, 4, ...`` dividing N (and at most ``max_dp``, e.g. the global batch),
    ``k = N / l``: balance the op graph at the local batch (compute and activation bytes
    scaled by 1/l — the linear model the paper assumes where profiles are missing), place
    it with :func:`sipml` using ``max_peers = D - 1`` when ``l > 1`` (one circuit is the
    data-parallel ring) and ``D`` when ``l = 1``, and estimate the iteration time as
    the placement makespan plus the ring-AllReduce of the parameters a GPU holds,
    ``2 (l - 1) / l * M_g * 8 / (link_gbps * 1e9)``.

    Parameters
    ----------
    op_graph : OpGraph
        The model at the global batch; ``params_bytes`` are what data parallelism syncs.
    gpus : int
        N.
    degree : int
        D, circuits per GPU (>= 1).
    link_gbps : float
        Bandwidth of one circuit.
    tau_s : float
        Compute quantum for :func:`balance` (paper: 10 µs).
    max_dp : int, optional
        Largest l to try.

    Returns
    -------
    ParallelismPlan
        The (k, l) with the least estimated iteration time (ties: smaller l).

    Raises
    ------
    InvalidInstance
        If a size is invalid.

    References
    ----------
    .. [1] SiP-ML, SIGCOMM 2021, §3.2 ("GPU 1 ... with GPU 5 for DP") and §4.2;
       RostAM ``Strategy::optimize_batchsize`` (notes/sipml.md §1.2, §1.6). The paper's
       footnote: ring all-reduce exchanges 2M per worker.

    Examples
    --------
    >>> g = OpGraph([{"id": "a", "compute_s": 8e-5, "params_bytes": 1e6},
    ...              {"id": "b", "compute_s": 8e-5, "params_bytes": 1e6}],
    ...             [{"src": "a", "dst": "b", "bytes": 1e6}])
    >>> plan = search_parallelism(g, 4, 2, 100.0)
    >>> plan.mp_degree * plan.dp_degree, len(plan.candidates)
    (4, 3)
    """
    if not isinstance(op_graph, OpGraph):
        raise InvalidInstance(f"op_graph: expected an OpGraph, got {type(op_graph).__name__}")
    gpus = as_int("gpus", gpus, minimum=1)
    degree = as_int("degree", degree, minimum=1)
    link_gbps = as_float("link_gbps", link_gbps, positive=True)
    max_dp = gpus if max_dp is None else as_int("max_dp", max_dp, minimum=1)
    candidates, best = [], None
    dp = 1
    while dp <= min(gpus, max_dp):
        if gpus % dp:
            dp *= 2
            continue
        mp = gpus // dp
        max_peers = degree - 1 if dp > 1 else degree
        if mp > 1 and max_peers < 1:
            candidates.append({"mp_degree": mp, "dp_degree": dp,
                               "skipped": "no circuit left for model parallelism"})
            dp *= 2
            continue
        inst = balance(_local_batch(op_graph, dp), tau_s, mp, max_peers=max(max_peers, 1),
                       link_gbps=link_gbps)
        sol, _ = sipml(inst)
        makespan = evaluate(inst, sol)
        held = _held_params_bytes(op_graph, inst, sol)
        allreduce = 2.0 * (dp - 1) / dp * held * 8.0 / (link_gbps * 1e9)
        plan = ParallelismPlan(mp, dp, makespan + allreduce, makespan, allreduce, inst, sol)
        candidates.append({"mp_degree": mp, "dp_degree": dp, "iteration_s": plan.iteration_s,
                           "makespan_s": makespan, "allreduce_s": allreduce})
        if best is None or plan.iteration_s < best.iteration_s:
            best = plan
        dp *= 2
    return ParallelismPlan(best.mp_degree, best.dp_degree, best.iteration_s, best.makespan_s,
                           best.allreduce_s, best.instance, best.solution, tuple(candidates))
