"""Per-iteration traffic of a training job: point-to-point bytes and ring-AllReduce groups.

A :class:`Traffic` holds what N nodes exchange in one iteration: a matrix of
point-to-point bytes (model-parallel transfers, or any demand) and the AllReduce
groups of data parallelism. A fabric that can choose the ring order of an AllReduce
(TopoOpt: AllReduce traffic is *mutable*) gets the groups as such; the others carry
the ring in member order, :meth:`Traffic.ring_matrix`.

Hybrid parallelism (SiP-ML §3.2): N = k*l GPUs in l groups of k; group m holds GPUs
m*k .. m*k+k-1, runs the same model-parallel placement, and GPU g of every group
joins one ring-AllReduce over the l copies of the parameters it holds.

References
----------
.. [1] M. Khani et al., "SiP-ML", SIGCOMM 2021, §3.2 (hybrid MP x DP, the DP ring).
.. [2] W. Wang et al., "TopoOpt", NSDI 2023, §4.3 (AllReduce mutability).
.. [3] P. Patarasuk, X. Yuan, "Bandwidth optimal all-reduce algorithms for clusters of
   workstations", JPDC 2009 (ring AllReduce: each member sends 2(g-1)/g of the data).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Mapping, Sequence

import numpy as np

from fabricopt.errors import InvalidInstance
from fabricopt.problems._validate import as_float, as_int, as_list, fail
from fabricopt.problems.opgraph import OpGraph

__all__ = ["AllReduce", "Traffic", "PairTraffic", "as_traffic", "ring_allreduce_bytes", "port_bound_s",
           "transfer_s", "hybrid_traffic", "dp_groups", "mp_traffic", "params_per_gpu"]


def ring_allreduce_bytes(members: int, nbytes: float) -> float:
    """Bytes each member of a ring AllReduce of ``nbytes`` sends to its successor:
    ``2*(g-1)/g * nbytes`` (reduce-scatter then all-gather).

    Examples
    --------
    >>> ring_allreduce_bytes(4, 1e9)
    1500000000.0
    >>> ring_allreduce_bytes(1, 1e9)
    0.0
    """
    return 2.0 * (members - 1) / members * float(nbytes)


def transfer_s(nbytes, gbps):
    """Seconds to move ``nbytes`` at ``gbps`` (10^9 bit/s): ``8*bytes/(gbps*1e9)``."""
    return 8.0 * nbytes / (gbps * 1e9)


@dataclass(frozen=True)
class AllReduce:
    """A ring-AllReduce of ``bytes`` over ``members`` (node ids, in ring order)."""

    members: tuple
    bytes: float

    def to_dict(self) -> dict[str, Any]:
        return {"members": list(self.members), "bytes": self.bytes}


def _node_ids(values: list, nodes: int) -> bool:
    """Are ``values`` all plain ints in 0..nodes-1 (what ``as_int`` keeps as they are)?"""
    return all(type(v) is int for v in values) and (
        not values or (min(values) >= 0 and max(values) <= nodes - 1))


@dataclass(frozen=True, eq=False)
class Traffic:
    """What ``nodes`` nodes exchange in one iteration.

    Parameters
    ----------
    matrix_bytes : array-like, shape (N, N)
        Point-to-point bytes from node i to node j; finite, >= 0, zero diagonal.
    allreduce : sequence of AllReduce or dict
        Ring-AllReduce groups: distinct members in 0..N-1, ``bytes >= 0``.

    Examples
    --------
    >>> t = Traffic([[0, 5], [0, 0]], [{"members": [0, 1], "bytes": 4}])
    >>> t.total_matrix().tolist()
    [[0.0, 9.0], [4.0, 0.0]]
    """

    matrix_bytes: Any
    allreduce: tuple = ()

    def __post_init__(self):
        m = np.array(self.matrix_bytes, dtype=float)
        if m.ndim != 2 or m.shape[0] != m.shape[1] or m.shape[0] < 1:
            raise InvalidInstance(f"traffic_bytes: must be a non-empty square matrix, "
                                  f"got shape {m.shape}")
        bad = ~np.isfinite(m) | (m < 0)
        if bad.any():   # located only then: argwhere over N x N cells costs
            i, j = (int(v) for v in np.argwhere(bad)[0])
            fail(f"traffic_bytes[{i}][{j}]", float(m[i, j]), "must be finite and >= 0")
        if np.any(np.diag(m)):
            i = int(np.flatnonzero(np.diag(m))[0])
            fail(f"traffic_bytes[{i}][{i}]", float(m[i, i]), "the diagonal must be 0")
        m.flags.writeable = False
        object.__setattr__(self, "matrix_bytes", m)
        self._set_groups()

    @classmethod
    def _of_valid_matrix(cls, matrix: np.ndarray, allreduce) -> "Traffic":
        """``Traffic(matrix, allreduce)`` of a fresh float ``matrix`` its maker has
        validated as the constructor would (so kept, not copied, and not read again
        cell by cell); the groups are checked as always."""
        out = object.__new__(cls)
        matrix.flags.writeable = False
        object.__setattr__(out, "matrix_bytes", matrix)
        object.__setattr__(out, "allreduce", allreduce)
        out._set_groups()
        return out

    def _set_groups(self) -> None:
        """Check ``allreduce`` against the matrix's nodes and keep it as AllReduce tuples."""
        n = self.matrix_bytes.shape[0]
        groups = []
        for k, g in enumerate(as_list("allreduce", self.allreduce)):
            if isinstance(g, Mapping):
                g = AllReduce(g.get("members", ()), g.get("bytes", 0.0))
            elif not isinstance(g, AllReduce):
                fail(f"allreduce[{k}]", g, "must be an object with members and bytes")
            members = as_list(f"allreduce[{k}].members", g.members)
            if not _node_ids(members, n):   # the cell-by-cell check names the bad one
                members = [as_int(f"allreduce[{k}].members[{i}]", v, minimum=0, maximum=n - 1)
                           for i, v in enumerate(members)]
            members = tuple(members)
            if len(set(members)) != len(members):
                fail(f"allreduce[{k}].members", list(members), "repeat a node")
            if len(members) < 2:
                fail(f"allreduce[{k}].members", list(members), "must have at least 2 nodes")
            groups.append(AllReduce(members, as_float(f"allreduce[{k}].bytes", g.bytes,
                                                      minimum=0.0)))
        object.__setattr__(self, "allreduce", tuple(groups))

    @property
    def nodes(self) -> int:
        return self.matrix_bytes.shape[0]

    @cached_property
    def _ring(self) -> np.ndarray:
        ring = np.zeros_like(self.matrix_bytes)
        for g in self.allreduce:
            src = np.array(g.members)
            ring[src, np.roll(src, -1)] += ring_allreduce_bytes(len(src), g.bytes)
        ring.flags.writeable = False
        return ring

    def ring_matrix(self) -> np.ndarray:
        """The AllReduce groups as ring traffic in member order (read-only N x N)."""
        return self._ring

    def total_matrix(self) -> np.ndarray:
        """Point-to-point plus ring traffic (a fresh N x N array)."""
        return self._total.copy()

    @cached_property
    def _total(self) -> np.ndarray:
        """:meth:`total_matrix`, read-only and made once: every fabric that configures
        for this traffic reads it (at 4,096 nodes each sum is 128 MB written)."""
        total = self.matrix_bytes + self._ring
        total.flags.writeable = False
        return total

    @cached_property
    def _total_digest(self) -> bytes:
        """SHA-256 of :meth:`total_matrix` (shape, dtype and bytes), made once: what a
        fabric keys a configuration by, so that traffic equal cell for cell is solved
        once whatever object carries it (hashing 1,024 x 1,024 cells takes ~6 ms,
        solving them hundreds)."""
        total = np.ascontiguousarray(self._total)
        digest = hashlib.sha256(repr((total.shape, total.dtype.str)).encode())
        digest.update(total.data)
        return digest.digest()

    @property
    def total_bytes(self) -> float:
        return float(self._total.sum())

    def to_dict(self) -> dict[str, Any]:
        return {"traffic_bytes": self.matrix_bytes.tolist(),
                "allreduce": [g.to_dict() for g in self.allreduce]}


@dataclass(frozen=True)
class PairTraffic:
    """Per-iteration bytes between ``nodes`` nodes as sorted, merged (src, dst) pairs.

    The point-to-point part of a :class:`Traffic` in O(pairs) memory: a job's
    collectives on thousands of GPUs touch a few pairs per GPU, and its N x N matrix
    would not fit (9,216 GPUs: 680 MB per matrix). Packet-switched fabrics price it
    as it is (:meth:`~fabricopt.fabrics.models.Fabric.sparse_comm_time_s`).

    Examples
    --------
    >>> t = PairTraffic.from_pairs(3, [0, 0, 1], [1, 1, 2], [1.0, 2.0, 5.0])
    >>> t.src.tolist(), t.dst.tolist(), t.bytes.tolist()
    ([0, 1], [1, 2], [3.0, 5.0])
    """

    nodes: int
    src: np.ndarray
    dst: np.ndarray
    bytes: np.ndarray

    @classmethod
    def from_pairs(cls, nodes: int, src, dst, nbytes) -> "PairTraffic":
        src, dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
        nbytes = np.asarray(nbytes, dtype=float)
        keep = (src != dst) & (nbytes > 0)
        key, inverse = np.unique(src[keep] * nodes + dst[keep], return_inverse=True)
        merged = np.bincount(inverse, weights=nbytes[keep], minlength=len(key))
        return cls(nodes, key // nodes, key % nodes, merged)

    @property
    def total_bytes(self) -> float:
        return float(self.bytes.sum())

    def sent_bytes(self) -> np.ndarray:
        """Bytes each GPU sends."""
        return np.bincount(self.src, weights=self.bytes, minlength=self.nodes)

    def received_bytes(self) -> np.ndarray:
        """Bytes each GPU receives."""
        return np.bincount(self.dst, weights=self.bytes, minlength=self.nodes)

    def to_dense(self) -> np.ndarray:
        """The N x N matrix (mind the size: N^2 floats)."""
        out = np.zeros((self.nodes, self.nodes))
        out[self.src, self.dst] = self.bytes
        return out

    def to_traffic(self) -> Traffic:
        """As a :class:`~fabricopt.fabrics.traffic.Traffic` for the fabric models."""
        return Traffic(self.to_dense())


def as_traffic(traffic) -> Traffic:
    """A :class:`Traffic` from itself or from a bare N x N matrix."""
    return traffic if isinstance(traffic, Traffic) else Traffic(traffic)


def port_bound_s(traffic, gbps: float) -> float:
    """The port bound: the busiest node's sent or received bytes at ``gbps``.

    No fabric that gives each node ``gbps`` in each direction can deliver the traffic
    faster; an ideal full-bisection switch (SiP-ML's Elect-Flat) attains it.

    Examples
    --------
    >>> port_bound_s([[0, 1e9, 1e9], [0, 0, 0], [0, 0, 0]], 8.0)
    2.0
    """
    return _port_bound_of(as_traffic(traffic)._total, gbps)


def _port_bound_of(total: np.ndarray, gbps: float) -> float:
    """:func:`port_bound_s` of the N x N total traffic."""
    busiest = max(total.sum(axis=1).max(), total.sum(axis=0).max())
    return float(transfer_s(busiest, gbps))


def dp_groups(params_bytes: Sequence[float], k: int, l: int) -> list[AllReduce]:
    """The data-parallel rings of a k x l job: GPU g of every group, ``params_bytes[g]`` each.

    Examples
    --------
    >>> [(g.members, g.bytes) for g in dp_groups([10.0, 0.0], k=2, l=3)]
    [((0, 2, 4), 10.0)]
    """
    k = as_int("k", k, minimum=1)
    l = as_int("l", l, minimum=1)
    params = as_list("params_bytes", list(params_bytes), length=k)
    if l < 2:
        return []
    return [AllReduce(tuple(m * k + g for m in range(l)), float(p))
            for g, p in enumerate(params) if p > 0]


def hybrid_traffic(mp_bytes, params_bytes: Sequence[float], k: int, l: int) -> Traffic:
    """The traffic of N = k*l GPUs: the k x k model-parallel matrix in each of the l
    groups, plus one data-parallel ring per GPU position.

    Parameters
    ----------
    mp_bytes : array-like, shape (k, k)
        Model-parallel bytes per iteration inside one group.
    params_bytes : sequence of float, length k
        Gradient bytes held by each GPU position (what its DP ring synchronizes).
    k, l : int
        Model- and data-parallel degrees.

    Examples
    --------
    >>> t = hybrid_traffic([[0, 3], [1, 0]], [8.0, 8.0], k=2, l=2)
    >>> t.matrix_bytes.tolist()
    [[0.0, 3.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 3.0], [0.0, 0.0, 1.0, 0.0]]
    >>> [g.members for g in t.allreduce]
    [(0, 2), (1, 3)]
    """
    k = as_int("k", k, minimum=1)
    l = as_int("l", l, minimum=1)
    mp = np.array(mp_bytes, dtype=float)
    if mp.shape != (k, k):
        raise InvalidInstance(f"mp_bytes: has shape {mp.shape}, expected ({k}, {k})")
    groups = dp_groups(params_bytes, k, l)
    if np.isfinite(mp).all() and not (mp < 0).any() and not np.diag(mp).any():
        # every cell of the block diagonal is one of mp's or +0.0: mp is the check
        return Traffic._of_valid_matrix(_block_diagonal(mp, l), groups)
    # the constructor names the bad cell: the first in row-major order is mp's own
    return Traffic(_block_diagonal(mp, l), groups)


def _block_diagonal(mp: np.ndarray, l: int) -> np.ndarray:
    """``np.kron(np.eye(l), mp)``: ``l`` copies of ``mp`` down the diagonal, zeros
    elsewhere, written in place rather than as ``l*l`` products.

    The products ``0.0 * x`` off the diagonal are ``+0.0`` only for finite ``x`` without
    a sign bit; any other ``mp`` goes through ``kron`` itself, so every cell (its sign
    of zero, and which cell a bad value reports first) stays that of ``kron``.

    Examples
    --------
    >>> _block_diagonal(np.array([[0.0, 3.0], [1.0, 0.0]]), 2).tolist()
    [[0.0, 3.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 3.0], [0.0, 0.0, 1.0, 0.0]]
    """
    if not np.isfinite(mp).all() or np.signbit(mp).any():
        return np.kron(np.eye(l), mp)
    k = mp.shape[0]
    out = np.zeros((k * l, k * l))
    blocks = out.reshape(l, k, l, k)
    diagonal = np.arange(l)
    blocks[diagonal, :, diagonal, :] = mp
    return out


def _sub_op_groups(instance: Mapping[str, Any]) -> dict[str, str]:
    """sub-op id -> the original op it came from (its ``group``, else itself)."""
    return {op["id"]: op.get("group", op["id"]) for op in instance["ops"]}


def mp_traffic(instance: Mapping[str, Any], gpu: Mapping[str, int]) -> np.ndarray:
    """The k x k model-parallel bytes of a placement: every dep across two GPUs.

    ``instance`` is a ``placement`` instance as JSON (docs/formats.rst, placement), ``gpu`` the
    solution's op -> GPU map.

    Examples
    --------
    >>> inst = {"gpus": 2, "ops": [{"id": "a"}, {"id": "b"}],
    ...         "deps": [{"src": "a", "dst": "b", "bytes": 7}]}
    >>> mp_traffic(inst, {"a": 0, "b": 1}).tolist()
    [[0.0, 7.0], [0.0, 0.0]]
    """
    k = int(instance["gpus"])
    out = np.zeros((k, k))
    for dep in instance["deps"]:
        i, j = gpu[dep["src"]], gpu[dep["dst"]]
        if i != j:
            out[i, j] += float(dep["bytes"])
    return out


def params_per_gpu(graph: OpGraph, instance: Mapping[str, Any],
                   gpu: Mapping[str, int]) -> np.ndarray:
    """Gradient bytes each GPU holds: an op's parameters split evenly over its sub-ops.

    SiP-ML splits every op evenly (§3.2), so each of an op's n sub-ops holds 1/n of
    its parameters.

    Raises
    ------
    InvalidInstance
        If a sub-op's group names no op of ``graph``.

    Examples
    --------
    >>> g = OpGraph([{"id": "a", "compute_s": 1.0, "params_bytes": 10.0}])
    >>> inst = {"gpus": 2, "ops": [{"id": "a0", "group": "a"}, {"id": "a1", "group": "a"}]}
    >>> params_per_gpu(g, inst, {"a0": 0, "a1": 1}).tolist()
    [5.0, 5.0]
    """
    params = {op.id: op.params_bytes for op in graph.ops}
    groups = _sub_op_groups(instance)
    pieces: dict[str, int] = {}
    for origin in groups.values():
        if origin not in params:
            fail("ops.group", origin, "names no op of the workload graph")
        pieces[origin] = pieces.get(origin, 0) + 1
    out = np.zeros(int(instance["gpus"]))
    for sub, origin in groups.items():
        out[gpu[sub]] += params[origin] / pieces[origin]
    return out
