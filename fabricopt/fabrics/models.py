"""The target fabrics: what each gives a job's traffic, and what it costs.

Every fabric answers one question for a :class:`~fabricopt.fabrics.traffic.Traffic`:
:meth:`Fabric.allocate` configures the fabric for it and returns an
:class:`Allocation` with

- ``comm_time_s``: the time to deliver all of the traffic at once, every pair sending
  concurrently over the configuration (the fabric's *communication time*);
- ``pair_gbps``: the rate a transfer i -> j gets on that configuration while the
  iteration's traffic flows (its circuits' or lightpaths' capacity, its routed path's
  bottleneck; on a packet switch, its share of the ports it crosses);
- the ring orders its AllReduce groups use.

Packet-switched fabrics are priced in closed form (a fluid model: rates in
proportion to the demand, bottleneck = the busiest resource). ``pair_gbps`` on a
packet switch is a transfer's proportional share of each port it crosses with every
model-parallel transfer of the iteration in flight, ``gbps * bytes_ij /
max(sent_i, received_j)``, the fractional relaxation of the OCS's circuit assignment
(divisible circuits, no degree limit); the step itself is priced by simulating its
transfers on the fabric's ``links`` (:mod:`~fabricopt.fabrics.flows`), where a
transfer shares its ports only with the transfers in progress. The AllReduce, which
follows the step, shares the ports among its ring transfers (``Allocation.ring_gbps``);
an OCS cannot re-split its circuits between the two (10 ms reconfiguration), so its
circuits serve the whole iteration's traffic. Optical fabrics are
configured by the toolkit's own solvers: SiP-OCS by ``circuits``/``exact``, SiP-Ring
by ``wavelengths``/``mcf`` (or ``greedy``), direct-connect by ``topology``/``topoopt``,
and the result is checked and scored by the problem kind, never by this module.

Every fabric's communication time is at least the port bound of its per-node
bandwidth (:func:`~fabricopt.fabrics.traffic.port_bound_s`); :class:`ElectFlat`
attains it, and no fabric gives one transfer more than its per-node bandwidth.

References
----------
.. [1] M. Khani et al., "SiP-ML", SIGCOMM 2021, §3.1, §3.3, §4.1 (Elect-Flat,
   Elect-Cluster, SiP-OCS, SiP-Ring; OCS 10 ms once per job; MRR 25 us every 100 us).
.. [2] W. Wang et al., "TopoOpt", NSDI 2023, §3, §5 and App. G (direct-connect,
   host forwarding, Fat-tree cost).
.. [3] M. Al-Fares et al., "A Scalable, Commodity Data Center Network Architecture",
   SIGCOMM 2008 (k-ary Fat-tree, ECMP).
"""

from __future__ import annotations

import abc
import dataclasses
import functools
import math
import time
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np

from fabricopt.errors import InfeasibleInstance, InvalidSolution, SolverFailure, SolverUnavailable
from fabricopt.bounds.wavelengths import kept_count_bound
from fabricopt.problems import CheckResult, kinds
from fabricopt.problems.circuits import (CircuitsInstance, check_counts, circuit_counts,
                                         evaluate_counts)
from fabricopt.problems.wavelengths import WavelengthsInstance
from fabricopt.problems._validate import as_float, as_int, fail
from fabricopt.algorithms.circuits import exact_counts, greedy_counts
from fabricopt.methods import circuits as circuit_methods
from fabricopt.methods import wavelengths as wavelength_methods
from fabricopt.methods import methods, solve
from fabricopt.methods.registry import get_method
from fabricopt.methods.result import Result, relative_gap
from fabricopt.fabrics.flows import Links, pair_links, port_links
from fabricopt.fabrics.prices import DEFAULT_PRICES, Prices, fat_tree_counts
from fabricopt.fabrics.traffic import (PairTraffic, Traffic, _port_bound_of, as_traffic,
                                       port_bound_s, ring_allreduce_bytes, transfer_s)

__all__ = ["Allocation", "Fabric", "ElectFlat", "ElectCluster", "FatTree", "SipOcs", "SipRing",
           "DirectConnect", "cost_matched_fat_tree", "method_available", "port_shares"]


class _PortShares:
    """The rates :func:`port_shares` gives one traffic matrix on one or two levels of
    ports (the smaller share where two: a GPU's port, then its group's uplink), made
    whole only when read whole.

    A packet switch's pricing reads a few cells (the rings' hops, :meth:`at`); the
    N x N matrix is most of its allocation's work at 1,024 GPUs, so an
    :class:`Allocation` holds this and makes the matrix the first time ``pair_gbps``
    or ``ring_gbps`` is read.

    Parameters
    ----------
    matrix : numpy.ndarray, shape (N, N)
        Bytes per pair (read, never copied: pass a read-only array).
    levels : sequence of (gbps, group)
        Each level's port bandwidth and node-to-group map (``None``: each node its own
        port), as :func:`port_shares` takes them.

    Examples
    --------
    >>> m = np.array([[0, 3e9, 1e9], [0, 0, 0], [0, 0, 0]])
    >>> shares = _PortShares(m, [(8.0, None), (4.0, np.array([0, 0, 1]))])
    >>> shares().tolist()[0], shares.at(np.array([0, 0]), np.array([1, 2])).tolist()
    ([0.0, 6.0, 2.0], [6.0, 2.0])
    """

    def __init__(self, matrix: np.ndarray, levels):
        self.matrix = matrix
        self.levels = tuple((float(gbps), None if group is None else np.asarray(group))
                            for gbps, group in levels)
        self._loads: dict[int, tuple] = {}

    def __call__(self) -> np.ndarray:
        """The N x N rates (a fresh array)."""
        return functools.reduce(np.minimum, (port_shares(self.matrix, gbps, group)
                                             for gbps, group in self.levels))

    def at(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        """``self()[i, j]`` without the N x N rates: each level's shares of those cells,
        from the port loads of the whole matrix (kept for the next cells)."""
        i, j = np.asarray(i, dtype=np.int64), np.asarray(j, dtype=np.int64)
        shares = []
        for k, (gbps, group) in enumerate(self.levels):
            if k not in self._loads:
                self._loads[k] = _port_loads(self.matrix, group)[1:]
            out, into = self._loads[k]
            shares.append(_shares_of_cells(self.matrix, gbps, group, out, into, i, j))
        return functools.reduce(np.minimum, shares)


class _MadeOnRead:
    """A field of :class:`Allocation` that a fabric may give as :class:`_PortShares`,
    made into its N x N array (and kept) the first time it is read."""

    def __init__(self, default=dataclasses.MISSING):
        self.default = default

    def __set_name__(self, owner, name: str):
        self.name, self.slot = name, f"_{name}"

    def __get__(self, obj, objtype=None):
        if obj is None:   # the dataclass asks for the field's default
            if self.default is dataclasses.MISSING:
                raise AttributeError(self.name)
            return self.default
        value = obj.__dict__[self.slot]
        if isinstance(value, _PortShares):
            value = obj.__dict__[self.slot] = value()
        return value

    def __set__(self, obj, value):
        obj.__dict__[self.slot] = value


@dataclass(frozen=True, eq=False)
class Allocation:
    """A fabric configured for one traffic (see the module docstring).

    Attributes
    ----------
    traffic : Traffic
    comm_time_s : float
        Time to deliver the whole traffic with every pair sending at once.
    pair_gbps : numpy.ndarray, shape (N, N)
        Rate of a transfer i -> j on the configuration; 0 where it gives the pair nothing.
        A packet switch makes it (and ``ring_gbps``) the first time it is read: the
        pricing reads only the rings' hops.
    rings : tuple of (order, share, bytes)
        The AllReduce rings: node order, share of the group's bytes, the group's bytes.
    result : Result or None
        The solver result that configured the fabric, if a solver did (on SiP-OCS
        priced from circuit counts, without its ``solution``: see :class:`SipOcs`).
    ring_gbps : numpy.ndarray or None
        Rates of the AllReduce's hops when they differ from ``pair_gbps``: a packet
        switch shares its ports during the AllReduce among the ring transfers alone,
        which run after the step's model-parallel transfers; a circuit fabric keeps
        its one configuration (None: ``pair_gbps``).
    links : Links or None
        What the step's model-parallel transfers share as they come and go
        (:mod:`~fabricopt.fabrics.flows`): a packet switch's ports; None: each pair's
        ``pair_gbps``, shared by that pair's transfers only (circuits, lightpaths).
    """

    traffic: Traffic
    comm_time_s: float
    pair_gbps: np.ndarray = _MadeOnRead()
    rings: tuple = ()
    result: Any = None
    ring_gbps: np.ndarray | None = _MadeOnRead(default=None)
    links: Links | None = None

    def step_links(self) -> Links:
        """The links the step's transfers share (see ``links``)."""
        return pair_links(self.pair_gbps) if self.links is None else self.links

    def dedicated_time_s(self, matrix_bytes) -> float:
        """Seconds to deliver ``matrix_bytes`` (N x N) on this configuration when every
        pair sends at once over a rate of its own, ``pair_gbps`` (circuits, lightpaths):
        the longest ``8 * bytes / (pair_gbps * 1e9)``, ``inf`` if a pair with bytes has
        no rate, 0 without bytes. On SiP-OCS this is ``problems.circuits.evaluate`` of
        the configuration's circuits.

        Examples
        --------
        >>> a = SipOcs(switches=2, gbps=16.0).allocate([[0, 1e9], [1e9, 0]])
        >>> a.dedicated_time_s([[0, 2e9], [0, 0]])
        1.0
        """
        m = np.asarray(matrix_bytes, dtype=float)
        demanded = m > 0
        if not demanded.any():
            return 0.0
        with np.errstate(divide="ignore"):
            return float((8.0 * m[demanded] / (self.pair_gbps[demanded] * 1e9)).max())

    def allreduce_s(self) -> float:
        """Time of the data-parallel AllReduces alone: every ring hop carries its share
        ``share * 2(g-1)/g * bytes`` at the hop's pair rate; rings run concurrently.

        Returns ``inf`` if a ring hop has no capacity.
        """
        worst = 0.0
        rates = self.__dict__["_ring_gbps"]
        if rates is None:
            rates = self.__dict__["_pair_gbps"]
        for order, share, nbytes in self.rings:
            per_hop = share * ring_allreduce_bytes(len(order), nbytes)
            if per_hop <= 0:
                continue
            src = np.asarray(order)
            hop = (src, np.roll(src, -1))
            # a ring's hops only: the N x N shares of a packet switch are not made
            slowest = float((rates.at(*hop) if isinstance(rates, _PortShares)
                             else rates[hop]).min())
            worst = max(worst, math.inf if slowest <= 0 else transfer_s(per_hop, slowest))
        return worst


def _member_order_rings(traffic: Traffic) -> tuple:
    return tuple((g.members, 1.0, g.bytes) for g in traffic.allreduce)


def _idle(traffic: Traffic) -> Allocation | None:
    """The allocation of a traffic with nothing to send (no configuration to solve for)."""
    # the total is the sum of two matrices of cells >= 0: zero only where both are
    if traffic.matrix_bytes.any() or traffic.ring_matrix().any():
        return None
    return Allocation(traffic, 0.0, np.zeros((traffic.nodes, traffic.nodes)),
                      _member_order_rings(traffic))


def method_available(kind: str, method: str) -> bool:
    """Is ``method`` of problem ``kind`` registered here?

    Examples
    --------
    >>> method_available("circuits", "exact"), method_available("circuits", "nope")
    (True, False)
    """
    return kind in kinds() and method in methods(kind)


def _solve(fabric: "Fabric", kind: str, method: str, instance: dict, **options):
    """Solve a fabric's configuration problem; anything but a solution is an error."""
    if not method_available(kind, method):
        raise SolverUnavailable(f"{fabric.label} needs method {method!r} of the {kind!r} "
                                f"problem kind, which is not registered here")
    result = solve(instance, method, **options)
    message = result.info.get("message", "")
    if result.status not in ("optimal", "feasible") or result.solution is None:
        _refuse(fabric, kind, method, result.status, message)
    return result


def _refuse(fabric: "Fabric", kind: str, method: str, status: str, message: str):
    """Raise the error of a configuration that ended ``status`` (not a solution)."""
    if status == "infeasible":
        raise InfeasibleInstance(f"{fabric.label}: the traffic has no {kind} configuration"
                                 f"{': ' + message if message else ''}")
    raise SolverFailure(f"{fabric.label}: {kind}/{method} ended {status}"
                        f"{': ' + message if message else ''}")


#: The shipped methods of the ``circuits`` kind that compute circuit counts and then
#: decompose them into switch configurations: registered function, counts, status.
_COUNTS_METHODS = {
    "exact": (circuit_methods.exact, exact_counts, "optimal"),
    "greedy": (circuit_methods.greedy, greedy_counts, "feasible"),
}


def _shipped_counts(method: str):
    """``(counts function, status)`` of ``method`` when the registry still maps the
    name to the shipped method (a plug-in may re-register it), else None."""
    entry = _COUNTS_METHODS.get(method)
    if entry is None or not method_available("circuits", method) \
            or get_method("circuits", method).fn is not entry[0]:
        return None
    return entry[1:]


def _counts_configuration(fabric: "SipOcs", instance: CircuitsInstance, counts_fn,
                          status: str) -> tuple[Result, np.ndarray]:
    """A shipped counts method's circuit counts, checked and scored by the ``circuits``
    kind (:func:`~fabricopt.problems.circuits.check_counts`,
    :func:`~fabricopt.problems.circuits.evaluate_counts`), and the :class:`Result` that
    ``solve`` gives the method, less the switch configurations: the fabric reads only
    the counts, and splitting them into one permutation per switch (always possible,
    König) is most of the method's work. Errors as :func:`_solve` raises them."""
    method = fabric.method
    start = time.perf_counter()
    try:
        counts = counts_fn(instance)
    except InfeasibleInstance as exc:
        _refuse(fabric, "circuits", method, "infeasible", str(exc))
    except Exception as exc:  # reported as solve reports a method's failure
        _refuse(fabric, "circuits", method, "error",
                f"method {method!r} raised {type(exc).__name__}: {exc}")
    runtime_s = time.perf_counter() - start
    try:
        verdict = check_counts(instance, counts)
    except InvalidSolution as exc:
        verdict = CheckResult.violated(str(exc))
    if not verdict.feasible:
        _refuse(fabric, "circuits", method, "error",
                f"method {method!r} returned infeasible circuit counts: {verdict.reason}")
    objective = float(evaluate_counts(instance, counts))
    if not math.isfinite(objective):
        _refuse(fabric, "circuits", method, "error",
                f"method {method!r}: its circuit counts score {objective!r}, not finite")
    info = {"solution": "not built: the circuit counts were checked and scored without "
                        "being decomposed into switch configurations"}
    if status == "optimal":   # the exact method's proof, as solve certifies it
        bound, source = objective, "optimal"
    else:
        bound, source = None, None
        info["bound"] = "not computed: the fabric reads only the counts"
    result = Result("circuits", method, status, "min", objective, bound,
                    relative_gap(objective, bound), runtime_s, None, info, "none", source)
    return result, counts


class Fabric(abc.ABC):
    """Base of the fabric models (see the module docstring)."""

    label: ClassVar[str] = "fabric"
    #: Placement method the hybrid-parallel search uses on this fabric.
    placement_method: ClassVar[str] = "unconstrained"
    #: Reconfiguration paid once per job, not per iteration (s).
    setup_s: float = 0.0
    #: Does a node send (and receive) at most :attr:`per_node_gbps` in all during the
    #: step, its transfers sharing its port, circuits or lightpaths? (Not so where a
    #: pair's rate is its routed path's, which several pairs may each reach.)
    node_limited_step: ClassVar[bool] = False

    @property
    @abc.abstractmethod
    def per_node_gbps(self) -> float:
        """What one node can send (and receive) in total, Gbps."""

    def max_peers(self, k: int, l: int) -> int:
        """Distinct GPUs a GPU may send model-parallel traffic to in a k x l job."""
        return max(k - 1, 1)

    #: Does a GPU's bandwidth to each peer shrink as it talks to more peers (a fixed set
    #: of circuits or wavelengths split among them)? Then fewer peers may be faster.
    peers_split_bandwidth: ClassVar[bool] = False

    def max_peers_ladder(self, k: int, l: int) -> tuple[int, ...]:
        """The degree limits the (k, l) search places with, :meth:`max_peers` first.

        Where :attr:`peers_split_bandwidth`, SiP-ML §3 and §4.2 trade peers against
        bandwidth per peer: the search also tries 1, 3, 7, ... (2^j - 1) peers below
        :meth:`max_peers`, so each peer gets about twice the circuits of the next rung;
        elsewhere more peers never cost bandwidth and only :meth:`max_peers` is tried.

        Examples
        --------
        >>> SipOcs(switches=16, gbps=100.0).max_peers_ladder(16, 4)
        (15, 1, 3, 7)
        >>> ElectFlat(100.0).max_peers_ladder(16, 4)
        (15,)
        """
        top = self.max_peers(k, l)
        if not self.peers_split_bandwidth:
            return (top,)
        ladder, peers = [top], 1
        while peers < top:
            ladder.append(peers)
            peers = 2 * peers + 1
        return tuple(ladder)

    @abc.abstractmethod
    def allocate(self, traffic) -> Allocation:
        """The per-pair rates the fabric gives ``traffic`` and its delivery time."""

    def comm_lower_bound_s(self, traffic) -> float:
        """No configuration of this fabric delivers ``traffic`` sooner: a lower bound on
        ``allocate(traffic).comm_time_s`` that costs much less than :meth:`allocate`
        (a search skips pricing a placement this bound already rules out).

        0 here: the fabrics without a configuration problem of their own know none
        beyond the port bound, which :func:`~fabricopt.fabrics.iteration.lower_bound_s`
        applies to every fabric.
        """
        return 0.0

    def comm_time(self, traffic) -> float:
        """Seconds to deliver ``traffic`` (a Traffic or an N x N byte matrix) at once."""
        return self.allocate(traffic).comm_time_s

    #: Does :meth:`sparse_comm_time_s` price from the pairs alone, in O(pairs) time and
    #: memory (a closed form), rather than through the N x N :meth:`allocate`?
    sparse_pricing: ClassVar[bool] = False

    def sparse_comm_time_s(self, traffic: PairTraffic) -> float:
        """:meth:`comm_time` of a :class:`~fabricopt.fabrics.traffic.PairTraffic`.

        Fabrics with :attr:`sparse_pricing` compute it from the pairs; the others
        (configured by a solver) from the dense matrix.
        """
        return self.comm_time(traffic.to_traffic())

    @abc.abstractmethod
    def cost_breakdown(self, nodes: int, prices: Prices = DEFAULT_PRICES) -> dict[str, float]:
        """$ per component (switches, transceivers, NICs, ...) for ``nodes`` endpoints."""

    def cost_usd(self, nodes: int, prices: Prices = DEFAULT_PRICES) -> float:
        """The fabric's $ cost for ``nodes`` endpoints (sum of :meth:`cost_breakdown`)."""
        return float(sum(self.cost_breakdown(nodes, prices).values()))

    @abc.abstractmethod
    def with_bandwidth(self, per_node_gbps: float) -> "Fabric":
        """The same fabric scaled to ``per_node_gbps`` per node."""


def port_shares(total: np.ndarray, gbps: float, group: np.ndarray | None = None) -> np.ndarray:
    """Each demanded pair's proportional share of the ports it crosses, Gbps.

    Port ``p`` (a node's, or a group's uplink when ``group`` maps nodes to groups and
    only traffic between groups is counted) carries ``gbps`` out and ``gbps`` in; the
    pair i -> j gets ``gbps * T_ij / max(out(p_i), in(p_j))``, so no port is
    oversubscribed and every demanded transfer ends by the port bound. Pairs with no
    demand get ``gbps``; pairs inside one group cross no group port and get ``inf``;
    the diagonal is 0.

    Examples
    --------
    >>> port_shares(np.array([[0, 3e9, 1e9], [0, 0, 0], [0, 0, 0]]), 8.0).tolist()[0]
    [0.0, 6.0, 2.0]
    """
    nodes = total.shape[0]
    demand, out, into = _port_loads(total, group)
    # the N x N result is mostly the default: compute only the demanded cells
    i, j = np.nonzero(demand > 0)
    rates = np.full((nodes, nodes), float(gbps))
    rates[i, j] = gbps * demand[i, j] / np.maximum(out[i], into[j])
    if group is not None:
        where = np.asarray(group)
        rates[where[:, None] == where[None, :]] = np.inf
    np.fill_diagonal(rates, 0.0)
    return rates


def _port_loads(total: np.ndarray, group: np.ndarray | None) -> tuple:
    """``(demand, out, into)`` of :func:`port_shares`: the bytes that cross ports and,
    per node, the bytes its port sends and receives."""
    if group is None:
        # each node its own port: only the diagonal is inside a group
        demand = total if not np.diagonal(total).any() else _off_diagonal(total)
        return demand, demand.sum(axis=1), demand.sum(axis=0)
    where = np.asarray(group)
    demand = np.where(where[:, None] == where[None, :], 0.0, total)
    return (demand, np.bincount(where, weights=demand.sum(axis=1))[where],
            np.bincount(where, weights=demand.sum(axis=0))[where])


def _shares_of_cells(total: np.ndarray, gbps: float, group: np.ndarray | None,
                     out: np.ndarray, into: np.ndarray, i: np.ndarray, j: np.ndarray
                     ) -> np.ndarray:
    """``port_shares(total, gbps, group)[i, j]`` from its port loads: the same
    arithmetic on the cells asked for."""
    inside = i == j if group is None else group[i] == group[j]
    cell = np.where(inside, 0.0, total[i, j])
    rates = np.full(len(i), float(gbps))
    hot = cell > 0
    rates[hot] = gbps * cell[hot] / np.maximum(out[i[hot]], into[j[hot]])
    if group is not None:
        rates[inside] = np.inf
    rates[i == j] = 0.0
    return rates


def _off_diagonal(matrix: np.ndarray) -> np.ndarray:
    copy = np.array(matrix, dtype=float)
    np.fill_diagonal(copy, 0.0)
    return copy


def _check_gbps(name: str, value) -> float:
    return as_float(name, value, positive=True)


@dataclass(frozen=True)
class ElectFlat(Fabric):
    """SiP-ML's Elect-Flat: an ideal full-bisection packet switch, ``gbps`` per node.

    Any traffic is delivered in the port bound: nothing delivers it faster at equal
    per-node bandwidth (SiP-ML §4.1). Concurrent transfers share their ports
    (:func:`~fabricopt.fabrics.flows.port_links`). Its cost is that of the full-bisection Fat-tree that
    approximates it.

    Examples
    --------
    >>> ElectFlat(8.0).comm_time([[0, 1e9], [1e9, 0]])
    1.0
    """

    gbps: float
    label: ClassVar[str] = "elect-flat"
    node_limited_step: ClassVar[bool] = True

    def __post_init__(self):
        object.__setattr__(self, "gbps", _check_gbps("gbps", self.gbps))

    @property
    def per_node_gbps(self) -> float:
        return self.gbps

    def allocate(self, traffic) -> Allocation:
        t = as_traffic(traffic)
        levels = ((self.gbps, None),)
        return Allocation(t, port_bound_s(t, self.gbps), _PortShares(t.matrix_bytes, levels),
                          _member_order_rings(t), ring_gbps=_PortShares(t.ring_matrix(), levels),
                          links=port_links(t.nodes, self.gbps))

    sparse_pricing: ClassVar[bool] = True

    def sparse_comm_time_s(self, traffic: PairTraffic) -> float:
        return _sparse_port_time_s(traffic, self.gbps)

    def cost_breakdown(self, nodes, prices=DEFAULT_PRICES):
        return FatTree(nodes, self.gbps).cost_breakdown(nodes, prices)

    def with_bandwidth(self, per_node_gbps):
        return replace(self, gbps=per_node_gbps)


def _fluid_time(loads: np.ndarray, capacity_gbps) -> float:
    """Busiest resource: ``max(8*load/capacity)`` (0 for no load)."""
    if loads.size == 0:
        return 0.0
    return float(np.max(transfer_s(loads, capacity_gbps)))


def _two_level_allocation(t: Traffic, gbps: float, group: np.ndarray,
                          group_gbps: float) -> Allocation:
    """A packet switch of two levels: every node's port of ``gbps`` and every group's
    uplink of ``group_gbps`` (Elect-Cluster's servers, a Fat-tree's edges). The fluid
    time is the busiest port or uplink; a transfer's share is the smaller of its two."""
    total = t._total
    leaving = np.where(group[:, None] == group[None, :], 0.0, total)
    up = np.bincount(group, weights=leaving.sum(axis=1))
    down = np.bincount(group, weights=leaving.sum(axis=0))
    time = max(_port_bound_of(total, gbps), _fluid_time(np.concatenate([up, down]), group_gbps))
    levels = ((gbps, None), (group_gbps, group))
    return Allocation(t, time, _PortShares(t.matrix_bytes, levels), _member_order_rings(t),
                      ring_gbps=_PortShares(t.ring_matrix(), levels),
                      links=port_links(t.nodes, gbps, group, group_gbps))


def _sparse_port_time_s(traffic: PairTraffic, gbps: float, nodes_per_port: int = 1) -> float:
    """The busiest port's time on a sparse traffic: node i sits on port
    ``i // nodes_per_port``, each port carries ``gbps`` out and ``gbps`` in, and only
    bytes between different ports load them (the fluid model of the dense pricing).

    Examples
    --------
    >>> t = PairTraffic.from_pairs(4, [0, 0, 1], [1, 2, 3], [1e9, 1e9, 1e9])
    >>> _sparse_port_time_s(t, 8.0), _sparse_port_time_s(t, 8.0, nodes_per_port=2)
    (2.0, 2.0)
    """
    port_src, port_dst = traffic.src // nodes_per_port, traffic.dst // nodes_per_port
    crossing = port_src != port_dst
    ports = -(-traffic.nodes // nodes_per_port)
    nbytes = traffic.bytes[crossing]
    out = np.bincount(port_src[crossing], weights=nbytes, minlength=ports)
    into = np.bincount(port_dst[crossing], weights=nbytes, minlength=ports)
    return _fluid_time(np.concatenate([out, into]), gbps)


@dataclass(frozen=True)
class ElectCluster(Fabric):
    """SiP-ML's Elect-Cluster: servers of ``gpus_per_server`` GPUs on an in-box switch
    (NVSwitch-like, ``intra_gbps`` per GPU), joined by a full-bisection datacenter
    fabric giving each *server* ``inter_gbps`` (SiP-ML §4.1: 200 or 400 Gbps).

    GPU i sits in server ``i // gpus_per_server``. Fluid model: a GPU's own traffic
    (intra and inter) shares its ``intra_gbps``; a server's inter-server traffic shares
    its NIC's ``inter_gbps``; a transfer gets the smaller of its shares of the two
    (:func:`port_shares`); in the step, it shares its GPUs' ports and its servers'
    NICs with the transfers in progress (:func:`~fabricopt.fabrics.flows.port_links`).

    Examples
    --------
    >>> f = ElectCluster(800.0, 8.0, gpus_per_server=2)
    >>> f.comm_time([[0, 1e9, 0], [0, 0, 1e9], [0, 0, 0]])
    1.0
    """

    intra_gbps: float
    inter_gbps: float
    gpus_per_server: int = 8
    label: ClassVar[str] = "elect-cluster"
    node_limited_step: ClassVar[bool] = True

    def __post_init__(self):
        object.__setattr__(self, "intra_gbps", _check_gbps("intra_gbps", self.intra_gbps))
        object.__setattr__(self, "inter_gbps", _check_gbps("inter_gbps", self.inter_gbps))
        object.__setattr__(self, "gpus_per_server",
                           as_int("gpus_per_server", self.gpus_per_server, minimum=1))

    @property
    def per_node_gbps(self) -> float:
        return self.intra_gbps

    def servers(self, nodes: int) -> np.ndarray:
        """Server index of each GPU."""
        return np.arange(nodes) // self.gpus_per_server

    def allocate(self, traffic) -> Allocation:
        t = as_traffic(traffic)
        return _two_level_allocation(t, self.intra_gbps, self.servers(t.nodes), self.inter_gbps)

    sparse_pricing: ClassVar[bool] = True

    def sparse_comm_time_s(self, traffic: PairTraffic) -> float:
        return max(_sparse_port_time_s(traffic, self.intra_gbps),
                   _sparse_port_time_s(traffic, self.inter_gbps, self.gpus_per_server))

    def cost_breakdown(self, nodes, prices=DEFAULT_PRICES):
        servers = -(-nodes // self.gpus_per_server)
        inter = FatTree(servers, self.inter_gbps).cost_breakdown(servers, prices)
        out = {"nvswitch_ports": nodes * prices.per_gbps("nvswitch_port_per_100g", self.intra_gbps)}
        out.update({f"inter_{k}": v for k, v in inter.items()})
        return out

    def with_bandwidth(self, per_node_gbps):
        return replace(self, intra_gbps=per_node_gbps)


def _fat_tree_radix(hosts: int) -> int:
    """The smallest even k whose full-bisection k-ary Fat-tree holds ``hosts`` (k^3/4)."""
    k = 2
    while k ** 3 // 4 < hosts:
        k += 2
    return k


@dataclass(frozen=True)
class FatTree(Fabric):
    """A three-tier Fat-tree of ``hosts`` hosts, ``link_gbps`` host links, ECMP routing.

    Hosts ``i // hosts_per_edge`` share an edge (ToR) switch; the edge's uplinks carry
    ``hosts_per_edge * link_gbps / oversubscription``, and the aggregation and core
    layers above are full-bisection for that uplink capacity (oversubscription at the
    edge, as is usual). ``hosts_per_edge`` defaults to k/2 for the smallest k-ary
    Fat-tree that holds the hosts.

    ECMP is fluid: every flow splits evenly over all its equal-cost paths. Then a
    flow leaving an edge splits evenly over the edge's uplinks and, by the symmetry of
    the tree, over every layer above, so the load on an uplink (downlink) of edge e
    is the bytes leaving (entering) e over the number of uplinks; above the edge,
    the pod's capacity is the sum of its edges' and can never be the bottleneck.
    The communication time is therefore the busiest of the host links and the edge
    up/down capacities. With oversubscription 1 this is exactly the port bound:
    a full-bisection Fat-tree under fluid ECMP equals :class:`ElectFlat`.

    Examples
    --------
    >>> FatTree(16, 8.0).hosts_per_edge
    2
    >>> FatTree(4, 8.0, oversubscription=2.0, hosts_per_edge=2).comm_time(
    ...     [[0, 0, 1e9, 0], [0, 0, 0, 1e9], [0, 0, 0, 0], [0, 0, 0, 0]])
    2.0
    """

    hosts: int
    link_gbps: float
    oversubscription: float = 1.0
    hosts_per_edge: int | None = None
    label: ClassVar[str] = "fat-tree"
    node_limited_step: ClassVar[bool] = True

    def __post_init__(self):
        set_ = object.__setattr__
        set_(self, "hosts", as_int("hosts", self.hosts, minimum=1))
        set_(self, "link_gbps", _check_gbps("link_gbps", self.link_gbps))
        set_(self, "oversubscription", as_float("oversubscription", self.oversubscription,
                                                minimum=1.0))
        h = (_fat_tree_radix(self.hosts) // 2 if self.hosts_per_edge is None
             else as_int("hosts_per_edge", self.hosts_per_edge, minimum=1))
        set_(self, "hosts_per_edge", h)

    @property
    def per_node_gbps(self) -> float:
        return self.link_gbps

    def _check_nodes(self, nodes: int) -> None:
        if nodes > self.hosts:
            fail("traffic_bytes", f"{nodes} x {nodes}", f"has more nodes than the "
                                                        f"Fat-tree's {self.hosts} hosts")

    @property
    def _edge_gbps(self) -> float:
        return self.hosts_per_edge * self.link_gbps / self.oversubscription

    sparse_pricing: ClassVar[bool] = True

    def sparse_comm_time_s(self, traffic: PairTraffic) -> float:
        self._check_nodes(traffic.nodes)
        return max(_sparse_port_time_s(traffic, self.link_gbps),
                   _sparse_port_time_s(traffic, self._edge_gbps, self.hosts_per_edge))

    def allocate(self, traffic) -> Allocation:
        t = as_traffic(traffic)
        self._check_nodes(t.nodes)
        return _two_level_allocation(t, self.link_gbps, np.arange(t.nodes) // self.hosts_per_edge,
                                     self._edge_gbps)

    def cost_breakdown(self, nodes=None, prices=DEFAULT_PRICES):
        """Switch ports, transceivers (two per link), one NIC port per host, one fiber per link."""
        c = fat_tree_counts(self.hosts, self.oversubscription)
        links = c["host_links"] + c["switch_links"]
        return {"switch_ports": c["switch_ports"] * prices.per_gbps("switch_port_per_100g",
                                                                    self.link_gbps),
                "transceivers": 2 * links * prices.per_gbps("transceiver_per_100g",
                                                            self.link_gbps),
                "nics": c["host_links"] * prices.per_gbps("nic_port_per_100g", self.link_gbps),
                "fibers": links * prices.fiber}

    def with_bandwidth(self, per_node_gbps):
        return replace(self, link_gbps=per_node_gbps)


def cost_matched_fat_tree(target_usd: float, hosts: int, oversubscription: float = 1.0,
                          prices: Prices = DEFAULT_PRICES) -> FatTree:
    """The Fat-tree of ``hosts`` hosts whose $ cost equals ``target_usd``.

    The cost is affine in the link speed (fibers are fixed, the rest scales), so the
    matching ``link_gbps`` is solved in closed form.

    Raises
    ------
    InvalidInstance
        If ``target_usd`` does not even pay for the fibers.

    Examples
    --------
    >>> f = cost_matched_fat_tree(FatTree(128, 100.0).cost_usd(128), 128)
    >>> round(f.link_gbps, 6)
    100.0
    """
    target = as_float("target_usd", target_usd, positive=True)
    fixed = FatTree(hosts, 1.0, oversubscription).cost_breakdown(hosts, prices)["fibers"]
    per_gbps = (FatTree(hosts, 1.0, oversubscription).cost_usd(hosts, prices) - fixed)
    if target <= fixed or per_gbps <= 0:
        fail("target_usd", target, f"does not exceed the Fat-tree's fixed cost {fixed:.0f}")
    return FatTree(hosts, (target - fixed) / per_gbps, oversubscription)


@dataclass(frozen=True)
class SipOcs(Fabric):
    """SiP-OCS: each GPU has one port on each of ``switches`` optical circuit switches,
    ``gbps / switches`` per circuit, configured once per job (SiP-ML §3.1, §3.3).

    The circuits come from ``fabricopt.solve(circuits instance, method)`` on the job's
    whole per-iteration traffic (AllReduce rings in member order): the assignment
    that minimizes the longest transfer. ``reconfig_s`` (10 ms) is paid once per job.
    Degree-limited placement keeps one circuit for the data-parallel ring.

    The fabric reads only how many circuits each pair gets, so the shipped ``exact``
    and ``greedy`` methods (while the registry maps the names to them) give their
    circuit counts without splitting them into one permutation per switch (always
    possible: König): ``problems.circuits.check_counts`` checks them,
    ``evaluate_counts`` scores them, and the allocation's ``result`` is ``solve``'s less
    the solution (None; ``info["solution"]`` says so). Any other method runs through
    ``solve``.

    Examples
    --------
    >>> f = SipOcs(switches=2, gbps=16.0)
    >>> a = f.allocate([[0, 1e9], [1e9, 0]])
    >>> a.comm_time_s, float(a.pair_gbps[0, 1])
    (0.5, 16.0)
    """

    switches: int
    gbps: float
    reconfig_s: float = 10e-3
    method: str = "exact"
    label: ClassVar[str] = "sip-ocs"
    node_limited_step: ClassVar[bool] = True
    placement_method: ClassVar[str] = "sipml"
    peers_split_bandwidth: ClassVar[bool] = True

    def __post_init__(self):
        object.__setattr__(self, "switches", as_int("switches", self.switches, minimum=1))
        object.__setattr__(self, "gbps", _check_gbps("gbps", self.gbps))
        object.__setattr__(self, "reconfig_s", as_float("reconfig_s", self.reconfig_s, minimum=0.0))

    @property
    def per_node_gbps(self) -> float:
        return self.gbps

    @property
    def setup_s(self) -> float:
        return self.reconfig_s

    @property
    def circuit_gbps(self) -> float:
        return self.gbps / self.switches

    def max_peers(self, k, l):
        return max(1, min(k - 1, self.switches - (1 if l > 1 else 0)))

    def instance(self, traffic) -> dict:
        """The ``circuits`` instance (docs/formats.rst, circuits) of ``traffic``."""
        t = as_traffic(traffic)
        return {"problem": "circuits", "switches": self.switches,
                "circuit_gbps": self.circuit_gbps, "traffic_bytes": t.total_matrix().tolist()}

    def allocate(self, traffic) -> Allocation:
        t = as_traffic(traffic)
        if (idle := _idle(t)) is not None:
            return idle
        # the instance of self.instance(t), from the matrix without a round trip
        # through a million Python floats
        instance = CircuitsInstance(self.switches, self.circuit_gbps, t._total)
        shipped = _shipped_counts(self.method)
        if shipped is not None:
            result, counts = _counts_configuration(self, instance, *shipped)
        else:
            result = _solve(self, "circuits", self.method, instance)
            counts = circuit_counts(instance, result.solution)
        return Allocation(t, result.objective, counts * self.circuit_gbps,
                          _member_order_rings(t), result)

    def cost_breakdown(self, nodes, prices=DEFAULT_PRICES):
        ports = nodes * self.switches
        return {"ocs_ports": ports * prices.ocs_port,
                "sip_interfaces": nodes * prices.per_gbps("sip_interface_per_100g", self.gbps),
                "fibers": ports * prices.fiber}

    def with_bandwidth(self, per_node_gbps):
        return replace(self, gbps=per_node_gbps)


#: SiP-Ring instances kept for the traffic they were made for: the search asks for a
#: candidate's bound and then its allocation, of one traffic (``Plan.traffic``).
_RING_INSTANCES_MAX = 2
_ring_instances: OrderedDict = OrderedDict()

#: The shipped methods of the ``wavelengths`` kind whose result is a function of the
#: instance alone as SiP-Ring runs them (seed 0, no time limit, no options, HiGHS on one
#: thread): ``mcf`` rounds with a seeded generator, ``greedy`` is one fixed pass, ``milp``
#: runs a deterministic solver to its end. Another method (a plug-in's, or one
#: registered under these names) may depend on more than the instance: never kept.
_KEPT_RING_METHODS = {"mcf": wavelength_methods.mcf, "greedy": wavelength_methods.greedy,
                      "milp": wavelength_methods.milp}

#: SiP-Ring solves kept by the content of their instance (the traffic's digest,
#: ``Traffic._total_digest``, and the ring's parameters) and the method: a search
#: prices traffic equal cell for cell to one it solved before in another
#: :class:`Traffic` (a quarter of the solves of the 1,024-GPU transformer compare, each
#: within the 10 solves before it). A result holds its schedule's lightpath arrays, not
#: the instance (16 of them: ~40 MB at the end of that compare); the least recently used
#: is dropped past this many.
_RING_RESULTS_MAX = 16
_ring_results: OrderedDict = OrderedDict()


@dataclass(frozen=True)
class SipRing(Fabric):
    """SiP-Ring: GPUs on two counter-rotating fiber rings, ``wavelengths`` per GPU at
    ``wavelength_gbps`` each, lightpaths of at most ``max_hops`` hops (SiP-ML §3.1, A.1).

    Lightpaths come from ``fabricopt.solve(wavelengths instance, method)`` on the
    job's per-iteration traffic (AllReduce rings in member order around GPU
    index order). The ring is retuned every ``interval_s`` and each retuning stalls it
    ``reconfig_s`` (MRRs: 25 us every 100 us), so it carries data a fraction
    ``interval_s / (interval_s + reconfig_s)`` of the time; every rate is scaled by it.
    Our simplification: one schedule for the whole iteration's traffic (SiP-ML
    re-estimates it every 100 us).

    Raises
    ------
    InfeasibleInstance
        From :meth:`allocate`, if a demanded pair is farther than ``max_hops`` both ways
        round.
    """

    wavelengths: int
    wavelength_gbps: float = 25.0
    max_hops: int = 16
    reconfig_s: float = 25e-6
    interval_s: float = 100e-6
    method: str = "mcf"
    label: ClassVar[str] = "sip-ring"
    node_limited_step: ClassVar[bool] = True
    placement_method: ClassVar[str] = "sipml"
    peers_split_bandwidth: ClassVar[bool] = True

    def __post_init__(self):
        set_ = object.__setattr__
        set_(self, "wavelengths", as_int("wavelengths", self.wavelengths, minimum=1))
        set_(self, "wavelength_gbps", _check_gbps("wavelength_gbps", self.wavelength_gbps))
        set_(self, "max_hops", as_int("max_hops", self.max_hops, minimum=1))
        set_(self, "reconfig_s", as_float("reconfig_s", self.reconfig_s, minimum=0.0))
        set_(self, "interval_s", as_float("interval_s", self.interval_s, positive=True))

    @property
    def per_node_gbps(self) -> float:
        return self.wavelengths * self.wavelength_gbps

    @property
    def duty_cycle(self) -> float:
        """Fraction of time the ring carries data between retunings."""
        return self.interval_s / (self.interval_s + self.reconfig_s)

    def max_peers(self, k, l):
        return max(1, min(k - 1, min(self.max_hops, self.wavelengths) - (1 if l > 1 else 0)))

    def instance(self, traffic) -> dict:
        """The ``wavelengths`` instance (docs/formats.rst, wavelengths) of ``traffic`` (``max_hops`` capped
        at N - 1: no lightpath round a ring of N nodes is longer)."""
        spec = self._instance(as_traffic(traffic))
        return {**spec, "traffic_bytes": spec["traffic_bytes"].tolist()}

    def _instance(self, t: Traffic) -> dict:
        """:meth:`instance` with the traffic as a float array (what ``solve`` reads,
        validated as an array rather than a million Python floats)."""
        return {"problem": "wavelengths", "nodes": t.nodes, "wavelengths": self.wavelengths,
                "wavelength_gbps": self.wavelength_gbps,
                "max_hops": max(1, min(self.max_hops, t.nodes - 1)),
                "traffic_bytes": t._total}

    def _check_reach(self, total: np.ndarray) -> None:
        n = total.shape[0]
        i, j = np.nonzero(total)
        hops = np.minimum((j - i) % n, (i - j) % n)
        far = np.flatnonzero(hops > self.max_hops)
        if len(far):
            a, b = int(i[far[0]]), int(j[far[0]])
            raise InfeasibleInstance(f"{self.label}: GPUs {a} and {b} are {int(hops[far[0]])} "
                                     f"hops apart both ways round, beyond max_hops = "
                                     f"{self.max_hops}")

    def comm_lower_bound_s(self, traffic) -> float:
        """SiP-ML's count relaxation of the wavelengths problem (its optimum bounds
        every schedule's longest transfer, ``count_bound``) over the duty cycle;
        ``inf`` where no lightpaths can carry the traffic.

        Examples
        --------
        >>> ring = SipRing(wavelengths=2, wavelength_gbps=8.0)
        >>> t = [[0, 2e9, 0], [0, 0, 0], [0, 0, 0]]
        >>> ring.comm_lower_bound_s(t) <= ring.allocate(t).comm_time_s
        True
        """
        t = as_traffic(traffic)
        if _idle(t) is not None:
            return 0.0
        return kept_count_bound(self._wavelengths_instance(t)) / self.duty_cycle

    def _wavelengths_instance(self, t: Traffic) -> WavelengthsInstance:
        """The instance of :meth:`instance`, made once for the bound and the allocation
        of one traffic (validating 1,024 x 1,024 cells and finding its pairs is the
        cost); the last :data:`_RING_INSTANCES_MAX` are kept, each with its traffic."""
        key = (id(t), self.wavelengths, self.wavelength_gbps, self.max_hops)
        found = _ring_instances.get(key)
        if found is not None and found[0] is t:   # held, so its id is not reused
            _ring_instances.move_to_end(key)
            return found[1]
        spec = self._instance(t)
        instance = WavelengthsInstance(spec["nodes"], spec["wavelengths"],
                                       spec["wavelength_gbps"], spec["max_hops"],
                                       spec["traffic_bytes"])
        _ring_instances[key] = (t, instance)
        while len(_ring_instances) > _RING_INSTANCES_MAX:
            _ring_instances.popitem(last=False)
        return instance

    def _result_key(self, t: Traffic) -> tuple | None:
        """What :data:`_ring_results` keeps ``t``'s solve under: the instance's parameters,
        the traffic's digest, the method and its function; None when the method is not
        one of :data:`_KEPT_RING_METHODS` as shipped."""
        shipped = _KEPT_RING_METHODS.get(self.method)
        if shipped is None or not method_available("wavelengths", self.method) \
                or get_method("wavelengths", self.method).fn is not shipped:
            return None
        spec = self._instance(t)
        return (spec["nodes"], spec["wavelengths"], spec["wavelength_gbps"], spec["max_hops"],
                t._total_digest, self.method, shipped)

    def _solved(self, t: Traffic) -> Result:
        """The checked, scored solve of ``t``'s instance (errors as :func:`_solve` raises
        them); a kept method's result is kept by content (:data:`_ring_results`)."""
        key = self._result_key(t)
        found = None if key is None else _ring_results.get(key)
        if found is not None:
            _ring_results.move_to_end(key)
            return found
        result = _solve(self, "wavelengths", self.method, self._wavelengths_instance(t))
        if key is not None:
            _ring_results[key] = result
            while len(_ring_results) > _RING_RESULTS_MAX:
                _ring_results.popitem(last=False)
        return result

    def allocate(self, traffic) -> Allocation:
        t = as_traffic(traffic)
        if (idle := _idle(t)) is not None:
            return idle
        self._check_reach(t._total)
        result = self._solved(t)
        # lightpaths per pair, read from the checked schedule's arrays
        src, dst, _, _ = result.solution.arrays
        counts = np.zeros((t.nodes, t.nodes))
        np.add.at(counts, (src, dst), 1.0)
        duty = self.duty_cycle
        return Allocation(t, result.objective / duty, counts * self.wavelength_gbps * duty,
                          _member_order_rings(t), result)

    def cost_breakdown(self, nodes, prices=DEFAULT_PRICES):
        return {"sip_interfaces": nodes * prices.per_gbps("sip_interface_per_100g",
                                                          self.per_node_gbps),
                "fibers": 2 * nodes * prices.fiber}

    def with_bandwidth(self, per_node_gbps):
        return replace(self, wavelengths=max(1, round(per_node_gbps / self.wavelength_gbps)))


@dataclass(frozen=True)
class DirectConnect(Fabric):
    """TopoOpt's direct-connect fabric: each server has ``degree`` interfaces of
    ``link_gbps``, patched into a topology chosen for the job, with host forwarding.

    Topology, AllReduce ring orders and routes come from ``fabricopt.solve(topology
    instance, method)`` (docs/formats.rst, topology): model-parallel bytes as ``traffic_bytes``,
    data-parallel rings as mutable ``allreduce`` groups. A lone transfer's rate is the
    bottleneck of its routed paths, each scaled by its fraction.

    Cost (TopoOpt App. G): n*d NIC ports and transceivers, 2*n*d patch-panel ports and
    fibers for look-ahead reconfiguration, and n*d 1x2 look-ahead switches.
    """

    degree: int
    link_gbps: float
    method: str = "topoopt"
    label: ClassVar[str] = "direct-connect"
    placement_method: ClassVar[str] = "sipml"

    def __post_init__(self):
        object.__setattr__(self, "degree", as_int("degree", self.degree, minimum=1))
        object.__setattr__(self, "link_gbps", _check_gbps("link_gbps", self.link_gbps))

    @property
    def per_node_gbps(self) -> float:
        return self.degree * self.link_gbps

    def max_peers(self, k, l):
        # A bidirectional data-parallel ring takes two interfaces.
        return max(1, min(k - 1, self.degree - (2 if l > 1 else 0)))

    def instance(self, traffic) -> dict:
        """The ``topology`` instance (docs/formats.rst, topology) of ``traffic``."""
        t = as_traffic(traffic)
        return {"problem": "topology", "servers": t.nodes, "degree": self.degree,
                "link_gbps": self.link_gbps,
                "allreduce": [g.to_dict() for g in t.allreduce],
                "traffic_bytes": t.matrix_bytes.tolist()}

    def allocate(self, traffic) -> Allocation:
        t = as_traffic(traffic)
        if (idle := _idle(t)) is not None:
            return idle
        result = _solve(self, "topology", self.method, self.instance(t))
        sol = result.solution.to_dict()
        capacity = np.zeros((t.nodes, t.nodes))
        for i, j, count in sol["links"]:
            capacity[i, j] += count * self.link_gbps
            capacity[j, i] += count * self.link_gbps
        rates = np.zeros((t.nodes, t.nodes))
        for route in sol["routes"]:
            rate = math.inf
            for path in route["paths"]:
                if path["fraction"] > 0:
                    nodes = path["nodes"]
                    bottleneck = min(capacity[a, b] for a, b in zip(nodes, nodes[1:]))
                    rate = min(rate, bottleneck / path["fraction"])
            rates[route["src"], route["dst"]] = 0.0 if math.isinf(rate) else rate
        rings = tuple((tuple(r["order"]), float(r["share"]), t.allreduce[r["group"]].bytes)
                      for r in sol["rings"])
        return Allocation(t, result.objective, rates, rings, result)

    def cost_breakdown(self, nodes, prices=DEFAULT_PRICES):
        ports = nodes * self.degree
        return {"nics": ports * prices.per_gbps("nic_port_per_100g", self.link_gbps),
                "transceivers": ports * prices.per_gbps("transceiver_per_100g", self.link_gbps),
                "patch_panel_ports": 2 * ports * prices.patch_panel_port,
                "lookahead_switches": ports * prices.lookahead_switch,
                "fibers": 2 * ports * prices.fiber}

    def with_bandwidth(self, per_node_gbps):
        return replace(self, link_gbps=per_node_gbps / self.degree)
