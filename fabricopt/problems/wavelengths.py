"""``wavelengths`` — SiP-Ring wavelength scheduling (docs/formats.rst, wavelengths).

N nodes sit on two counter-rotating fibers, ``cw`` (segment s is the link s -> s+1
mod N) and ``ccw`` (segment s is the link s -> s-1 mod N), each carrying W
wavelengths. A lightpath i -> j takes one direction and one wavelength end to end
(wavelength continuity), at most ``max_hops`` segments; no two lightpaths share a
(direction, segment, wavelength), and each node sources and sinks at most W of them.
With ``n_ij`` lightpaths from i to j, the objective, minimized, is the longest
transfer time ``max over T_ij > 0 of 8*T_ij / (n_ij * wavelength_gbps * 1e9)``.

Where an instance is well formed but cannot be served — a demanded pair beyond
``max_hops`` in both directions, a node with more than W peers — it is *infeasible*,
not invalid: construction accepts it, and :func:`require_feasible` (which every
method calls) raises :class:`~fabricopt.errors.InfeasibleInstance` naming the pair or
node, so that ``solve`` reports status ``"infeasible"`` with that message. This
keeps ``InvalidInstance`` for broken input (exit code 2) and lets callers that build
instances from workloads (a DP partner too far away) get an ordinary result.

References
----------
.. [1] M. Khani et al., "SiP-ML: High-Bandwidth Optical Network Interconnects for
   Machine Learning Training", SIGCOMM 2021, §3.3 and Appendix A.1 (SiP-Ring).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Mapping

import numpy as np

from fabricopt.errors import InvalidSolution
from fabricopt.problems._kind import CheckResult, ProblemKind, register_kind
from fabricopt.problems._ring import DIRECTIONS, arc, segment_load, segment_name
from fabricopt.problems._transfer import max_transfer_time, unserved_pair
from fabricopt.problems.limits import MAX_GENERATED_SIDE, MAX_INDEX, MAX_WAVELENGTHS, check_traffic
from fabricopt.problems._validate import (as_float, as_int, as_list, as_matrix, fail,
                                          matrix_array, reject_unknown_keys, require)
from fabricopt.problems._wavelength_counts import infeasibility, require_feasible

__all__ = ["WavelengthsInstance", "WavelengthsSolution", "Lightpath", "DIRECTIONS", "check",
           "evaluate", "lightpath_counts", "arc", "segment_load", "infeasibility",
           "require_feasible", "generate"]

_INSTANCE_KEYS = ("problem", "nodes", "wavelengths", "wavelength_gbps", "max_hops",
                  "traffic_bytes")
_LIGHTPATH_KEYS = ("src", "dst", "dir", "wavelength")


@dataclass(frozen=True)
class WavelengthsInstance:
    """A SiP-Ring wavelength-scheduling instance.

    Parameters
    ----------
    nodes : int
        N >= 2, the nodes (GPUs) in ring order.
    wavelengths : int
        W wavelengths per fiber, 1 to ``MAX_WAVELENGTHS`` (1,024, see
        :mod:`fabricopt.problems.limits`); also the transceivers of a node (it sources and
        sinks at most W lightpaths).
    wavelength_gbps : float
        Bandwidth of one wavelength in 10^9 bit/s (> 0); SiP-ML uses 25.
    max_hops : int
        Longest lightpath in segments, 1 <= max_hops <= N-1 (SiP-ML: 16).
    traffic_bytes : sequence of sequences of float
        N x N bytes to move from node i to node j; entries >= 0, diagonal 0. Kept as a
        :class:`~fabricopt.problems._matrix.FrozenMatrix`: a tuple of row tuples to
        read, compare and hash, held as the read-only array :attr:`traffic` (a float
        array is copied once, never turned into Python floats).

    Examples
    --------
    >>> inst = WavelengthsInstance(4, 2, 25.0, 2, [[0, 1e6, 0, 0], [0] * 4, [0] * 4, [0] * 4])
    >>> inst.nodes, inst.demanded
    (4, ((0, 1),))
    """

    nodes: int
    wavelengths: int
    wavelength_gbps: float
    max_hops: int
    traffic_bytes: tuple

    def __post_init__(self):
        set_ = object.__setattr__
        set_(self, "nodes", as_int("nodes", self.nodes, minimum=2, maximum=MAX_INDEX))
        set_(self, "wavelengths", as_int("wavelengths", self.wavelengths, minimum=1,
                                         maximum=MAX_WAVELENGTHS))
        set_(self, "wavelength_gbps", as_float("wavelength_gbps", self.wavelength_gbps,
                                               positive=True))
        set_(self, "max_hops", as_int("max_hops", self.max_hops, minimum=1,
                                      maximum=self.nodes - 1))
        set_(self, "traffic_bytes", as_matrix("traffic_bytes", self.traffic_bytes, self.nodes))
        # every transfer time, and the count bound, stays finite (limits.py)
        check_traffic("traffic_bytes", self.traffic, "wavelength_gbps", self.wavelength_gbps)

    @cached_property
    def traffic(self) -> np.ndarray:
        """``traffic_bytes`` as a read-only float array."""
        return matrix_array(self.traffic_bytes)

    @property
    def demanded(self) -> tuple[tuple[int, int], ...]:
        """The pairs (i, j) with traffic, in row-major order."""
        return tuple((int(i), int(j)) for i, j in zip(*self.pairs[:2]))

    @cached_property
    def pairs(self) -> tuple[np.ndarray, ...]:
        """Demanded pairs as arrays ``(src, dst, bytes, cw_hops, ccw_hops)``, row-major."""
        src, dst = np.nonzero(self.traffic > 0)
        n = self.nodes
        arrays = (src, dst, self.traffic[src, dst], (dst - src) % n, (src - dst) % n)
        for a in arrays:
            a.flags.writeable = False
        return arrays

    def to_dict(self) -> dict[str, Any]:
        return {"problem": "wavelengths", "nodes": self.nodes, "wavelengths": self.wavelengths,
                "wavelength_gbps": self.wavelength_gbps, "max_hops": self.max_hops,
                "traffic_bytes": self.traffic.tolist()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "WavelengthsInstance":
        reject_unknown_keys(data, _INSTANCE_KEYS)
        return cls(*(require(data, k) for k in _INSTANCE_KEYS[1:]))


def _index(field: str, value: Any) -> int:
    # The fast path matters: a 128-node schedule holds thousands of lightpaths.
    if type(value) is int and 0 <= value <= MAX_INDEX:
        return value
    return as_int(field, value, minimum=0, maximum=MAX_INDEX, error=InvalidSolution)


@dataclass(frozen=True)
class Lightpath:
    """One lightpath: ``src -> dst`` on fiber ``dir`` ("cw" or "ccw") and one wavelength.

    Examples
    --------
    >>> Lightpath(0, 2, "cw", 3)
    Lightpath(src=0, dst=2, dir='cw', wavelength=3)
    >>> Lightpath(0, 2, "left", 3)
    Traceback (most recent call last):
    ...
    fabricopt.errors.InvalidSolution: lightpath.dir = 'left': must be 'cw' or 'ccw'
    """

    src: int
    dst: int
    dir: str
    wavelength: int

    def __post_init__(self):
        self._validate("lightpath")

    def _validate(self, where: str) -> None:
        set_ = object.__setattr__
        set_(self, "src", _index(f"{where}.src", self.src))
        set_(self, "dst", _index(f"{where}.dst", self.dst))
        if self.dir not in DIRECTIONS:
            fail(f"{where}.dir", self.dir, "must be 'cw' or 'ccw'", InvalidSolution)
        set_(self, "wavelength", _index(f"{where}.wavelength", self.wavelength))

    def to_dict(self) -> dict[str, Any]:
        return {"src": self.src, "dst": self.dst, "dir": self.dir, "wavelength": self.wavelength}


def _lightpath(k: int, item: Any) -> Lightpath:
    where = f"lightpaths[{k}]"
    if isinstance(item, Lightpath):
        return item
    if not isinstance(item, Mapping):
        fail(where, item, "must be an object {src, dst, dir, wavelength}", InvalidSolution)
    reject_unknown_keys(item, _LIGHTPATH_KEYS, where, InvalidSolution)
    values = [item.get(key) for key in _LIGHTPATH_KEYS]
    for key, value in zip(_LIGHTPATH_KEYS, values):
        if key not in item:
            raise InvalidSolution(f"{where}.{key}: missing required field")
    path = object.__new__(Lightpath)
    for key, value in zip(_LIGHTPATH_KEYS, values):
        object.__setattr__(path, key, value)
    path._validate(where)
    return path


@dataclass(frozen=True)
class WavelengthsSolution:
    """A wavelength schedule: the list of lightpaths.

    ``lightpaths`` holds :class:`Lightpath` objects or JSON objects
    ``{"src", "dst", "dir", "wavelength"}``.

    Examples
    --------
    >>> sol = WavelengthsSolution([{"src": 0, "dst": 1, "dir": "cw", "wavelength": 0}])
    >>> sol.to_dict()
    {'lightpaths': [{'src': 0, 'dst': 1, 'dir': 'cw', 'wavelength': 0}]}
    """

    lightpaths: tuple

    def __post_init__(self):
        items = as_list("lightpaths", self.lightpaths, error=InvalidSolution)
        object.__setattr__(self, "lightpaths",
                           tuple(_lightpath(k, item) for k, item in enumerate(items)))

    @cached_property
    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(src, dst, ccw, wavelength)`` arrays, ``ccw`` boolean."""
        paths = self.lightpaths
        src = np.fromiter((p.src for p in paths), np.int64, len(paths))
        dst = np.fromiter((p.dst for p in paths), np.int64, len(paths))
        ccw = np.fromiter((p.dir == "ccw" for p in paths), bool, len(paths))
        wl = np.fromiter((p.wavelength for p in paths), np.int64, len(paths))
        return src, dst, ccw, wl

    def to_dict(self) -> dict[str, Any]:
        if "lightpaths" in self.__dict__:
            return {"lightpaths": [p.to_dict() for p in self.lightpaths]}
        src, dst, ccw, wl = (column.tolist() for column in self.arrays)
        return {"lightpaths": [{"src": i, "dst": j, "dir": DIRECTIONS[d], "wavelength": w}
                               for i, j, d, w in zip(src, dst, ccw, wl)]}

    @classmethod
    def from_arrays(cls, src, dst, ccw, wavelength) -> "WavelengthsSolution":
        """The schedule of lightpath k = ``src[k] -> dst[k]`` on fiber ``ccw[k]`` (bool)
        and wavelength ``wavelength[k]``, the values checked array by array: a method's
        schedule of 10^5 lightpaths is checked, scored and written out from its arrays,
        and its :class:`Lightpath` objects are made only if ``lightpaths`` is read.

        Raises
        ------
        InvalidSolution
            For arrays of different lengths, or an entry not an integer in 0..MAX_INDEX
            (``ccw``: not a boolean), naming the first.

        Examples
        --------
        >>> sol = WavelengthsSolution.from_arrays([0, 2], [1, 1], [False, True], [0, 3])
        >>> sol.lightpaths[1]
        Lightpath(src=2, dst=1, dir='ccw', wavelength=3)
        >>> sol == WavelengthsSolution([Lightpath(0, 1, "cw", 0), Lightpath(2, 1, "ccw", 3)])
        True
        """
        columns = {}
        for name, values in (("src", src), ("dst", dst), ("wavelength", wavelength)):
            column = np.asarray(values)
            if column.ndim != 1 or (column.dtype.kind not in "iu" and len(column)):
                fail(name, values, "must be a 1-d array of integers", InvalidSolution)
            bad = np.flatnonzero((column < 0) | (column > MAX_INDEX))
            if len(bad):
                _index(f"lightpaths[{int(bad[0])}].{name}", column[bad[0]].item())
            columns[name] = column.astype(np.int64)
        flags = np.asarray(ccw)
        if flags.ndim != 1 or (flags.dtype != bool and len(flags)):
            fail("ccw", ccw, "must be a 1-d array of booleans", InvalidSolution)
        if not len(flags) == len(columns["src"]) == len(columns["dst"]) == len(
                columns["wavelength"]):
            fail("ccw", ccw, "src, dst, ccw and wavelength must have one entry per "
                             "lightpath", InvalidSolution)
        solution = object.__new__(cls)
        solution.__dict__["arrays"] = (columns["src"], columns["dst"], flags.astype(bool),
                                       columns["wavelength"])
        return solution

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "WavelengthsSolution":
        reject_unknown_keys(data, ("lightpaths",), error=InvalidSolution)
        return cls(require(data, "lightpaths", InvalidSolution))


class _LightpathsOfArrays:
    """``WavelengthsSolution.lightpaths`` of a schedule made by
    :meth:`WavelengthsSolution.from_arrays`: its :class:`Lightpath` objects, made from
    its (checked) arrays on first read and kept. A schedule made from objects holds
    them in its own ``__dict__``, which Python reads first."""

    def __get__(self, solution, owner=None):
        if solution is None:
            return self
        new, paths = object.__new__, []
        src, dst, ccw, wl = (column.tolist() for column in solution.arrays)
        for i, j, d, w in zip(src, dst, ccw, wl):
            path = new(Lightpath)
            path.__dict__.update(src=i, dst=j, dir=DIRECTIONS[d], wavelength=w)
            paths.append(path)
        solution.__dict__["lightpaths"] = tuple(paths)
        return solution.__dict__["lightpaths"]


# Set after the dataclass is made, so that it is not taken for the field's default.
WavelengthsSolution.lightpaths = _LightpathsOfArrays()


def _validate_names(instance: WavelengthsInstance, solution: WavelengthsSolution) -> None:
    """Raise ``InvalidSolution`` for a node or wavelength the instance does not have."""
    src, dst, _, wl = solution.arrays
    n, w = instance.nodes, instance.wavelengths
    for name, values, limit, what in (("src", src, n, "node"), ("dst", dst, n, "node"),
                                      ("wavelength", wl, w, "wavelength")):
        bad = np.flatnonzero(values >= limit)
        if len(bad):
            k = int(bad[0])
            fail(f"lightpaths[{k}].{name}", int(values[k]),
                 f"unknown {what} ({what}s are 0..{limit - 1})", InvalidSolution)


def lightpath_counts(instance: WavelengthsInstance, solution: WavelengthsSolution) -> np.ndarray:
    """The N x N integer matrix ``n`` with ``n[i, j]`` = lightpaths i -> j (both fibers).

    Raises
    ------
    InvalidSolution
        If a lightpath names an unknown node or wavelength.
    """
    _validate_names(instance, solution)
    src, dst, _, _ = solution.arrays
    n = instance.nodes
    return np.bincount(src.astype(np.int64) * n + dst, minlength=n * n).astype(
        np.int64, copy=False).reshape(n, n)


def _repeats(code: np.ndarray, codes: int) -> bool:
    """Whether a value of ``code`` (each in 0 .. codes-1) occurs twice: counted when the
    tally is not much longer than ``code``, else found by sorting."""
    if codes <= 16 * len(code) + 4096:
        return bool(np.bincount(code, minlength=1).max(initial=0) > 1)
    return bool(len(code) > len(np.unique(code)))


def check(instance: WavelengthsInstance, solution: WavelengthsSolution) -> CheckResult:
    """Feasibility of a schedule, with the first violated rule in words.

    The rules, checked in this order: every lightpath has 1..max_hops hops; no two
    lightpaths share a (direction, segment, wavelength) — wavelength continuity is
    built into the format, one wavelength per lightpath; each node sources and sinks
    at most W lightpaths; every demanded pair has at least one lightpath.

    Raises
    ------
    InvalidSolution
        If a lightpath names a node or wavelength the instance does not have.

    Examples
    --------
    >>> inst = WavelengthsInstance(4, 1, 25.0, 2, [[0, 1e6, 0, 0], [0] * 4, [0] * 4, [0] * 4])
    >>> check(inst, WavelengthsSolution([Lightpath(0, 1, "cw", 0), Lightpath(3, 2, "cw", 0)]))
    CheckResult(feasible=False, reason='lightpaths[1]: 3->2 cw has 3 hops, more than max_hops = 2')
    >>> check(inst, WavelengthsSolution([Lightpath(0, 1, "cw", 0)]))
    CheckResult(feasible=True, reason=None)
    """
    _validate_names(instance, solution)
    n, w = instance.nodes, instance.wavelengths
    src, dst, ccw, wl = solution.arrays
    first, hops = arc(n, src, dst, ccw)
    bad = np.flatnonzero((hops < 1) | (hops > instance.max_hops))
    if len(bad):
        k = int(bad[0])
        p = solution.lightpaths[k]
        if hops[k] == 0:
            return CheckResult.violated(f"lightpaths[{k}]: {p.src}->{p.dst} has 0 hops "
                                        f"(src and dst must differ)")
        return CheckResult.violated(f"lightpaths[{k}]: {p.src}->{p.dst} {p.dir} has {int(hops[k])} "
                                    f"hops, more than max_hops = {instance.max_hops}")
    # One code per (direction, segment, wavelength) each lightpath occupies.
    owner = np.repeat(np.arange(len(hops)), hops)
    offset = np.arange(len(owner)) - np.repeat(np.cumsum(hops) - hops, hops)
    segment = (first[owner] + offset) % n
    code = (ccw[owner].astype(np.int64) * n + segment) * w + wl[owner]
    if not _repeats(code, 2 * n * w):
        same = ()
    else:
        order = np.lexsort((owner, code))
        same = np.flatnonzero(code[order][1:] == code[order][:-1])
    if len(same):
        # Report the clash whose later lightpath comes first in the list.
        later = owner[order][same + 1]
        pick = same[int(np.argmin(later))]
        a, b = int(owner[order][pick]), int(owner[order][pick + 1])
        c = int(code[order][pick])
        direction, s = divmod(c // w, n)
        return CheckResult.violated(f"lightpaths[{a}] and lightpaths[{b}] both use "
                                    f"{segment_name(direction, s, n)} on wavelength {c % w}")
    for ends, verb in ((src, "sources"), (dst, "sinks")):
        load = np.bincount(ends, minlength=n)
        if load.max(initial=0) > w:
            node = int(np.argmax(load))
            return CheckResult.violated(f"node {node} {verb} {int(load[node])} lightpaths, "
                                        f"more than wavelengths = {w}")
    missing = unserved_pair(instance.traffic, lightpath_counts(instance, solution))
    if missing is not None:
        i, j = missing
        return CheckResult.violated(f"traffic_bytes[{i}][{j}] = {float(instance.traffic[i, j])!r} "
                                    f"has no lightpath {i}->{j}")
    return CheckResult.ok()


def evaluate(instance: WavelengthsInstance, solution: WavelengthsSolution) -> float:
    """The longest transfer time in seconds (``inf`` if a demanded pair has no lightpath).

    Examples
    --------
    >>> inst = WavelengthsInstance(3, 2, 8.0, 1, [[0, 2e9, 0], [0, 0, 0], [0, 0, 0]])
    >>> evaluate(inst, WavelengthsSolution([Lightpath(0, 1, "cw", 0), Lightpath(0, 1, "cw", 1)]))
    1.0
    """
    return max_transfer_time(instance.traffic, lightpath_counts(instance, solution),
                             instance.wavelength_gbps)


def _sizes(nodes, wavelengths, max_hops, group, mp_peers):
    nodes = as_int("nodes", nodes, minimum=2, maximum=MAX_GENERATED_SIDE)
    wavelengths = as_int("wavelengths", wavelengths, minimum=1, maximum=MAX_WAVELENGTHS)
    max_hops = as_int("max_hops", max_hops, minimum=1, maximum=nodes - 1)
    group = min(max_hops, nodes) if group is None else as_int("group", group, minimum=1,
                                                              maximum=nodes)
    if max_hops < group < nodes:
        fail("group", group, f"must be <= max_hops = {max_hops} or the whole ring "
                             f"(data-parallel partners are group hops apart)")
    most = min(group - 1, max_hops)
    mp_peers = min(3, most) if mp_peers is None else as_int("mp_peers", mp_peers, minimum=0,
                                                            maximum=most)
    return nodes, wavelengths, max_hops, group, mp_peers


#: Traffic families of :func:`generate`.
FAMILIES = ("hybrid", "long-reach")


def _long_reach_demands(rng, nodes: int, max_hops: int, mp_peers: int, mean_bytes: float):
    """Each GPU sends to ``mp_peers`` GPUs at ring distances just within the reach (the
    last ``mp_peers`` of 1..max_hops, either way), log-normal sizes (sigma 0.7): the
    lightpaths are long, compete for segments, and the far way round is out of reach."""
    demands = []
    reach = np.arange(max(1, max_hops - max(mp_peers, 1) + 1), max_hops + 1)
    for g in range(nodes):
        for h in rng.choice(reach, size=min(max(mp_peers, 1), len(reach)), replace=False):
            dst = (g + int(h) * (1 if rng.random() < 0.5 else -1)) % nodes
            if dst != g:
                demands.append((g, dst, rng.lognormal(math.log(mean_bytes), 0.7)))
    return demands


def _generate(seed: int = 0, nodes: int = 16, wavelengths: int = 8, max_hops: int = 4,
              wavelength_gbps: float = 25.0, group: int | None = None,
              mp_peers: int | None = None, mean_bytes: float = 1e6, family: str = "hybrid"
              ) -> tuple[WavelengthsInstance, WavelengthsSolution]:
    """:func:`generate`, plus the schedule that proves the instance feasible."""
    nodes, w, max_hops, group, mp_peers = _sizes(nodes, wavelengths, max_hops, group, mp_peers)
    mean_bytes = as_float("mean_bytes", mean_bytes, positive=True)
    if family not in FAMILIES:
        fail("family", family, f"must be one of {', '.join(FAMILIES)}")
    rng = np.random.default_rng(seed)
    demands = []  # (src, dst, bytes)
    for g in range(nodes if family == "hybrid" else 0):
        base = g - g % group
        size = min(group, nodes - base)  # the last group may be short
        offset = g - base
        peers = [base + (offset + t) % size for t in range(1, min(mp_peers, size - 1) + 1)]
        keep = rng.random(len(peers)) < 0.7
        if peers and not keep.any():
            keep[rng.integers(len(peers))] = True
        sizes = rng.lognormal(math.log(mean_bytes), 1.0, len(peers))
        demands += [(g, p, s) for p, s, k in zip(peers, sizes, keep) if k]
        if nodes > group:  # the data-parallel ring: GPU g syncs with its replica g + group
            demands.append((g, (g + group) % nodes, rng.lognormal(math.log(4 * mean_bytes), 0.5)))
    if family == "long-reach":
        demands = _long_reach_demands(rng, nodes, max_hops, mp_peers, mean_bytes)
    # Keep only demands a schedule can serve, and build that schedule as the proof. It
    # may use only 7/8 of the wavelengths: admitting demands until the ring is full
    # would make every instance a saturated colouring puzzle, which no SiP-Ring runs;
    # the long-reach family admits on half of them, so that the extra lightpaths of
    # the heaviest pairs are the hard part.
    used = np.zeros((2, nodes, max(1, w // 2) if family == "long-reach" else w - w // 8), bool)
    tx, rx = np.zeros(nodes, int), np.zeros(nodes, int)
    traffic = np.zeros((nodes, nodes))
    witness = []
    for k in rng.permutation(len(demands)):
        i, j, size = demands[k]
        if traffic[i, j] > 0 or tx[i] >= w or rx[j] >= w:
            continue
        options = sorted((arc(nodes, i, j, ccw)[1], ccw) for ccw in (False, True))
        for hops, ccw in options:
            first, _ = arc(nodes, i, j, ccw)
            segments = (first + np.arange(hops)) % nodes
            free = np.flatnonzero(~used[int(ccw), segments].any(axis=0))
            if hops <= max_hops and len(free):
                used[int(ccw), segments, free[0]] = True
                tx[i] += 1
                rx[j] += 1
                traffic[i, j] = max(1.0, float(np.round(size)))
                witness.append(Lightpath(i, j, DIRECTIONS[ccw], int(free[0])))
                break
    instance = WavelengthsInstance(nodes, w, wavelength_gbps, max_hops, traffic.tolist())
    return instance, WavelengthsSolution(witness)


def generate(seed: int = 0, nodes: int = 16, wavelengths: int = 8, max_hops: int = 4,
             wavelength_gbps: float = 25.0, group: int | None = None,
             mp_peers: int | None = None, mean_bytes: float = 1e6,
             family: str = "hybrid") -> WavelengthsInstance:
    """A feasible hybrid model/data-parallel traffic matrix on a SiP-Ring.

    The nodes form model-parallel groups of ``group`` consecutive GPUs (the last one
    may be shorter). As SiP-ML's placement does (SiP-ML §3.2; fabricopt docs,
    *Departures*, sipml-1.3), each GPU sends activations to some of the ``mp_peers``
    GPUs after it in its group, cyclically — ring-local traffic — and exchanges
    gradients with its data-parallel replica ``group`` positions further on the ring.
    Sizes are log-normal around
    ``mean_bytes`` (model parallel) and ``4*mean_bytes`` (data parallel).
    Demands are then admitted in random order only if a lightpath for them still fits
    on the first ``W - W // 8`` wavelengths, so every generated instance has a
    schedule, with some headroom.

    Parameters
    ----------
    seed : int
    nodes, wavelengths, max_hops : int
        N, W and the reach; ``max_hops <= nodes - 1``.
    wavelength_gbps : float
    group : int, optional
        GPUs per model-parallel group (default ``min(max_hops, nodes)``); at most
        ``max_hops`` unless it spans the whole ring, so data-parallel partners are in
        reach.
    mp_peers : int, optional
        How far forward a GPU sends activations (default ``min(3, group - 1,
        max_hops)``).
    mean_bytes : float
    family : {"hybrid", "long-reach"}
        ``"hybrid"``: the model/data-parallel matrix above. ``"long-reach"`` (a hard
        case, to separate methods): each GPU sends to ``mp_peers`` (at least 1) GPUs
        at ring distances among the last ``mp_peers`` of 1..``max_hops``, either way,
        sizes log-normal with sigma 0.7, admitted while they fit on half the
        wavelengths, leaving the rest for the extra lightpaths of the heaviest
        pairs: high load with ``max_hops`` binding (the other way round is out of
        reach). ``group`` is ignored.

    Raises
    ------
    InvalidInstance
        For sizes out of range.

    Examples
    --------
    >>> inst = generate(seed=1, nodes=8, wavelengths=4, max_hops=2)
    >>> inst.nodes, inst.max_hops, len(inst.demanded) > 0
    (8, 2, True)
    """
    return _generate(seed, nodes, wavelengths, max_hops, wavelength_gbps, group, mp_peers,
                     mean_bytes, family)[0]


KIND = register_kind(ProblemKind(
    name="wavelengths", sense="min",
    instance_type=WavelengthsInstance, solution_type=WavelengthsSolution,
    instance_from_dict=WavelengthsInstance.from_dict,
    solution_from_dict=WavelengthsSolution.from_dict,
    check=check, evaluate=evaluate, generate=generate,
    size=lambda inst: inst.nodes, doc="SiP-Ring wavelength scheduling (min max transfer time)",
))
