"""``placement`` — SiP-ML degree-constrained model-parallel placement (docs/formats.rst, placement).

Sub-ops of a DNN training step form a DAG; each runs on one of ``gpus`` GPUs, one at a
time per GPU. A dependency ``u -> v`` of ``bytes`` makes ``v`` wait until ``u`` ends plus,
when they sit on different GPUs, the transfer time ``8*bytes / (link_gbps*1e9)``. An
optical fabric limits each GPU to ``max_peers`` distinct GPUs it sends bytes > 0 to,
and likewise receives from. The objective, minimized, is the makespan.

References
----------
.. [1] M. Khani et al., "SiP-ML: High-Bandwidth Optical Network Interconnects for
   Machine Learning Training", SIGCOMM 2021, §3.2 (degree-aware parallelization).
"""

from __future__ import annotations

import heapq
import math
from itertools import repeat
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from fabricopt.problems.tolerances import FEASIBILITY_RTOL as _FEASIBILITY_RTOL
from fabricopt.errors import InvalidInstance, InvalidSolution
from fabricopt.problems._array_mapping import ArrayMapping
from fabricopt.problems._kind import CheckResult, ProblemKind, register_kind
from fabricopt.problems.limits import (MAX_DERIVED, MAX_GENERATED_COUNT, MAX_GPUS, MAX_INDEX,
                                       check_magnitude, check_rate, check_transfer)
from fabricopt.problems._validate import (MIN_MAGNITUDE, as_float, as_id, as_int, as_list,
                                          fail, reject_unknown_keys, require, shown)
from fabricopt.problems.opgraph import OpGraph

__all__ = ["SubOp", "Dep", "PlacementInstance", "PlacementSolution", "check", "evaluate",
           "schedule_times", "schedule", "advance", "solution_arrays",
           "peer_sets",
           "split_op_graph", "generate", "FAMILIES", "FEASIBILITY_RTOL"]

#: Relative feasibility tolerance of docs/formats.rst (:mod:`fabricopt.problems.tolerances`).
FEASIBILITY_RTOL = _FEASIBILITY_RTOL

_INSTANCE_KEYS = ("problem", "gpus", "max_peers", "link_gbps", "ops", "deps")


@dataclass(frozen=True)
class SubOp:
    """One (sub-)op: ``compute_s`` seconds on a GPU; ``group`` names its original op."""

    id: str
    compute_s: float
    group: str | None = None


@dataclass(frozen=True)
class Dep:
    """``dst`` waits for ``src``, whose output of ``bytes`` it reads."""

    src: str
    dst: str
    bytes: float


def _parse_op(k: int, op: Any) -> SubOp:
    # An exact SubOp skips the Mapping test, an ABC check that costs more than the rest
    # of the parse on the half million sub-ops of a large balanced graph.
    if type(op) is SubOp:
        pass
    elif isinstance(op, Mapping):
        reject_unknown_keys(op, ("id", "compute_s", "group"), f"ops[{k}]")
        op = SubOp(require(op, "id"), require(op, "compute_s"), op.get("group"))
    elif not isinstance(op, SubOp):
        fail(f"ops[{k}]", op, "must be an object")
    group = None if op.group is None else as_id(f"ops[{k}].group", op.group)
    return SubOp(as_id(f"ops[{k}].id", op.id),
                 as_float(f"ops[{k}].compute_s", op.compute_s, minimum=0.0), group)


def _parse_dep(k: int, dep: Any) -> Dep:
    if type(dep) is Dep:
        pass
    elif isinstance(dep, Mapping):
        reject_unknown_keys(dep, ("src", "dst", "bytes"), f"deps[{k}]")
        dep = Dep(require(dep, "src"), require(dep, "dst"), require(dep, "bytes"))
    elif not isinstance(dep, Dep):
        fail(f"deps[{k}]", dep, "must be an object")
    return Dep(dep.src, dep.dst, as_float(f"deps[{k}].bytes", dep.bytes, minimum=0.0))


@dataclass(frozen=True)
class PlacementInstance:
    """A degree-constrained placement instance.

    Parameters
    ----------
    gpus : int
        GPUs of the model-parallel group, 1 to ``MAX_GPUS`` (4,096, see
        :mod:`fabricopt.problems.limits`).
    max_peers : int
        Distinct other GPUs a GPU may send bytes to, and receive bytes from (1 to
        ``MAX_GPUS``).
        SiP-ML keeps one of D circuits for the data-parallel ring: ``max_peers = D - 1``.
    link_gbps : float
        Bandwidth of a GPU-to-GPU transfer in 10^9 bit/s (> 0).
    ops : sequence of SubOp or dict
        Unique ids, ``compute_s >= 0``, optional ``group``.
    deps : sequence of Dep or dict
        Between known ops, ``bytes >= 0``, at most one per ordered pair, no cycle.

    Examples
    --------
    >>> inst = PlacementInstance(2, 1, 8.0, [{"id": "a", "compute_s": 1.0},
    ...                                      {"id": "b", "compute_s": 2.0}],
    ...                          [{"src": "a", "dst": "b", "bytes": 1e9}])
    >>> inst.size, inst.delay_s.tolist()
    (2, [1.0])
    """

    gpus: int
    max_peers: int
    link_gbps: float
    ops: tuple
    deps: tuple = ()

    def __post_init__(self):
        set_ = object.__setattr__
        set_(self, "gpus", as_int("gpus", self.gpus, minimum=1, maximum=MAX_GPUS))
        set_(self, "max_peers", as_int("max_peers", self.max_peers, minimum=1,
                                       maximum=MAX_GPUS))
        set_(self, "link_gbps", as_float("link_gbps", self.link_gbps, positive=True))
        ops, index = [], {}
        for k, raw in enumerate(as_list("ops", self.ops)):
            op = _parse_op(k, raw)
            if op.id in index:
                fail(f"ops[{k}].id", op.id, "repeats an earlier op id")
            index[op.id] = k
            ops.append(op)
        deps, pairs = [], set()
        for k, raw in enumerate(as_list("deps", self.deps)):
            dep = _parse_dep(k, raw)
            for end in ("src", "dst"):
                if not isinstance(getattr(dep, end), str) or getattr(dep, end) not in index:
                    fail(f"deps[{k}].{end}", getattr(dep, end), "unknown op id")
            if (dep.src, dep.dst) in pairs:
                fail(f"deps[{k}]", f"{dep.src} -> {dep.dst}", "repeats an earlier dep")
            if dep.src == dep.dst:
                fail(f"deps[{k}]", f"{dep.src} -> {dep.dst}", "an op cannot wait for itself")
            pairs.add((dep.src, dep.dst))
            deps.append(dep)
        set_(self, "ops", tuple(ops))
        set_(self, "deps", tuple(deps))
        set_(self, "index", MappingProxyType(index))
        self._check_acyclic()
        self._check_magnitudes()

    @classmethod
    def _from_parts(cls, gpus: int, max_peers: int, link_gbps: float, ops: tuple,
                    deps: tuple, ids: list, compute: np.ndarray, dep_src: np.ndarray,
                    dep_dst: np.ndarray, nbytes: np.ndarray) -> "PlacementInstance":
        """The instance of sub-ops and deps that an internal builder made
        (:func:`split_op_graph`) with their arrays: ``ids``, ``compute`` per op and
        ``dep_src``, ``dep_dst`` (op positions), ``nbytes`` per dep, the values of the
        objects. Unique ids, known ends, no repeated pair and no self-loop hold by
        construction, so only the numbers are validated, as arrays (parsing every
        element is what costs on half a million sub-ops). Numbers out of range take
        the validating constructor, which names the first one."""
        if not (_plain_floats(compute) and _plain_floats(nbytes)):
            return cls(gpus, max_peers, link_gbps, ops, deps)
        self = object.__new__(cls)
        set_ = object.__setattr__
        set_(self, "ops", ops)
        set_(self, "deps", deps)
        set_(self, "index", MappingProxyType(dict(zip(ids, range(len(ids))))))
        self.__dict__["_ids"] = tuple(ids)
        self.__dict__["compute"] = _frozen(compute)
        self.__dict__["_dep_bytes"] = _frozen(nbytes)
        self.__dict__["dep_src"] = _frozen(dep_src)
        self.__dict__["dep_dst"] = _frozen(dep_dst)
        return self._with_scalars(gpus, max_peers, link_gbps, self)

    def _with_scalars(self, gpus: int, max_peers: int, link_gbps: float,
                      into: "PlacementInstance | None" = None) -> "PlacementInstance":
        """This instance's sub-ops and deps (validated already) with other ``gpus``,
        ``max_peers`` and ``link_gbps``: the arrays that depend on the graph alone are
        shared, the scalars and what depends on them are validated and computed anew."""
        out = object.__new__(type(self)) if into is None else into
        set_ = object.__setattr__
        set_(out, "gpus", as_int("gpus", gpus, minimum=1, maximum=MAX_GPUS))
        set_(out, "max_peers", as_int("max_peers", max_peers, minimum=1, maximum=MAX_GPUS))
        set_(out, "link_gbps", as_float("link_gbps", link_gbps, positive=True))
        if into is None:
            set_(out, "ops", self.ops)
            set_(out, "deps", self.deps)
            set_(out, "index", self.index)
            for name in _GRAPH_CACHES:
                if name in self.__dict__:
                    out.__dict__[name] = self.__dict__[name]
        out._check_acyclic()
        out._check_magnitudes()
        return out

    def _check_magnitudes(self) -> None:
        """Every time stays finite: a schedule that never idles ends by the sum of all
        compute and all transfers, and every method's schedule is measured against it."""
        transfers = check_rate("link_gbps", self.link_gbps) * 0.0
        if self.deps:
            nbytes = self._dep_bytes
            k = int(np.argmax(nbytes))
            with np.errstate(over="ignore"):
                total = float(nbytes.sum())
            transfers = check_transfer(f"deps[{k}].bytes", float(nbytes[k]), total,
                                       "link_gbps", self.link_gbps)
        if self.ops:
            k = int(np.argmax(self.compute))
            with np.errstate(over="ignore"):
                total = float(self.compute.sum()) + transfers
            check_magnitude(f"ops[{k}].compute_s", self.ops[k].compute_s,
                            "the total compute and transfer time", total)

    def _check_acyclic(self) -> None:
        if len(self.topological_order()) == self.size:
            return
        import networkx as nx

        graph = nx.DiGraph([(d.src, d.dst) for d in self.deps])
        cycle = nx.find_cycle(graph)
        path = " -> ".join([u for u, _ in cycle] + [cycle[0][0]])
        raise InvalidInstance(f"deps: contain the cycle {path}")

    def __reduce__(self):
        # pickle the fields only (worker processes get instances this way); the index
        # and the cached arrays are rebuilt on the other side
        return (type(self), (self.gpus, self.max_peers, self.link_gbps, self.ops, self.deps))

    # -- JSON ----------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        ops = []
        for op in self.ops:
            entry = {"id": op.id, "compute_s": op.compute_s}
            if op.group is not None:
                entry["group"] = op.group
            ops.append(entry)
        return {"problem": "placement", "gpus": self.gpus, "max_peers": self.max_peers,
                "link_gbps": self.link_gbps, "ops": ops,
                "deps": [{"src": d.src, "dst": d.dst, "bytes": d.bytes} for d in self.deps]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "PlacementInstance":
        reject_unknown_keys(data, _INSTANCE_KEYS)
        return cls(require(data, "gpus"), require(data, "max_peers"), require(data, "link_gbps"),
                   require(data, "ops"), data.get("deps", ()))

    # -- arrays the methods share (op k is ops[k]) ---------------------------------------
    @property
    def size(self) -> int:
        """Number of ops."""
        return len(self.ops)

    @cached_property
    def compute(self) -> np.ndarray:
        """``compute_s`` of every op, as a read-only array."""
        return _frozen(np.array([op.compute_s for op in self.ops], dtype=float))

    @cached_property
    def compute_list(self) -> list:
        """``compute_s`` of every op, as a list (fast to index in Python loops)."""
        return self.compute.tolist()

    @cached_property
    def _dep_bytes(self) -> np.ndarray:
        return _frozen(np.array([d.bytes for d in self.deps], dtype=float))

    @cached_property
    def dep_src(self) -> np.ndarray:
        return _frozen(np.array([self.index[d.src] for d in self.deps], dtype=np.int64))

    @cached_property
    def dep_dst(self) -> np.ndarray:
        return _frozen(np.array([self.index[d.dst] for d in self.deps], dtype=np.int64))

    @cached_property
    def delay_s(self) -> np.ndarray:
        """Transfer time of every dep when its ends sit on different GPUs."""
        # (8 * bytes) / (link_gbps * 1e9) elementwise: the same two roundings as the
        # scalar formula, dep by dep
        return _frozen(8.0 * self._dep_bytes / (self.link_gbps * 1e9))

    @cached_property
    def _deps_into(self) -> tuple:
        """``(order, ptr)``: the deps ``order[ptr[v]:ptr[v + 1]]`` are those into op
        ``v``, in dep order."""
        order = np.argsort(self.dep_dst, kind="stable")
        ptr = np.zeros(self.size + 1, dtype=np.int64)
        np.cumsum(np.bincount(self.dep_dst, minlength=self.size), out=ptr[1:])
        return _frozen(order), _frozen(ptr)

    @cached_property
    def _deps_by_ends(self) -> tuple:
        """``(by_dst, by_src)``: the dep indices by (destination, source) and by (source,
        destination), each pair once (no dep repeats one)."""
        return (_frozen(np.lexsort((self.dep_src, self.dep_dst))),
                _frozen(np.lexsort((self.dep_dst, self.dep_src))))

    @cached_property
    def _ids(self) -> tuple:
        """The op ids in order (``ops[k].id``)."""
        return tuple(op.id for op in self.ops)

    @cached_property
    def parents(self) -> tuple:
        """``parents[v]`` = tuple of ``(u, delay_s, carries_bytes)`` over the deps u -> v."""
        return self._adjacency(self.dep_dst, self.dep_src)

    @cached_property
    def children(self) -> tuple:
        """``children[u]`` = tuple of ``(v, delay_s, carries_bytes)`` over the deps u -> v."""
        return self._adjacency(self.dep_src, self.dep_dst)

    def _adjacency(self, at: np.ndarray, other: np.ndarray) -> tuple:
        """Per op: ``(other end, delay_s, carries_bytes)`` of each dep whose ``at`` end it is."""
        by = np.argsort(at, kind="stable")      # dep order within each op
        entries = list(zip(other[by].tolist(), self.delay_s[by].tolist(),
                           (self._dep_bytes[by] > 0).tolist()))
        ends = np.cumsum(np.bincount(at, minlength=self.size)).tolist()
        return tuple(tuple(entries[lo:hi]) if hi > lo else ()
                     for lo, hi in zip([0] + ends[:-1], ends))

    def topological_order(self, priority: Sequence[float] | None = None) -> list[int]:
        """Op indices in a topological order: among ready ops the smallest
        ``(priority[k], k)`` first (``k``, the position in ``ops``, alone by default).

        With the default and ops listed in a topological order, this is ``0..n-1``.
        """
        if priority is None:
            # validation, the methods, their bounds and the scoring all ask for it
            return list(self._position_order)
        return self._order(priority)

    @cached_property
    def _position_order(self) -> tuple:
        if (self.dep_src < self.dep_dst).all():
            # every dep goes forward (a split graph's do): op k is always the smallest
            # ready one once 0..k-1 are placed, so the heap's order is the positions'
            return tuple(range(self.size))
        return tuple(self._order(None))

    @cached_property
    def _order_array(self) -> np.ndarray:
        """:meth:`topological_order` (the default) as an int64 array, shared: read it,
        never write it (writable only so that the compiled kernels that read it keep
        the one signature they are compiled and cached for)."""
        return np.array(self._position_order, dtype=np.int64)

    def _order(self, priority: Sequence[float] | None) -> list[int]:
        n = self.size
        indegree = [0] * n
        for v in self.dep_dst.tolist():
            indegree[v] += 1
        children = [[] for _ in range(n)]
        for u, v in zip(self.dep_src.tolist(), self.dep_dst.tolist()):
            children[u].append(v)
        # the heap holds op indices alone by default, (priority, index) pairs otherwise
        key = (lambda k: k) if priority is None else (lambda k: (priority[k], k))
        ready = [key(k) for k in range(n) if indegree[k] == 0]
        heapq.heapify(ready)
        order = []
        pop, push = heapq.heappop, heapq.heappush
        while ready:
            u = pop(ready)
            u = u if priority is None else u[1]
            order.append(u)
            for v in children[u]:
                indegree[v] -= 1
                if indegree[v] == 0:
                    push(ready, key(v))
        return order


def _frozen(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def _plain_floats(values: np.ndarray) -> bool:
    """Would every value pass ``as_float(..., minimum=0.0)``?"""
    return bool(np.isfinite(values).all() and (values >= 0).all()
                and not ((values > 0) & (values < MIN_MAGNITUDE)).any())


#: The cached arrays of an instance that depend on its ops and deps alone (not on
#: ``gpus``, ``max_peers`` or ``link_gbps``): shared by :meth:`PlacementInstance._with_scalars`.
_GRAPH_CACHES = ("compute", "compute_list", "_dep_bytes", "dep_src", "dep_dst",
                 "_position_order", "_order_array", "_ids", "_deps_into", "_deps_by_ends")


def _as_mapping(field: str, value: Any) -> Mapping:
    if not isinstance(value, Mapping):
        fail(field, value, "must be an object mapping op ids to values", InvalidSolution)
    return value


@dataclass(frozen=True)
class PlacementSolution:
    """Where (``gpu[op]``) and when (``start_s[op]``) every op runs.

    Examples
    --------
    >>> sol = PlacementSolution({"a": 0, "b": 1}, {"a": 0.0, "b": 2.0})
    >>> sol.to_dict()
    {'gpu': {'a': 0, 'b': 1}, 'start_s': {'a': 0.0, 'b': 2.0}}
    """

    gpu: Mapping[str, int]
    start_s: Mapping[str, float]

    def __post_init__(self):
        gpu = {as_id("gpu key", k, InvalidSolution):
               as_int(f"gpu[{k!r}]", v, minimum=0, maximum=MAX_INDEX, error=InvalidSolution)
               for k, v in _as_mapping("gpu", self.gpu).items()}
        start = {as_id("start_s key", k, InvalidSolution):
                 as_float(f"start_s[{k!r}]", v, maximum=MAX_DERIVED, error=InvalidSolution)
                 for k, v in _as_mapping("start_s", self.start_s).items()}
        object.__setattr__(self, "gpu", MappingProxyType(gpu))
        object.__setattr__(self, "start_s", MappingProxyType(start))

    def __reduce__(self):
        # copy(): both mapping types give their dict at once (dict() reads key by key)
        return (type(self), (self.gpu.copy(), self.start_s.copy()))

    @classmethod
    def _from_lists(cls, ids: Sequence[str], gpu: Sequence[int],
                    start_s: Sequence[float]) -> "PlacementSolution":
        """The solution placing op ``ids[k]`` on ``gpu[k]`` from ``start_s[k]``, for a
        schedule made here (the ids are an instance's): the values are validated as
        arrays, and anything out of range takes the validating constructor, which
        names it."""
        return cls._from_arrays(ids, gpu, start_s)[0]

    @classmethod
    def _from_arrays(cls, ids: Sequence[str], gpu: Sequence[int], start_s: Sequence[float]
                     ) -> tuple["PlacementSolution", np.ndarray | None, np.ndarray | None]:
        """:meth:`_from_lists` and, when the values passed as arrays of one entry per
        id, read-only copies of them, which its mappings read when first read
        themselves (:class:`ArrayMapping`); ``None, None`` otherwise."""
        gpus = np.asarray(gpu)
        starts = np.asarray(start_s, dtype=float)
        if (len(gpus) and (gpus.dtype.kind not in "iu" or gpus.min() < 0
                           or gpus.max() > MAX_INDEX)) \
                or not (np.isfinite(starts).all() and (starts <= MAX_DERIVED).all()
                        and not ((starts != 0) & (np.abs(starts) < MIN_MAGNITUDE)).any()):
            return cls(dict(zip(ids, gpu)), dict(zip(ids, start_s))), None, None
        out = object.__new__(cls)
        ids = ids if type(ids) is tuple else tuple(ids)
        if not gpus.shape == starts.shape == (len(ids),):
            # zip's pairs, as many as the shortest, each value as tolist makes it
            object.__setattr__(out, "gpu", MappingProxyType(dict(zip(ids, gpus.tolist()))))
            object.__setattr__(out, "start_s",
                               MappingProxyType(dict(zip(ids, starts.tolist()))))
            return out, None, None
        # copies: the caller's arrays may change, the mappings made later must not
        # (int64 holds every GPU index, and tolist gives the same Python ints)
        gpus, starts = _frozen(gpus.astype(np.int64)), _frozen(starts.copy())
        object.__setattr__(out, "gpu", ArrayMapping(ids, gpus))
        object.__setattr__(out, "start_s", ArrayMapping(ids, starts))
        return out, gpus, starts

    @classmethod
    def _of_instance(cls, instance: PlacementInstance, gpu: Sequence[int],
                     start_s: Sequence[float]) -> "PlacementSolution":
        """:meth:`_from_lists` of ``instance``'s op ids (``gpu[k]``, ``start_s[k]`` for
        ``instance.ops[k]``), which also keeps the two as read-only arrays for
        :func:`check`, :func:`evaluate` and the cost model to read instead of looking
        every op id up. The arrays are the ones the mappings read (neither can change)
        and are read only for an instance with these very ``ops`` (see
        :func:`solution_arrays`)."""
        out, gpus, starts = cls._from_arrays(instance._ids, gpu, start_s)
        if gpus is not None:
            object.__setattr__(out, "_aligned", (instance.ops, gpus, starts))
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"gpu": self.gpu.copy(), "start_s": self.start_s.copy()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "PlacementSolution":
        reject_unknown_keys(data, ("gpu", "start_s"), error=InvalidSolution)
        return cls(require(data, "gpu", InvalidSolution), require(data, "start_s", InvalidSolution))


def solution_arrays(instance: PlacementInstance, solution: PlacementSolution
                    ) -> tuple[np.ndarray, np.ndarray]:
    """The solution's GPUs and start times as arrays indexed like ``instance.ops``.

    A solution that a schedule of this instance made (:func:`schedule`, the methods)
    carries them already, for an instance with these very ``ops`` (the same tuple, so
    the same ids in the same order): its keys are exactly the instance's ids, so only
    the GPUs are checked against ``instance.gpus``. Any other solution is read op by op.

    Parameters
    ----------
    instance : PlacementInstance
    solution : PlacementSolution

    Returns
    -------
    gpu : numpy.ndarray of int64
    start : numpy.ndarray of float
        Read-only when the solution carried them.

    Raises
    ------
    InvalidSolution
        If the solution names unknown ops or GPUs, or misses an op.

    Examples
    --------
    >>> inst = PlacementInstance(2, 1, 8.0, [SubOp("a", 1.0), SubOp("b", 2.0)])
    >>> gpu, start = solution_arrays(inst, PlacementSolution({"b": 1, "a": 0},
    ...                                                      {"a": 0.0, "b": 0.5}))
    >>> gpu.tolist(), start.tolist()
    ([0, 1], [0.0, 0.5])
    """
    aligned = solution.__dict__.get("_aligned")
    if aligned is not None and aligned[0] is instance.ops:
        _, gpu, start = aligned
        _check_gpus(instance, gpu)
        return gpu, start
    for name in ("gpu", "start_s"):
        mapping = getattr(solution, name)
        for key in mapping:
            if key not in instance.index:
                fail(f"{name}[{key!r}]", mapping[key], "unknown op id", InvalidSolution)
        if len(mapping) != instance.size:
            missing = next(op.id for op in instance.ops if op.id not in mapping)
            raise InvalidSolution(f"{name}: op {shown(missing)} is missing")
    gpu = np.array([solution.gpu[op.id] for op in instance.ops], dtype=np.int64)
    _check_gpus(instance, gpu)
    start = np.array([solution.start_s[op.id] for op in instance.ops], dtype=float)
    return gpu, start


def _check_gpus(instance: PlacementInstance, gpu: np.ndarray) -> None:
    bad = np.flatnonzero(gpu >= instance.gpus)
    if len(bad):
        op = instance.ops[bad[0]].id
        fail(f"gpu[{op!r}]", int(gpu[bad[0]]), f"unknown GPU (GPUs are 0..{instance.gpus - 1})",
             InvalidSolution)


def peer_sets(instance: PlacementInstance, gpu: Sequence[int]) -> tuple[list[set], list[set]]:
    """``(sends_to, receives_from)``: per GPU, the other GPUs it exchanges bytes > 0 with."""
    sends = [set() for _ in range(instance.gpus)]
    receives = [set() for _ in range(instance.gpus)]
    for k, dep in enumerate(instance.deps):
        g, h = int(gpu[instance.dep_src[k]]), int(gpu[instance.dep_dst[k]])
        if dep.bytes > 0 and g != h:
            sends[g].add(h)
            receives[h].add(g)
    return sends, receives


def check(instance: PlacementInstance, solution: PlacementSolution) -> CheckResult:
    """Feasibility: starts >= 0, every dep waits for its source (plus the transfer across
    GPUs), ops on one GPU do not overlap, and no GPU exceeds ``max_peers`` in either
    direction. Timing uses the relative tolerance ``FEASIBILITY_RTOL``.

    Returns
    -------
    CheckResult
        The first violated rule, in words, when infeasible.

    Raises
    ------
    InvalidSolution
        If the solution names unknown ops or GPUs, or leaves an op out.

    Examples
    --------
    >>> inst = PlacementInstance(2, 1, 8.0, [SubOp("a", 1.0), SubOp("b", 2.0)],
    ...                          [Dep("a", "b", 1e9)])
    >>> print(check(inst, PlacementSolution({"a": 0, "b": 1}, {"a": 0.0, "b": 1.5})).reason)
    dep a -> b: 'b' starts at 1.5 before 'a' ends at 1 + transfer 1 = 2
    """
    gpu, start = solution_arrays(instance, solution)
    ids = instance._ids
    negative = np.flatnonzero(start < 0)
    if len(negative):
        k = negative[0]
        return CheckResult.violated(
            f"start_s[{ids[k]!r}] = {float(start[k])!r}: starts before time 0")
    end = start + instance.compute
    src, dst = instance.dep_src, instance.dep_dst
    delays = np.where(gpu[src] != gpu[dst], instance.delay_s, 0.0)
    arrive = end[src] + delays
    early = np.flatnonzero(start[dst] < arrive - FEASIBILITY_RTOL * np.abs(arrive))
    if len(early):          # the first dep in order that starts too early
        k = int(early[0])
        dep, u, v = instance.deps[k], src[k], dst[k]
        delay, ready = float(delays[k]), float(arrive[k])
        via = f" + transfer {delay:.6g}" if delay else ""
        return CheckResult.violated(
            f"dep {dep.src} -> {dep.dst}: {dep.dst!r} starts at {start[v]:.6g} before "
            f"{dep.src!r} ends at {end[u]:.6g}{via} = {ready:.6g}")
    order = _busy_order(gpu, start, end, instance.compute)
    before, after = order[:-1], order[1:]
    overlaps = np.flatnonzero((gpu[before] == gpu[after])
                              & (start[after] < end[before] - FEASIBILITY_RTOL
                                 * np.abs(end[before])))
    if len(overlaps):       # the first pair in (GPU, start, end) order
        a, b = before[overlaps[0]], after[overlaps[0]]
        return CheckResult.violated(
                f"GPU {gpu[a]}: ops {ids[a]!r} [{start[a]:.6g}, {end[a]:.6g}) and {ids[b]!r} "
                f"[{start[b]:.6g}, {end[b]:.6g}) overlap")
    # the distinct (sender, receiver) pairs of deps with bytes across two GPUs
    g, h = gpu[src], gpu[dst]
    used = (instance._dep_bytes > 0) & (g != h)
    pairs = _distinct(g[used] * instance.gpus + h[used], instance.gpus * instance.gpus)
    senders, receivers = pairs // instance.gpus, pairs % instance.gpus
    sends = np.bincount(senders, minlength=instance.gpus)
    receives = np.bincount(receivers, minlength=instance.gpus)
    over = np.flatnonzero((sends > instance.max_peers) | (receives > instance.max_peers))
    if len(over):           # the first GPU over the limit, sending before receiving
        g = int(over[0])
        if sends[g] > instance.max_peers:
            what, peers = "sends to", receivers[senders == g]
        else:
            what, peers = "receives from", senders[receivers == g]
        return CheckResult.violated(
            f"GPU {g} {what} {len(peers)} GPUs {sorted(peers.tolist())}, more than "
            f"max_peers = {instance.max_peers}")
    return CheckResult.ok()


def _busy_order(gpu: np.ndarray, start: np.ndarray, end: np.ndarray,
                compute: np.ndarray) -> np.ndarray:
    """The ops with compute > 0 by GPU, then start, then end, then position: what
    :func:`check` walks for overlaps."""
    busy = np.flatnonzero(compute > 0)
    # by start, then stably by GPU (indices < 2**15: a radix sort): (GPU, start) order,
    # the lexsort's unless two ops of one GPU start together (then end and position
    # decide, and the lexsort is taken)
    order = busy[np.argsort(start[busy])]
    order = order[np.argsort(gpu[order].astype(np.int16), kind="stable")]
    g, s = gpu[order], start[order]
    if ((g[1:] == g[:-1]) & (s[1:] == s[:-1])).any():
        return busy[np.lexsort((end[busy], start[busy], gpu[busy]))]
    return order


def _distinct(codes: np.ndarray, size: int) -> np.ndarray:
    """``np.unique(codes)`` of integers in ``0..size-1``: by flags when they are few
    against the codes (no sort), by ``np.unique`` otherwise."""
    if size > 64 * len(codes):
        return np.unique(codes)
    seen = np.zeros(size, dtype=bool)
    seen[codes] = True
    return np.flatnonzero(seen)


def evaluate(instance: PlacementInstance, solution: PlacementSolution) -> float:
    """The makespan in seconds: the latest ``start_s + compute_s`` (0 without ops).

    Examples
    --------
    >>> inst = PlacementInstance(1, 1, 8.0, [SubOp("a", 1.0), SubOp("b", 2.0)])
    >>> evaluate(inst, PlacementSolution({"a": 0, "b": 0}, {"a": 0.0, "b": 1.0}))
    3.0
    """
    _, start = solution_arrays(instance, solution)
    return float((start + instance.compute).max()) if instance.size else 0.0



def schedule_times(instance: PlacementInstance, gpu: Sequence[int],
                   order: Sequence[int], *, zero_holds_gpu: bool = True
                   ) -> tuple[list[float], list[float]]:
    """Start and end times of the semi-active schedule of an assignment.

    Ops are taken in ``order`` (a topological order of op indices), which is also their
    order on each GPU; each starts as soon as its GPU is free and every parent has
    ended (plus the transfer when the parent is on another GPU). With
    ``zero_holds_gpu=False`` an op without compute neither waits for its GPU nor
    holds it (:func:`check` lets it share the GPU), see :func:`advance`.

    Returns
    -------
    (start, end) : lists of float indexed like ``instance.ops``
    """
    n = instance.size
    start, end = [0.0] * n, [0.0] * n
    advance(instance, order, gpu, end, [0.0] * instance.gpus, start,
            zero_holds_gpu=zero_holds_gpu)
    return start, end


def advance(instance: PlacementInstance, ops: Iterable[int], gpu: Sequence[int], end: list,
            free: list, start: list | None = None, *, zero_holds_gpu: bool = True) -> None:
    """Schedule ``ops`` in turn, each as early as its GPU (free from ``free[g]``) and its
    parents (their ``end`` plus the transfer from another GPU) allow.

    Updates ``end`` (indexed by op), ``free`` (by GPU) and, if given, ``start`` in place:
    the one loop every schedule in fabricopt is made by. With ``zero_holds_gpu=False``
    an op without compute starts when its parents allow and leaves ``free`` alone: its
    empty interval overlaps nothing (the MILP's decode needs this to keep its optimum).
    """
    parents, compute = instance.parents, instance.compute_list
    for v in ops:
        g = gpu[v]
        holds = zero_holds_gpu or compute[v] > 0
        t = free[g] if holds else 0.0
        for u, delay, _ in parents[v]:
            ready = end[u] + delay if gpu[u] != g else end[u]
            if ready > t:
                t = ready
        if start is not None:
            start[v] = t
        end[v] = t + compute[v]
        if holds:
            free[g] = end[v]


def schedule(instance: PlacementInstance, gpu: Sequence[int],
             order: Sequence[int] | None = None, *, zero_holds_gpu: bool = True
             ) -> PlacementSolution:
    """The solution that runs each op on ``gpu[k]`` as early as ``order`` allows
    (see :func:`schedule_times`; the default order is ``instance.topological_order()``).

    Examples
    --------
    >>> inst = PlacementInstance(2, 1, 8.0, [SubOp("a", 1.0), SubOp("b", 2.0)],
    ...                          [Dep("a", "b", 1e9)])
    >>> schedule(inst, [0, 1]).start_s["b"]
    2.0
    """
    if order is None:
        order = instance.topological_order()
    start, _ = schedule_times(instance, gpu, order, zero_holds_gpu=zero_holds_gpu)
    return PlacementSolution._of_instance(instance, [int(g) for g in gpu], start)


def split_op_graph(op_graph: OpGraph, splits: Mapping[str, int], *, gpus: int, max_peers: int,
                   link_gbps: float) -> PlacementInstance:
    """The placement instance of an op graph whose op ``u`` is split into ``splits[u]``
    equal sub-ops ``"u/0"``, ``"u/1"``, ... (group ``u``, ``compute_s / n`` each).

    An edge ``u -> v`` of ``B`` bytes becomes a block mapping between the sub-op lists:
    with ``n_u >= n_v`` sub-op ``u/a`` feeds ``v/floor(a*n_v/n_u)``, otherwise ``v/b``
    reads from ``u/floor(b*n_u/n_v)`` (for powers of two, the exact blocks of SiP-ML's
    partitioner). Each sub-edge carries the source sub-op's share ``B / n_u`` of the
    output: an attribute-split consumer needs its parent's whole slice.

    Parameters
    ----------
    op_graph : OpGraph
    splits : mapping of op id to int >= 1
    gpus, max_peers, link_gbps
        As in :class:`PlacementInstance`.

    Returns
    -------
    PlacementInstance
        Ops grouped by original op, the groups in ``op_graph.topological_order()``.

    References
    ----------
    .. [1] SiP-ML, SIGCOMM 2021, §3.2 (i) and Fig. 4(b); RostAM
       ``OpPartitionerAttribute`` (fabricopt docs, *Departures*, sipml-1.1).

    Examples
    --------
    >>> g = OpGraph([{"id": "b", "compute_s": 2.0}, {"id": "c", "compute_s": 4.0}],
    ...             [{"src": "b", "dst": "c", "bytes": 8.0}])
    >>> inst = split_op_graph(g, {"b": 1, "c": 4}, gpus=4, max_peers=2, link_gbps=1.0)
    >>> [(op.id, op.compute_s) for op in inst.ops]
    [('b/0', 2.0), ('c/0', 1.0), ('c/1', 1.0), ('c/2', 1.0), ('c/3', 1.0)]
    >>> [(d.src, d.dst, d.bytes) for d in inst.deps][:2]
    [('b/0', 'c/0', 8.0), ('b/0', 'c/1', 8.0)]
    """
    if not isinstance(op_graph, OpGraph):
        raise InvalidInstance(f"op_graph: expected an OpGraph, got {type(op_graph).__name__}")
    count = {}
    for op in op_graph.ops:
        if op.id not in splits:
            raise InvalidInstance(f"splits: op {op.id!r} has no split count")
        count[op.id] = as_int(f"splits[{op.id!r}]", splits[op.id], minimum=1)
    by_id = {op.id: op for op in op_graph.ops}
    # the objects, and the arrays the instance would read off them, made side by side
    ops, ids, compute, names, first = [], [], [], {}, {}
    for op_id in op_graph.topological_order():
        n = count[op_id]
        first[op_id], names[op_id] = len(ids), [f"{op_id}/{i}" for i in range(n)]
        share_s = by_id[op_id].compute_s / n
        ops.extend(map(SubOp, names[op_id], repeat(share_s, n), repeat(op_id, n)))
        ids += names[op_id]
        compute.append((share_s, n))
    deps, ends, nbytes = [], [], []
    for e in op_graph.edges:
        nu, nv = count[e.src], count[e.dst]
        share = e.bytes / nu
        if nu >= nv:
            a = np.arange(nu, dtype=np.int64)
            b = a * nv // nu
        else:
            b = np.arange(nv, dtype=np.int64)
            a = b * nu // nv
        deps.extend(map(Dep, map(names[e.src].__getitem__, a.tolist()),
                        map(names[e.dst].__getitem__, b.tolist()), repeat(share, len(a))))
        ends.append((first[e.src] + a, first[e.dst] + b))
        nbytes.append((share, len(a)))
    dep_src, dep_dst = ((np.concatenate(x) for x in zip(*ends)) if ends
                        else (np.zeros(0, dtype=np.int64),) * 2)
    return PlacementInstance._from_parts(gpus, max_peers, link_gbps, tuple(ops), tuple(deps),
                                         ids, _runs(compute), dep_src, dep_dst, _runs(nbytes))


def _runs(runs: list) -> np.ndarray:
    """The float array of ``(value, count)`` runs: ``count`` times each ``value``."""
    values = np.array([value for value, _ in runs], dtype=float)
    return np.repeat(values, np.array([n for _, n in runs], dtype=np.int64))


def _random_op_graph(rng: np.random.Generator, sub_ops: int, gpus: int, tau_s: float,
                     link_gbps: float, comm_ratio: float) -> tuple[OpGraph, dict[str, int]]:
    """A layered DNN-like op graph whose splits sum to ``sub_ops`` (see :func:`generate`)."""
    ops, edges, splits, compute = [], [], {}, {}
    remaining, k = sub_ops, 0
    while remaining > 0:
        widths = [2 ** e for e in range(int(math.log2(min(gpus, remaining))) + 1)]
        n = int(rng.choice(widths))
        op_id = f"op{k}"
        # compute in [n*tau, 2*n*tau): SiP-ML's tau rule splits it into exactly n sub-ops
        compute_s = float(n * tau_s * rng.uniform(1.0, 2.0))
        ops.append({"id": op_id, "compute_s": compute_s})
        splits[op_id], compute[op_id] = n, compute_s
        if k > 0:
            sources = {f"op{k - 1}" if rng.random() < 0.75 else f"op{int(rng.integers(k))}"}
            if k > 1 and rng.random() < 0.3:          # a residual / skip connection
                sources.add(f"op{int(rng.integers(k - 1))}")
            for src in sorted(sources):
                # the output's transfer time is comparable to the producer's compute
                delay_s = compute[src] * comm_ratio * rng.lognormal(0.0, 0.5)
                edges.append({"src": src, "dst": op_id,
                              "bytes": float(round(delay_s * link_gbps * 1e9 / 8))})
        remaining -= n
        k += 1
    return OpGraph(ops, edges), splits


#: Named sizes of :func:`generate` (``family=NAME``): the instance families on which
#: the ``placement`` experiment measures ``sipml`` against the degree-free baseline. ``k64-p15`` is the size of SiP-ML's balanced Transformer graph
#: (> 20k sub-ops, 64-way model parallelism, D = 16 less the data-parallel circuit).
FAMILIES = MappingProxyType({
    "k16-p3": MappingProxyType({"ops": 500, "gpus": 16, "max_peers": 3}),
    "k32-p7": MappingProxyType({"ops": 2000, "gpus": 32, "max_peers": 7}),
    "k64-p15": MappingProxyType({"ops": 20000, "gpus": 64, "max_peers": 15}),
})


def generate(seed: int = 0, ops: int = 12, gpus: int = 4, max_peers: int = 2,
             link_gbps: float = 100.0, tau_s: float = 1e-5,
             comm_ratio: float = 0.5, family: str = "") -> PlacementInstance:
    """A seeded balanced computation graph of a layered DNN-like op graph.

    Original ops form a chain with occasional branches and skip (residual) connections;
    each is split into a power of two (at most ``gpus``) sub-ops of about ``tau_s``
    seconds, SiP-ML's balanced graph, until there are ``ops`` sub-ops. A transfer across
    GPUs takes about ``comm_ratio`` times its producer's compute.

    Parameters
    ----------
    seed : int
    ops : int
        Number of sub-ops (>= 1).
    gpus, max_peers, link_gbps
        As in :class:`PlacementInstance`.
    tau_s : float
        Compute quantum (SiP-ML: 10 µs).
    comm_ratio : float
        Typical transfer time over producer compute time (> 0).
    family : str
        A name of :data:`FAMILIES` (e.g. ``"k32-p7"``): its ``ops``, ``gpus`` and
        ``max_peers`` replace the arguments. Empty: use the arguments.

    Raises
    ------
    InvalidInstance
        If a size is invalid or ``family`` is not a name of :data:`FAMILIES`.

    Examples
    --------
    >>> inst = generate(seed=1, ops=10)
    >>> inst.size, inst == generate(seed=1, ops=10)
    (10, True)
    >>> big = generate(seed=0, family="k16-p3")
    >>> big.size, big.gpus, big.max_peers
    (500, 16, 3)
    """
    if family:
        if not isinstance(family, str) or family not in FAMILIES:
            fail("family", family, f"unknown (families: {', '.join(FAMILIES)})")
        ops, gpus, max_peers = (FAMILIES[family][key] for key in ("ops", "gpus", "max_peers"))
    ops = as_int("ops", ops, minimum=1, maximum=MAX_GENERATED_COUNT)
    gpus = as_int("gpus", gpus, minimum=1)
    max_peers = as_int("max_peers", max_peers, minimum=1)
    link_gbps = as_float("link_gbps", link_gbps, positive=True)
    tau_s = as_float("tau_s", tau_s, positive=True)
    comm_ratio = as_float("comm_ratio", comm_ratio, positive=True)
    graph, splits = _random_op_graph(np.random.default_rng(seed), ops, gpus, tau_s, link_gbps,
                                     comm_ratio)
    return split_op_graph(graph, splits, gpus=gpus, max_peers=max_peers, link_gbps=link_gbps)


KIND = register_kind(ProblemKind(
    name="placement", sense="min",
    instance_type=PlacementInstance, solution_type=PlacementSolution,
    instance_from_dict=PlacementInstance.from_dict, solution_from_dict=PlacementSolution.from_dict,
    check=check, evaluate=evaluate, generate=generate,
    size=lambda inst: inst.size,
    doc="SiP-ML degree-constrained model-parallel placement (min makespan)",
))
