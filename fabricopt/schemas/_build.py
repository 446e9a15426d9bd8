"""Build the JSON Schemas (draft 2020-12) of every kind's instance and solution.

The shipped files beside this module are this builder's output: regenerate them with
``python -m fabricopt.schemas._build`` after changing a format, and a test fails if
they differ. A schema states the structure — fields, types, constant ranges — that a
JSON document must have; the validators in :mod:`fabricopt.problems` additionally
enforce rules across fields (a square matrix, known ids, an acyclic graph, bounds that
depend on other fields), which JSON Schema cannot express.
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["build_all", "write_all", "HERE"]

HERE = Path(__file__).resolve().parent
DRAFT = "https://json-schema.org/draft/2020-12/schema"


def _int(minimum=None, maximum=None, doc=""):
    s = {"type": "integer"}
    if minimum is not None:
        s["minimum"] = minimum
    if maximum is not None:
        s["maximum"] = maximum
    return _doc(s, doc)


def _num(minimum=None, positive=False, maximum=None, doc=""):
    s = {"type": "number"}
    if positive:
        s["exclusiveMinimum"] = 0
    elif minimum is not None:
        s["minimum"] = minimum
    if maximum is not None:
        s["maximum"] = maximum
    return _doc(s, doc)


def _doc(schema, doc):
    if doc:
        schema["description"] = doc
    return schema


def _id(doc=""):
    return _doc({"type": "string", "minLength": 1}, doc)


def _array(items, min_items=None, doc="", **extra):
    s = {"type": "array", "items": items, **extra}
    if min_items:
        s["minItems"] = min_items
    return _doc(s, doc)


def _object(properties, required=None, doc=""):
    s = {"type": "object", "properties": properties,
         "required": list(properties) if required is None else required,
         "additionalProperties": False}
    return _doc(s, doc)


def _map(values, doc=""):
    """An object keyed by ids (non-empty strings)."""
    return _doc({"type": "object", "propertyNames": {"minLength": 1},
                 "additionalProperties": values}, doc)


def _matrix(doc):
    return _array(_array(_num(minimum=0)), min_items=1,
                  doc=doc + " Square (N x N), entries >= 0 and finite, diagonal 0.")


def _instance(kind, properties, required=None, doc=""):
    props = {"problem": {"const": kind, "description": "The problem kind."}, **properties}
    req = ["problem"] + (list(properties) if required is None else required)
    return _top(f"{kind} instance", _object(props, req, doc))


def _top(title, schema):
    name = title.replace(" ", ".")
    return {"$schema": DRAFT, "$id": f"urn:fabricopt:schema:{name}", "title": title, **schema}


def _instances() -> dict:
    placement = _instance("placement", {
        "gpus": _int(1, doc="GPUs of the model-parallel group."),
        "max_peers": _int(1, doc="Distinct other GPUs a GPU may send to, and receive from."),
        "link_gbps": _num(positive=True, doc="Bandwidth of a GPU-to-GPU transfer, 10^9 bit/s."),
        "ops": _array(_object({"id": _id("Unique op id."),
                               "compute_s": _num(0, doc="Compute time, seconds."),
                               "group": _id("The original op this sub-op came from.")},
                              ["id", "compute_s"]), doc="Sub-ops; ids unique."),
        "deps": _array(_object({"src": _id("An op id."), "dst": _id("An op id."),
                                "bytes": _num(0, doc="Bytes sent from src to dst.")}),
                       doc="Dependencies between known ops; a DAG, one per ordered pair."),
    }, ["gpus", "max_peers", "link_gbps", "ops"],
        "SiP-ML degree-constrained model-parallel placement; minimize the makespan.")
    circuits = _instance("circuits", {
        "switches": _int(1, doc="Q optical circuit switches; each GPU has one port on each."),
        "circuit_gbps": _num(positive=True, doc="Bandwidth of one circuit, 10^9 bit/s."),
        "traffic_bytes": _matrix("Bytes GPU i sends to GPU j."),
    }, doc="SiP-OCS circuit assignment; minimize the longest transfer.")
    wavelengths = _instance("wavelengths", {
        "nodes": _int(2, doc="N nodes on the ring."),
        "wavelengths": _int(1, doc="W wavelengths per fiber; also transceivers per node."),
        "wavelength_gbps": _num(positive=True, doc="Bandwidth of one wavelength, 10^9 bit/s."),
        "max_hops": _int(1, doc="Longest lightpath in hops; at most nodes - 1."),
        "traffic_bytes": _matrix("Bytes node i sends to node j (N x N)."),
    }, doc="SiP-Ring wavelength scheduling; minimize the longest transfer.")
    topology = _instance("topology", {
        "servers": _int(2, doc="N servers."),
        "degree": _int(1, doc="Interfaces per server."),
        "link_gbps": _num(positive=True, doc="Bandwidth of one link in each direction, 10^9 bit/s."),
        "allreduce": _array(_object({
            "members": _array(_int(0), min_items=2, uniqueItems=True,
                              doc="Distinct servers of the group."),
            "bytes": _num(0, doc="Bytes each member all-reduces.")}),
            doc="AllReduce groups, carried by ring orders."),
        "traffic_bytes": _doc({"oneOf": [
            _matrix("Model-parallel bytes server i sends to server j (N x N)."),
            _object({"src": _array(_int(0), doc="Sending server of each pair."),
                     "dst": _array(_int(0), doc="Receiving server of each pair."),
                     "bytes": _array(_num(0), doc="Bytes src[k] sends to dst[k].")},
                    doc="The sparse form: only the pairs with traffic. Lists of one "
                        "length, src != dst, each ordered pair at most once.")]},
            "Model-parallel traffic: an N x N matrix or its non-zero pairs."),
    }, doc="TopoOpt direct-connect topology and routing; minimize the busiest link's time.")
    priorities = _instance("priorities", {
        "levels": _int(1, doc="K priority levels."),
        "jobs": _array(_object({"id": _id("Unique job id."),
                                "priority": _num(doc="Any finite number; higher is served first."),
                                "intensity": _num(0, doc="Weight of the job's out-edges.")}),
                       min_items=1, doc="Jobs; ids unique."),
        "contention": _array(_array(_id("A job id."), minItems=2, maxItems=2),
                             doc="Pairs of distinct jobs that share a link."),
    }, doc="Crux priority compression into K levels; maximize the DAG weight cut.")
    crux = _instance("crux", {
        "levels": _int(1, doc="K priority levels of the network."),
        "links": _map(_num(positive=True, doc="Capacity, 10^9 bit/s."),
                      "Link name -> capacity in Gbps."),
        "jobs": _array(_object({
            "id": _id("Unique job id."),
            "gpus": _int(1, doc="GPUs of the job (its weight in the utilization)."),
            "compute_s": _num(positive=True, doc="Compute per iteration, seconds."),
            "overlap": _num(0, maximum=1, doc="Fraction of compute done before flows start."),
            "flows": _array(_object({
                "bytes": _num(positive=True, doc="Bytes per iteration."),
                "paths": _array(_array(_id("A link name."), min_items=1, uniqueItems=True),
                                min_items=1, doc="Candidate paths, each a list of links.")}),
                doc="The job's flows per iteration.")}),
            min_items=1, doc="Jobs; ids unique."),
        "warmup_s": {"type": ["number", "null"], "minimum": 0,
                     "description": "Warm-up before measuring, seconds; null: 10 longest "
                                    "standalone iterations."},
        "window_s": {"type": ["number", "null"], "exclusiveMinimum": 0,
                     "description": "Measurement window, seconds; null: 50 longest "
                                    "standalone iterations."},
    }, ["levels", "links", "jobs"],
        "Crux end to end: a path per flow, priorities and levels; maximize GPU utilization.")
    return {"placement": placement, "circuits": circuits, "wavelengths": wavelengths,
            "topology": topology, "priorities": priorities, "crux": crux}


def _solutions() -> dict:
    def top(kind, properties, doc):
        return _top(f"{kind} solution", _object(properties, doc=doc))

    levels = _map(_int(0), "Job id -> level in 0..K-1; higher is served first.")
    path = _array(_int(0), min_items=2, doc="Servers, source first, destination last.")
    return {
        "placement": top("placement", {
            "gpu": _map(_int(0), "Op id -> GPU in 0..gpus-1."),
            "start_s": _map(_num(), "Op id -> start time, seconds.")},
            "A GPU and a start time for every op."),
        "circuits": top("circuits", {
            "configs": _array(_array({"type": ["integer", "null"], "minimum": 0}),
                              doc="configs[q][i] = j: a circuit i -> j on switch q; null = "
                                  "unused port. One row per switch, one entry per GPU.")},
            "One partial permutation per switch."),
        "wavelengths": top("wavelengths", {
            "lightpaths": _array(_object({
                "src": _int(0), "dst": _int(0), "dir": {"enum": ["cw", "ccw"]},
                "wavelength": _int(0, doc="In 0..W-1, the same on every segment.")}))},
            "The lightpaths of a wavelength schedule."),
        "topology": top("topology", {
            "links": _array(_array(_int(0), minItems=3, maxItems=3,
                                   prefixItems=[_int(0), _int(0), _int(1)]),
                            doc="Undirected links [i, j, count], i < j, count >= 1."),
            "rings": _array(_object({"group": _int(0, doc="Index into allreduce."),
                                     "order": path | {"description": "Cyclic order of the "
                                                      "group's members."},
                                     "share": _num(0, doc="Share of the group's bytes.")}),
                            doc="Ring orders; per group the shares sum to 1."),
            "routes": _array(_object({"src": _int(0), "dst": _int(0), "paths": _array(
                _object({"nodes": path, "fraction": _num(0)}), doc="Fractions sum to 1.")}),
                doc="A route for every pair with demand.")},
            "Links, AllReduce ring orders and routes."),
        "priorities": top("priorities", {"level": levels}, "A level for every job."),
        "crux": top("crux", {
            "path": _map(_array(_int(0)), "Job id -> a candidate-path index per flow."),
            "priority": _map(_num(), "Job id -> priority (any finite number)."),
            "level": levels},
            "A path per flow, a priority and a level per job."),
    }


def _envelope() -> dict:
    nullable = {"type": ["number", "null"]}
    return _top("result", _object({
        "problem": {"type": "string", "description": "The problem kind."},
        "method": {"type": "string", "description": "The method that ran."},
        "status": {"enum": ["optimal", "feasible", "infeasible", "no_solution", "error"]},
        "sense": {"enum": ["min", "max"]},
        "objective": nullable | {"description": "evaluate() of the solution; null without "
                                                "a feasible one."},
        "bound": nullable | {"description": "Best proven bound on the optimum."},
        "gap": {"type": ["number", "null"], "minimum": 0, "maximum": 1,
                "description": "|objective - bound| / max(|objective|, |bound|)."},
        "runtime_s": _num(0, doc="Wall-clock seconds of the method."),
        "limit": {"enum": ["none", "time", "work"],
                  "description": "Why the run stopped: it ran to its end, the time limit "
                                 "stopped it (or it ran past it), or a work budget ran out."},
        "bound_source": {"type": ["string", "null"],
                         "description": "The argument that gave bound ('port-load', "
                                        "'milp-dual', ...; 'optimal' for a certified "
                                        "optimum); null without a bound."},
        "solution": {"type": ["object", "null"],
                     "description": "The kind's solution, or null."},
        "info": {"type": "object", "description": "Details: message, nodes, solver, ..."},
    }, doc="The result envelope that fabricopt solve --json prints."))


def _compare() -> dict:
    """``fabricopt compare --json``: one array of rows, for both workload kinds."""
    seconds = {"type": ["number", "null"], "minimum": 0}
    common = {
        "workload": _id("The workload's name."),
        "gpus": _int(1, doc="GPUs of the job."),
        "fabric": _id("The fabric's name."),
        "gbps": _num(positive=True, doc="Per-GPU bandwidth of the sweep point (Gbps)."),
        "per_node_gbps": _num(0, doc="The fabric's bandwidth per GPU as built (Gbps)."),
        "iteration_s": seconds | {"description": "Iteration time (s); null when the fabric "
                                                 "cannot run the job (see note)."},
        "compute_s": seconds | {"description": "Compute time of one iteration (s)."},
        "cost_usd": _num(0, doc="The fabric's price for these GPUs (US dollars)."),
        "note": {"type": "string", "description": "Why a value is missing; empty if none."},
    }
    op_graph = _object(common | {
        "k": {"type": ["integer", "null"], "minimum": 1,
              "description": "Model-parallel degree of the fastest plan found."},
        "l": {"type": ["integer", "null"], "minimum": 1,
              "description": "Data-parallel degree (k * l = GPUs)."},
        "mp_s": seconds | {"description": "Critical path at the fabric's pair rates (s)."},
        "allreduce_s": seconds | {"description": "Data-parallel ring AllReduce (s)."},
        "fabric_s": seconds | {"description": "Time to deliver the iteration's traffic (s)."},
        "mp_peers": {"type": ["integer", "null"], "minimum": 0,
                     "description": "Most distinct GPUs one GPU of the plan exchanges "
                                    "model-parallel bytes with (0 without any)."},
    }, doc="A point of an op-graph workload (SiP-ML's k x l search).")
    traffic = _object(common | {
        "mode": {"enum": ["serial", "concurrent"],
                 "description": "Collectives one after another, or all at once."},
        "exposed_comm_s": seconds | {"description": "Communication not hidden by compute (s)."},
        "exposed_comm_by_group_s": {"type": ["object", "null"],
                                    "additionalProperties": {"type": "number", "minimum": 0},
                                    "description": "Exposed seconds per group (DP, DP_EP, TP, "
                                                   "EP, PP)."},
        "bubble_s": seconds | {"description": "Pipeline bubble (s)."},
        "rules": {"enum": ["physical", "simai"],
                  "description": "The pricing rules: the cluster's physics, or "
                                 "SimAI-Analytical's own (compare --rules)."},
    }, doc="A point of a traffic (AICB/SimAI) workload, SimAI-Analytical's composition.")
    op_graph["title"], traffic["title"] = "op-graph row", "traffic row"
    return _top("compare", _array({"oneOf": [op_graph, traffic]},
                                  doc="fabricopt compare --json: one object per fabric and "
                                      "bandwidth."))


def build_all() -> dict[str, dict]:
    """Every schema, keyed by its file name."""
    out = {f"{k}.instance.json": s for k, s in _instances().items()}
    out.update({f"{k}.solution.json": s for k, s in _solutions().items()})
    out["result.json"] = _envelope()
    out["compare.json"] = _compare()
    return out


def render(schema: dict) -> str:
    return json.dumps(schema, indent=2) + "\n"


def write_all(folder: Path = HERE) -> list[Path]:
    """Write every schema file into ``folder``; return their paths."""
    paths = []
    for name, schema in build_all().items():
        path = Path(folder) / name
        path.write_text(render(schema))
        paths.append(path)
    return paths


if __name__ == "__main__":
    for p in write_all():
        print(p)
