"""Fabric comparisons of a traffic (SimAI/AICB) workload: the iteration breakdown per fabric.

:func:`compare_simai` prices one traffic workload on ``gpus`` GPUs of every named
fabric at every per-GPU bandwidth, with
:func:`~fabricopt.fabrics.simai.iteration.simai_iteration_time`. The fabrics and what
they assume (each at per-GPU bandwidth B):

- ``elect-cluster``: SimAI-Analytical's cluster (:func:`simai_cluster`): each GPU has
  ``nvlink_GBps`` inside its server of ``gpus_per_server``; the server's NICs give B
  per GPU on a full-bisection network. At B = ``nics_per_server * nic_GBps /
  gpus_per_server`` (the default, one point) it is SimAI's preset.
- ``elect-flat``: an ideal full-bisection switch, B per GPU for every byte — TP
  included: no separate NVLink domain (as in SiP-ML's comparisons).
- ``fat-tree``: a full-bisection three-tier Fat-tree with B host links, fluid ECMP.
- ``sip-ocs``: ``switches`` optical circuit switches, B / switches per circuit,
  circuits chosen by ``circuits``/``exact`` once for the job's whole traffic (SiP-ML
  §3.3: an OCS reconfigures in 10 ms, and the example workload changes collective
  phase 1,153 times an iteration — 11.5 s of reconfiguration against its 6.5 s
  iteration on SimAI's cluster — so the paper's once-per-job is kept). A GPU needs a
  port for each peer: by default (``switches=None``) the fabric has SiP-ML's 16
  switches, or as many as the job's busiest GPU has peers if that is more (the row's
  note says so); fewer cannot serve the job, and the error names ``switches``.
- ``sip-ring``: B / 25 Gbps wavelengths per GPU on SiP-ML's fiber ring, reconfigured
  per collective phase (its microrings retune in 25 us, SiP-ML §3.1;
  :class:`~fabricopt.fabrics.simai.iteration.PerPhaseDelivery`: an all-to-all in
  ``n - 1`` rounds, a traffic too dense for the wavelengths in rounds by sender, one
  retuning per round), lightpaths of at most ``max_hops`` hops: by default (``None``)
  SiP-ML's 16, or the job's farthest pair if that is farther (the Megatron rank layout
  puts pipeline stages DP*TP ranks apart; the row's note says so).
- ``direct-connect``: TopoOpt's fabric, ``degree`` links of B / degree per GPU, topology
  and routes from ``topology``/``topoopt`` once for the job from its real collective
  groups (every ring collective a mutable AllReduce group), host forwarding.

SimAI's efficiency tables (``efficiency="simai"``, the default) apply on every fabric,
optical ones included: they measure NCCL's software on each message size and group
shape, and the what-if changes the fabric, not the software; ``efficiency="none"``
prices every collective at its fabric's nominal rate.
- the other names of :data:`~fabricopt.fabrics.comparison.FABRIC_NAMES` as there.

``rules`` chooses how ``elect-cluster`` is priced: ``physical`` (default) on the
fabric's links by :func:`~fabricopt.fabrics.simai.iteration.simai_iteration_time`,
``simai`` by SimAI-Analytical's own rules
(:func:`~fabricopt.fabrics.simai.analytical.simai_analytical_time`: its figures, and in
the row's ``note`` where its rules are not the cluster's physics). The two side by
side (group ``n`` members, ``g`` GPUs and ``K`` NICs of ``B`` per server):

==================  ==================================  ====================================
case                ``physical``                        ``simai``
==================  ==================================  ====================================
ring over servers   fluid: each GPU port (NVLink) and   ``min(NV*m/(m-1), k*B)`` (NCCL's
                    each server's NICs                  ring crosses m-1 NVLink hops a node)
all-to-all          fluid, NVLink-capped per GPU        ``k*B/m*(n-1)/((nodes-1)*m)``, no cap
EP over servers     its real servers                    ``TP*EP // g`` nodes (EP 12 = 1 node)
DP inside a server  NVLink                              NICs (one member per server)
small messages      10 us each                          10 ... 320 us at 2 ... 128 members,
                                                        0 at other sizes
ig collective       its own group                       the row's forward group
``_EP`` wg coll.    the EP group                        over all DP members
BROADCAST           a chain: the buffer on every hop    no communication
``DP=`` overlap     DP, and DP_EP unless given          DP and DP_EP (``-dp_o``)
==================  ==================================  ====================================

No fabric here has an NVLink domain but ``elect-cluster``: the what-if is the job's
whole traffic on the optical or flat fabric (SiP-ML's premise).
:func:`fabricopt.bench.plots.iteration_vs_bandwidth` draws the rows (iteration time
against per-GPU bandwidth).

Examples
--------
>>> rows = compare_simai("simai-micro", 8, fabrics=["elect-cluster", "elect-flat"])
>>> [(r.fabric, r.iteration_s > r.compute_s) for r in rows]
[('elect-cluster', True), ('elect-flat', True)]
"""

from __future__ import annotations

import csv
import json

import numpy as np
from dataclasses import asdict, dataclass, replace
from typing import Callable, Mapping, Sequence

from fabricopt.errors import InfeasibleInstance, SolverUnavailable
from fabricopt.problems._validate import as_float, as_int, fail
from fabricopt.fabrics.comparison import FABRIC_NAMES, _fmt, make_fabric
from fabricopt.fabrics.models import ElectCluster, Fabric, SipRing
from fabricopt.fabrics.prices import DEFAULT_PRICES, Prices
from fabricopt.fabrics.resolve import is_traffic_workload, resolve_workload
from fabricopt.fabrics.simai.analytical import SimAICluster, simai_analytical_time
from fabricopt.fabrics.simai.iteration import (GIB_BYTES, REPORT_GROUPS, gib_per_s_to_gbps,
                                               simai_iteration_time)

__all__ = ["SIMAI_FABRIC_NAMES", "RULES", "DEFAULT_SWITCHES", "DEFAULT_MAX_HOPS", "job_reach", "SimAIRow", "make_simai_fabric", "compare_simai",
           "simai_markdown_table", "write_simai_csv", "simai_rows_json"]

#: How ``elect-cluster`` is priced: on its links, or by SimAI-Analytical's rules.
RULES = ("physical", "simai")
#: Fabric names :func:`compare_simai` knows.
SIMAI_FABRIC_NAMES = ("elect-cluster",) + FABRIC_NAMES


@dataclass(frozen=True)
class SimAIRow:
    """One fabric at one bandwidth; ``iteration_s`` is None when it cannot carry the job."""

    workload: str
    gpus: int
    fabric: str
    gbps: float
    per_node_gbps: float
    mode: str
    compute_s: float | None
    exposed_comm_s: float | None
    exposed_comm_by_group_s: dict | None
    bubble_s: float | None
    iteration_s: float | None
    cost_usd: float
    note: str = ""
    rules: str = "physical"


#: SiP-ML's defaults (§4.1): OCSs of SiP-OCS, lightpath reach of SiP-Ring.
DEFAULT_SWITCHES = 16
DEFAULT_MAX_HOPS = 16


def job_reach(workload, gpus: int) -> tuple[int, int]:
    """What the job's traffic asks of an optical fabric on ``gpus`` GPUs: (the most
    peers one GPU sends to or receives from, the farthest pair in ring hops, the
    shorter way round).

    Examples
    --------
    >>> job_reach("simai-micro", 8)
    (1, 1)
    """
    traffic = resolve_workload(workload).traffic(gpus)
    if not len(traffic.src):
        return 0, 0
    peers = max(np.bincount(traffic.src).max(), np.bincount(traffic.dst).max())
    hops = np.minimum((traffic.dst - traffic.src) % gpus, (traffic.src - traffic.dst) % gpus)
    return int(peers), int(hops.max())


def make_simai_fabric(name: str, per_gpu_gbps: float, gpus: int, *, nvlink_GBps: float = 360.0,
                      gpus_per_server: int = 8, switches: int = DEFAULT_SWITCHES, degree: int = 4,
                      max_hops: int | None = None, prices: Prices = DEFAULT_PRICES) -> Fabric:
    """The fabric ``name`` with ``per_gpu_gbps`` per GPU for a ``gpus``-GPU job (module
    docstring); ``max_hops`` overrides SiP-Ring's reach.

    Examples
    --------
    >>> f = make_simai_fabric("elect-cluster", 416.6, 16)
    >>> round(f.inter_gbps, 1), f.gpus_per_server
    (3332.8, 8)
    """
    if name not in SIMAI_FABRIC_NAMES:
        fail("fabric", name, f"unknown fabric (known: {', '.join(SIMAI_FABRIC_NAMES)})")
    gbps = as_float("bandwidth", per_gpu_gbps, positive=True)
    if name == "elect-cluster":
        per_server = as_int("gpus_per_server", gpus_per_server, minimum=1)
        return ElectCluster(gib_per_s_to_gbps(as_float("nvlink_GBps", nvlink_GBps, positive=True)),
                            gbps * per_server, per_server)
    fabric = make_fabric(name, gbps, gpus, switches=switches, degree=degree, prices=prices)
    if isinstance(fabric, SipRing) and max_hops is not None:
        fabric = replace(fabric, max_hops=as_int("max_hops", max_hops, minimum=1))
    return fabric


def compare_simai(workload, gpus: int, bandwidths: Sequence[float] | None = None,
                  fabrics: Sequence[str] = ("elect-cluster",), *, nvlink_GBps: float = 360.0,
                  nic_GBps: float = 48.5, nics_per_server: int = 8, gpus_per_server: int = 8,
                  mode: str = "serial", overlap: Mapping | None = None,
                  pp_overlap: float = 1.0, efficiency="simai", switches: int | None = None,
                  degree: int = 4, max_hops: int | None = None, rules: str = "physical",
                  prices: Prices = DEFAULT_PRICES,
                  progress: Callable[[str], None] | None = None) -> list[SimAIRow]:
    """The iteration breakdown of a traffic workload on every fabric and bandwidth.

    Parameters
    ----------
    workload : SimAIWorkload, str or path
        See :func:`~fabricopt.fabrics.resolve.resolve_workload`.
    gpus : int
    bandwidths : sequence of float, optional
        Per-GPU Gbps; default one point, the per-GPU NIC bandwidth of the SimAI cluster
        (``nics_per_server * nic_GBps / gpus_per_server`` GB/s, GB = 2^30 bytes).
    fabrics : sequence of str
        Names from :data:`SIMAI_FABRIC_NAMES`.
    nvlink_GBps, nic_GBps, nics_per_server, gpus_per_server
        SimAI's cluster (its ``-nv``, ``-nic``, ``-n_p_s``, ``-g_p_s``).
    mode, overlap, pp_overlap, efficiency
        See :func:`~fabricopt.fabrics.simai.iteration.simai_iteration_time`.
    switches, degree, max_hops, prices
        See :func:`make_simai_fabric`; ``switches`` and ``max_hops`` None: SiP-ML's 16,
        raised to what the job needs (module docstring).
    rules : {"physical", "simai"}
        How ``elect-cluster`` is priced (module docstring); ``simai`` prices no other
        fabric and only in ``serial`` mode.
    progress : callable, optional
        Called with a line per finished point.

    Returns
    -------
    list of SimAIRow
        Per fabric, per bandwidth; a fabric that cannot carry the job (or whose method
        is not registered) has ``iteration_s`` None and the reason in ``note``.
    """
    workload = resolve_workload(workload)
    if not is_traffic_workload(workload):
        fail("workload", workload.name, "is an op-graph workload: compare it with "
                                        "fabrics.compare (the SiP-ML model)")
    gpus = as_int("gpus", gpus, minimum=1)
    workload.group_sizes(gpus)
    if rules not in RULES:
        fail("rules", rules, f"must be one of {', '.join(RULES)}")
    if rules == "simai":
        others = [f for f in fabrics if f != "elect-cluster"]
        if others:
            fail("rules", rules, f"prices only elect-cluster (SimAI's cluster); price "
                                 f"{others[0]} with the physical rules")
        if mode != "serial":
            fail("mode", mode, "the simai rules price collectives one after another "
                               "(serial); use the physical rules for concurrent")
    if bandwidths is None:
        bandwidths = [gib_per_s_to_gbps(as_float("nic_GBps", nic_GBps, positive=True)
                                        * as_int("nics_per_server", nics_per_server, minimum=1)
                                        / as_int("gpus_per_server", gpus_per_server, minimum=1))]
    switches, max_hops, defaults = _optical_defaults(workload, gpus, fabrics, switches, max_hops)
    options = dict(nvlink_GBps=nvlink_GBps, gpus_per_server=gpus_per_server, switches=switches,
                   degree=degree, max_hops=max_hops, prices=prices)
    names = list(fabrics)
    for name in names:
        make_simai_fabric(name, 1.0, gpus, **options)
    rows = []
    for name in names:
        for gbps in sorted(as_float("bandwidth", b, positive=True) for b in bandwidths):
            fabric = make_simai_fabric(name, gbps, gpus, **options)
            cost = fabric.cost_usd(gpus, prices)
            try:
                if rules == "simai":
                    # The NICs that give each GPU gbps: SimAI's -nic at -n_p_s NICs.
                    nic = gbps * 1e9 / 8 / GIB_BYTES * gpus_per_server / nics_per_server
                    t = simai_analytical_time(
                        workload, SimAICluster(nvlink_GBps, nic, nics_per_server,
                                               gpus_per_server), gpus,
                        overlap=overlap, pp_overlap=pp_overlap, efficiency=efficiency)
                else:
                    t = simai_iteration_time(workload, fabric, gpus, mode=mode,
                                             overlap=overlap, pp_overlap=pp_overlap,
                                             efficiency=efficiency,
                                             gpus_per_server=gpus_per_server)
            except (InfeasibleInstance, SolverUnavailable) as exc:
                kind = "unavailable" if isinstance(exc, SolverUnavailable) else "infeasible"
                row = SimAIRow(workload.name, gpus, name, gbps, fabric.per_node_gbps, mode,
                               None, None, None, None, None, cost,
                               f"{kind}: {exc}{_remedy(name, exc, workload, gpus)}")
            else:
                row = SimAIRow(workload.name, gpus, name, gbps, fabric.per_node_gbps, mode,
                               t.compute_s, t.exposed_comm_s, t.exposed_by_group_s, t.bubble_s,
                               t.iteration_s, cost,
                               "; ".join([n for f, n in defaults if f == name] + list(t.notes)),
                               t.rules)
            rows.append(row)
            if progress is not None:
                progress(f"{name} @ {gbps:g} Gbps: " + (
                    f"{row.iteration_s:.4f} s" if row.iteration_s is not None else row.note))
    return rows


def _optical_defaults(workload, gpus: int, fabrics, switches, max_hops):
    """SiP-ML's switches and reach, raised to what the job needs where not given; and
    (fabric, note) for each raise."""
    optical = {"sip-ocs", "sip-ring"} & set(fabrics)
    peers, hops = job_reach(workload, gpus) if optical and None in (switches, max_hops) \
        else (0, 0)
    picked, notes = {}, []
    for fabric, name, given, need, default, why in (
            ("sip-ocs", "switches", switches, peers, DEFAULT_SWITCHES,
             f"the job's busiest GPU has {peers} peers"),
            ("sip-ring", "max_hops", max_hops, hops, DEFAULT_MAX_HOPS,
             f"the job's farthest pair is {hops} hops apart")):
        picked[name] = given
        if given is None:
            picked[name] = max(default, need) if fabric in fabrics else default
            if picked[name] > default:
                notes.append((fabric, f"{name} = {need}: {why}, more than SiP-ML's {default} "
                                      f"(set {name} to choose)"))
    return picked["switches"], picked["max_hops"], notes


def _remedy(name: str, exc: Exception, workload, gpus: int) -> str:
    """The option that would let fabric ``name`` carry the job, as a note's tail."""
    if isinstance(exc, SolverUnavailable):
        return ""
    peers, hops = job_reach(workload, gpus)
    if name == "sip-ocs":
        return f"; set switches (--switches) to at least {peers}, the busiest GPU's peers"
    if name == "sip-ring" and "max_hops" in str(exc):
        return f"; set max_hops (--max-hops) to at least {hops}, the farthest pair's hops"
    if name == "sip-ring":
        return "; raise the bandwidth (--bandwidths): more wavelengths per segment"
    return ""


def simai_markdown_table(rows: Sequence[SimAIRow]) -> str:
    """The rows as a markdown table (seconds; cost in $K).

    Examples
    --------
    >>> r = SimAIRow("w", 8, "f", 1.0, 1.0, "serial", 1.0, 0.5, {"TP": 0.5}, 0.0, 1.5, 1e3)
    >>> print(simai_markdown_table([r]).splitlines()[2])
    | w | 8 | f | 1 | 1 | 0.5 | - | - | 0.5 | - | - | 0 | 1.5 | 1 |
    """
    head = ("| workload | GPUs | fabric | Gbps/GPU | compute s | exposed comm s | "
            + " | ".join(f"{g} s" for g in REPORT_GROUPS) + " | bubble s | iteration s | cost $K |")
    lines = [head, "|" + "---|" * (9 + len(REPORT_GROUPS))]
    for r in rows:
        groups = r.exposed_comm_by_group_s or {}
        cells = [r.workload, str(r.gpus), r.fabric, _fmt(r.gbps), _fmt(r.compute_s),
                 _fmt(r.exposed_comm_s), *(_fmt(groups.get(g)) for g in REPORT_GROUPS),
                 _fmt(r.bubble_s), _fmt(r.iteration_s), _fmt(r.cost_usd * 1e-3)]
        lines.append("| " + " | ".join(cells) + " |")
    notes = list(dict.fromkeys(f"{r.fabric} @ {r.gbps:g} Gbps: {r.note}" for r in rows if r.note))
    return "\n".join(lines + ([""] + [f"- {n}" for n in notes] if notes else []))


def simai_rows_json(rows: Sequence[SimAIRow]) -> str:
    """The rows as a JSON array (one object per row, every field)."""
    return json.dumps([asdict(r) for r in rows], indent=2)


def write_simai_csv(rows: Sequence[SimAIRow], path) -> None:
    """The rows as CSV, the per-group exposed times as ``exposed_<group>_s`` columns."""
    fields = [f for f in SimAIRow.__dataclass_fields__ if f != "exposed_comm_by_group_s"]
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(fields + [f"exposed_{g}_s" for g in REPORT_GROUPS])
        for r in rows:
            groups = r.exposed_comm_by_group_s or {}
            writer.writerow([getattr(r, k) for k in fields] + [groups.get(g) for g in REPORT_GROUPS])
