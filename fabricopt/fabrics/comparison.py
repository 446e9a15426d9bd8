"""Fabric comparisons: iteration time against per-GPU bandwidth, and $ cost.

:func:`compare` sweeps per-node bandwidth for one workload and GPU count over a set
of named fabrics (SiP-ML Fig. 5's shape), searching the best (k, l) at every point
(SiP-ML §4.2). Each point's best plan is a candidate at the next bandwidth, so a
point is never slower than the previous point's plan priced there. A curve can still
rise where that plan itself is priced slower at the higher bandwidth: a heuristic
configuration (SiP-Ring's ``mcf``), or the step's max-min fair sharing, which does not
know the critical path — on Elect-Cluster the GPU ports grow while each server's
bandwidth to the others stays fixed, and transfers that start sooner take the
server's bandwidth from a critical one (docs/tutorials/compare.rst, "Why a curve can
rise"). Such a point is reported as computed. The named
fabric ``fat-tree-cost-matched`` is the Fat-tree whose $ cost equals the
direct-connect fabric's at the same point (TopoOpt §5: "similar-cost Fat-tree").

References
----------
.. [1] M. Khani et al., "SiP-ML", SIGCOMM 2021, §4.3, Fig. 5 (N = 1024, B = 128 ... 8192 Gbps).
.. [2] W. Wang et al., "TopoOpt", NSDI 2023, §5 and App. G (cost-matched Fat-tree).
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import asdict, dataclass
from typing import Callable, Sequence

from fabricopt.errors import InfeasibleInstance, SolverUnavailable
from fabricopt.problems._validate import as_float, as_int, fail
from fabricopt.fabrics.iteration import DEFAULT_TAU_S, search_iteration_time
from fabricopt.fabrics.models import (DirectConnect, ElectCluster, ElectFlat, Fabric, FatTree,
                                      SipOcs, SipRing, cost_matched_fat_tree)
from fabricopt.fabrics.prices import DEFAULT_PRICES, Prices
from fabricopt.fabrics.workloads import A100_MEMORY_BYTES, DEFAULT_GPU_FLOPS

__all__ = ["FABRIC_NAMES", "SIPML_BANDWIDTHS", "COLUMN_LEGEND", "make_fabric", "Row", "compare",
           "markdown_table", "write_csv", "rows_json"]

#: SiP-ML Fig. 5: per-GPU bandwidth from 128 to 8192 Gbps.
SIPML_BANDWIDTHS = (128.0, 256.0, 512.0, 1024.0, 2048.0, 4096.0, 8192.0)


def _cost_matched(b, nodes, o):
    target = DirectConnect(o["degree"], b / o["degree"]).cost_usd(nodes, o["prices"])
    return cost_matched_fat_tree(target, nodes, prices=o["prices"])


_FABRICS: dict[str, Callable[[float, int, dict], Fabric]] = {
    "elect-flat": lambda b, n, o: ElectFlat(b),
    "elect-flat-half": lambda b, n, o: ElectFlat(b / 2),
    "elect-cluster-200": lambda b, n, o: ElectCluster(b, 200.0),
    "elect-cluster-400": lambda b, n, o: ElectCluster(b, 400.0),
    "fat-tree": lambda b, n, o: FatTree(n, b),
    "sip-ocs": lambda b, n, o: SipOcs(o["switches"], b),
    "sip-ring": lambda b, n, o: SipRing(max(1, round(b / 25.0))),
    "direct-connect": lambda b, n, o: DirectConnect(o["degree"], b / o["degree"]),
    "fat-tree-cost-matched": _cost_matched,
}
#: The fabric names :func:`make_fabric` knows.
FABRIC_NAMES = tuple(_FABRICS)


def make_fabric(name: str, per_node_gbps: float, nodes: int, *, switches: int = 16,
                degree: int = 4, prices: Prices = DEFAULT_PRICES) -> Fabric:
    """The fabric ``name`` at ``per_node_gbps`` for ``nodes`` endpoints.

    ``elect-flat-half`` is Elect-Flat at half the bandwidth (SiP-ML's "B vs B/2"
    claim); ``elect-cluster-200/400`` have 8 GPUs per server and 200/400 Gbps per server;
    ``sip-ocs`` has ``switches`` OCSs; ``sip-ring`` rounds to whole 25 Gbps wavelengths;
    ``direct-connect`` has ``degree`` links of ``per_node_gbps / degree``;
    ``fat-tree-cost-matched`` costs what that direct-connect fabric costs.

    Examples
    --------
    >>> make_fabric("sip-ring", 1000.0, 64).wavelengths
    40
    >>> make_fabric("token-ring", 1.0, 2)
    Traceback (most recent call last):
    ...
    fabricopt.errors.InvalidInstance: fabric = 'token-ring': unknown fabric (known: elect-flat, elect-flat-half, elect-cluster-200, elect-cluster-400, fat-tree, sip-ocs, sip-ring, direct-connect, fat-tree-cost-matched)
    """
    if name not in _FABRICS:
        fail("fabric", name, f"unknown fabric (known: {', '.join(_FABRICS)})")
    options = {"switches": as_int("switches", switches, minimum=1),
               "degree": as_int("degree", degree, minimum=1), "prices": prices}
    return _FABRICS[name](as_float("bandwidth", per_node_gbps, positive=True),
                          as_int("nodes", nodes, minimum=1), options)


@dataclass(frozen=True)
class Row:
    """One point of a comparison; ``iteration_s`` is None when nothing was feasible.

    ``mp_peers`` is the most distinct GPUs one GPU of the kept plan exchanges
    model-parallel bytes with (0 without model-parallel traffic; the degree search
    of SiP-OCS and SiP-Ring may keep fewer than the fabric's limit).
    """

    workload: str
    gpus: int
    fabric: str
    gbps: float
    per_node_gbps: float
    k: int | None
    l: int | None
    iteration_s: float | None
    compute_s: float | None
    mp_s: float | None
    allreduce_s: float | None
    fabric_s: float | None
    cost_usd: float
    note: str = ""
    mp_peers: int | None = None


def compare(workload, gpus: int, bandwidths: Sequence[float] = SIPML_BANDWIDTHS,
            fabrics: Sequence[str] = ("elect-flat", "elect-cluster-400", "sip-ocs", "sip-ring"),
            *, k_values=None, max_k: int | None = None, tau_s: float = DEFAULT_TAU_S,
            gpu_flops: float = DEFAULT_GPU_FLOPS, memory_bytes: float | None = A100_MEMORY_BYTES,
            switches: int = 16, degree: int = 4, prices: Prices = DEFAULT_PRICES, seed: int = 0,
            progress: Callable[[str], None] | None = None, **traffic_options) -> list[Row]:
    """Sweep per-node bandwidth for ``workload`` on ``gpus`` nodes over ``fabrics``.

    A traffic workload (SimAI/AICB file, path or example name) is handed to
    :func:`~fabricopt.fabrics.simai.comparison.compare_simai` with ``traffic_options``
    and returns its rows (:class:`~fabricopt.fabrics.simai.comparison.SimAIRow`).

    At each bandwidth, every fabric gets its best (k, l) by
    :func:`~fabricopt.fabrics.iteration.search_iteration_time` with its own placement
    method; then every fabric also prices the placements the others found there that
    keep within its degree limit, so Elect-Flat — no limit — prices every placement
    found. (It still is not always the fastest: its ports are shared max-min fairly,
    which does not know the critical path; see :mod:`~fabricopt.fabrics.flows`.)
    Placements are cached between fabrics that would compute the same one.

    Parameters
    ----------
    workload : str, Workload, SimAIWorkload or path
    gpus : int
        Nodes (GPUs, or servers modelled as one big GPU via ``gpu_flops``).
    bandwidths : sequence of float
        Per-node Gbps.
    fabrics : sequence of str
        Names from :data:`FABRIC_NAMES`.
    k_values, max_k
        Restrict the model-parallel degrees searched (``k_values=[1]``: pure data
        parallelism, which needs no placement method).
    tau_s, gpu_flops, memory_bytes, seed
        See :func:`~fabricopt.fabrics.iteration.iteration_time`.
    switches, degree, prices
        See :func:`make_fabric`.
    progress : callable, optional
        Called with a line per finished point, and while a point is searched with a
        line per (k, l) tried (a point of a large workload can take minutes).

    Returns
    -------
    list of Row
        One per fabric and bandwidth. A point with no feasible (k, l), or whose fabric
        needs a method not registered here, has ``iteration_s`` None and says why in
        ``note``.

    Examples
    --------
    >>> rows = compare("resnet50", 8, [100.0, 400.0], ["elect-flat"], k_values=[1])
    >>> [(r.gbps, r.k, r.l) for r in rows]
    [(100.0, 1, 8), (400.0, 1, 8)]
    >>> rows[1].iteration_s < rows[0].iteration_s
    True
    """
    from fabricopt.fabrics.resolve import (is_traffic_workload, reject_traffic_options,
                                           resolve_workload)
    from fabricopt.fabrics.simai.comparison import compare_simai

    workload = resolve_workload(workload)
    if is_traffic_workload(workload):
        return compare_simai(workload, gpus, bandwidths, fabrics, switches=switches,
                             degree=degree, prices=prices, progress=progress, **traffic_options)
    reject_traffic_options(workload, traffic_options)
    gpus = as_int("gpus", gpus, minimum=1)
    names = list(fabrics)
    for name in names:
        make_fabric(name, 1.0, gpus, switches=switches, degree=degree, prices=prices)
    cache: dict = {}
    rows: dict[str, list[Row]] = {name: [] for name in names}
    best_plan: dict = {name: None for name in names}
    search = dict(max_k=max_k, tau_s=tau_s, gpu_flops=gpu_flops, memory_bytes=memory_bytes,
                  seed=seed, plan_cache=cache)
    for gbps in sorted(as_float("bandwidth", b, positive=True) for b in bandwidths):
        fabric = {name: make_fabric(name, gbps, gpus, switches=switches, degree=degree,
                                    prices=prices) for name in names}
        # A placement is cached under its link estimate, and every fabric's per-node
        # bandwidth grows with the sweep's: one below all of this point's can never be
        # asked for again (a placement at 1,024 GPUs holds half a million sub-ops).
        floor = min(f.per_node_gbps for f in fabric.values())
        for key in [key for key in cache if key[1] > 1 and key[-1] < floor]:
            del cache[key]
        found: dict = {}
        priced: dict = {name: _PricedPlans() for name in names}
        placed: dict = {name: [] for name in names}
        for name in names:
            if isinstance(best_plan[name], SolverUnavailable):
                found[name] = best_plan[name]
                continue
            step = None if progress is None else (
                lambda line, name=name: progress(f"  {name} @ {gbps:g} Gbps: trying {line}"))
            try:
                found[name] = search_iteration_time(
                    workload, fabric[name], gpus, k_values=k_values, priced=priced[name],
                    placed=placed[name], prune=True,
                    extra_plans=[best_plan[name]] if best_plan[name] else [], progress=step,
                    **search)
            except (InfeasibleInstance, SolverUnavailable) as exc:
                found[name] = exc
        # Every fabric may use any placement found at this point that keeps within its
        # degree limit: Elect-Flat, with none, prices them all.
        pool = {id(p): p for ps in placed.values() for p in ps}
        pool.update((id(p), p) for ps in priced.values() for p in ps)
        for name in names:
            if isinstance(found[name], SolverUnavailable):
                continue
            seen = {id(p) for p in priced[name]} | {id(p) for p in placed[name]}
            extra = [p for i, p in pool.items() if i not in seen and p.fits(fabric[name])]
            if not extra:
                continue
            try:
                beat = math.inf if isinstance(found[name], Exception) else found[name].total_s
                t = search_iteration_time(workload, fabric[name], gpus, k_values=(),
                                          extra_plans=extra, prune=True, beat_s=beat, **search)
            except InfeasibleInstance:
                continue
            if isinstance(found[name], Exception) or t.total_s < found[name].total_s:
                found[name] = t
        for name in names:
            f, t = fabric[name], found[name]
            cost = f.cost_usd(gpus, prices)
            if isinstance(t, Exception):
                unavailable = isinstance(t, SolverUnavailable)
                if unavailable:
                    best_plan[name] = t
                row = Row(workload.name, gpus, name, gbps, f.per_node_gbps, None, None, None,
                          None, None, None, None, cost,
                          f"{'unavailable' if unavailable else 'infeasible'}: {t}")
            else:
                best_plan[name] = t.plan
                row = Row(workload.name, gpus, name, gbps, f.per_node_gbps, t.k, t.l,
                          t.total_s, t.compute_s, t.mp_s, t.allreduce_s, t.fabric_s, cost,
                          mp_peers=t.plan.peers())
            rows[name].append(row)
            if progress is not None:
                progress(f"{name} @ {gbps:g} Gbps: " + (
                    f"{row.iteration_s * 1e3:.3f} ms (k={row.k}, l={row.l})"
                    if row.iteration_s is not None else row.note))
    return [row for name in names for row in rows[name]]


class _PricedPlans(list):
    """The ``priced`` list of a search that keeps each priced iteration's plan (a
    one-GPU fallback's included) and drops the rest: an iteration holds its fabric's
    allocation, N x N arrays that at 4,096 GPUs take hundreds of MB each."""

    def append(self, iteration) -> None:
        super().append(iteration.plan)


def _fmt(x, scale=1.0, digits=4):
    return "-" if x is None else f"{x * scale:.{digits}g}"


#: What each column of :func:`markdown_table` means (printed under it with ``legend``).
COLUMN_LEGEND = """\
Columns: Gbps/GPU = the fabric's bandwidth per GPU as built (sip-ring rounds to whole
25 Gbps wavelengths); k, l = the model-parallel and data-parallel degrees of the
fastest plan found (k*l = GPUs); iteration ms = max(MP ms + AllReduce ms, fabric ms);
compute ms = the placed step's critical path with infinitely fast links; MP ms = that
critical path at the fabric's pair rates; AllReduce ms = the data-parallel
ring-AllReduce at the rings' pair rates (0 when l = 1); fabric ms = the time the
fabric needs to deliver the iteration's whole traffic; cost $K = the fabric's price
for these GPUs (fabricopt.fabrics.prices). '-' = no feasible (k, l); see the notes."""


def markdown_table(rows: Sequence[Row], legend: bool = False) -> str:
    """The rows as a markdown table (times in ms, cost in $K); ``legend`` appends
    :data:`COLUMN_LEGEND`.

    Examples
    --------
    >>> print(markdown_table([Row("w", 2, "f", 1.0, 1.0, 1, 2, 1e-3, 1e-3, 1e-3, 0.0, 0.0, 1e3)]))
    | workload | GPUs | fabric | Gbps/GPU | k | l | iteration ms | compute ms | MP ms | AllReduce ms | fabric ms | cost $K |
    |---|---|---|---|---|---|---|---|---|---|---|---|
    | w | 2 | f | 1 | 1 | 2 | 1 | 1 | 1 | 0 | 0 | 1 |
    """
    head = ("| workload | GPUs | fabric | Gbps/GPU | k | l | iteration ms | compute ms | MP ms "
            "| AllReduce ms | fabric ms | cost $K |")
    lines = [head, "|" + "---|" * 12]
    for r in rows:
        cells = [r.workload, str(r.gpus), r.fabric, _fmt(r.per_node_gbps),
                 "-" if r.k is None else str(r.k), "-" if r.l is None else str(r.l),
                 _fmt(r.iteration_s, 1e3), _fmt(r.compute_s, 1e3), _fmt(r.mp_s, 1e3),
                 _fmt(r.allreduce_s, 1e3), _fmt(r.fabric_s, 1e3), _fmt(r.cost_usd, 1e-3)]
        lines.append("| " + " | ".join(cells) + " |")
    notes = list(dict.fromkeys(f"{r.fabric}: {r.note}" for r in rows if r.note))
    lines += [""] + [f"- {n}" for n in notes] if notes else []
    return "\n".join(lines + (["", COLUMN_LEGEND] if legend else []))


def write_csv(rows: Sequence[Row], path) -> None:
    """All fields of the rows, one line each."""
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(Row.__dataclass_fields__))
        writer.writeheader()
        for r in rows:
            writer.writerow(asdict(r))


def rows_json(rows: Sequence[Row]) -> str:
    """The rows as a JSON array, one object per row with every field: what
    ``fabricopt compare --json`` prints (schema: ``fabricopt schema compare``).

    Examples
    --------
    >>> import json
    >>> row = Row("w", 2, "f", 1.0, 1.0, 1, 2, 1e-3, 1e-3, 1e-3, 0.0, 0.0, 1e3)
    >>> json.loads(rows_json([row]))[0]["iteration_s"]
    0.001
    """
    return json.dumps([asdict(r) for r in rows], indent=2)
