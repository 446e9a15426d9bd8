"""``topology`` — TopoOpt direct-connect topology and routing (docs/formats.rst, topology).

``servers`` servers each have ``degree`` interfaces. A solution links them (an
undirected link ``[i, j, count]`` uses ``count`` interfaces at each end and carries
``count * link_gbps`` in each direction), picks one or more ring orders per
AllReduce group (AllReduce is *mutable*: any cyclic order of the members works, and
the group's bytes may be split over several rings by ``share``), and routes every
demand over explicit paths. Ring-AllReduce of ``bytes`` over ``g`` members sends
``share * 2*(g-1)/g * bytes`` from each member to its successor in each ring.
The objective, minimized, is the busiest directed link's time
``max over i->j of 8*load(i->j) / (count_ij * link_gbps * 1e9)``.

References
----------
.. [1] W. Wang et al., "TopoOpt: Co-optimizing Network Topology and Parallelization
   Strategy for Distributed Training Jobs", NSDI 2023 (arXiv 2202.00433), §3 and §4.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Mapping, NamedTuple

import numpy as np

from fabricopt.errors import InvalidInstance, InvalidSolution
from fabricopt.problems._kind import CheckResult, ProblemKind, register_kind
from fabricopt.problems.limits import (MAX_DEGREE, MAX_GENERATED_SIDE, MAX_INDEX, MAX_SERVERS,
                                       check_traffic, check_transfer)
from fabricopt.problems.tolerances import FEASIBILITY_RTOL
from fabricopt.problems._validate import (MIN_MAGNITUDE, as_float, as_int, as_list, as_matrix,
                                          fail, matrix_array, reject_unknown_keys, require)
from fabricopt.problems.sparse_traffic import (SparseTraffic, as_sparse_traffic,
                                               canonical_pairs, is_sparse_form)

__all__ = ["AllReduceGroup", "TopologyInstance", "Ring", "Path", "Route", "TopologySolution",
           "SparseTraffic", "PairValues",
           "check", "evaluate", "demand_matrix", "ring_traffic", "link_counts", "link_loads",
           "path_loads", "busiest_link_time", "mean_hops", "demand_pairs", "ring_pairs",
           "link_count_pairs", "RouteArrays", "routes_of_arrays", "pair_loads",
           "busiest_pair_time",
           "ring_bytes_per_member", "generate"]

_INSTANCE_KEYS = ("problem", "servers", "degree", "link_gbps", "allreduce", "traffic_bytes")
_SOLUTION_KEYS = ("links", "rings", "routes")
_RTOL = FEASIBILITY_RTOL


@contextlib.contextmanager
def _within(prefix: str, error: type[Exception]):
    """Prefix the field named by a nested object's validation message with ``prefix``."""
    try:
        yield
    except error as exc:
        message = str(exc)
        # fail("", value, rule) names the object itself: " = value: rule"
        raise error(prefix + message if message.startswith(" ") else f"{prefix}.{message}") from None


def _server_list(field: str, value: Any, error: type[Exception], *, distinct: bool,
                 min_length: int) -> tuple[int, ...]:
    # Fast path, same verdict: plain ints in range need no per-item conversion (a
    # solution of a thousand servers has a million path nodes).
    if (type(value) in (tuple, list) and len(value) >= max(min_length, 1)
            and all(type(v) is int for v in value)
            and 0 <= min(value) and max(value) <= MAX_INDEX
            and (not distinct or len(set(value)) == len(value))):
        return tuple(value)
    items = as_list(field, value, error=error)
    out = tuple(as_int(f"{field}[{k}]", v, minimum=0, maximum=MAX_INDEX, error=error)
                for k, v in enumerate(items))
    if len(out) < min_length:
        fail(field, list(out), f"needs at least {min_length} servers", error)
    if distinct and len(set(out)) != len(out):
        seen = set()
        repeated = next(v for v in out if v in seen or seen.add(v))
        fail(field, list(out), f"repeats server {repeated}", error)
    return out


def ring_bytes_per_member(group: "AllReduceGroup") -> float:
    """Bytes each member sends in ring-AllReduce over all its rings: ``2*(g-1)/g * bytes``.

    Examples
    --------
    >>> ring_bytes_per_member(AllReduceGroup([0, 1, 2, 3], 4e9))
    6000000000.0
    """
    g = len(group.members)
    return 2.0 * (g - 1) / g * group.bytes


@dataclass(frozen=True)
class AllReduceGroup:
    """One AllReduce: ``members`` (distinct servers, at least 2) reduce ``bytes`` bytes.

    Examples
    --------
    >>> AllReduceGroup([2, 0], 1e6).members
    (2, 0)
    >>> AllReduceGroup([1, 1], 1e6)
    Traceback (most recent call last):
    ...
    fabricopt.errors.InvalidInstance: members = [1, 1]: repeats server 1
    """

    members: tuple
    bytes: float

    def __post_init__(self):
        object.__setattr__(self, "members", _server_list(
            "members", self.members, InvalidInstance, distinct=True, min_length=2))
        object.__setattr__(self, "bytes", as_float("bytes", self.bytes, minimum=0.0))

    def to_dict(self) -> dict[str, Any]:
        return {"members": list(self.members), "bytes": self.bytes}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "AllReduceGroup":
        if isinstance(data, cls):
            return data
        reject_unknown_keys(data if isinstance(data, Mapping) else {}, ("members", "bytes"))
        return cls(require(data, "members"), require(data, "bytes"))


@dataclass(frozen=True)
class TopologyInstance:
    """A TopoOpt topology-and-routing instance.

    Parameters
    ----------
    servers : int
        n >= 2, the servers 0..n-1.
    degree : int
        Interfaces per server, 1 to ``MAX_DEGREE`` (1,024, see
        :mod:`fabricopt.problems.limits`); a link uses one at each end.
    link_gbps : float
        Bandwidth of one link in each direction, 10^9 bit/s (> 0).
    allreduce : sequence of AllReduceGroup or dict
        The AllReduce groups ``{"members": [...], "bytes": b}``; their ring orders are
        part of the solution.
    traffic_bytes : sequence of sequences of float, or dict, or SparseTraffic
        The fixed (model-parallel) bytes from server i to server j: an n x n matrix
        (diagonal 0), or only its non-zero pairs ``{"src": [...], "dst": [...],
        "bytes": [...]}`` (a :class:`SparseTraffic` or a scipy sparse matrix too),
        which takes O(pairs) memory instead of O(n^2). Both forms give identical
        results; the form given is the form written. The matrix is kept as a
        :class:`~fabricopt.problems._matrix.FrozenMatrix` (a tuple of row tuples to
        read, compare and hash, held as the read-only array :attr:`traffic`).

    Examples
    --------
    >>> inst = TopologyInstance(4, 2, 100.0, [{"members": [0, 1, 2, 3], "bytes": 1e9}],
    ...                         [[0] * 4] * 4)
    >>> inst.allreduce[0].members
    (0, 1, 2, 3)
    >>> TopologyInstance(4, 2, 100.0, [{"members": [0, 7], "bytes": 1e9}], [[0] * 4] * 4)
    Traceback (most recent call last):
    ...
    fabricopt.errors.InvalidInstance: allreduce[0].members[1] = 7: unknown server (servers are 0..3)
    >>> sparse = TopologyInstance(4, 2, 100.0, [], {"src": [0, 3], "dst": [1, 0],
    ...                                             "bytes": [5e8, 2e8]})
    >>> sparse.traffic[3].tolist()
    [200000000.0, 0.0, 0.0, 0.0]
    >>> TopologyInstance(4, 2, 100.0, [], {"src": [0], "dst": [4], "bytes": [1.0]})
    Traceback (most recent call last):
    ...
    fabricopt.errors.InvalidInstance: traffic_bytes.dst[0] = 4: unknown server (servers are 0..3)
    """

    servers: int
    degree: int
    link_gbps: float
    allreduce: tuple
    traffic_bytes: tuple

    def __post_init__(self):
        set_ = object.__setattr__
        n = as_int("servers", self.servers, minimum=2, maximum=MAX_SERVERS)
        set_(self, "servers", n)
        set_(self, "degree", as_int("degree", self.degree, minimum=1, maximum=MAX_DEGREE))
        set_(self, "link_gbps", as_float("link_gbps", self.link_gbps, positive=True))
        groups = []
        for k, raw in enumerate(as_list("allreduce", self.allreduce)):
            with _within(f"allreduce[{k}]", InvalidInstance):
                if not isinstance(raw, (Mapping, AllReduceGroup)):
                    fail("", raw, "must be an object {members, bytes}")
                group = AllReduceGroup.from_dict(raw)
            for m, server in enumerate(group.members):
                if server >= n:
                    fail(f"allreduce[{k}].members[{m}]", server,
                         f"unknown server (servers are 0..{n - 1})")
            groups.append(group)
        set_(self, "allreduce", tuple(groups))
        if is_sparse_form(self.traffic_bytes):
            set_(self, "traffic_bytes", as_sparse_traffic("traffic_bytes", self.traffic_bytes, n))
        else:
            set_(self, "traffic_bytes", as_matrix("traffic_bytes", self.traffic_bytes, n))
        self._check_magnitudes()

    def _check_magnitudes(self) -> None:
        """Every link time stays finite: a link carries at most all the demand (fixed
        traffic, plus ``2*(g-1)/g * bytes`` from each of a group's g members), and the
        bounds count a byte at most once per hop, ``servers - 1`` times."""
        hops = float(self.servers)
        src, dst, nbytes = self.traffic_pairs
        with np.errstate(over="ignore", invalid="ignore"):
            traffic_total = float(nbytes.sum())
        if nbytes.size:
            k = int(np.argmax(nbytes))
            with np.errstate(over="ignore"):
                total = traffic_total * hops
            check_transfer(self._traffic_field(int(src[k]), int(dst[k])), float(nbytes[k]),
                           total, "link_gbps", self.link_gbps)
        else:
            check_traffic("traffic_bytes", np.zeros(0), "link_gbps", self.link_gbps)
        with np.errstate(over="ignore"):
            ring = np.array([2.0 * len(g.members) * g.bytes for g in self.allreduce])
            total = float(ring.sum() + traffic_total) * hops
        if len(ring):
            k = int(np.argmax(ring))
            check_transfer(f"allreduce[{k}].bytes", self.allreduce[k].bytes, total,
                           "link_gbps", self.link_gbps)

    def _traffic_field(self, src: int, dst: int) -> str:
        """The name of the entry of ``traffic_bytes`` holding the pair src -> dst."""
        if isinstance(self.traffic_bytes, SparseTraffic):
            key = (src, dst)
            k = next(k for k, pair in enumerate(zip(self.traffic_bytes.src,
                                                    self.traffic_bytes.dst)) if pair == key)
            return f"traffic_bytes.bytes[{k}]"
        return f"traffic_bytes[{src}][{dst}]"

    @property
    def is_sparse(self) -> bool:
        """Whether ``traffic_bytes`` is in the sparse form (:class:`SparseTraffic`)."""
        return isinstance(self.traffic_bytes, SparseTraffic)

    @cached_property
    def traffic(self) -> np.ndarray:
        """``traffic_bytes`` as a read-only n x n float array (O(n^2) memory: the methods
        that scale read :attr:`traffic_pairs` or :attr:`traffic_csr`)."""
        if not self.is_sparse:
            return matrix_array(self.traffic_bytes)
        n = self.servers
        a = np.zeros((n, n))
        src, dst, nbytes = self.traffic_pairs
        a[src, dst] = nbytes
        a.flags.writeable = False
        return a

    @cached_property
    def traffic_pairs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(src, dst, bytes)`` of the pairs with traffic (bytes > 0), ordered by
        ``(src, dst)``; the same arrays whichever form ``traffic_bytes`` has."""
        if self.is_sparse:
            out = canonical_pairs(self.traffic_bytes, self.servers)
        else:
            src, dst = np.nonzero(self.traffic > 0)
            out = (src.astype(np.int64), dst.astype(np.int64), self.traffic[src, dst])
        for a in out:
            a.flags.writeable = False
        return out

    @cached_property
    def traffic_csr(self):
        """The traffic as a read-only n x n ``scipy.sparse.csr_array`` (the pairs of
        :attr:`traffic_pairs`, column indices sorted)."""
        from scipy.sparse import csr_array

        src, dst, nbytes = self.traffic_pairs
        n = self.servers
        return csr_array((nbytes, (src, dst)), shape=(n, n))

    @property
    def link_bytes_per_s(self) -> float:
        """What one link carries per second in each direction, in bytes."""
        return self.link_gbps * 1e9 / 8.0

    def to_dict(self) -> dict[str, Any]:
        return {"problem": "topology", "servers": self.servers, "degree": self.degree,
                "link_gbps": self.link_gbps,
                "allreduce": [g.to_dict() for g in self.allreduce],
                "traffic_bytes": (self.traffic_bytes.to_dict() if self.is_sparse
                                  else self.traffic.tolist())}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "TopologyInstance":
        reject_unknown_keys(data, _INSTANCE_KEYS)
        return cls(require(data, "servers"), require(data, "degree"),
                   require(data, "link_gbps"), require(data, "allreduce"),
                   require(data, "traffic_bytes"))


def _object(value: Any, cls: type, keys: tuple[str, ...]):
    """A nested solution object from a dict (or itself), rejecting unknown keys."""
    if isinstance(value, cls):
        return value
    if not isinstance(value, Mapping):
        fail("", value, f"must be an object {{{', '.join(keys)}}}", InvalidSolution)
    reject_unknown_keys(value, keys, error=InvalidSolution)
    return cls(*(require(value, key, InvalidSolution) for key in keys))


def _objects(field: str, value: Any, cls: type, keys: tuple[str, ...]) -> tuple:
    """A list of nested solution objects (see :func:`_object`), errors prefixed by
    ``field[k]``."""
    items = as_list(field, value, error=InvalidSolution)
    if all(type(raw) is cls for raw in items):  # validated when they were made
        return tuple(items)
    out = []
    for k, raw in enumerate(items):
        with _within(f"{field}[{k}]", InvalidSolution):
            out.append(_object(raw, cls, keys))
    return tuple(out)


@dataclass(frozen=True)
class Ring:
    """A ring order for AllReduce group ``group`` carrying ``share`` of its bytes.

    ``order`` is cyclic: each member sends to the next, the last to the first.
    """

    group: int
    order: tuple
    share: float

    def __post_init__(self):
        object.__setattr__(self, "group", as_int("group", self.group, minimum=0,
                                                 maximum=MAX_INDEX, error=InvalidSolution))
        object.__setattr__(self, "order", _server_list("order", self.order, InvalidSolution,
                                                       distinct=False, min_length=2))
        object.__setattr__(self, "share", as_float("share", self.share, minimum=0.0,
                                                   error=InvalidSolution))

    def successors(self):
        """The (sender, receiver) pairs of the ring, in order."""
        order = self.order
        return zip(order, order[1:] + order[:1])

    def to_dict(self) -> dict[str, Any]:
        return {"group": self.group, "order": list(self.order), "share": self.share}


@dataclass(frozen=True)
class Path:
    """A path ``nodes`` (servers, first the source, last the destination) carrying
    ``fraction`` of its pair's demand."""

    nodes: tuple
    fraction: float

    def __post_init__(self):
        object.__setattr__(self, "nodes", _server_list("nodes", self.nodes, InvalidSolution,
                                                       distinct=False, min_length=2))
        object.__setattr__(self, "fraction", as_float("fraction", self.fraction, minimum=0.0,
                                                      error=InvalidSolution))

    @property
    def hops(self) -> int:
        return len(self.nodes) - 1

    def to_dict(self) -> dict[str, Any]:
        return {"nodes": list(self.nodes), "fraction": self.fraction}


@dataclass(frozen=True)
class Route:
    """How the demand from ``src`` to ``dst`` is split over ``paths``."""

    src: int
    dst: int
    paths: tuple

    def __post_init__(self):
        object.__setattr__(self, "src", as_int("src", self.src, minimum=0, maximum=MAX_INDEX,
               error=InvalidSolution))
        object.__setattr__(self, "dst", as_int("dst", self.dst, minimum=0, maximum=MAX_INDEX,
               error=InvalidSolution))
        object.__setattr__(self, "paths", _objects("paths", self.paths, Path,
                                                   ("nodes", "fraction")))

    def to_dict(self) -> dict[str, Any]:
        return {"src": self.src, "dst": self.dst, "paths": [p.to_dict() for p in self.paths]}


@dataclass(frozen=True)
class TopologySolution:
    """Links, ring orders and routes (docs/formats.rst, topology).

    Parameters
    ----------
    links : sequence of [i, j, count]
        Undirected links, ``i < j``, ``count >= 1`` parallel links.
    rings : sequence of Ring or dict
        ``{"group": k, "order": [...], "share": s}``; per group the shares sum to 1.
    routes : sequence of Route or dict
        ``{"src": s, "dst": t, "paths": [{"nodes": [s, ..., t], "fraction": f}]}``.

    Examples
    --------
    >>> sol = TopologySolution([[0, 1, 2]], [{"group": 0, "order": [0, 1], "share": 1.0}],
    ...                        [{"src": 0, "dst": 1, "paths": [{"nodes": [0, 1], "fraction": 1}]}])
    >>> sol.routes[0].paths[0].hops
    1
    """

    links: tuple
    rings: tuple
    routes: tuple

    def __post_init__(self):
        links = []
        for k, raw in enumerate(as_list("links", self.links, error=InvalidSolution)):
            entry = as_list(f"links[{k}]", raw, length=3, error=InvalidSolution)
            i, j = (as_int(f"links[{k}][{m}]", entry[m], minimum=0, maximum=MAX_INDEX,
                   error=InvalidSolution)
                    for m in (0, 1))
            count = as_int(f"links[{k}][2]", entry[2], minimum=1, maximum=MAX_INDEX,
                   error=InvalidSolution)
            links.append((i, j, count))
        object.__setattr__(self, "links", tuple(links))
        for name, cls, keys in (("rings", Ring, ("group", "order", "share")),
                                ("routes", Route, ("src", "dst", "paths"))):
            object.__setattr__(self, name, _objects(name, getattr(self, name), cls, keys))

    def to_dict(self) -> dict[str, Any]:
        return {"links": [list(link) for link in self.links],
                "rings": [r.to_dict() for r in self.rings],
                "routes": [r.to_dict() for r in self.routes]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "TopologySolution":
        reject_unknown_keys(data, _SOLUTION_KEYS, error=InvalidSolution)
        return cls(*(require(data, key, InvalidSolution) for key in _SOLUTION_KEYS))


def _largest_id(solution: TopologySolution) -> int:
    """The largest server index the solution names (-1 if none)."""
    largest = max((max(i, j) for i, j, _ in solution.links), default=-1)
    largest = max(largest, max((max(ring.order) for ring in solution.rings), default=-1))
    for route in solution.routes:
        largest = max(largest, route.src, route.dst,
                      max((max(path.nodes) for path in route.paths), default=-1))
    return largest


def _validate_ids(instance: TopologyInstance, solution: TopologySolution) -> None:
    """Raise ``InvalidSolution`` if the solution names servers or groups that do not exist."""
    n = instance.servers
    if _largest_id(solution) < n and all(ring.group < len(instance.allreduce)
                                          for ring in solution.rings):
        return  # the loop below only finds the first unknown id, for the message
    rule = f"unknown server (servers are 0..{n - 1})"

    def known(field: str, server: int) -> None:
        if server >= n:
            fail(field, server, rule, InvalidSolution)

    for k, (i, j, _) in enumerate(solution.links):
        known(f"links[{k}][0]", i)
        known(f"links[{k}][1]", j)
    groups = len(instance.allreduce)
    for k, ring in enumerate(solution.rings):
        if ring.group >= groups:
            fail(f"rings[{k}].group", ring.group,
                 f"unknown AllReduce group (the instance has {groups})", InvalidSolution)
        for m, server in enumerate(ring.order):
            known(f"rings[{k}].order[{m}]", server)
    for k, route in enumerate(solution.routes):
        known(f"routes[{k}].src", route.src)
        known(f"routes[{k}].dst", route.dst)
        for p, path in enumerate(route.paths):
            for m, server in enumerate(path.nodes):
                known(f"routes[{k}].paths[{p}].nodes[{m}]", server)


class PairValues(NamedTuple):
    """Numbers on ordered pairs of servers, sparse: ``values[k]`` belongs to the pair
    ``keys[k] = src * n + dst``; ``keys`` ascending and distinct, every pair not listed
    holds 0.

    Examples
    --------
    >>> pv = PairValues(3, np.array([1, 5]), np.array([2.0, 7.0]))
    >>> pv.get(np.array([0, 1]), np.array([1, 2])).tolist(), pv.dense()[1].tolist()
    ([2.0, 7.0], [0.0, 0.0, 7.0])
    """

    n: int
    keys: np.ndarray
    values: np.ndarray

    @property
    def src(self) -> np.ndarray:
        return self.keys // self.n

    @property
    def dst(self) -> np.ndarray:
        return self.keys % self.n

    def get(self, src, dst) -> np.ndarray:
        """The values of the pairs ``(src[k], dst[k])``, 0 where a pair is not listed."""
        wanted = np.asarray(src, dtype=np.int64) * self.n + np.asarray(dst, dtype=np.int64)
        at = np.minimum(np.searchsorted(self.keys, wanted), max(self.keys.size - 1, 0))
        found = self.keys[at] == wanted if self.keys.size else np.zeros(wanted.shape, bool)
        out = np.zeros(wanted.shape, dtype=self.values.dtype)
        out[found] = self.values[at[found]]
        return out

    def dense(self) -> np.ndarray:
        """The n x n matrix (O(n^2) memory)."""
        out = np.zeros(self.n * self.n, dtype=self.values.dtype)
        out[self.keys] = self.values
        return out.reshape(self.n, self.n)


def _sum_by_pair(n: int, keys, weights, dtype=float) -> PairValues:
    """The weights summed per pair key, each pair's in the order given (as a loop adding
    them into a zero matrix would)."""
    keys = np.asarray(keys, dtype=np.int64)
    unique, inverse = np.unique(keys, return_inverse=True)
    sums = np.bincount(inverse.ravel(), weights=np.asarray(weights, dtype=float),
                       minlength=unique.size)
    return PairValues(n, unique, sums.astype(dtype))


def link_count_pairs(instance: TopologyInstance, solution: TopologySolution) -> PairValues:
    """:func:`link_counts` in O(links): the parallel links of each linked ordered pair
    (both directions of a link), as integers.

    Raises
    ------
    InvalidSolution
        If a link names an unknown server.
    """
    _validate_ids(instance, solution)
    n = instance.servers
    keys, weights = [], []
    for i, j, count in solution.links:
        keys.append(i * n + j)
        weights.append(count)
        if i != j:
            keys.append(j * n + i)
            weights.append(count)
    return _sum_by_pair(n, keys, weights, dtype=np.int64)


def link_counts(instance: TopologyInstance, solution: TopologySolution) -> np.ndarray:
    """The symmetric n x n integer matrix of parallel links between each pair.

    Raises
    ------
    InvalidSolution
        If a link names an unknown server.
    """
    return link_count_pairs(instance, solution).dense()


def ring_pairs(instance: TopologyInstance, rings) -> PairValues:
    """:func:`ring_traffic` in O(ring hops): the bytes ``rings`` send, sender to successor.

    Examples
    --------
    >>> inst = TopologyInstance(3, 1, 8.0, [{"members": [0, 1], "bytes": 4.0}], [[0] * 3] * 3)
    >>> pv = ring_pairs(inst, [Ring(0, [1, 0], 0.5)])
    >>> pv.keys.tolist(), pv.values.tolist()
    ([1, 3], [2.0, 2.0])
    """
    n = instance.servers
    keys, weights = [], []
    for ring in rings:
        per_member = ring.share * ring_bytes_per_member(instance.allreduce[ring.group])
        for s, t in ring.successors():
            if s != t:
                keys.append(s * n + t)
                weights.append(per_member)
    return _sum_by_pair(n, keys, weights)


def ring_traffic(instance: TopologyInstance, rings) -> np.ndarray:
    """The n x n bytes that ``rings`` (a sequence of :class:`Ring`) send, sender to successor.

    Examples
    --------
    >>> inst = TopologyInstance(2, 1, 8.0, [{"members": [0, 1], "bytes": 4.0}], [[0, 0], [0, 0]])
    >>> ring_traffic(inst, [Ring(0, [1, 0], 0.5)]).tolist()
    [[0.0, 2.0], [2.0, 0.0]]
    """
    return ring_pairs(instance, rings).dense()


def demand_pairs(instance: TopologyInstance, rings) -> PairValues:
    """The pairs with demand > 0: ``traffic_bytes`` plus the ring traffic of ``rings``,
    in O(pairs) (the same sums, cell by cell, as :func:`demand_matrix`).

    Examples
    --------
    >>> inst = TopologyInstance(3, 2, 8.0, [{"members": [0, 1, 2], "bytes": 3.0}],
    ...                         {"src": [0], "dst": [1], "bytes": [1.0]})
    >>> pv = demand_pairs(inst, [Ring(0, [0, 1, 2], 1.0)])
    >>> pv.src.tolist(), pv.dst.tolist(), pv.values.tolist()
    ([0, 1, 2], [1, 2, 0], [5.0, 4.0, 4.0])
    """
    n = instance.servers
    src, dst, nbytes = instance.traffic_pairs
    traffic = PairValues(n, src * n + dst, nbytes)
    ring = ring_pairs(instance, rings)
    keys = np.union1d(traffic.keys, ring.keys)
    values = traffic.get(keys // n, keys % n) + ring.get(keys // n, keys % n)
    positive = values > 0
    return PairValues(n, keys[positive], values[positive])


def demand_matrix(instance: TopologyInstance, solution: TopologySolution) -> np.ndarray:
    """demand(s, t) = ``traffic_bytes[s][t]`` + the ring traffic s -> t of the solution's rings.

    Examples
    --------
    >>> inst = TopologyInstance(3, 2, 8.0, [{"members": [0, 1, 2], "bytes": 3.0}],
    ...                         [[0, 1, 0], [0, 0, 0], [0, 0, 0]])
    >>> sol = TopologySolution([], [{"group": 0, "order": [0, 1, 2], "share": 1.0}], [])
    >>> demand_matrix(inst, sol).tolist()
    [[0.0, 5.0, 0.0], [0.0, 0.0, 4.0], [4.0, 0.0, 0.0]]
    """
    _validate_ids(instance, solution)
    return demand_pairs(instance, solution.rings).dense()


def _route_tuples(solution: TopologySolution):
    return ((r.src, r.dst, ((p.nodes, p.fraction) for p in r.paths)) for r in solution.routes)


def link_loads(instance: TopologyInstance, solution: TopologySolution) -> np.ndarray:
    """load[i, j]: bytes the routes send over the directed link use i -> j."""
    _validate_ids(instance, solution)
    return pair_loads(demand_pairs(instance, solution.rings), _route_tuples(solution)).dense()


class RouteArrays(NamedTuple):
    """Routes as flat arrays: route r sends ``src[r] -> dst[r]`` over the paths
    ``route_paths[r]:route_paths[r + 1]``; path p visits the servers
    ``nodes[path_nodes[p]:path_nodes[p + 1]]`` and carries ``fraction[p]`` of its
    pair's demand.

    Examples
    --------
    >>> flat = RouteArrays.from_routes([(0, 2, [((0, 1, 2), 0.5), ((0, 2), 0.5)])])
    >>> flat.route_paths.tolist(), flat.path_nodes.tolist(), flat.nodes.tolist()
    ([0, 2], [0, 3, 5], [0, 1, 2, 0, 2])
    """

    src: np.ndarray
    dst: np.ndarray
    route_paths: np.ndarray
    path_nodes: np.ndarray
    nodes: np.ndarray
    fraction: np.ndarray

    @classmethod
    def from_routes(cls, routes) -> "RouteArrays":
        """From ``(src, dst, paths)`` triples, ``paths`` an iterable of
        ``(nodes, fraction)``, in the order given."""
        src, dst, paths_per_route, nodes, lengths, fractions = [], [], [], [], [], []
        for s, t, paths in routes:
            src.append(s)
            dst.append(t)
            count = 0
            for path_nodes, fraction in paths:
                nodes += path_nodes
                lengths.append(len(path_nodes))
                fractions.append(fraction)
                count += 1
            paths_per_route.append(count)
        return cls(np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64),
                   _offsets(paths_per_route), _offsets(lengths),
                   np.array(nodes, dtype=np.int64), np.array(fractions, dtype=float))


def routes_of_arrays(routes: RouteArrays) -> list[Route]:
    """The :class:`Route` objects of ``routes``, in order.

    The values are checked as arrays, at once (every server in 0..``MAX_INDEX``, every
    path of at least 2 servers, every fraction finite and >= 0), and the objects built
    without checking each again; if some value fails, the objects are built one by one,
    whose checks name it.

    Examples
    --------
    >>> routes_of_arrays(RouteArrays.from_routes([(0, 1, [((0, 1), 1.0)])]))[0].paths
    (Path(nodes=(0, 1), fraction=1.0),)
    """
    nodes = routes.nodes
    fraction = routes.fraction
    servers = np.concatenate([routes.src, routes.dst, nodes])
    valid = (bool((servers >= 0).all() and (servers <= MAX_INDEX).all())
             and bool((np.diff(routes.path_nodes) >= 2).all())
             and bool((np.isfinite(fraction) & (fraction >= 0)
                       & ((fraction == 0) | (fraction >= MIN_MAGNITUDE))).all()))
    node_list = nodes.tolist()
    starts = routes.path_nodes.tolist()
    pieces = zip(starts, starts[1:], fraction.tolist())
    first = routes.route_paths.tolist()
    ends = zip(routes.src.tolist(), routes.dst.tolist(), first, first[1:])
    if not valid:
        paths = [Path(tuple(node_list[a:b]), f) for a, b, f in pieces]
        return [Route(s, t, tuple(paths[a:b])) for s, t, a, b in ends]
    new, set_ = object.__new__, object.__setattr__
    paths = []
    for a, b, f in pieces:
        path = new(Path)
        set_(path, "nodes", tuple(node_list[a:b]))
        set_(path, "fraction", f)
        paths.append(path)
    out = []
    for s, t, a, b in ends:
        route = new(Route)
        set_(route, "src", s)
        set_(route, "dst", t)
        set_(route, "paths", tuple(paths[a:b]))
        out.append(route)
    return out


def _offsets(counts) -> np.ndarray:
    """``[0, c0, c0 + c1, ...]``: where each of consecutive runs of ``counts`` starts."""
    out = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=out[1:])
    return out


def pair_loads(demand: PairValues, routes) -> PairValues:
    """:func:`path_loads` on sparse demand, in O(path hops): the directed link loads of
    ``routes`` (``(src, dst, paths)``, ``paths`` an iterable of ``(nodes, fraction)``,
    or :class:`RouteArrays`).

    A hop a -> b of a path carries ``fraction * demand[src, dst]``; each link's amounts
    are added in the order of the routes, their paths and their hops.

    Examples
    --------
    >>> demand = PairValues(2, np.array([1]), np.array([4.0]))
    >>> loads = pair_loads(demand, [(0, 1, [((0, 1), 0.5)])])
    >>> loads.keys.tolist(), loads.values.tolist()
    ([1], [2.0])
    """
    if not isinstance(routes, RouteArrays):
        routes = RouteArrays.from_routes(routes)
    n = demand.n
    volume = demand.get(routes.src, routes.dst)
    paths = routes.path_nodes.size - 1
    path_route = np.repeat(np.arange(routes.src.size), np.diff(routes.route_paths))
    amount = routes.fraction * volume[path_route]
    carried = ~(volume[path_route] <= 0)
    # the hops in the order of the paths and of their nodes: a node and the next one,
    # when both are on the same path
    node_path = np.repeat(np.arange(paths), np.diff(routes.path_nodes))
    hop = node_path[:-1] == node_path[1:]
    hop[hop] = carried[node_path[:-1][hop]]
    nodes = routes.nodes
    hops = nodes[:-1][hop] * n + nodes[1:][hop]
    return _sum_by_pair(n, hops, amount[node_path[:-1][hop]])


def path_loads(demand: np.ndarray, routes) -> np.ndarray:
    """The directed link loads of ``routes``, an iterable of ``(src, dst, paths)`` with
    ``paths`` an iterable of ``(nodes, fraction)``: ``load[a, b]`` sums
    ``fraction * demand[src, dst]`` over the hops a -> b (the cost model of
    :func:`evaluate`, for methods that score candidates before building solutions).

    Examples
    --------
    >>> path_loads(np.array([[0.0, 4.0], [0.0, 0.0]]), [(0, 1, [((0, 1), 0.5)])]).tolist()
    [[0.0, 2.0], [0.0, 0.0]]
    """
    n = demand.shape[0]
    hops, amounts = [], []
    for src, dst, paths in routes:
        volume = demand[src, dst]
        if volume <= 0:
            continue
        for nodes, fraction in paths:
            hops += [a * n + b for a, b in zip(nodes, nodes[1:])]
            amounts += [fraction * volume] * (len(nodes) - 1)
    # bincount adds the amounts in the order given, as a loop over the hops would.
    return np.bincount(np.array(hops, dtype=np.int64), weights=np.array(amounts, dtype=float),
                       minlength=n * n).reshape(n, n)


def busiest_link_time(loads: np.ndarray, counts: np.ndarray, link_bytes_per_s: float) -> float:
    """``max over used i->j of loads[i, j] / (counts[i, j] * link_bytes_per_s)`` (0 when
    nothing is used, ``inf`` when a used pair has no link): :func:`evaluate` on arrays.

    Examples
    --------
    >>> busiest_link_time(np.array([[0, 4.0], [1.0, 0]]), np.array([[0, 2], [2, 0]]), 1.0)
    2.0
    """
    used = loads > 0
    if not used.any():
        return 0.0
    with np.errstate(divide="ignore"):
        times = loads[used] / (counts[used] * link_bytes_per_s)
    return float(times.max())


def busiest_pair_time(loads: PairValues, counts: PairValues, link_bytes_per_s: float) -> float:
    """:func:`busiest_link_time` on sparse loads and link counts (the same arithmetic).

    Examples
    --------
    >>> loads = PairValues(2, np.array([1, 2]), np.array([4.0, 1.0]))
    >>> counts = PairValues(2, np.array([1, 2]), np.array([2, 2]))
    >>> busiest_pair_time(loads, counts, 1.0)
    2.0
    """
    used = loads.values > 0
    if not used.any():
        return 0.0
    keys = loads.keys[used]
    with np.errstate(divide="ignore"):
        times = loads.values[used] / (counts.get(keys // loads.n, keys % loads.n)
                                      * link_bytes_per_s)
    return float(times.max())


def _near(value: float, target: float) -> bool:
    return abs(value - target) <= _RTOL * max(1.0, abs(target))


def _check_links(instance: TopologyInstance, solution: TopologySolution) -> str | None:
    seen = set()
    used = np.zeros(instance.servers, dtype=np.int64)
    for k, (i, j, count) in enumerate(solution.links):
        if i >= j:
            return f"links[{k}] = {[i, j, count]}: must have i < j"
        if (i, j) in seen:
            return f"links[{k}] = {[i, j, count]}: the pair {i}-{j} is listed twice"
        seen.add((i, j))
        used[i] += count
        used[j] += count
    worst = int(np.argmax(used))
    if used[worst] > instance.degree:
        return (f"server {worst} uses {int(used[worst])} interfaces: more than "
                f"degree = {instance.degree}")
    return None


def _check_rings(instance: TopologyInstance, solution: TopologySolution) -> str | None:
    shares = [0.0] * len(instance.allreduce)
    rings = [0] * len(instance.allreduce)
    for k, ring in enumerate(solution.rings):
        group = instance.allreduce[ring.group]
        if sorted(ring.order) != sorted(group.members):
            return (f"rings[{k}].order = {list(ring.order)}: not an order of the members "
                    f"{sorted(group.members)} of allreduce[{ring.group}]")
        shares[ring.group] += ring.share
        rings[ring.group] += 1
    for g, (total, count) in enumerate(zip(shares, rings)):
        if count == 0:
            return f"allreduce[{g}] has no ring"
        if not _near(total, 1.0):
            return f"allreduce[{g}]: ring shares sum to {total!r}, not 1"
    return None


def _check_routes(instance: TopologyInstance, solution: TopologySolution) -> str | None:
    n = instance.servers
    linked = set()
    for i, j, _ in solution.links:
        linked.add((i, j))
        linked.add((j, i))
    routed = set()
    for k, route in enumerate(solution.routes):
        s, t = route.src, route.dst
        where = f"routes[{k}] ({s}->{t})"
        if s == t:
            return f"{where}: a route from a server to itself"
        if s * n + t in routed:
            return f"{where}: the pair {s}->{t} is routed twice"
        routed.add(s * n + t)
        if not route.paths:
            return f"{where}: has no path"
        total = 0.0
        for p, path in enumerate(route.paths):
            nodes = path.nodes
            if nodes[0] != s or nodes[-1] != t:
                return f"{where}.paths[{p}] = {list(nodes)}: must run from {s} to {t}"
            if len(set(nodes)) != len(nodes):
                return f"{where}.paths[{p}] = {list(nodes)}: visits a server twice"
            for a, b in zip(nodes, nodes[1:]):
                if (a, b) not in linked:
                    return f"{where}.paths[{p}] = {list(nodes)}: servers {a} and {b} are not linked"
            total += path.fraction
        if not _near(total, 1.0):
            return f"{where}: path fractions sum to {total!r}, not 1"
    demand = demand_pairs(instance, solution.rings)
    missing = np.flatnonzero(~np.isin(demand.keys, np.fromiter(routed, np.int64, len(routed))))
    if missing.size:
        k = int(missing[0])
        s, t = divmod(int(demand.keys[k]), n)
        return f"demand {s}->{t} = {float(demand.values[k])!r} bytes has no route"
    return None


def check(instance: TopologyInstance, solution: TopologySolution) -> CheckResult:
    """Feasibility of ``solution``: links ``i < j`` within each server's degree; per
    AllReduce group, ring orders of exactly its members with shares summing to 1; every
    pair with demand routed once, over simple paths of linked servers whose fractions sum
    to 1.

    Returns
    -------
    CheckResult
        The first violated rule, in words, when infeasible.

    Raises
    ------
    InvalidSolution
        If the solution names unknown servers or AllReduce groups.

    Examples
    --------
    >>> inst = TopologyInstance(2, 1, 8.0, [], [[0, 1e9], [0, 0]])
    >>> check(inst, TopologySolution([[0, 1, 1]], [], []))
    CheckResult(feasible=False, reason='demand 0->1 = 1000000000.0 bytes has no route')
    """
    _validate_ids(instance, solution)
    reason = (_check_links(instance, solution) or _check_rings(instance, solution)
              or _check_routes(instance, solution))
    return CheckResult.violated(reason) if reason else CheckResult.ok()


def evaluate(instance: TopologyInstance, solution: TopologySolution) -> float:
    """The busiest directed link's time in seconds: ``max 8*load/(count*link_gbps*1e9)``.

    0 without demand; ``inf`` when a route uses a pair that is not linked.

    Examples
    --------
    >>> inst = TopologyInstance(2, 2, 8.0, [], [[0, 2e9], [1e9, 0]])
    >>> route = lambda s, t: {"src": s, "dst": t, "paths": [{"nodes": [s, t], "fraction": 1}]}
    >>> evaluate(inst, TopologySolution([[0, 1, 2]], [], [route(0, 1), route(1, 0)]))
    1.0
    """
    _validate_ids(instance, solution)
    loads = pair_loads(demand_pairs(instance, solution.rings), _route_tuples(solution))
    return busiest_pair_time(loads, link_count_pairs(instance, solution),
                             instance.link_bytes_per_s)


def mean_hops(instance: TopologyInstance, solution: TopologySolution) -> float:
    """Mean hops per byte (TopoOpt's bandwidth tax): ``sum load / sum demand``.

    1.0 when every byte goes direct; 0.0 without demand.

    Examples
    --------
    >>> inst = TopologyInstance(3, 2, 8.0, [], [[0, 1e9, 3e9], [0, 0, 0], [0, 0, 0]])
    >>> sol = TopologySolution([[0, 1, 1], [1, 2, 1]], [], [
    ...     {"src": 0, "dst": 1, "paths": [{"nodes": [0, 1], "fraction": 1}]},
    ...     {"src": 0, "dst": 2, "paths": [{"nodes": [0, 1, 2], "fraction": 1}]}])
    >>> mean_hops(inst, sol)
    1.75
    """
    _validate_ids(instance, solution)
    demand = demand_pairs(instance, solution.rings)
    total = float(demand.values.sum())
    if total <= 0:
        return 0.0
    volumes = demand.get([r.src for r in solution.routes], [r.dst for r in solution.routes])
    carried = 0.0
    for route, volume in zip(solution.routes, volumes.tolist()):
        carried += volume * sum(p.fraction * p.hops for p in route.paths)
    return carried / total



def _strided_or_random_group(rng: np.random.Generator, n: int) -> list[int]:
    """An AllReduce group of a split operator: TopoOpt places an operator split g ways on a
    residue class {s, s+n/g, ...} (fabricopt docs, *Departures*, topoopt-1.2); without a
    proper divisor of n, a random subset."""
    sizes = [g for g in range(2, n) if n % g == 0]
    if sizes:
        g = int(rng.choice(sizes))
        start = int(rng.integers(n // g))
        return list(range(start, n, n // g))
    if n <= 2:
        return list(range(n))
    g = int(rng.integers(2, n))
    return sorted(int(v) for v in rng.choice(n, size=g, replace=False))


def generate(seed: int = 0, servers: int = 8, degree: int = 4, link_gbps: float = 100.0,
             groups: int = 2, allreduce_bytes: float = 1e9, mp_peers: int | None = None,
             mp_bytes: float = 1e8) -> TopologyInstance:
    """A hybrid-parallel training job: AllReduce groups plus sparse model-parallel traffic.

    Group 0 is data parallelism over every server; groups 1.. are operators split over
    a strided class of servers, as TopoOpt places them. Each server sends model-parallel
    transfers to ``mp_peers`` (default ``min(2, servers - 1)``) random others. The
    traffic is in the sparse form (O(servers * mp_peers) memory). Sizes are log-normal around
    ``allreduce_bytes`` and ``mp_bytes`` (TopoOpt's DLRM: 4 GB AllReduce, 32 MB MP; the
    defaults make MP traffic matter).

    Notes
    -----
    Families that separate methods (the benchmark suites use them): dense all-to-all
    MP traffic (``mp_peers = servers - 1``), where rings are far from optimal; several
    groups at degree 2 (``degree=2, groups=3``), where the optimum sits above
    :func:`lower_bound`; and 32 or more servers with MP traffic.

    Examples
    --------
    >>> inst = generate(seed=1, servers=6, degree=4)
    >>> inst.servers, len(inst.allreduce), inst.allreduce[0].members
    (6, 2, (0, 1, 2, 3, 4, 5))
    """
    n = as_int("servers", servers, minimum=2, maximum=MAX_GENERATED_SIDE)
    degree = as_int("degree", degree, minimum=1, maximum=MAX_DEGREE)
    groups = as_int("groups", groups, minimum=0, maximum=MAX_DEGREE)
    mp_peers = min(2, n - 1) if mp_peers is None else \
        as_int("mp_peers", mp_peers, minimum=0, maximum=n - 1)
    allreduce_bytes = as_float("allreduce_bytes", allreduce_bytes, positive=True)
    mp_bytes = as_float("mp_bytes", mp_bytes, positive=True)
    rng = np.random.default_rng(seed)

    def size(mean: float) -> float:
        return float(np.round(rng.lognormal(math.log(mean), 0.5)))

    allreduce = []
    for k in range(groups):
        members = list(range(n)) if k == 0 else _strided_or_random_group(rng, n)
        allreduce.append({"members": members, "bytes": size(allreduce_bytes)})
    src, dst, nbytes = [], [], []
    for s in range(n):
        # the k-th other server: k, skipping s (the draws of a choice among the others)
        for k in rng.choice(n - 1, size=mp_peers, replace=False).tolist():
            src.append(s)
            dst.append(k + (k >= s))
            nbytes.append(size(mp_bytes))
    return TopologyInstance(n, degree, link_gbps, allreduce,
                            SparseTraffic(tuple(src), tuple(dst), tuple(nbytes)))


KIND = register_kind(ProblemKind(
    name="topology", sense="min",
    instance_type=TopologyInstance, solution_type=TopologySolution,
    instance_from_dict=TopologyInstance.from_dict, solution_from_dict=TopologySolution.from_dict,
    check=check, evaluate=evaluate, generate=generate,
    size=lambda inst: inst.servers,
    doc="TopoOpt direct-connect topology + routing (min busiest-link time)",
))
