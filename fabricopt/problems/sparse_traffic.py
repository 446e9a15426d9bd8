"""Sparse traffic: a traffic matrix given by its non-zero pairs (docs/formats.rst,
*Traffic matrices*).

``{"src": [...], "dst": [...], "bytes": [...]}`` lists ``bytes[k]`` sent from
``src[k]`` to ``dst[k]``; every pair not listed sends nothing. It describes the same
matrix as the dense ``N x N`` form in O(pairs) memory, which is what a job of
thousands of servers with a few peers each needs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
from scipy import sparse

from fabricopt.errors import InvalidInstance
from fabricopt.problems._validate import (MIN_MAGNITUDE, as_float, as_int, as_list, fail,
                                          reject_unknown_keys, require)

__all__ = ["SparseTraffic", "SPARSE_KEYS", "as_sparse_traffic", "is_sparse_form",
           "canonical_pairs"]

#: The keys of the sparse form, in the order they are written.
SPARSE_KEYS = ("src", "dst", "bytes")


@dataclass(frozen=True)
class SparseTraffic:
    """Traffic as parallel lists: ``bytes[k]`` from ``src[k]`` to ``dst[k]``.

    A plain container: the instance that holds it validates it against its size
    (:func:`as_sparse_traffic`).

    Examples
    --------
    >>> SparseTraffic((0, 2), (1, 0), (5.0, 1.0)).to_dict()
    {'src': [0, 2], 'dst': [1, 0], 'bytes': [5.0, 1.0]}
    """

    src: tuple
    dst: tuple
    bytes: tuple

    def to_dict(self) -> dict[str, list]:
        return {"src": list(self.src), "dst": list(self.dst), "bytes": list(self.bytes)}


def is_sparse_form(value: Any) -> bool:
    """Whether ``value`` is meant as the sparse form (an object, a
    :class:`SparseTraffic` or a scipy sparse matrix) rather than a dense matrix."""
    return isinstance(value, (Mapping, SparseTraffic)) or sparse.issparse(value)


def _from_scipy(value) -> dict[str, list]:
    coo = sparse.coo_array(value)
    coo.sum_duplicates()
    return {"src": coo.row.tolist(), "dst": coo.col.tolist(), "bytes": coo.data.tolist()}


def as_sparse_traffic(field: str, value: Any, size: int,
                      error: type[Exception] = InvalidInstance) -> SparseTraffic:
    """The sparse form of a ``size`` x ``size`` traffic matrix, validated.

    Every ``src`` and ``dst`` is a server ``0..size-1``, ``src != dst`` (no traffic to
    itself), each ordered pair at most once, every ``bytes`` finite and >= 0. A scipy
    sparse matrix is accepted too (duplicates summed).

    Raises
    ------
    InvalidInstance
        Naming the first bad entry, e.g. ``traffic_bytes.src[3] = 9: unknown server``.

    Examples
    --------
    >>> as_sparse_traffic("t", {"src": [0], "dst": [1], "bytes": [2]}, 2)
    SparseTraffic(src=(0,), dst=(1,), bytes=(2.0,))
    >>> as_sparse_traffic("t", {"src": [0, 0], "dst": [1, 1], "bytes": [2, 3]}, 2)
    Traceback (most recent call last):
    ...
    fabricopt.errors.InvalidInstance: t.dst[1] = 1: the pair 0->1 is listed twice (also at 0)
    """
    if isinstance(value, SparseTraffic):
        value = value.to_dict()
    elif sparse.issparse(value):
        if value.shape != (size, size):
            raise error(f"{field}: a sparse matrix of shape {value.shape}, expected "
                        f"({size}, {size})")
        value = _from_scipy(value)
    if not isinstance(value, Mapping):
        fail(field, value, "must be an N x N matrix or an object {src, dst, bytes}", error)
    reject_unknown_keys(value, SPARSE_KEYS, field, error)
    src, dst, nbytes = (as_list(f"{field}.{key}", require(value, key, error, field), error=error)
                        for key in SPARSE_KEYS)
    for key, items in (("dst", dst), ("bytes", nbytes)):
        if len(items) != len(src):
            raise error(f"{field}.{key}: has {len(items)} entries, but {field}.src has "
                        f"{len(src)}")
    fast = _fast_pairs(src, dst, nbytes, size)
    if fast is None:
        fast = _slow_pairs(field, src, dst, nbytes, size, error)
    src_a, dst_a, bytes_a = fast
    _reject_repeats(field, src_a, dst_a, size, error)
    return SparseTraffic(tuple(src_a.tolist()), tuple(dst_a.tolist()), tuple(bytes_a.tolist()))


def _fast_pairs(src: list, dst: list, nbytes: list, size: int):
    """The arrays by numpy when every entry is a plain valid value, else None (the slow
    path then names the first bad one)."""
    if not (all(type(v) is int for v in src) and all(type(v) is int for v in dst)
            and all(type(x) in (float, int) for x in nbytes)):
        return None
    try:
        src_a = np.array(src, dtype=np.int64)
        dst_a = np.array(dst, dtype=np.int64)
        bytes_a = np.array(nbytes, dtype=float)
    except (OverflowError, ValueError):
        return None
    if src_a.size and (min(src_a.min(), dst_a.min()) < 0
                       or max(src_a.max(), dst_a.max()) >= size):
        return None
    if (src_a == dst_a).any() or not np.isfinite(bytes_a).all() or (bytes_a < 0).any():
        return None
    if ((bytes_a > 0) & (bytes_a < MIN_MAGNITUDE)).any():
        return None
    return src_a, dst_a, bytes_a


def _slow_pairs(field: str, src: list, dst: list, nbytes: list, size: int,
                error: type[Exception]):
    rule = f"unknown server (servers are 0..{size - 1})"
    out_src, out_dst, out_bytes = [], [], []
    for k, (s, t, b) in enumerate(zip(src, dst, nbytes)):
        s = as_int(f"{field}.src[{k}]", s, minimum=0, error=error)
        if s >= size:
            fail(f"{field}.src[{k}]", s, rule, error)
        t = as_int(f"{field}.dst[{k}]", t, minimum=0, error=error)
        if t >= size:
            fail(f"{field}.dst[{k}]", t, rule, error)
        if s == t:
            fail(f"{field}.dst[{k}]", t, f"equals src[{k}] (no traffic from a server to "
                                         f"itself)", error)
        out_src.append(s)
        out_dst.append(t)
        out_bytes.append(as_float(f"{field}.bytes[{k}]", b, minimum=0.0, error=error))
    return (np.array(out_src, dtype=np.int64), np.array(out_dst, dtype=np.int64),
            np.array(out_bytes, dtype=float))


def _reject_repeats(field: str, src: np.ndarray, dst: np.ndarray, size: int,
                    error: type[Exception]) -> None:
    keys = src * size + dst
    order = np.argsort(keys, kind="stable")
    repeated = np.flatnonzero(keys[order][1:] == keys[order][:-1])
    if not repeated.size:
        return
    # name the repeat that comes first in the list, and where the pair was first listed
    later = order[repeated + 1]
    k = int(later.min())
    first = int(np.flatnonzero(keys == keys[k])[0])
    fail(f"{field}.dst[{k}]", int(dst[k]),
         f"the pair {int(src[k])}->{int(dst[k])} is listed twice (also at {first})", error)


def canonical_pairs(traffic: SparseTraffic, size: int):
    """``(src, dst, bytes)`` arrays of the positive entries, ordered by ``(src, dst)``
    (row-major, as ``numpy.nonzero`` lists a dense matrix's): the one representation
    every computation reads, so that the dense and sparse forms give identical results.

    Examples
    --------
    >>> [a.tolist() for a in canonical_pairs(SparseTraffic((2, 0, 1), (0, 1, 0),
    ...                                                    (1.0, 0.0, 3.0)), 3)]
    [[1, 2], [0, 0], [3.0, 1.0]]
    """
    src = np.asarray(traffic.src, dtype=np.int64)
    dst = np.asarray(traffic.dst, dtype=np.int64)
    nbytes = np.asarray(traffic.bytes, dtype=float)
    keep = nbytes > 0
    src, dst, nbytes = src[keep], dst[keep], nbytes[keep]
    order = np.argsort(src * size + dst, kind="stable")
    return src[order], dst[order], nbytes[order]
