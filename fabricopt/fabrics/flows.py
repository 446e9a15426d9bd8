"""The model-parallel step of a placed job, simulated with its transfers as fluid flows.

Every GPU runs its ops in the placement's order, each as soon as the GPU is free and
every input has arrived. When an op ends, each of its outputs bound for another GPU
becomes a flow of its bytes; the flows in progress share the fabric's links max-min
fairly (progressive filling, as the ``crux`` kind's simulator shares links), and
their rates change only when a flow starts or ends, so time jumps from event to event.
The event loop runs compiled (:mod:`fabricopt.fabrics._flows_kernel`); the Python loop
here is its oracle, bit for bit (``step_s(..., backend="python")``).

What a fabric's flows share is a :class:`Links`: capacities and, per GPU pair, the
links a transfer crosses. One rule for every fabric:

- a packet switch (:func:`port_links`): a GPU's egress and ingress ports, and a
  server's (or edge switch's) uplink for transfers between servers, so concurrent
  transfers split a port as they come and go, and a lone transfer gets all of it;
- circuits, lightpaths, routed paths (:func:`pair_links`): the capacity the fabric's
  configuration gives the pair, shared by that pair's concurrent transfers only.

With one transfer per port at a time (or each pair alone on its circuits), every
transfer runs at its link's full rate and the step is the longest path of the
schedule with fixed transfer times. Sharing never makes a transfer faster than alone,
so the step is at least that longest path at the links' full rates; and max-min
fairness gives a flow at least its link's capacity over the flows that ever use the
link, so the step is at most that longest path at those rates (both tested).

References
----------
.. [1] M. Khani et al., "SiP-ML", SIGCOMM 2021, §3.2 (Algorithm 1's list schedule),
   §4.1 (Elect-Flat, Elect-Cluster: electrical ports shared by the flows of a GPU).
.. [2] D. Bertsekas and R. Gallager, "Data Networks", 2nd ed., §6.5.2 (max-min
   fairness by progressive filling).
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from typing import Callable, Hashable

import numpy as np

from fabricopt.errors import InvalidArgument
from fabricopt.fabrics import _flows_kernel

__all__ = ["Links", "pair_links", "port_links", "step_s", "step_s_of_arrays"]

# Flows whose finish times lie within this fraction of the clock end together.
_EVENT_RTOL = 1e-12
# Transfers of one pair overlapping by less than this fraction of the step are
# taken to run one after the other (a float-rounding margin).
_OVERLAP_RTOL = 1e-9


@dataclass(frozen=True, eq=False)
class Links:
    """What the transfers of a fabric share.

    Attributes
    ----------
    capacity_gbps : numpy.ndarray
        Capacity of each link, indexed by link id.
    route : callable
        ``route(i, j)``: the link ids a transfer from GPU i to GPU j crosses.
    group_key : callable or None
        ``group_key(base, k)``: a key such that the group of GPUs ``base .. base+k-1``
        shares no link with another group and simulates exactly as every group with
        the same key. None: groups may share links and are simulated together.
    pair_gbps : numpy.ndarray or None
        For :func:`pair_links`, the pair capacities: a group whose transfers of one
        pair never overlap at those rates shares nothing, and its step is the
        longest path at those rates, computed for every group at once.
    """

    capacity_gbps: np.ndarray
    route: Callable[[int, int], tuple]
    group_key: Callable[[int, int], Hashable] | None
    pair_gbps: np.ndarray | None = None


def _overlapping(pair: np.ndarray, begin: np.ndarray, finish: np.ndarray) -> np.ndarray:
    """Per group (column), whether two transfers of one pair overlap: ``pair`` numbers
    each transfer's pair (a column), ``begin`` and ``finish`` its times per group."""
    # Sort each group's transfers by (pair, start) in one argsort: pair p's
    # times are offset by p spans, so no two pairs' intervals interleave.
    span = float(np.nanmax(np.where(np.isfinite(finish), finish, 0.0))) + 1.0
    order = np.argsort(pair * span + begin, axis=0, kind="stable")
    begin = np.take_along_axis(pair * span + begin, order, axis=0)
    finish = np.maximum.accumulate(np.take_along_axis(pair * span + finish, order, axis=0),
                                   axis=0)
    return ((begin[1:] < finish[:-1] - _OVERLAP_RTOL * span).any(axis=0)
            | ~np.isfinite(finish).all(axis=0))


def pair_links(pair_gbps: np.ndarray) -> Links:
    """Each GPU pair's own capacity (circuits, lightpaths, a routed path's rate), shared
    only by that pair's concurrent transfers.

    Examples
    --------
    >>> links = pair_links(np.array([[0.0, 8.0], [4.0, 0.0]]))
    >>> links.route(1, 0), float(links.capacity_gbps[links.route(1, 0)[0]])
    ((2,), 4.0)
    """
    rates = np.asarray(pair_gbps, dtype=float)
    n = rates.shape[0]

    def key(base: int, k: int) -> bytes:
        return np.ascontiguousarray(rates[base:base + k, base:base + k]).tobytes()

    return Links(rates.reshape(-1), lambda i, j: (i * n + j,), key, rates)


def port_links(nodes: int, gbps: float, group: np.ndarray | None = None,
               group_gbps: float | None = None) -> Links:
    """A packet switch: every GPU's egress and ingress port of ``gbps``; with ``group``
    (node -> server or edge switch), each group's uplink out and in of ``group_gbps``,
    crossed by transfers between groups.

    Examples
    --------
    >>> links = port_links(4, 8.0, np.array([0, 0, 1, 1]), 2.0)
    >>> links.route(0, 1), links.route(0, 2)
    ((0, 5), (0, 6, 8, 11))
    >>> links.capacity_gbps.tolist()
    [8.0, 8.0, 8.0, 8.0, 8.0, 8.0, 8.0, 8.0, 2.0, 2.0, 2.0, 2.0]
    """
    n = nodes
    if group is None:
        capacity = np.full(2 * n, float(gbps))

        def route(i: int, j: int) -> tuple:
            return (i, n + j)

        return Links(capacity, route, lambda base, k: None)
    where = np.asarray(group)
    groups = int(where.max()) + 1 if n else 0
    capacity = np.concatenate([np.full(2 * n, float(gbps)), np.full(2 * groups, float(group_gbps))])

    def route(i: int, j: int) -> tuple:
        gi, gj = int(where[i]), int(where[j])
        if gi == gj:
            return (i, n + j)
        return (i, n + j, 2 * n + gi, 2 * n + groups + gj)

    # each group's first and last node: the nodes of a set of groups span from the
    # least first to the greatest last
    first = np.full(groups, n, dtype=np.int64)
    last = np.full(groups, -1, dtype=np.int64)
    np.minimum.at(first, where, np.arange(n))
    np.maximum.at(last, where, np.arange(n))

    def key(base: int, k: int):
        # A group owns its uplinks when no server holds GPUs of two groups, or when
        # it lies inside one server (its transfers then never leave the server).
        local = where[base:base + k]
        if local.min() == local.max() or (first[local].min() == base
                                          and last[local].max() == base + k - 1):
            return tuple((local - local[0]).tolist())
        return _SHARED

    return Links(capacity, route, key)


_SHARED = object()
_BACKENDS = ("compiled", "python")


def step_s(ops, deps, gpu: dict, k: int, l: int, links: Links, backend: str = "compiled") -> float:
    """The model-parallel step of ``l`` groups of ``k`` GPUs, each running the same
    placement, with its cross-GPU transfers as fluid flows on ``links``.

    Parameters
    ----------
    ops : sequence of (id, compute_s)
        Ops in execution order; each GPU runs its own in this order.
    deps : sequence of (src, dst, bytes)
    gpu : dict
        Op id -> GPU in 0..k-1 of its group; group g uses GPUs ``g*k .. g*k+k-1``.
    k, l : int
    links : Links
    backend : {"compiled", "python"}
        Who simulates the flows: the compiled event loop
        (:mod:`fabricopt.fabrics._flows_kernel`) or the Python one, its oracle; both
        give bit-for-bit the same step.

    Returns
    -------
    float
        When the last op of the slowest group ends; ``inf`` if a transfer crosses a
        link of no capacity.

    Examples
    --------
    Two transfers leave GPU 0 together and share its 8 Gbps port; each then has
    1 GB to move at 4 Gbps (2 s); on their own circuits of 8 Gbps each takes 1 s.

    >>> ops = [("a", 1.0), ("b", 1.0), ("c", 1.0)]
    >>> deps = [("a", "b", 1e9), ("a", "c", 1e9)]
    >>> where = {"a": 0, "b": 1, "c": 2}
    >>> step_s(ops, deps, where, 3, 1, port_links(3, 8.0))
    4.0
    >>> step_s(ops, deps, where, 3, 1, pair_links(np.full((3, 3), 8.0)))
    3.0
    """
    if backend not in _BACKENDS:
        raise InvalidArgument(f"backend: {backend!r} is not one of {sorted(_BACKENDS)}")
    if not ops:
        return 0.0
    return _step_s(_Schedule(ops, deps, gpu, k), l, links, backend)


def step_s_of_arrays(compute, gpu, src, dst, nbytes, k: int, l: int, links: Links,
                     backend: str = "compiled") -> float:
    """:func:`step_s` of a placement given as arrays: per op (in execution order) its
    compute and GPU, per dep (in the deps' order) its ends' positions and its bytes —
    the same step, without indexing ops by id."""
    if backend not in _BACKENDS:
        raise InvalidArgument(f"backend: {backend!r} is not one of {sorted(_BACKENDS)}")
    if not len(compute):
        return 0.0
    return _step_s(_Schedule.from_arrays(compute, gpu, src, dst, nbytes, k), l, links, backend)


def _step_s(schedule: "_Schedule", l: int, links: Links, backend: str) -> float:
    k = schedule.k
    run = schedule.run if backend == "python" else schedule.run_compiled
    if not schedule.crossing:
        return schedule.alone_s()
    worst, groups = 0.0, range(l)
    if links.pair_gbps is not None:
        fixed_rate = schedule.fixed_rate if backend == "python" else schedule.fixed_rate_compiled
        makespan, shared = fixed_rate(links.pair_gbps, l)
        worst = float(makespan[~shared].max()) if not shared.all() else 0.0
        groups = np.flatnonzero(shared).tolist()
        if not groups:
            return worst
    if links.group_key is not None:
        keys = [links.group_key(g * k, k) for g in groups]
        if not any(key is _SHARED for key in keys):
            seen = set()
            for g, key in zip(groups, keys):
                if key in seen:
                    continue
                seen.add(key)
                worst = max(worst, run([g * k], links))
            return worst
    return max(worst, run([g * k for g in range(l)], links))


class _Schedule:
    """A placement's ops and transfers, indexed once for every simulation of it."""

    def __init__(self, ops, deps, gpu: dict, k: int):
        index = {op: n for n, (op, _) in enumerate(ops)}
        self.n = len(ops)
        self.k = k
        self.compute = [float(c) for _, c in ops]
        self.gpu = [int(gpu[op]) for op, _ in ops]
        self.order = [[] for _ in range(k)]
        for n, g in enumerate(self.gpu):
            self.order[g].append(n)
        self.inputs = [0] * self.n
        self.outputs = [[] for _ in range(self.n)]
        self.crossing = False
        self._arrays = None
        self._pairs = None
        for src, dst, nbytes in deps:
            s, d = index[src], index[dst]
            self.inputs[d] += 1
            moves = self.gpu[s] != self.gpu[d] and nbytes > 0
            self.crossing |= moves
            self.outputs[s].append((d, float(nbytes) * 8.0 if moves else 0.0))

    @classmethod
    def from_arrays(cls, compute, gpu, src, dst, nbytes, k: int) -> "_Schedule":
        """The schedule :meth:`__init__` makes of the same placement, from arrays (see
        :func:`step_s_of_arrays`), with its compiled loop's arrays made at once."""
        self = cls.__new__(cls)
        compute = np.asarray(compute, dtype=float)
        gpu = np.asarray(gpu, dtype=np.int64)
        src, dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
        nbytes = np.asarray(nbytes, dtype=float)
        n = self.n = len(compute)
        self.k = k
        self.compute, self.gpu = compute.tolist(), gpu.tolist()
        by_gpu = np.argsort(gpu, kind="stable")
        order_ptr = np.zeros(k + 1, dtype=np.int64)
        np.cumsum(np.bincount(gpu, minlength=k), out=order_ptr[1:])
        self.order = [by_gpu[a:b].tolist() for a, b in zip(order_ptr[:-1], order_ptr[1:])]
        inputs = np.bincount(dst, minlength=n).astype(np.int64)
        self.inputs = inputs.tolist()
        moves = (gpu[src] != gpu[dst]) & (nbytes > 0)
        self.crossing = bool(moves.any())
        bits = np.where(moves, nbytes * 8.0, 0.0)
        # each op's outputs in the deps' order, as __init__ appends them
        by_src = np.argsort(src, kind="stable")
        out_ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(src, minlength=n), out=out_ptr[1:])
        out_dst, out_bits = dst[by_src], bits[by_src]
        self._outputs = None
        self._arrays = (compute, gpu, order_ptr, by_gpu.astype(np.int64), inputs, out_ptr,
                        out_dst, out_bits, src[by_src])
        self._pairs = None
        return self

    @property
    def outputs(self) -> list:
        """Per op, its ``(dst, bits)`` in the deps' order (bits 0 if it crosses no GPUs)."""
        if self._outputs is None:
            _, _, _, _, _, out_ptr, out_dst, out_bits, _ = self._arrays
            pairs = list(zip(out_dst.tolist(), out_bits.tolist()))
            bounds = out_ptr.tolist()
            self._outputs = [pairs[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
        return self._outputs

    @outputs.setter
    def outputs(self, value: list) -> None:
        self._outputs = value

    def alone_s(self) -> float:
        """No transfer crosses GPUs: the longest path with zero-time dependencies."""
        free = [0.0] * self.k
        ready = [0.0] * self.n
        # Ops in execution order respect every dependency within and across GPUs.
        end = [0.0] * self.n
        for n in range(self.n):
            g = self.gpu[n]
            start = max(free[g], ready[n])
            end[n] = start + self.compute[n]
            free[g] = end[n]
            for d, _ in self.outputs[n]:
                ready[d] = max(ready[d], end[n])
        return max(end)

    def fixed_rate(self, pair_gbps: np.ndarray, l: int) -> tuple[np.ndarray, np.ndarray]:
        """Every group's step with each transfer at its pair's whole rate, and whether
        two transfers of one pair overlap in it (then they would share the pair).

        Returns ``(makespan, shared)``, arrays of length ``l``.
        """
        n, k = self.n, self.k
        base = np.arange(l) * k
        end = np.zeros((n, l))
        free = np.zeros((k, l))
        inputs: list[list] = [[] for _ in range(n)]
        transfers: dict[tuple, list] = {}
        for s in range(n):
            for d, bits in self.outputs[s]:
                if bits:
                    rates = pair_gbps[base + self.gpu[s], base + self.gpu[d]]
                    with np.errstate(divide="ignore"):
                        delay = np.where(rates > 0, bits / (rates * 1e9), np.inf)
                    transfers.setdefault((self.gpu[s], self.gpu[d]), []).append((s, delay))
                else:
                    delay = None
                inputs[d].append((s, delay))
        for op in range(n):
            g = self.gpu[op]
            start = free[g].copy()
            for s, delay in inputs[op]:
                np.maximum(start, end[s] if delay is None else end[s] + delay, out=start)
            end[op] = start + self.compute[op]
            free[g] = end[op]
        shared = np.zeros(l, dtype=bool)
        moves = [(p, s, delay) for p, items in enumerate(transfers.values()) if len(items) > 1
                 for s, delay in items]
        if moves:
            pair = np.array([p for p, _, _ in moves], dtype=float)[:, None]
            begin = end[[s for _, s, _ in moves]]
            finish = begin + np.array([delay for _, _, delay in moves])
            shared = _overlapping(pair, begin, finish)
        return end.max(axis=0), shared

    def fixed_rate_compiled(self, pair_gbps: np.ndarray, l: int) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`fixed_rate` over arrays, its loop compiled
        (:func:`~fabricopt.fabrics._flows_kernel.fixed_rate_ends`): the same operations,
        so the same ``(makespan, shared)`` bit for bit."""
        compute, gpu, _, _, _, _, out_dst, out_bits, out_src = self.arrays()
        base = np.arange(l) * self.k
        moving = np.flatnonzero(out_bits != 0.0)
        src, dst = out_src[moving], out_dst[moving]
        rates = pair_gbps[gpu[src][:, None] + base, gpu[dst][:, None] + base]
        with np.errstate(divide="ignore"):
            delay = np.where(rates > 0, out_bits[moving][:, None] / (rates * 1e9), np.inf)
        row = np.full(len(out_dst), -1, dtype=np.int64)
        row[moving] = np.arange(len(moving))
        by_dst = np.argsort(out_dst, kind="stable")
        in_ptr = np.zeros(self.n + 1, dtype=np.int64)
        np.cumsum(np.bincount(out_dst, minlength=self.n), out=in_ptr[1:])
        end = _flows_kernel.fixed_rate_ends(self.k, l, compute, gpu, in_ptr, out_src[by_dst],
                                            row[by_dst], np.ascontiguousarray(delay))
        shared = np.zeros(l, dtype=bool)
        # the pairs numbered by first use, as fixed_rate's dict; those with two or more
        # transfers, each pair's in the order met
        code = gpu[src] * self.k + gpu[dst]
        _, first, which, count = np.unique(code, return_index=True, return_inverse=True,
                                           return_counts=True)
        number = np.empty(len(first), dtype=np.int64)
        number[np.argsort(first, kind="stable")] = np.arange(len(first))
        pair_of = number[np.asarray(which).reshape(-1)]
        kept = np.flatnonzero(count[np.asarray(which).reshape(-1)] > 1)
        kept = kept[np.argsort(pair_of[kept], kind="stable")]
        if len(kept):
            shared = _overlapping(pair_of[kept].astype(float)[:, None], end[src[kept]],
                                  end[src[kept]] + delay[kept])
        return end.max(axis=0), shared

    def arrays(self) -> tuple:
        """The schedule as the compiled loop's arrays (built once)."""
        if self._arrays is None:
            n, k = self.n, self.k
            gpu = np.array(self.gpu, dtype=np.int64).reshape(n)
            order_ptr = np.zeros(k + 1, dtype=np.int64)
            order_ptr[1:] = np.cumsum([len(o) for o in self.order])
            order_idx = np.array([op for o in self.order for op in o], dtype=np.int64).reshape(n)
            out_ptr = np.zeros(n + 1, dtype=np.int64)
            out_ptr[1:] = np.cumsum([len(o) for o in self.outputs])
            out_dst = np.array([d for o in self.outputs for d, _ in o], dtype=np.int64)
            out_bits = np.array([b for o in self.outputs for _, b in o], dtype=float)
            out_src = np.repeat(np.arange(n, dtype=np.int64), np.diff(out_ptr))
            self._arrays = (np.array(self.compute, dtype=float).reshape(n), gpu, order_ptr,
                            order_idx, np.array(self.inputs, dtype=np.int64).reshape(n),
                            out_ptr, out_dst.reshape(-1), out_bits.reshape(-1),
                            out_src.reshape(-1))
        return self._arrays

    def pairs(self) -> tuple:
        """The outputs that move bytes, the distinct GPU pairs they join (``2 x p``),
        and each such output's pair."""
        if self._pairs is None:
            _, gpu, _, _, _, _, out_dst, out_bits, out_src = self.arrays()
            moving = np.flatnonzero(out_bits != 0.0)
            code = gpu[out_src[moving]] * self.k + gpu[out_dst[moving]]
            distinct, which = np.unique(code, return_inverse=True)
            self._pairs = (moving, np.stack([distinct // self.k, distinct % self.k]),
                           np.asarray(which).reshape(-1))
        return self._pairs

    def run_compiled(self, bases: list[int], links: Links) -> float:
        """:meth:`run`, by the compiled event loop."""
        compute, gpu, order_ptr, order_idx, inputs, out_ptr, out_dst, out_bits, out_src = \
            self.arrays()
        moving, pairs, which = self.pairs()
        m = out_dst.shape[0]
        lengths = np.zeros((len(bases), m), dtype=np.int64)
        pieces = []
        for c, base in enumerate(bases):
            routes = [links.route(base + int(i), base + int(j)) for i, j in pairs.T]
            sizes = np.array([len(r) for r in routes], dtype=np.int64)
            lengths[c, moving] = sizes[which]
            flat = np.array([x for r in routes for x in r], dtype=np.int64)
            starts = np.cumsum(sizes) - sizes
            # each moving output's route, in output order: its pair's links
            step = np.arange(int(sizes.max(initial=0)))[None, :]
            take = starts[which][:, None] + step
            pieces.append(flat[take[step < sizes[which][:, None]]] if flat.size else flat)
        route_ptr = np.zeros(len(bases) * m + 1, dtype=np.int64)
        route_ptr[1:] = np.cumsum(lengths.reshape(-1))
        route_idx = (np.concatenate(pieces) if pieces else np.zeros(0)).astype(np.int64)
        capacity = np.ascontiguousarray(links.capacity_gbps, dtype=float)
        return float(_flows_kernel.run_groups(
            self.k, len(bases), compute, gpu, order_ptr, order_idx, inputs, out_ptr,
            out_dst, out_bits, route_ptr, route_idx, capacity))

    def run(self, bases: list[int], links: Links) -> float:
        """Simulate the groups starting at GPUs ``bases`` together on ``links``."""
        n, k = self.n, self.k
        groups = len(bases)
        pending = self.inputs * groups          # unarrived inputs of (group, op)
        cursor = [0] * (k * groups)             # next op of each (group, GPU)
        busy = [False] * (k * groups)
        running: list = []                      # heap of (end, group * n + op)
        flows: list = []                        # [bits left, link ids, group * n + dst]
        rates: list = []
        done = 0
        clock = 0.0
        known: dict[int, float] = {}
        fills: dict[tuple, list] = {}

        def capacity(r: int) -> float:
            c = known.get(r)
            if c is None:
                c = known[r] = float(links.capacity_gbps[r])
            return c

        def try_start(slot: int, now: float) -> None:
            g, gpu = divmod(slot, k)
            order = self.order[gpu]
            c = cursor[slot]
            if busy[slot] or c >= len(order):
                return
            op = order[c]
            if pending[g * n + op]:
                return
            cursor[slot] = c + 1
            busy[slot] = True
            heapq.heappush(running, (now + self.compute[op], g * n + op))

        for slot in range(k * groups):
            try_start(slot, 0.0)
        changed = False
        while running or flows:
            if changed:
                key = tuple(flow[1] for flow in flows)
                rates = fills.get(key)
                if rates is None:
                    rates = fills[key] = _fill(list(key), capacity)
                changed = False
            next_op = running[0][0] if running else math.inf
            next_flow, first = math.inf, -1
            for f, (bits, _, _) in enumerate(flows):
                rate = rates[f]
                if rate > 0:
                    t = clock + bits / (rate * 1e9)
                    if t < next_flow:
                        next_flow, first = t, f
            now = min(next_op, next_flow)
            if next_op < next_flow:
                first = -1                      # an op ends first
            if math.isinf(now):
                return math.inf                 # a transfer on a link of no capacity
            horizon = now + _EVENT_RTOL * max(abs(now), 1e-300)
            touched = set()
            if flows:
                elapsed = now - clock
                kept = []
                for f, flow in enumerate(flows):
                    rate = rates[f]
                    if rate > 0 and (f == first or clock + flow[0] / (rate * 1e9) <= horizon):
                        x = flow[2]
                        pending[x] -= 1
                        g, op = divmod(x, n)
                        touched.add(g * k + self.gpu[op])
                        changed = True
                    else:
                        flow[0] -= rate * 1e9 * elapsed
                        kept.append(flow)
                if changed:
                    flows = kept
            clock = now
            while running and running[0][0] <= horizon:
                _, x = heapq.heappop(running)
                done += 1
                g, op = divmod(x, n)
                slot = g * k + self.gpu[op]
                busy[slot] = False
                touched.add(slot)
                base = bases[g]
                for d, bits in self.outputs[op]:
                    if bits:
                        flows.append([bits, links.route(base + self.gpu[op], base + self.gpu[d]),
                                      g * n + d])
                        changed = True
                    else:
                        pending[g * n + d] -= 1
                        touched.add(g * k + self.gpu[d])
            for slot in touched:
                try_start(slot, clock)
        if done < n * groups:
            return math.inf
        return clock


def _fill(routes: list, capacity: Callable[[int], float]) -> list[float]:
    """Max-min fair rates (Gbps) of flows on their links, by progressive filling: the
    link with the least capacity left per unfrozen flow fixes those flows' rate.

    Examples
    --------
    Bertsekas & Gallager's shape: f0 on links 0 and 1, f1 on 0, f2 on 1.

    >>> _fill([(0, 1), (0,), (1,)], [1.0, 2.0].__getitem__)
    [0.5, 0.5, 1.5]
    """
    users: dict[int, list] = {}
    for f, route in enumerate(routes):
        for r in route:
            users.setdefault(r, []).append(f)
    if len(users) == sum(map(len, routes)):             # no link shared: each its own
        return [min(capacity(r) for r in route) for route in routes]
    if all(len(route) == 1 for route in routes):        # one link each: an even split
        return [capacity(r) / len(users[r]) for (r,) in routes]
    residual = {r: capacity(r) for r in users}
    count = {r: len(u) for r, u in users.items()}
    rate = [0.0] * len(routes)
    frozen = [False] * len(routes)
    while count:
        tight = min(count, key=lambda r: residual[r] / count[r])
        share = residual[tight] / count[tight]
        for f in users[tight]:
            if frozen[f]:
                continue
            frozen[f] = True
            rate[f] = share
            for r in routes[f]:
                residual[r] -= share
                count[r] -= 1
                if not count[r]:
                    del count[r]
    return rate
