"""SimAI-Analytical's own pricing rules: the ``simai`` rules of a traffic workload.

:func:`simai_analytical_time` prices a traffic workload the way SimAI-Analytical 1.7
does, rule for rule, on SimAI's cluster (:class:`SimAICluster`: its ``-nv``, ``-nic``,
``-n_p_s``, ``-g_p_s``). Its figures are SimAI's, including where SimAI's rule is not
the physics of the cluster; those cases are named in the result's ``notes``. The
physical model (:func:`~fabricopt.fabrics.simai.iteration.simai_iteration_time`, the
default ``physical`` rules) prices the same traffic on the fabric's real links.

The rules, from SimAI's source (``Layer::report``, ``Layer::compute_time``,
``Layer::cal_ratio`` in ``astra-sim/workload/Layer.cc``; ``calculateBusBw`` and
``cal_busbw`` in ``astra-sim/system/calbusbw.cc``; ``initialize_workload`` in
``astra-sim/workload/Workload.cc``), with ``g`` GPUs and ``K`` NICs of ``B`` GB/s per
server, NVLink ``NV`` GB/s (GB = 2^30 bytes), integer divisions as SimAI's:

- **Group sizes**: a row's forward (input-gradient) collective runs over EP members
  when it is an ``_EP`` collective, else over TP members; its weight-gradient
  collective over DP/EP members when ``_DP_EP``, else over all DP members — an
  ``_EP`` weight-gradient collective included.
- **Small messages**: a message of 2 B to 1 MiB costs a fixed latency by group size
  (:data:`SMALL_MESSAGE_S`: 10, 12, 15, 66, 135, 200, 320 us at 2 ... 128 members),
  0 at any other size.
- **Bus bandwidth** of a group of ``nodes`` nodes with ``m`` GPUs and ``k`` NICs
  each: ``NV`` on one node; otherwise ``k*B`` when ``m = 1``, else
  ``min(NV*m/(m-1), k*B)`` (NCCL's ring crosses ``m - 1`` NVLink hops per node, so its
  bus bandwidth may exceed NVLink) for AllReduce, AllGather, ReduceScatter; an
  all-to-all gets ``NV`` on one node, else ``k*B/m * (n-1)/((nodes-1)*m)`` with
  ``n = nodes*m`` — not capped by NVLink. The group's shape: TP inside a server
  (``nodes = 1``) or ``TP/g`` full servers with ``K`` NICs; EP inside a server, else
  ``nodes = TP*EP // g`` (an integer division: EP 12 at TP 1 on 8-GPU servers counts as
  one node), ``m = max(g // TP, 1)``, ``k = K // TP`` (``K // g`` when TP > g); DP
  ``nodes`` = its member count — one member per server — with ``m = g // TP``,
  ``k = K // TP`` (``m = 1``, ``k = K // g`` when TP > g); DP_EP the same with
  ``TP*EP`` in place of TP.
- **Time**: ``bytes / (efficiency * busbw) * (n-1)/n``, twice that for AllReduce;
  the efficiency tables as :mod:`~fabricopt.fabrics.simai.efficiency` (the group size
  ``n`` and whether NVLink bounds the bus bandwidth pick the column and table).
  ``BROADCAST`` (and any collective SimAI does not know) is read as no communication.
- **Report**: exposed DP = the weight-gradient collectives but ``_DP_EP`` ones, times
  ``1 - overlap[DP]``; exposed DP_EP = the ``_DP_EP`` ones, times ``1 - overlap[DP]``
  too (``-dp_o`` covers both; SimAI has no DP_EP option); a row's forward and
  input-gradient collectives are both filed under the forward's group — EP when the
  forward is ``_EP``, else TP — times ``1 - overlap`` of that group; pipeline:
  ``2 * VPP * GA * pp_comm / 2^30 / pp_overlap * (1 - pp_overlap)`` seconds (SimAI's
  formula, which reads no bandwidth; 0 at its default ``-pp_o 1``); bubble
  ``(PP-1)/(GA*VPP)`` times every row but ``embedding_layer``'s compute and forward
  and input-gradient communication before overlap.

Where SimAI itself fails, the rules give the physical answer and a note says so: a
TP collective of at least 1 MiB at TP = 1 (SimAI's bus bandwidth is 0 and the time
overflows) costs 0 — a group of one sends nothing; a group whose integer NIC share is
0 (4 NICs per server at TP 8: SimAI reports its DP as 0 s) gets its real share
(``K / TP`` NICs).

References
----------
.. [1] aliyun/SimAI (NSDI 2025), ``astra-sim-alibabacloud/astra-sim/workload/Layer.cc``,
   ``astra-sim-alibabacloud/astra-sim/workload/Workload.cc``,
   ``astra-sim-alibabacloud/astra-sim/system/calbusbw.cc``.

Examples
--------
The example workload on 384 GPUs of SimAI's default cluster (SimAI-Analytical 1.7
reports 6.4762 s):

>>> from fabricopt.fabrics.resolve import resolve_workload
>>> t = simai_analytical_time(resolve_workload("simai-moe"), SimAICluster(), 384)
>>> round(t.iteration_s, 2), t.rules
(6.48, 'simai')
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

from fabricopt.errors import InfeasibleInstance
from fabricopt.problems._validate import as_float, as_int, fail
from fabricopt.fabrics.simai.efficiency import Efficiency
from fabricopt.fabrics.simai.iteration import (GIB_BYTES, REPORT_GROUPS, SimAIIterationTime,
                                               _efficiency, simai_cluster)
from fabricopt.fabrics.simai.workload import PHASES, SimAIWorkload, _parse_comm

__all__ = ["SimAICluster", "SMALL_MESSAGE_S", "SMALL_MESSAGE_MAX_BYTES", "BusBandwidth",
           "simai_bus_bandwidth", "simai_collective_s", "simai_analytical_time"]

#: SimAI's fixed cost of a message of 2 B to 1 MiB, by group size (0 at other sizes).
SMALL_MESSAGE_S = {2: 10e-6, 4: 12e-6, 8: 15e-6, 16: 66e-6, 32: 135e-6, 64: 200e-6,
                   128: 320e-6}
#: Messages strictly below this many bytes (and above 1 B) take the fixed cost.
SMALL_MESSAGE_MAX_BYTES = 2 ** 20
#: The overlap options SimAI has (``-dp_o``, ``-tp_o``, ``-ep_o``).
OVERLAP_GROUPS = ("DP", "TP", "EP")
_RING_OPS = ("ALLREDUCE", "ALLGATHER", "REDUCESCATTER")


@dataclass(frozen=True)
class SimAICluster:
    """SimAI-Analytical's cluster: ``-nv`` NVLink GB/s per GPU, ``-nic`` GB/s per NIC,
    ``-n_p_s`` NICs and ``-g_p_s`` GPUs per server (GB = 2^30 bytes).

    Examples
    --------
    >>> SimAICluster(nics_per_server=0)
    Traceback (most recent call last):
    ...
    fabricopt.errors.InvalidInstance: nics_per_server = 0: must be >= 1
    """

    nvlink_GBps: float = 360.0
    nic_GBps: float = 48.5
    nics_per_server: int = 8
    gpus_per_server: int = 8

    def __post_init__(self):
        set_ = object.__setattr__
        set_(self, "nvlink_GBps", as_float("nvlink_GBps", self.nvlink_GBps, positive=True))
        set_(self, "nic_GBps", as_float("nic_GBps", self.nic_GBps, positive=True))
        set_(self, "nics_per_server", as_int("nics_per_server", self.nics_per_server, minimum=1))
        set_(self, "gpus_per_server", as_int("gpus_per_server", self.gpus_per_server, minimum=1))

    def command(self, gpus: int) -> str:
        """SimAI-Analytical's options for this cluster on ``gpus`` GPUs."""
        return (f"-g {gpus} -nv {self.nvlink_GBps:g} -nic {self.nic_GBps:g} "
                f"-n_p_s {self.nics_per_server} -g_p_s {self.gpus_per_server}")


@dataclass(frozen=True)
class BusBandwidth:
    """A bus bandwidth (GB/s, GB = 2^30 bytes) and whether NVLink is what bounds it."""

    GBps: float
    nvlink_bound: bool


def simai_bus_bandwidth(op: str, nodes: int, gpus_per_node: int, nics_per_node: float,
                        cluster: SimAICluster) -> BusBandwidth:
    """SimAI's bus bandwidth of a collective over ``nodes`` nodes of ``gpus_per_node``
    members and ``nics_per_node`` NICs each (``calculateBusBw``, ring algorithm).

    Examples
    --------
    Two 8-GPU nodes of 8 NICs at 48.5 GB/s, NVLink 100 GB/s: NCCL's ring gets
    ``100 * 8/7`` GB/s, above NVLink (the NICs give 388):

    >>> c = SimAICluster(nvlink_GBps=100.0)
    >>> round(simai_bus_bandwidth("ALLGATHER", 2, 8, 8, c).GBps, 3)
    114.286
    >>> round(simai_bus_bandwidth("ALLTOALL", 2, 8, 8, c).GBps, 3)
    90.938
    """
    nv, nic = cluster.nvlink_GBps, cluster.nic_GBps * nics_per_node
    if nodes == 1:
        return BusBandwidth(nv, op == "ALLTOALL")
    if op == "ALLTOALL":
        ranks = nodes * gpus_per_node
        return BusBandwidth(nic / gpus_per_node * (ranks - 1) / ((nodes - 1) * gpus_per_node),
                            False)
    if gpus_per_node == 1:
        return BusBandwidth(nic, False)
    # NCCL's ring over m GPUs of a node crosses m - 1 NVLink hops.
    ring_nvlink = nv * gpus_per_node / (gpus_per_node - 1) if nic > nv else nv
    return BusBandwidth(ring_nvlink, True) if ring_nvlink < nic else BusBandwidth(nic, False)


def _shape(group: str, members: int, tp: int, ep: int, cluster: SimAICluster):
    """(nodes, GPUs per node, SimAI's NICs per node, the real NIC share) of a group."""
    g, k = cluster.gpus_per_server, cluster.nics_per_server
    if group == "TP":
        return (1, members, k, k) if tp <= g else (tp // g, g, k, k)
    if group == "EP":
        if tp * members <= g:
            return 1, g // tp, k, k
        share = k / g if tp > g else k / tp
        return (tp * members) // g, max(g // tp, 1), k // g if tp > g else k // tp, share
    span = tp if group == "DP" else tp * ep          # DP_EP: TP*EP in place of TP
    if span <= g:
        return members, g // span, k // span, k / span
    return members, 1, k // g, k / g


def simai_collective_s(op: str, group: str, members: int, nbytes: float, *, tp: int, ep: int,
                       cluster: SimAICluster, efficiency: Efficiency | None,
                       notes: list | None = None) -> float:
    """Seconds SimAI gives one collective ``op`` of ``nbytes`` over ``members`` GPUs of
    ``group`` (``Layer::compute_time``); ``notes`` collects where SimAI is departed from.

    Examples
    --------
    A 512 KiB message over 16 members costs the fixed 66 us, over 12 members nothing:

    >>> c = SimAICluster()
    >>> simai_collective_s("ALLGATHER", "EP", 16, 2 ** 19, tp=2, ep=16, cluster=c,
    ...                    efficiency=None), simai_collective_s(
    ...     "ALLGATHER", "EP", 12, 2 ** 19, tp=2, ep=12, cluster=c, efficiency=None)
    (6.6e-05, 0.0)
    """
    if op not in _RING_OPS and op != "ALLTOALL":
        if notes is not None and nbytes > 0:
            notes.append(f"SimAI reads {op} as no communication: {op} rows cost 0 s")
        return 0.0
    if 1 < nbytes < SMALL_MESSAGE_MAX_BYTES:
        return SMALL_MESSAGE_S.get(members, 0.0)
    if members < 2 or nbytes <= 0:
        if notes is not None and group == "TP" and nbytes > 0:
            notes.append("SimAI overflows on TP collectives at TP = 1 (bus bandwidth 0); "
                         "a group of one sends nothing: 0 s")
        return 0.0
    nodes, per_node, nics, share = _shape(group, members, tp, ep, cluster)
    if nics < 1:
        if notes is not None:
            notes.append(f"SimAI's integer NIC share of a {group} group is 0 "
                         f"({cluster.nics_per_server} NICs per server) and it reports "
                         f"0 s; priced with the real share, {share:g} NICs")
        nics = share
    bw = simai_bus_bandwidth(op, nodes, per_node, nics, cluster)
    factor = 1.0 if efficiency is None else efficiency.collective_factor(
        group, op, nbytes, tp=tp, ep=members, gpus_per_server=cluster.gpus_per_server,
        nvlink_bound=bw.nvlink_bound)
    passes = 2.0 if op == "ALLREDUCE" else 1.0
    return passes * nbytes / GIB_BYTES / (factor * bw.GBps) * (members - 1) / members


def _physics_notes(workload: SimAIWorkload, sizes: dict, used: set, cluster: SimAICluster,
                   notes: list) -> None:
    """Name SimAI's group shapes that are not the cluster's (R3)."""
    g, tp = cluster.gpus_per_server, workload.tp
    if "EP" in used and tp * sizes["EP"] > g and (tp * sizes["EP"]) % g:
        notes.append(f"SimAI counts an EP group of {tp * sizes['EP']} GPUs as "
                     f"{tp * sizes['EP'] // g} node(s) of {g} (integer division); it spans "
                     f"{math.ceil(tp * sizes['EP'] / g)} servers")
    for group, span in (("DP", tp), ("DP_EP", tp * workload.ep)):
        if group in used and sizes[group] > 1 and sizes[group] * span <= g:
            notes.append(f"SimAI prices the {group} ring as one member per server over NICs; "
                         f"its {sizes[group]} members share one server's NVLink")


def _simai_overlaps(overlap: Mapping | None) -> dict[str, float]:
    out = {g: 0.0 for g in OVERLAP_GROUPS}
    for key, value in dict(overlap or {}).items():
        if key == "DP_EP":
            fail("overlap", key, "SimAI has no DP_EP overlap: its -dp_o (DP=) covers DP and "
                                 "DP_EP; use DP=, or the physical rules")
        if key not in out:
            fail("overlap", key, f"is not a SimAI overlap group (groups: "
                                 f"{', '.join(OVERLAP_GROUPS)})")
        out[key] = as_float(f"overlap[{key}]", value, minimum=0.0, maximum=1.0)
    return out


def _group_of(text: str, phase: str, where: str) -> tuple[str | None, str]:
    """(op, SimAI's group type) of a row's comm field; ``NONE``'s group is ``NONE``."""
    parsed = _parse_comm(text, phase, where)
    if parsed is None:
        return None, "NONE"
    op, group = parsed
    return op, ("NONE" if op not in _RING_OPS and op != "ALLTOALL" else group)


def simai_analytical_time(workload: SimAIWorkload, cluster: SimAICluster, gpus: int, *,
                          overlap: Mapping | None = None, pp_overlap: float = 1.0,
                          efficiency="simai") -> SimAIIterationTime:
    """The iteration time SimAI-Analytical reports for ``workload`` on ``gpus`` GPUs of
    ``cluster`` (module docstring).

    Parameters
    ----------
    workload : SimAIWorkload
    cluster : SimAICluster
    gpus : int
        SimAI's ``-g``: a multiple of TP*PP whose DP the EP degree divides.
    overlap : mapping, optional
        SimAI's ``-dp_o``, ``-tp_o``, ``-ep_o`` as ``{"DP": r, "TP": r, "EP": r}``
        (default 0); ``DP`` covers DP_EP too.
    pp_overlap : float
        SimAI's ``-pp_o`` in (0, 1] (default 1: no pipeline time).
    efficiency : "simai", "none", None, Efficiency or a folder path
        Collective efficiency tables (default SimAI's own).

    Returns
    -------
    SimAIIterationTime
        With ``rules = "simai"``, ``mode = "serial"``, no fabric allocation, and
        ``notes`` naming where SimAI's rules are not the cluster's physics.

    Raises
    ------
    InvalidInstance
        On a bad option (a ``DP_EP`` overlap, ``pp_overlap`` 0, ...) or a GPU count the
        parallelism does not divide.
    """
    if not isinstance(workload, SimAIWorkload):
        fail("workload", getattr(workload, "name", workload),
             "is not a traffic workload (SimAI/AICB)")
    if not isinstance(cluster, SimAICluster):
        fail("cluster", cluster, "must be a SimAICluster")
    sizes = workload.group_sizes(gpus)
    gpus = int(gpus)
    overlaps = _simai_overlaps(overlap)
    pp_overlap = as_float("pp_overlap", pp_overlap, minimum=0.0, maximum=1.0)
    if pp_overlap == 0.0:
        fail("pp_overlap", pp_overlap, "SimAI's pipeline formula divides by -pp_o; give a value "
                                       "in (0, 1], or use the physical rules")
    eff = _efficiency(efficiency)
    tp, ep = workload.tp, workload.ep
    notes: list = []
    comm = {g: 0.0 for g in REPORT_GROUPS}
    exposed = {g: 0.0 for g in REPORT_GROUPS}
    used: set = set()
    bubble_s = 0.0
    unit = workload.time_unit_s
    for r, layer in enumerate(workload.layers):
        where = f"row {r + 1}"
        parts = {p: _group_of(layer.comm[i], p, f"{where} {p}_comm") for i, p in enumerate(PHASES)}
        seconds = {}
        for i, phase in enumerate(PHASES):
            op, group = parts[phase]
            if phase == "wg":
                members = sizes["DP_EP"] if group == "DP_EP" else sizes["DP"]
            else:
                members = sizes["EP"] if group == "EP" else sizes["TP"]
            if op is None:
                seconds[phase] = 0.0
                continue
            nbytes = layer.comm_bytes[i]
            seconds[phase] = simai_collective_s(op, group if group != "NONE" else "TP", members,
                                                nbytes, tp=tp, ep=ep, cluster=cluster,
                                                efficiency=eff, notes=notes)
            if nbytes > 0 and group != "NONE":
                used.add(group)
        wg_bucket = "DP_EP" if parts["wg"][1] == "DP_EP" else "DP"
        fwd_bucket = "EP" if parts["fwd"][1] == "EP" else "TP"
        comm[wg_bucket] += seconds["wg"]
        exposed[wg_bucket] += seconds["wg"] * (1.0 - overlaps["DP"])
        comm[fwd_bucket] += seconds["fwd"] + seconds["ig"]
        exposed[fwd_bucket] += (seconds["fwd"] + seconds["ig"]) * (1.0 - overlaps[fwd_bucket])
        if layer.name != "embedding_layer":
            bubble_s += sum(layer.compute) * unit + seconds["fwd"] + seconds["ig"]
    ticks = workload.compute_ticks()
    compute_s = (ticks["fwd"] + ticks["ig"] + ticks["wg"]) * unit
    pp_s = 2 * workload.vpp * workload.ga * workload.pp_comm_bytes / GIB_BYTES / pp_overlap
    exposed["PP"] = comm["PP"] = pp_s * (1.0 - pp_overlap)   # SimAI reports only this
    if pp_s > 0 and pp_overlap < 1.0:
        notes.append("SimAI's pipeline time reads no bandwidth: 2*VPP*GA*pp_comm / (1 GiB/s) "
                     "/ pp_overlap * (1 - pp_overlap)")
    bubble_s *= (workload.pp - 1) / (workload.ga * workload.vpp)
    _physics_notes(workload, sizes, used, cluster, notes)
    exposed_s = sum(exposed.values())
    total = compute_s + exposed_s + bubble_s
    if not math.isfinite(total):
        raise InfeasibleInstance("simai rules: a collective has no bandwidth")
    fabric = simai_cluster(cluster.nvlink_GBps, cluster.nic_GBps, cluster.nics_per_server,
                           cluster.gpus_per_server)
    return SimAIIterationTime(total, compute_s, exposed_s, bubble_s, exposed, comm, "serial",
                              gpus, fabric, workload, None, rules="simai",
                              notes=tuple(dict.fromkeys(notes)))
