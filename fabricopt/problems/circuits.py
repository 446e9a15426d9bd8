"""``circuits`` — SiP-OCS circuit assignment (docs/formats.rst, circuits).

Q optical circuit switches each connect the N GPUs by one partial permutation;
``c_ij`` circuits from GPU i to GPU j give that pair ``c_ij * circuit_gbps``. The
objective, minimized, is the longest transfer time
``max over T_ij > 0 of 8*T_ij / (c_ij * circuit_gbps * 1e9)``.

References
----------
.. [1] M. Khani et al., "SiP-ML: High-Bandwidth Optical Network Interconnects for
   Machine Learning Training", SIGCOMM 2021, §3.3 and Appendix A.2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from numbers import Real
from typing import Any, Mapping

import numpy as np

from fabricopt.errors import InvalidSolution
from fabricopt.problems._kind import CheckResult, ProblemKind, register_kind
from fabricopt.problems._transfer import max_transfer_time, unserved_pair
from fabricopt.problems._matrix import FrozenMatrix
from fabricopt.problems.limits import MAX_GENERATED_SIDE, MAX_INDEX, MAX_SWITCHES, check_traffic
from fabricopt.problems._validate import (as_float, as_int, as_list, as_matrix, fail,
                                          matrix_array, reject_unknown_keys, require)

__all__ = ["CircuitsInstance", "CircuitsSolution", "check", "evaluate", "circuit_counts",
           "check_counts", "evaluate_counts", "generate"]

_INSTANCE_KEYS = ("problem", "switches", "circuit_gbps", "traffic_bytes")


@dataclass(frozen=True)
class CircuitsInstance:
    """A SiP-OCS circuit-assignment instance.

    Parameters
    ----------
    switches : int
        Q, the number of optical circuit switches, 1 to ``MAX_SWITCHES`` (1,024, see
        :mod:`fabricopt.problems.limits`); each GPU has one port on each.
    circuit_gbps : float
        Bandwidth of one circuit in 10^9 bit/s (> 0).
    traffic_bytes : sequence of sequences of float
        N x N bytes to move from GPU i to GPU j; entries >= 0, diagonal 0. Kept as a
        :class:`~fabricopt.problems._matrix.FrozenMatrix`: a tuple of row tuples to
        read, compare and hash, held as the read-only array :attr:`traffic` (a float
        array is copied once, never turned into Python floats).

    Examples
    --------
    >>> inst = CircuitsInstance(2, 100.0, [[0, 1e6], [2e6, 0]])
    >>> inst.gpus
    2
    """

    switches: int
    circuit_gbps: float
    traffic_bytes: tuple

    def __post_init__(self):
        set_ = object.__setattr__
        set_(self, "switches", as_int("switches", self.switches, minimum=1, maximum=MAX_SWITCHES))
        set_(self, "circuit_gbps", as_float("circuit_gbps", self.circuit_gbps, positive=True))
        given = self.traffic_bytes
        matrix = isinstance(given, FrozenMatrix) or (isinstance(given, np.ndarray)
                                                     and given.ndim == 2)
        rows = given if matrix else as_list("traffic_bytes", given)  # an array: no copy
        if len(rows) < 1:
            fail("traffic_bytes", self.traffic_bytes, "must have at least one row")
        set_(self, "traffic_bytes", as_matrix("traffic_bytes", rows, len(rows)))
        # every transfer time, and the port-load bound, stays finite (limits.py)
        check_traffic("traffic_bytes", self.traffic, "circuit_gbps", self.circuit_gbps)

    @property
    def gpus(self) -> int:
        """N, the number of GPUs (rows of ``traffic_bytes``)."""
        return len(self.traffic_bytes)

    @cached_property
    def traffic(self) -> np.ndarray:
        """``traffic_bytes`` as a read-only float array."""
        return matrix_array(self.traffic_bytes)

    def to_dict(self) -> dict[str, Any]:
        return {"problem": "circuits", "switches": self.switches,
                "circuit_gbps": self.circuit_gbps,
                "traffic_bytes": self.traffic.tolist()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "CircuitsInstance":
        reject_unknown_keys(data, _INSTANCE_KEYS)
        return cls(require(data, "switches"), require(data, "circuit_gbps"),
                   require(data, "traffic_bytes"))


@dataclass(frozen=True)
class CircuitsSolution:
    """One partial permutation per switch.

    ``configs[q][i] = j`` connects GPU i's port on switch q to GPU j's port (a circuit
    i -> j); ``None`` leaves the port unused.
    """

    configs: tuple

    def __post_init__(self):
        configs = as_list("configs", self.configs, error=InvalidSolution)
        out = []
        for q, row in enumerate(configs):
            row = as_list(f"configs[{q}]", row, error=InvalidSolution)
            out.append(tuple(None if j is None else
                             as_int(f"configs[{q}][{i}]", j, minimum=0, maximum=MAX_INDEX,
                                    error=InvalidSolution)
                             for i, j in enumerate(row)))
        object.__setattr__(self, "configs", tuple(out))

    def to_dict(self) -> dict[str, Any]:
        return {"configs": [list(r) for r in self.configs]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "CircuitsSolution":
        reject_unknown_keys(data, ("configs",), error=InvalidSolution)
        return cls(require(data, "configs", InvalidSolution))


def _validate_shape(instance: CircuitsInstance, solution: CircuitsSolution) -> None:
    """Raise ``InvalidSolution`` if the solution names switches or GPUs that do not exist."""
    if len(solution.configs) != instance.switches:
        raise InvalidSolution(f"configs: has {len(solution.configs)} switches, "
                              f"the instance has {instance.switches}")
    n = instance.gpus
    for q, row in enumerate(solution.configs):
        if len(row) != n:
            raise InvalidSolution(f"configs[{q}]: has {len(row)} ports, the instance has {n} GPUs")
        for i, j in enumerate(row):
            if j is not None and j >= n:
                fail(f"configs[{q}][{i}]", j, f"unknown GPU (GPUs are 0..{n - 1})", InvalidSolution)


def circuit_counts(instance: CircuitsInstance, solution: CircuitsSolution) -> np.ndarray:
    """The N x N integer matrix ``c`` with ``c[i, j]`` = switches holding a circuit i -> j."""
    _validate_shape(instance, solution)
    counts = np.zeros((instance.gpus, instance.gpus), dtype=np.int64)
    for row in solution.configs:
        for i, j in enumerate(row):
            if j is not None:
                counts[i, j] += 1
    return counts


def check(instance: CircuitsInstance, solution: CircuitsSolution) -> CheckResult:
    """Feasibility of ``solution``: each switch a partial permutation without
    self-circuits, and every pair with traffic given at least one circuit.

    Returns
    -------
    CheckResult
        The first violated rule, in words, when infeasible.

    Raises
    ------
    InvalidSolution
        If the solution's shape does not match the instance or it names unknown GPUs.

    Examples
    --------
    >>> inst = CircuitsInstance(2, 8.0, [[0, 1e9, 0], [0, 0, 1e9], [0, 0, 0]])
    >>> check(inst, CircuitsSolution([[1, 2, None], [None, None, None]]))
    CheckResult(feasible=True, reason=None)
    >>> print(check(inst, CircuitsSolution([[2, 2, None], [None, None, None]])).reason)
    configs[0]: GPUs 0 and 1 both connect to GPU 2's port
    """
    _validate_shape(instance, solution)
    for q, row in enumerate(solution.configs):
        seen: dict[int, int] = {}
        for i, j in enumerate(row):
            if j is None:
                continue
            if j == i:
                return CheckResult.violated(f"configs[{q}][{i}] = {j}: a circuit from GPU {i} to itself")
            if j in seen:
                return CheckResult.violated(
                    f"configs[{q}]: GPUs {seen[j]} and {i} both connect to GPU {j}'s port")
            seen[j] = i
    return _every_pair_served(instance, circuit_counts(instance, solution))


def _every_pair_served(instance: CircuitsInstance, counts: np.ndarray) -> CheckResult:
    missing = unserved_pair(instance.traffic, counts)
    if missing is not None:
        i, j = missing
        return CheckResult.violated(
            f"traffic_bytes[{i}][{j}] = {float(instance.traffic[i, j])!r} has no circuit {i}->{j}")
    return CheckResult.ok()


def evaluate(instance: CircuitsInstance, solution: CircuitsSolution) -> float:
    """The longest transfer time in seconds (``inf`` if a demanded pair has no circuit).

    Examples
    --------
    >>> inst = CircuitsInstance(1, 8.0, [[0, 1e9], [0, 0]])
    >>> evaluate(inst, CircuitsSolution([[1, None]]))
    1.0
    """
    return max_transfer_time(instance.traffic, circuit_counts(instance, solution),
                             instance.circuit_gbps)



def _counts_array(instance: CircuitsInstance, counts) -> np.ndarray:
    """``counts`` as an N x N array of whole numbers >= 0 (integer or float dtype);
    ``InvalidSolution`` naming the first cell that is not one, or the shape that is not
    the instance's."""
    n = instance.gpus
    try:
        a = np.asarray(counts)
    except (ValueError, TypeError):   # ragged rows
        fail("counts", counts, f"must be an N x N matrix of integers (N = {n} GPUs)",
             InvalidSolution)
    if a.shape != (n, n):
        fail("counts", counts, f"has shape {a.shape}, not {(n, n)}: the instance has {n} GPUs",
             InvalidSolution)
    if a.dtype == object:   # Python numbers beyond int64, or something else
        for k, value in enumerate(a.ravel()):
            if isinstance(value, bool) or not isinstance(value, Real):
                fail(f"counts[{k // n}][{k % n}]", value, "must be an integer >= 0",
                     InvalidSolution)
        a = a.astype(float)
    if a.dtype.kind == "f":
        bad = ~(np.isfinite(a) & (a == np.floor(a))) | (a < 0)
    elif a.dtype.kind in "iu":
        bad = a < 0
    else:   # bools, strings: not counts
        fail("counts", counts, f"must be an N x N matrix of integers (N = {n} GPUs), "
                               f"not of {a.dtype}", InvalidSolution)
    if bad.any():
        i, j = (int(k) for k in np.argwhere(bad)[0])
        value = a[i, j].item()
        fail(f"counts[{i}][{j}]", value, "must be an integer >= 0", InvalidSolution)
    return a


def check_counts(instance: CircuitsInstance, counts) -> CheckResult:
    """Feasibility of circuit counts ``counts[i][j]`` (circuits i -> j), without switch
    configurations: no circuit from a GPU to itself, at most Q circuits leaving and Q
    entering each GPU (one port per switch), and every pair with traffic at least one.

    Counts that pass are exactly those of some feasible :class:`CircuitsSolution`:
    padded to a Q-regular bipartite multigraph they split into Q partial permutations,
    one per switch (König's edge-colouring theorem), and :func:`circuit_counts` of any
    feasible solution passes.

    Parameters
    ----------
    instance : CircuitsInstance
    counts : array_like of int, shape (N, N)

    Returns
    -------
    CheckResult
        The first violated rule, in words, when infeasible.

    Raises
    ------
    InvalidSolution
        If ``counts`` is not an N x N matrix of integers >= 0.

    Examples
    --------
    >>> inst = CircuitsInstance(2, 8.0, [[0, 1e9, 0], [0, 0, 1e9], [0, 0, 0]])
    >>> check_counts(inst, [[0, 2, 0], [0, 0, 1], [0, 0, 0]])
    CheckResult(feasible=True, reason=None)
    >>> print(check_counts(inst, [[0, 2, 1], [0, 0, 1], [0, 0, 0]]).reason)
    counts[0]: GPU 0 sends on 3 circuits but has 2 ports (switches = 2)
    """
    c = _counts_array(instance, counts)
    q = instance.switches
    over = c > q
    if over.any():   # checked first: below Q + 1 the sums cannot overflow
        i, j = (int(k) for k in np.argwhere(over)[0])
        return CheckResult.violated(f"counts[{i}][{j}] = {c[i, j].item()!r}: more circuits than "
                                    f"GPU {i}'s {q} ports (switches = {q})")
    c = c.astype(np.int64, copy=False)
    diagonal = np.flatnonzero(np.diagonal(c))
    if len(diagonal):
        i = int(diagonal[0])
        return CheckResult.violated(f"counts[{i}][{i}] = {int(c[i, i])}: circuits from GPU {i} "
                                    f"to itself")
    for axis, verb in ((1, "sends on"), (0, "receives on")):
        sums = c.sum(axis=axis)
        over = np.flatnonzero(sums > q)
        if len(over):
            i = int(over[0])
            where = f"counts[{i}]" if axis == 1 else f"counts[:][{i}]"
            return CheckResult.violated(f"{where}: GPU {i} {verb} {int(sums[i])} circuits but "
                                        f"has {q} ports (switches = {q})")
    return _every_pair_served(instance, c)


def evaluate_counts(instance: CircuitsInstance, counts) -> float:
    """The longest transfer time in seconds of circuit counts: :func:`evaluate` of any
    solution whose :func:`circuit_counts` they are (``inf`` if a demanded pair has none).

    Raises
    ------
    InvalidSolution
        If ``counts`` is not an N x N matrix of integers >= 0.

    Examples
    --------
    >>> inst = CircuitsInstance(2, 8.0, [[0, 2e9], [1e9, 0]])
    >>> evaluate_counts(inst, [[0, 2], [1, 0]])
    1.0
    >>> evaluate_counts(inst, [[0, 2], [1, 0]]) == evaluate(inst, CircuitsSolution([[1, 0], [1, None]]))
    True
    """
    return max_transfer_time(instance.traffic, _counts_array(instance, counts),
                             instance.circuit_gbps)



def generate(seed: int = 0, gpus: int = 16, switches: int = 4, peers: int | None = None,
             circuit_gbps: float = 400.0, mean_bytes: float = 32e6,
             skew: float = 1.0) -> CircuitsInstance:
    """A feasible model-parallel traffic matrix: the union of ``peers`` random derangements.

    Each GPU sends to at most ``peers`` (default ``switches // 2``, so that pairs can
    get several circuits) others and receives from
    at most as many, so a feasible circuit assignment exists; transfer sizes are
    log-normal around ``mean_bytes``, as the layer outputs of a model-parallel split are,
    with ``skew`` the sigma of their logarithm (1.0 by default; 3.0, the skewed family,
    spans about five orders of magnitude between the 1st and 99th percentile, like
    embedding or expert all-to-all traffic with hot pairs).

    Notes
    -----
    No family can separate the ``greedy`` baseline from the optimum: its water-filling
    is optimal (the proof is in :func:`fabricopt.algorithms.circuits.greedy`'s Notes),
    and the skewed family shows it on heavy-tailed traffic (measured: 0 gap, and no
    slower MILP, at 16-48 GPUs).

    Examples
    --------
    >>> inst = generate(seed=1, gpus=4, switches=2)
    >>> inst.gpus, inst == generate(seed=1, gpus=4, switches=2)
    (4, True)
    >>> [sum(t > 0 for t in row) for row in inst.traffic_bytes]  # peers = switches // 2
    [1, 1, 1, 1]
    """
    gpus = as_int("gpus", gpus, minimum=2, maximum=MAX_GENERATED_SIDE)
    switches = as_int("switches", switches, minimum=1, maximum=MAX_SWITCHES)
    peers = max(1, switches // 2) if peers is None else as_int("peers", peers, minimum=1, maximum=switches)
    skew = as_float("skew", skew, positive=True)
    rng = np.random.default_rng(seed)
    traffic = np.zeros((gpus, gpus))
    for _ in range(peers):
        while True:
            perm = rng.permutation(gpus)
            if not np.any(perm == np.arange(gpus)):
                break
        sizes = rng.lognormal(mean=math.log(mean_bytes), sigma=skew, size=gpus)
        traffic[np.arange(gpus), perm] += np.round(sizes)
    return CircuitsInstance(switches, circuit_gbps, traffic.tolist())


KIND = register_kind(ProblemKind(
    name="circuits", sense="min",
    instance_type=CircuitsInstance, solution_type=CircuitsSolution,
    instance_from_dict=CircuitsInstance.from_dict, solution_from_dict=CircuitsSolution.from_dict,
    check=check, evaluate=evaluate, generate=generate,
    size=lambda inst: inst.gpus, doc="SiP-OCS circuit assignment (min max transfer time)",
))
