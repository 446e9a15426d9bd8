"""Iteration time of a SimAI / AICB traffic workload on any fabric.

A traffic workload (:class:`~fabricopt.fabrics.simai.workload.SimAIWorkload`) lists one GPU's
layer rows: compute ticks and one collective per pass (forward, input gradient,
weight gradient), each over a parallelism group (TP, EP, DP, DP_EP) and, between
pipeline stages, the ``pp_comm`` bytes. Every GPU runs the same rows in its own groups
(rank layout: :mod:`~fabricopt.fabrics.simai.workload`). The composition::

    iteration_s = compute_s + exposed_comm_s + bubble_s

- ``compute_s``: the forward, input-gradient and weight-gradient ticks of every row
  times ``time_unit_s``; ``wg_update`` ticks are read but left out, as
  SimAI-Analytical does.
- ``exposed_comm_s``: the sum over groups g of ``(1 - overlap[g]) * comm_s[g]``, with
  default overlap 0 for DP, DP_EP, TP and EP (SimAI's defaults). Pipeline traffic is
  exposed as ``(1 - pp_overlap) * pp_s`` with default ``pp_overlap = 1``, i.e. 0 —
  SimAI's default (``-pp_o 1``); SimAI's own formula for other values misbehaves, so
  ours prices the pipeline bytes on the fabric like any other traffic.
- ``bubble_s = (PP - 1) / (GA * VPP) * (compute of every row but embedding_layer +
  its forward and input-gradient communication)``, 0 when PP = 1.

A collective's time, in ``serial`` pricing (SimAI's: collectives one after another,
each alone on the fabric): the collective runs at once in every group of its kind
(all TP groups together, ...), and takes the fabric's time to deliver that traffic —
ring collectives (AllReduce, AllGather, ReduceScatter) send ``2(n-1)/n`` (AllReduce)
or ``(n-1)/n`` of the bytes from each member to its ring successor, all-to-all
``1/n`` of them to every other member — divided by the efficiency of the collective
(:mod:`~fabricopt.fabrics.simai.efficiency`, optional: SimAI's tables, normalised to
the 16 GiB entry, applied only to TP AllGather / ReduceScatter / all-to-all and EP
all-to-all). A message under ``small_message_bytes`` (1 MiB) costs a fixed
``small_message_s`` instead (SimAI-Analytical 1.7: 10 us at n = 2; we use that one
constant at every n — our assumption). In ``concurrent`` pricing (the busiest-link
model of :mod:`~fabricopt.fabrics.iteration`), all of the iteration's exposed traffic
— each group's scaled by ``1 - overlap[g]`` — is delivered at once; there is no
per-group split, and neither efficiency nor the small-message latency applies.

How a fabric delivers a traffic:

- packet-switched fabrics (:class:`~fabricopt.fabrics.models.ElectCluster`,
  :class:`~fabricopt.fabrics.models.ElectFlat`,
  :class:`~fabricopt.fabrics.models.FatTree`) price each traffic alone in closed form
  (fluid: the busiest of GPU ports, server NICs, edge uplinks) from its (src, dst)
  pairs (:class:`~fabricopt.fabrics.traffic.PairTraffic`): time and memory grow with
  the pairs, a few per GPU, never with N x N;
- fabrics configured by a solver (SiP-OCS by ``circuits``, direct-connect by
  ``topology``) are configured **once**, for the whole iteration's traffic (SiP-ML §3.3
  configures the OCS once per job; TopoOpt §4 once per job), and a traffic's time is
  the problem kind's own ``evaluate`` of that traffic on that configuration (circuits
  dedicated to a pair; host forwarding over the chosen routes). The OCS's 10 ms
  reconfiguration is per job, not per iteration, and is left out. Direct-connect gets
  the job's real collective groups (:class:`MutableRingDelivery`): every TP, DP, DP_EP
  and EP ring collective is an AllReduce group whose ring order TopoOpt chooses (§4.3,
  mutability), all-to-all and pipeline bytes its point-to-point traffic, so its degree
  shapes the topology;
- SiP-Ring (``wavelengths``) retunes in 25 us and is reconfigured per collective phase
  (:class:`PerPhaseDelivery`): each collective gets its own lightpaths, in rounds when
  one configuration cannot carry it, each round paying one retuning, on top of the
  ring's duty cycle.

A fabric that cannot carry the traffic raises
:class:`~fabricopt.errors.InfeasibleInstance` saying why (too few ports, a pair beyond
reach).

Why this is SimAI-Analytical on Elect-Cluster: SimAI prices a collective at a bus
bandwidth — TP on NVLink; DP AllGather / ReduceScatter over the NICs of the group's
GPUs in a server (4 NICs when TP = 2 with 8 NICs per 8-GPU server); DP_EP over one
NIC; EP all-to-all over one NIC scaled by peers / off-server peers (48.5 · 15/12 in
its example) — as ``bytes / (efficiency * busbw) * (n-1)/n``, twice that for
AllReduce. :func:`simai_cluster` is an Elect-Cluster whose GPUs have the NVLink
bandwidth and whose servers have all their NICs; its fluid model gives each of these
collectives exactly that bus bandwidth (the group's ring crosses each server's NICs
once per group, an all-to-all sends (n - m)/(n - 1) of its bytes off a server of m
members). SimAI's "GB" is 2^30 bytes. Facts of SimAI-Analytical 1.7 source, as
read from its source; its reference (``-g 384 -nv 360 -nic 48.5 -n_p_s 8
-g_p_s 8``, the example ``workload_analytical.txt``): compute 4.5428 s, exposed
communication 1.5874 s (DP 0.0379, DP_EP 0, TP 0.3267, EP 1.2228), bubble 0.3460 s,
iteration 6.4762 s; ``tests/fabrics/test_simai_iteration.py`` pins our figures to it.

References
----------
.. [1] aliyun/SimAI (NSDI 2025), ``astra-sim-alibabacloud/astra-sim/workload/Layer.cc``
   (``compute_time``, the end-to-end report) and ``system/calbusbw.cc`` (bus bandwidth).
.. [2] M. Khani et al., "SiP-ML", SIGCOMM 2021, §3.1, §3.3 (SiP-OCS, SiP-Ring).
.. [3] W. Wang et al., "TopoOpt", NSDI 2023, §3-§4 (direct-connect, host forwarding).

Examples
--------
>>> from fabricopt.fabrics.resolve import resolve_workload
>>> t = simai_iteration_time(resolve_workload("simai-micro"), simai_cluster(), gpus=8)
>>> t.exposed_by_group_s["TP"] > 0 and t.bubble_s == 0.0
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

from fabricopt.errors import InfeasibleInstance
from fabricopt.problems import evaluate, instance_from_dict
from fabricopt.problems._validate import as_float, as_int, fail
import numpy as np

from fabricopt.fabrics.models import Allocation, DirectConnect, ElectCluster, Fabric, SipRing
from fabricopt.fabrics.traffic import AllReduce, Traffic
from fabricopt.fabrics.simai.workload import SimAIWorkload, PairTraffic, member_bytes
from fabricopt.fabrics.simai.efficiency import Efficiency, read_efficiency, simai_efficiency

__all__ = ["MODES", "GIB_BYTES", "SMALL_MESSAGE_BYTES", "SMALL_MESSAGE_S", "gib_per_s_to_gbps",
           "simai_cluster", "SimAIIterationTime", "simai_iteration_time", "Delivery",
           "MutableRingDelivery", "PerPhaseDelivery", "make_delivery",
           "REPORT_GROUPS"]

#: Collective pricing modes.
MODES = ("serial", "concurrent")
#: SimAI's "GB" (bandwidths in GB/s): 2^30 bytes.
GIB_BYTES = 2 ** 30
#: Messages below this many bytes cost ``SMALL_MESSAGE_S`` (SimAI-Analytical 1.7).
SMALL_MESSAGE_BYTES = 2 ** 20
#: SimAI-Analytical 1.7's cost of a message under 1 MiB at n = 2, seconds.
SMALL_MESSAGE_S = 10e-6
#: Groups in the order SimAI reports them, then the pipeline.
REPORT_GROUPS = ("DP", "DP_EP", "TP", "EP", "PP")
_COLLECTIVE_GROUPS = ("TP", "DP", "EP", "DP_EP")


def gib_per_s_to_gbps(gib_per_s: float) -> float:
    """SimAI's GB/s (2^30 bytes per second) in Gbps (10^9 bits per second).

    Examples
    --------
    >>> round(gib_per_s_to_gbps(48.5), 3)
    416.612
    """
    return gib_per_s * GIB_BYTES * 8 / 1e9


def simai_cluster(nvlink_GBps: float = 360.0, nic_GBps: float = 48.5, nics_per_server: int = 8,
                  gpus_per_server: int = 8) -> ElectCluster:
    """SimAI-Analytical's cluster as an :class:`ElectCluster`: each GPU has
    ``nvlink_GBps`` inside its server, each server ``nics_per_server`` NICs of
    ``nic_GBps`` (GB = 2^30 bytes, SimAI's unit) on a full-bisection network.

    Examples
    --------
    >>> f = simai_cluster()
    >>> round(f.intra_gbps, 1), round(f.inter_gbps, 1), f.gpus_per_server
    (3092.4, 3332.9, 8)
    """
    nvlink = as_float("nvlink_GBps", nvlink_GBps, positive=True)
    nic = as_float("nic_GBps", nic_GBps, positive=True)
    nics = as_int("nics_per_server", nics_per_server, minimum=1)
    return ElectCluster(gib_per_s_to_gbps(nvlink), gib_per_s_to_gbps(nic * nics),
                        as_int("gpus_per_server", gpus_per_server, minimum=1))


class Delivery:
    """The time ``fabric`` takes to deliver traffics of ``workload`` on ``gpus`` GPUs
    (see the module docstring).

    Fabrics that need a solver are configured once, for the job's whole traffic
    (``per_member``, default all of it); the others price every traffic alone, from
    its pairs when the fabric prices sparse traffic (``allocation`` None). Every price
    is linear in the traffic's bytes.
    """

    def phase_delay_s(self, kind: str, shape: str) -> float:
        """Seconds a collective of ``kind`` and ``shape`` pays to reconfigure the fabric."""
        return 0.0

    def __init__(self, fabric: Fabric, workload: SimAIWorkload, gpus: int,
                 per_member: Mapping | None = None):
        self.fabric = fabric
        self.workload = workload
        self.gpus = gpus
        if fabric.sparse_pricing:
            # A packet-switched fabric has no configuration: every traffic is priced
            # alone from its pairs, never as an N x N matrix. Pricing no traffic still
            # refuses a job the fabric is too small for.
            fabric.sparse_comm_time_s(PairTraffic.from_pairs(gpus, [], [], []))
            self.allocation, self.configured = None, False
            return
        self.allocation: Allocation | None = fabric.allocate(self._job(per_member))
        result = self.allocation.result
        self.configured = result is not None
        if self.configured:
            objective = float(result.objective)
            self._solution = result.solution
            # The fabric's own scaling of its solver's objective (SiP-Ring: duty cycle).
            self._scale = self.allocation.comm_time_s / objective if objective > 0 else 1.0

    def _job(self, per_member: Mapping | None):
        return self.workload.traffic(self.gpus, per_member=per_member).to_traffic()

    def seconds(self, traffic: PairTraffic) -> float:
        """Seconds to deliver ``traffic`` (every pair sending at once)."""
        if traffic.total_bytes <= 0:
            return 0.0
        if self.fabric.sparse_pricing:
            return float(self.fabric.sparse_comm_time_s(traffic))
        return self._priced(traffic.to_traffic())

    def _priced(self, traffic: Traffic) -> float:
        if not self.configured:
            return float(self.fabric.allocate(traffic).comm_time_s)
        if self._solution is None:
            # configured from circuit counts alone (SiP-OCS): each pair keeps its rate
            return self.allocation.dedicated_time_s(traffic._total) * self._scale
        instance = instance_from_dict(self.fabric.instance(traffic))
        return float(evaluate(instance, self._solution)) * self._scale

    def pattern_seconds(self, kind: str, shape: str, member_bytes: float) -> float:
        """Seconds for every group of ``kind`` to run ``shape`` at once (``member_bytes``
        from each member: to its successor for ``ring``, to each other for ``alltoall``)."""
        return self.seconds(self.workload.pattern(self.gpus, kind, shape, member_bytes))

    def traffic_seconds(self, per_member: Mapping, pipeline_scale: float) -> float:
        """Seconds to deliver the traffic :meth:`SimAIWorkload.traffic` builds from
        ``per_member`` and ``pipeline_scale``, all at once."""
        return self.seconds(self.workload.traffic(self.gpus, per_member=per_member,
                                                  pipeline_scale=pipeline_scale))


class MutableRingDelivery(Delivery):
    """A :class:`Delivery` for fabrics that choose ring orders (direct-connect: TopoOpt's
    AllReduce mutability). Every ring collective of a group — TP, DP, DP_EP, EP — is
    an AllReduce group of the job (``bytes`` so that each member sends its ring bytes:
    ``ring_bytes * g / (2 (g-1))``), so TopoOpt picks the rings' permutations and the
    topology from the job's real groups; all-to-all and pipeline bytes are its
    point-to-point traffic. A traffic is priced on that configuration with the same
    groups (those it does not use carry 0 bytes).
    """

    def _groups(self, ring_bytes: Mapping[str, float]) -> list[AllReduce]:
        out = []
        for kind in _COLLECTIVE_GROUPS:
            for members in self._members[kind]:
                n = len(members)
                nbytes = ring_bytes.get(kind, 0.0)
                out.append(AllReduce(tuple(int(m) for m in members),
                                     nbytes * n / (2.0 * (n - 1))))
        return out

    def _split(self, per_member: Mapping | None, pipeline_scale: float) -> Traffic:
        per_member = (self.workload.per_member_bytes(self.gpus) if per_member is None
                      else per_member)
        ring = {k: float(per_member.get(k, {}).get("ring", 0.0)) for k in _COLLECTIVE_GROUPS}
        point = {k: {"alltoall": v.get("alltoall", 0.0)} for k, v in per_member.items()
                 if k in _COLLECTIVE_GROUPS}
        matrix = self.workload.traffic(self.gpus, per_member=point,
                                       pipeline_scale=pipeline_scale)
        return Traffic(matrix.to_dense(), self._groups(ring))

    def _job(self, per_member: Mapping | None):
        groups = self.workload.groups(self.gpus)
        used = self.workload.per_member_bytes(self.gpus) if per_member is None else per_member
        # Only kinds that run ring collectives become AllReduce groups.
        self._members = {k: (groups[k] if groups[k].shape[1] > 1
                             and used.get(k, {}).get("ring", 0.0) > 0 else groups[k][:0])
                         for k in _COLLECTIVE_GROUPS}
        return self._split(per_member, 1.0)

    def seconds(self, traffic: PairTraffic) -> float:
        if traffic.total_bytes <= 0:
            return 0.0
        return self._priced(Traffic(traffic.to_dense(), self._groups({})))

    def pattern_seconds(self, kind, shape, member_bytes):
        if shape != "ring":
            return super().pattern_seconds(kind, shape, member_bytes)
        if member_bytes <= 0 or not len(self._members[kind]):
            return 0.0
        return self._priced(Traffic(np.zeros((self.gpus, self.gpus)),
                                    self._groups({kind: member_bytes})))

    def traffic_seconds(self, per_member, pipeline_scale):
        traffic = self._split(per_member, pipeline_scale)
        if not traffic._total.any():
            return 0.0
        return self._priced(traffic)


class PerPhaseDelivery(Delivery):
    """A :class:`Delivery` for fabrics that reconfigure per collective phase (SiP-Ring:
    its microring resonators retune in ``reconfig_s``, SiP-ML §3.1, A.1).

    Each collective gets its own configuration and pays one retuning. A traffic the
    ring cannot carry in one configuration (too few wavelengths on a segment) runs in
    rounds, one after another, each a configuration of its own paying one retuning: an
    all-to-all as ``n - 1`` rounds (member ``i`` to member ``i + s`` in round ``s``),
    and any traffic still too dense split into ``k`` rounds by sender (GPU ``i`` in round
    ``i mod k``), the smallest ``k`` that fits. A pair beyond the ring's reach cannot
    be carried in any round.
    """

    #: The most rounds a traffic is split into before it is declared infeasible.
    max_split = 64

    def __init__(self, fabric: Fabric, workload: SimAIWorkload, gpus: int):
        self.fabric = fabric
        self.workload = workload
        self.gpus = gpus
        self.allocation = None
        self.configured = False
        self._rounds: dict = {}
        self.rounds_of_last = 1

    def seconds(self, traffic: PairTraffic) -> float:
        self.rounds_of_last = 1
        if traffic.total_bytes <= 0:
            return 0.0
        try:
            return self._priced(traffic.to_traffic())
        except InfeasibleInstance as exc:
            if "beyond max_hops" in str(exc):
                raise
            first = exc
        for k in range(2, self.max_split + 1):
            try:
                total = sum(self._priced(PairTraffic.from_pairs(
                    self.gpus, traffic.src[keep], traffic.dst[keep],
                    traffic.bytes[keep]).to_traffic())
                    for keep in (traffic.src % k == r for r in range(k)) if keep.any())
            except InfeasibleInstance:
                continue
            self.rounds_of_last = k
            return total
        raise first

    def pattern_seconds(self, kind, shape, member_bytes):
        if shape != "alltoall":
            out = super().pattern_seconds(kind, shape, member_bytes)
            self._rounds[kind, shape] = self.rounds_of_last
            return out
        members = self.workload.groups(self.gpus)[kind]
        total, rounds = 0.0, 0
        for shift in range(1, members.shape[1]):
            total += self.seconds(PairTraffic.from_pairs(
                self.gpus, members.ravel(), np.roll(members, -shift, axis=1).ravel(),
                np.full(members.size, float(member_bytes))))
            rounds += self.rounds_of_last
        self._rounds[kind, shape] = max(rounds, 1)
        return total

    def phase_delay_s(self, kind: str, shape: str) -> float:
        return self._rounds.get((kind, shape), 1) * float(self.fabric.reconfig_s)


def make_delivery(fabric: Fabric, workload: SimAIWorkload, gpus: int) -> Delivery:
    """The :class:`Delivery` of ``fabric``: mutable rings on direct-connect, one
    configuration per collective phase on SiP-Ring, one per job on the others."""
    if isinstance(fabric, SipRing):
        return PerPhaseDelivery(fabric, workload, gpus)
    cls = MutableRingDelivery if isinstance(fabric, DirectConnect) else Delivery
    return cls(fabric, workload, gpus)


@dataclass(frozen=True, eq=False)
class SimAIIterationTime:
    """One iteration of a traffic workload on a fabric (see the module docstring).

    Attributes
    ----------
    iteration_s : float
        ``compute_s + exposed_comm_s + bubble_s``.
    compute_s, exposed_comm_s, bubble_s : float
    exposed_by_group_s : dict or None
        Exposed communication per group (``DP``, ``DP_EP``, ``TP``, ``EP``, ``PP``);
        None in ``concurrent`` pricing, which has no per-group split.
    comm_by_group_s : dict
        Each group's communication before overlap: in ``serial`` pricing the sum of
        its collectives, in ``concurrent`` its whole traffic delivered alone at once.
    mode : str
    gpus : int
    fabric : Fabric
    workload : SimAIWorkload
    allocation : Allocation or None
        The fabric configured for the whole iteration's traffic; None for a fabric
        with no configuration (packet-switched: priced in closed form, its N x N
        per-pair rates never built) and under the ``simai`` rules, which price no
        fabric.
    rules : str
        ``physical`` (the fabric's links) or ``simai`` (SimAI-Analytical's rules,
        :mod:`~fabricopt.fabrics.simai.analytical`).
    notes : tuple of str
        Where the rules depart from the cluster's physics, and why.
    """

    iteration_s: float
    compute_s: float
    exposed_comm_s: float
    bubble_s: float
    exposed_by_group_s: dict | None
    comm_by_group_s: dict
    mode: str
    gpus: int
    fabric: Fabric
    workload: SimAIWorkload = field(repr=False)
    allocation: Allocation | None = field(repr=False)
    rules: str = "physical"
    notes: tuple = ()

    @property
    def total_s(self) -> float:
        """The iteration time (the name :class:`~fabricopt.fabrics.iteration.IterationTime` uses)."""
        return self.iteration_s

    def to_dict(self) -> dict[str, Any]:
        """The figures as JSON-ready values."""
        return {"workload": self.workload.name, "gpus": self.gpus, "fabric": self.fabric.label,
                "per_node_gbps": self.fabric.per_node_gbps, "mode": self.mode,
                "compute_s": self.compute_s, "exposed_comm_s": self.exposed_comm_s,
                "exposed_comm_by_group_s": self.exposed_by_group_s,
                "comm_by_group_s": self.comm_by_group_s, "bubble_s": self.bubble_s,
                "iteration_s": self.iteration_s, "rules": self.rules, "notes": list(self.notes)}


def _overlaps(overlap: Mapping | None) -> dict[str, float]:
    """Overlap by group; DP_EP (the expert weights' DP) takes DP's unless given."""
    given = dict(overlap or {})
    out = {g: 0.0 for g in _COLLECTIVE_GROUPS}
    for key, value in given.items():
        if key not in out:
            fail("overlap", key, f"is not a group (groups: {', '.join(_COLLECTIVE_GROUPS)})")
        out[key] = as_float(f"overlap[{key}]", value, minimum=0.0, maximum=1.0)
    if "DP_EP" not in given:
        out["DP_EP"] = out["DP"]
    return out


def _efficiency(efficiency) -> Efficiency | None:
    if efficiency is None or isinstance(efficiency, Efficiency):
        return efficiency
    if efficiency == "simai":
        return simai_efficiency()
    if isinstance(efficiency, str) and efficiency == "none":
        return None
    return read_efficiency(efficiency)


def _bubble_rows(collective) -> bool:
    """Is this collective's time part of the pipeline bubble (fwd / ig, not embedding)?"""
    return collective.layer != "embedding_layer" and collective.phase != "wg"


def simai_iteration_time(workload: SimAIWorkload, fabric: Fabric, gpus: int, *,
                         mode: str = "serial", overlap: Mapping | None = None,
                         pp_overlap: float = 1.0, efficiency="simai",
                         gpus_per_server: int | None = None,
                         small_message_bytes: float = SMALL_MESSAGE_BYTES,
                         small_message_s: float = SMALL_MESSAGE_S) -> SimAIIterationTime:
    """The iteration time of a traffic workload on ``gpus`` GPUs of ``fabric``.

    Parameters
    ----------
    workload : SimAIWorkload
    fabric : Fabric
        Any fabric of :mod:`~fabricopt.fabrics.models` (:func:`simai_cluster` is
        SimAI-Analytical's).
    gpus : int
        A multiple of TP*PP whose DP the EP degree divides.
    mode : {"serial", "concurrent"}
        Collective pricing (module docstring).
    overlap : mapping, optional
        Fraction of each group's communication hidden behind compute, by group
        (``DP``, ``DP_EP``, ``TP``, ``EP``); default 0, ``DP_EP`` default ``DP``'s.
    pp_overlap : float
        The same for pipeline traffic; default 1 (SimAI's ``-pp_o 1``: none exposed).
    efficiency : "simai", "none", None, Efficiency or a folder path
        Collective efficiency tables (serial pricing only); default SimAI's own.
    gpus_per_server : int, optional
        Server size the efficiency rule uses (default the fabric's if it has one, else 8).
    small_message_bytes, small_message_s : float
        Messages under ``small_message_bytes`` cost ``small_message_s`` (serial only).

    Returns
    -------
    SimAIIterationTime

    Raises
    ------
    InvalidInstance
        On a bad option, or a GPU count the parallelism does not divide.
    InfeasibleInstance
        If the fabric has no configuration for the traffic.
    SolverUnavailable
        If the fabric's configuration method is not registered.
    """
    if not isinstance(workload, SimAIWorkload):
        fail("workload", getattr(workload, "name", workload),
             "is not a traffic workload (SimAI/AICB); price op-graph workloads with k and l")
    if mode not in MODES:
        fail("mode", mode, f"must be one of {', '.join(MODES)}")
    sizes = workload.group_sizes(gpus)
    gpus = int(gpus)
    overlaps = _overlaps(overlap)
    pp_overlap = as_float("pp_overlap", pp_overlap, minimum=0.0, maximum=1.0)
    eff = _efficiency(efficiency)
    per_server = as_int("gpus_per_server", gpus_per_server if gpus_per_server is not None
                        else getattr(fabric, "gpus_per_server", 8), minimum=1)
    small_bytes = as_float("small_message_bytes", small_message_bytes, minimum=0.0)
    small_s = as_float("small_message_s", small_message_s, minimum=0.0)

    delivery = make_delivery(fabric, workload, gpus)
    collectives = workload.collectives()
    pp_s = delivery.seconds(workload.pipeline_traffic(gpus))
    ticks = workload.compute_ticks()
    compute_s = (ticks["fwd"] + ticks["ig"] + ticks["wg"]) * workload.time_unit_s
    bubble_compute_s = sum(sum(layer.compute) for layer in workload.layers
                           if layer.name != "embedding_layer") * workload.time_unit_s

    if mode == "serial":
        unit: dict = {}          # (group, shape) -> seconds per byte each member sends
        comm = {g: 0.0 for g in REPORT_GROUPS}
        bubble_comm_s = 0.0
        for c in collectives:
            n = sizes[c.group]
            if n < 2:
                continue
            if c.bytes < small_bytes:
                t = small_s
            else:
                shape, nbytes = member_bytes(c.op, n, c.bytes)
                if (c.group, shape) not in unit:
                    probe = 1e9     # seconds are linear in bytes: price 1 GB once per shape
                    unit[c.group, shape] = delivery.pattern_seconds(c.group, shape,
                                                                    probe) / probe
                factor = 1.0 if eff is None else eff.collective_factor(
                    c.group, c.op, c.bytes, tp=workload.tp, ep=workload.ep,
                    gpus_per_server=per_server)
                t = (unit[c.group, shape] * nbytes / factor
                     + delivery.phase_delay_s(c.group, shape))
            comm[c.group] += t
            if _bubble_rows(c):
                bubble_comm_s += t
        comm["PP"] = pp_s
        exposed = {g: (1.0 - overlaps[g]) * comm[g] for g in _COLLECTIVE_GROUPS}
        exposed["PP"] = (1.0 - pp_overlap) * pp_s
        exposed = {g: exposed[g] for g in REPORT_GROUPS}
        exposed_s = sum(exposed.values())
    else:
        everything = workload.per_member_bytes(gpus, collectives)
        scaled = {g: {s: v * (1.0 - overlaps.get(g, 1.0)) for s, v in shapes.items()}
                  for g, shapes in everything.items() if g in overlaps}
        exposed_s = delivery.traffic_seconds(scaled, 1.0 - pp_overlap)
        comm = {g: delivery.traffic_seconds({g: everything[g]}, 0.0)
                for g in _COLLECTIVE_GROUPS}
        comm["PP"] = pp_s
        comm = {g: comm[g] for g in REPORT_GROUPS}
        bubble_comm_s = delivery.traffic_seconds(workload.per_member_bytes(
            gpus, [c for c in collectives if _bubble_rows(c)]), 0.0)
        exposed = None

    if workload.pp > 1:
        bubble_s = (workload.pp - 1) / (workload.ga * workload.vpp) * (bubble_compute_s
                                                                        + bubble_comm_s)
    else:
        bubble_s = 0.0
    total = compute_s + exposed_s + bubble_s
    if not math.isfinite(total):
        raise InfeasibleInstance(f"{fabric.label}: a pair of the traffic has no capacity")
    return SimAIIterationTime(total, compute_s, exposed_s, bubble_s, exposed, comm, mode, gpus,
                              fabric, workload, delivery.allocation)

