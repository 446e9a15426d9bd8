"""TopoOpt §5: a direct-connect fabric built by TopoOpt against the Fat-tree of the same
$ cost and an ideal switch.

``topoopt`` (:mod:`~fabricopt.bench.experiments.topoopt_artifact`) runs the artifact's
setup. ``topoopt-comm-bound``, here, is a sensitivity study in a communication-bound
regime: global batches of 1,024-8,192 (far below the artifact's 8,192-131,072), every
fabric choosing k x l (model x data parallelism), over per-server bandwidth, on 128
servers of 4 GPUs (each server modelled as one 4x GPU, as TopoOpt's ``--big-gpu``).

The direct-connect fabric has degree 4 (links of ``B / 4``); its topology and routes
come from the ``topology`` kind's ``topoopt`` method. The claim set beside the figures:
direct-connect reaches up to 3.4x the speed of a similar-cost Fat-tree (TopoOpt §5.2).

References
----------
.. [1] W. Wang et al., "TopoOpt: Co-optimizing Network Topology and Parallelization
   Strategy for Distributed Training Jobs", NSDI 2023, §5.1-§5.2, Fig. 12, App. G
   (cost model of the similar-cost Fat-tree).
"""

from __future__ import annotations

from pathlib import Path

from fabricopt.bench.metrics import ratio
from fabricopt.bench.experiments import Experiment, markdown_table, register_experiment, write_csv
from fabricopt.bench.experiments.fabric_curves import curve_points, curve_spec, figure_lines

__all__ = ["FABRICS", "WORKLOADS"]

FABRICS = ("direct-connect", "fat-tree-cost-matched", "elect-flat")
WORKLOADS = ("vgg16", "resnet50", "bert-large", "dlrm")
LABELS = {"direct-connect": "TopoOpt (direct-connect)",
          "fat-tree-cost-matched": "Fat-tree, same cost", "elect-flat": "ideal switch"}

# (servers, bandwidths per server, workloads, largest model-parallel degree) per variant.
_FULL = (128, (100.0, 200.0, 400.0, 800.0), WORKLOADS, None)
_QUICK = (32, (100.0, 400.0), ("resnet50", "dlrm"), 4)


def _plan(suite: str, quick: bool) -> list:
    servers, bandwidths, workloads, max_k = _QUICK if quick else _FULL
    return [curve_spec(suite, "topoopt", w, servers, bandwidths, FABRICS, max_k=max_k,
                       gpus_per_node=4, degree=4) for w in workloads]


def _render(rows: list[dict], folder: Path, quick: bool) -> str:
    curves = curve_points(rows)
    header = ["workload", "Gbps per server", "direct-connect (ms)", "cost ($K)",
              "Fat-tree same cost (ms)", "its Gbps per server", "ideal switch (ms)",
              "Fat-tree / direct-connect", "k x l (direct-connect)"]
    body = []
    speedups = []
    for workload in sorted(curves):
        points = curves[workload]
        for b in sorted({g for (_, g) in points}):
            dc, ft, ideal = (points.get((f, b)) for f in FABRICS)
            r = ratio(ft and ft["iteration_s"], dc and dc["iteration_s"])
            if r is not None:
                speedups.append(r)

            def ms(p):
                return None if p is None or p["iteration_s"] is None else \
                    f"{p['iteration_s'] * 1e3:.3g}"

            body.append([workload, f"{b:g}", ms(dc), None if dc is None else
                         f"{dc['cost_usd'] / 1e3:.0f}", ms(ft),
                         None if ft is None else f"{ft['per_node_gbps']:.0f}", ms(ideal),
                         None if r is None else f"{r:.2f}",
                         None if dc is None or dc["k"] is None else f"{dc['k']} x {dc['l']}"])
    write_csv(folder / "topoopt-comm-bound.csv", header, body)
    lines = ["A sensitivity study, not the paper's setup: these global batches make the "
             "models communication-bound (`fabricopt reproduce topoopt` runs the artifact's).",
             "", markdown_table(header, body), ""]
    if speedups:
        lines.append(f"- Direct-connect against the same-cost Fat-tree: {min(speedups):.2f}x "
                     f"to {max(speedups):.2f}x (TopoOpt §5.2: up to 3.4x).")
    lines += figure_lines(curves, FABRICS, folder, "topoopt-comm-bound",
                          "TopoOpt sensitivity (small batches): iteration time vs per-server bandwidth", LABELS,
                          xlabel="per-server bandwidth (Gbps)")
    return "\n".join(lines)


register_experiment(Experiment(
    name="topoopt-comm-bound", version=1,
    title="TopoOpt sensitivity: a communication-bound regime (small global batches)",
    summary="VGG-16 / ResNet-50 / BERT-large / DLRM on 128 servers at global batches of "
            "1,024-8,192: direct-connect, cost-matched Fat-tree, ideal switch (100-800 Gbps)",
    plan=_plan, render=_render, paper="TopoOpt, NSDI 2023, §5.2, Fig. 12"))
