"""The SimAI MoE workload on every fabric (SimAI-Analytical's composition).

SimAI's example workload (``simai-moe``: the AICB file ``workload_analytical.txt``,
shipped with fabricopt; TP 2 / EP 16 / PP 12 / VPP 8 / GA 24) priced as SimAI-Analytical
does — compute + exposed communication per group + pipeline bubble, serial collectives,
SimAI's efficiency tables, overlap 0, ``-pp_o 1`` — by
:func:`fabricopt.fabrics.simai.comparison.compare_simai`, the same as ``fabricopt compare
simai-moe --gpus N --fabrics NAME --switches 24 --max-hops N/2 --json``. Three parts:

1. *Table*: every fabric at SimAI's NIC bandwidth per GPU (48.5 GB/s, GB = 2^30 bytes:
   416.6 Gbps) at 384, 768 and 1536 GPUs (quick: 384), one task per (GPUs, fabric);
   the 384-GPU Elect-Cluster row beside SimAI-Analytical 1.7's own output.
2. *Sweep and figure*: iteration time against per-GPU bandwidth (416.6 Gbps x 1, 2, 4, 8,
   16; quick: x 1, 4) at 384 GPUs, one task per fabric.
3. *Traffic*: the workload read and turned into one iteration's GPU-pair traffic at each
   GPU count and at all 9,216 GPUs, with the communication time of that traffic alone
   (``Fabric.comm_time``) on four fabrics.

Assumptions (see :mod:`fabricopt.fabrics.simai.comparison`): SiP-OCS with 24 switches
(the MoE job has 18-20 peers per GPU; SiP-ML's 16 cannot serve it); SiP-Ring with
unlimited reach (``max_hops`` N/2: the rank layout puts pipeline stages DP*TP ranks
apart); direct-connect degree 4; SimAI's efficiency factors on every fabric.

References
----------
.. [1] SimAI-Analytical 1.7 on the example workload (``-g 384 -nv 360 -nic 48.5 -n_p_s 8
   -g_p_s 8``), as recorded in :mod:`fabricopt.fabrics.simai.iteration`: compute 4.5428 s,
   exposed communication 1.5874 s, bubble 0.3460 s, iteration 6.4762 s.
"""

from __future__ import annotations

from pathlib import Path

from fabricopt.fabrics.simai.iteration import gib_per_s_to_gbps
from fabricopt.bench.metrics import relative_change
from fabricopt.bench.tasks import TaskSpec, register_task
from fabricopt.bench.experiments import Experiment, markdown_table, register_experiment, write_csv

__all__ = ["FABRICS", "NIC_GBPS", "SIMAI_ANALYTICAL_384"]

FABRICS = ("elect-cluster", "elect-flat", "fat-tree", "sip-ocs", "sip-ring", "direct-connect")
WORKLOAD = "simai-moe"
SWITCHES, DEGREE = 24, 4

#: SimAI's NIC bandwidth per GPU, 48.5 GiB/s, in Gbps (416.6).
NIC_GBPS = gib_per_s_to_gbps(48.5)

#: SimAI-Analytical 1.7's breakdown of the example workload on 384 GPUs (reference [1]).
SIMAI_ANALYTICAL_384 = {"compute_s": 4.5428, "exposed_comm_s": 1.5874, "bubble_s": 0.3460,
                        "iteration_s": 6.4762}

_FULL = {"gpus": (384, 768, 1536), "sweep": (1, 2, 4, 8, 16), "fabrics": FABRICS}
_QUICK = {"gpus": (384,), "sweep": (1, 4),
          "fabrics": ("elect-cluster", "elect-flat", "sip-ocs", "sip-ring")}
_SWEEP_GPUS = 384
# The fabrics the bare traffic is priced on (Gbps per GPU; Elect-Cluster: in/out of server).
_TRAFFIC_FABRICS = ("Elect-Flat 400", "Fat-tree 400, 2:1", "Elect-Cluster 4800/3200",
                    "SiP-OCS 32 x 12.5")


@register_task("simai.compare")
def compare_task(gpus: int, fabric: str, bandwidths: list) -> dict:
    """``compare_simai`` of the MoE workload on one fabric: its rows, and the CPU
    seconds pricing took."""
    import time
    from dataclasses import asdict

    from fabricopt.fabrics.simai.comparison import compare_simai

    start = time.process_time()
    rows = compare_simai(WORKLOAD, gpus, bandwidths, [fabric], switches=SWITCHES,
                         degree=DEGREE, max_hops=gpus // 2)
    cpu_s = time.process_time() - start
    return {"value": cpu_s, "cpu_s": cpu_s, "rows": [asdict(r) for r in rows]}


@register_task("simai.traffic")
def traffic_task(gpus: int | None) -> dict:
    """Read the workload and build one iteration's traffic at ``gpus`` (None: all its
    GPUs); with a GPU count, the communication time of that traffic on four fabrics."""
    import time

    from fabricopt.fabrics.models import ElectCluster, ElectFlat, FatTree, SipOcs
    from fabricopt.fabrics.resolve import SIMAI_EXAMPLES, simai_data_path
    from fabricopt.fabrics.simai.workload import read_simai

    start = time.process_time()
    w = read_simai(simai_data_path(SIMAI_EXAMPLES[WORKLOAD]))
    read_s = time.process_time() - start
    start = time.process_time()
    traffic = w.traffic(gpus or w.all_gpus)
    build_s = time.process_time() - start
    out = {"value": build_s, "read_cpu_s": read_s, "build_cpu_s": build_s,
           "gpus": gpus or w.all_gpus, "pairs": len(traffic.bytes),
           "total_bytes": traffic.total_bytes,
           "max_sent_bytes": float(traffic.sent_bytes().max()),
           "workload": {"layers": len(w.layers), "tp": w.tp, "ep": w.ep, "pp": w.pp,
                        "vpp": w.vpp, "ga": w.ga, "compute_s": w.compute_s}, "comm_s": {}}
    if gpus is not None:
        dense = traffic.to_traffic()
        fabrics = (ElectFlat(400.0), FatTree(gpus, 400.0, 2.0), ElectCluster(4800.0, 3200.0),
                   SipOcs(32, 400.0))
        for label, fabric in zip(_TRAFFIC_FABRICS, fabrics):
            try:
                out["comm_s"][label] = fabric.comm_time(dense)
            except Exception as exc:  # an infeasible configuration is a result here
                out["comm_s"][label] = f"{type(exc).__name__}: {str(exc)[:60]}"
    return out


def _plan(suite: str, quick: bool) -> list:
    v = _QUICK if quick else _FULL
    specs = [TaskSpec(suite, f"simai/table/{gpus}/{fabric}", "simai.compare",
                      {"gpus": gpus, "fabric": fabric, "bandwidths": [NIC_GBPS]},
                      method=fabric, time_limit_s=1800.0)
             for gpus in v["gpus"] for fabric in v["fabrics"]]
    specs += [TaskSpec(suite, f"simai/sweep/{_SWEEP_GPUS}/{fabric}", "simai.compare",
                       {"gpus": _SWEEP_GPUS, "fabric": fabric,
                        "bandwidths": [NIC_GBPS * m for m in v["sweep"]]},
                       method=fabric, time_limit_s=1800.0) for fabric in v["fabrics"]]
    specs += [TaskSpec(suite, f"simai/traffic/{gpus or 'all'}", "simai.traffic",
                       {"gpus": gpus}, method="traffic", time_limit_s=600.0)
              for gpus in (*v["gpus"], None)]
    return specs


def _compare_rows(rows, part: str):
    from fabricopt.fabrics.simai.comparison import SimAIRow

    out = []
    for r in rows:
        if r["kind"] == "task:simai.compare" and r["status"] == "feasible" and \
                r["instance_id"].startswith(f"simai/{part}/"):
            out += [(SimAIRow(**d), r["info"]["cpu_s"] / len(r["info"]["rows"]))
                    for d in r["info"]["rows"]]
    order = {f: i for i, f in enumerate(FABRICS)}
    return sorted(out, key=lambda x: (x[0].gpus, order.get(x[0].fabric, 99), x[0].gbps))


def _reference_lines(table) -> list[str]:
    ours = next((row for row, _ in table if row.gpus == 384 and row.fabric == "elect-cluster"),
                None)
    if ours is None or ours.iteration_s is None:
        return []
    body = [[key.removesuffix("_s").replace("_", " "), f"{ref:.4f}",
             f"{getattr(ours, key):.4f}", f"{round(relative_change(getattr(ours, key), ref), 6) + 0.0:+.2%}"]
            for key, ref in SIMAI_ANALYTICAL_384.items()]
    return ["", "The 384-GPU Elect-Cluster row beside SimAI-Analytical 1.7's own output "
                "(`-g 384 -nv 360 -nic 48.5 -n_p_s 8 -g_p_s 8`; seconds):", "",
            markdown_table(["", "SimAI-Analytical 1.7", "fabricopt", "difference"], body)]


def _render(rows: list[dict], folder: Path, quick: bool) -> str:
    from fabricopt.bench.plots import iteration_vs_bandwidth
    from fabricopt.fabrics.simai.comparison import simai_markdown_table, write_simai_csv

    lines = []
    table = _compare_rows(rows, "table")
    if table:
        write_simai_csv([r for r, _ in table], folder / "simai-table.csv")
        lines += [f"### Every fabric at {NIC_GBPS:.1f} Gbps per GPU", "",
                  simai_markdown_table([r for r, _ in table]), "",
                  "CPU seconds to price each point: " + ", ".join(
                      f"{r.fabric}@{r.gpus} {s:.1f}" for r, s in table) + "."]
        lines += _reference_lines(table)
    sweep = _compare_rows(rows, "sweep")
    if sweep:
        write_simai_csv([r for r, _ in sweep], folder / "simai-sweep.csv")
        title = f"simai-moe on {_SWEEP_GPUS} GPUs (SimAI-Analytical composition)"
        iteration_vs_bandwidth([r for r, _ in sweep], folder / "simai-sweep.png", title=title)
        gbps = sorted({r.gbps for r, _ in sweep})
        by = {(r.fabric, r.gbps): r for r, _ in sweep}
        body = [[f] + [None if by.get((f, g)) is None or by[(f, g)].iteration_s is None
                       else f"{by[(f, g)].iteration_s:.4g}" for g in gbps]
                for f in FABRICS if any((f, g) in by for g in gbps)]
        lines += ["", f"### Bandwidth sweep at {_SWEEP_GPUS} GPUs (iteration s)", "",
                  markdown_table(["fabric"] + [f"{g:.4g} Gbps" for g in gbps], body), "",
                  f"![{title}](simai-sweep.png)"]
    traffic = sorted((r["info"] for r in rows if r["kind"] == "task:simai.traffic"
                      and r["status"] == "feasible"), key=lambda i: i["gpus"])
    if traffic:
        w = traffic[0]["workload"]
        labels = list(_TRAFFIC_FABRICS)
        body = []
        for i in traffic:
            cells = [f"{v:.2f} s" if isinstance(v, float) else v
                     for v in (i["comm_s"].get(k) for k in labels)]
            body.append([i["gpus"], f"{i['build_cpu_s']:.3f}", f"{i['pairs']:,}",
                         f"{i['total_bytes'] / 1e12:.1f}", f"{i['max_sent_bytes'] / 1e9:.0f}",
                         *cells])
        header = ["GPUs", "traffic build CPU s", "GPU pairs", "TB sent per iteration",
                  "GB sent by the busiest GPU", *labels]
        write_csv(folder / "simai-traffic.csv", header, body)
        reads = [i["read_cpu_s"] for i in traffic]
        lines += ["", "### One iteration's traffic", "",
                  f"The AICB file: {w['layers']} layer rows, TP {w['tp']} / EP {w['ep']} / "
                  f"PP {w['pp']} / VPP {w['vpp']} / GA {w['ga']}; compute "
                  f"{w['compute_s']:.3f} s per iteration (1 tick = 1 ns); read in "
                  f"{min(reads):.2f}-{max(reads):.2f} CPU s. Communication time of the "
                  "iteration's traffic alone on four fabrics (`Fabric.comm_time`, no "
                  "compute, no SimAI composition):", "", markdown_table(header, body)]
    lines += ["", "Reading the rows (the model's structure, at equal per-GPU scale-out "
                  "bandwidth):", "",
              "- Only Elect-Cluster has an NVLink domain: TP's traffic is what the flat "
              "fabrics lose; PP is exposed as 0 everywhere (SimAI's default).",
              "- SiP-OCS is configured once for the job's whole traffic (18-20 peers per "
              "GPU, so 24 switches): a collective alone uses only its own pairs' circuits, "
              "which makes serial collectives slow.",
              "- SiP-Ring reconfigures per collective phase, but with the Megatron rank "
              "layout EP's all-to-all pairs span many ring segments, each lightpath taking "
              "a wavelength on every segment it crosses; direct-connect at degree 4 "
              "builds its topology from the job's groups and forwards EP's 16-way "
              "all-to-all over hosts.",
              "- Elect-Cluster stops improving once the scale-out bandwidth passes a GPU's "
              "own NVLink port (360 GB/s)."]
    lines += ["", "CPU seconds (`time.process_time`) on a shared machine. CSV: "
                  "`simai-table.csv`, `simai-sweep.csv`, `simai-traffic.csv`."]
    return "\n".join(lines)


register_experiment(Experiment(
    name="simai", version=2, title="SimAI workload: the MoE job on every fabric",
    summary="SimAI's example MoE workload (AICB) priced as SimAI-Analytical does on every "
            "fabric at 384/768/1536 GPUs, a bandwidth sweep with figure, its traffic",
    plan=_plan, render=_render))
