"""The measurements behind the ``placement`` experiment, each a task run
(:mod:`fabricopt.bench.tasks`) in its own process, so a killed experiment resumes
with ``--resume`` where it stopped.

- ``placement.solve``: one method on one generated instance, with options (the
  MILP-vs-heuristics gap table and the MILP's symmetry-breaking variants);
- ``placement.transformer``: ``balance`` and ``sipml`` on a Transformer-scale op graph
  (:func:`transformer_op_graph`), then ``sipml-ls`` within a budget (SiP-ML's speed target);
- ``placement.family``: ``sipml`` (ring search and full ring), ``sipml-ls`` and the
  degree-free ``unconstrained`` baseline on a named family of
  :data:`fabricopt.problems.placement.FAMILIES`;
- ``placement.scaling``: ``sipml``'s CPU time at 20,000 and 100,000 sub-ops;
- ``placement.kl``: every (k, l) candidate of :func:`fabricopt.fabrics.search_iteration_time`.

Times are CPU seconds of the task's process (``time.process_time`` through
:func:`.comparisons.cpu_timed`, the least of ``repeats``): the machine is shared and
wall time measures the other jobs too. Objectives, bounds and feasibility are those :func:`fabricopt.solve` scored; a task only
times calls and reads envelopes.
"""

from __future__ import annotations

from fabricopt.errors import SolverFailure

from collections import Counter

from fabricopt.problems.opgraph import OpGraph
from fabricopt.bench.tasks import register_task
from fabricopt.bench.experiments.comparisons import cpu_timed

__all__ = ["transformer_op_graph", "solve_task", "transformer_task", "family_task",
           "scaling_task", "kl_task"]


def transformer_op_graph(layers: int = 24, d_model: int = 1024, heads: int = 16,
                         seq: int = 512, batch: int = 64, gpu_tflops: float = 100.0,
                         gpu_tbytes_s: float = 1.5) -> OpGraph:
    """Forward and backward pass of a Transformer encoder stack as an op graph.

    Parameters
    ----------
    layers, d_model, heads, seq, batch : int
        The defaults are SiP-ML's Transformer (24 layers, d_model 1024, about 350 M
        parameters) at a local batch of 64 sequences of 512 tokens.
    gpu_tflops : float
        Matmul throughput, TFLOP/s.
    gpu_tbytes_s : float
        Memory bandwidth of element-wise ops, TB/s.

    Returns
    -------
    OpGraph
        ``12 * layers`` forward ops and as many backward ops.

    Notes
    -----
    Assumptions (ours): fp16 activations and weights; a matmul of F flops takes
    ``F / (gpu_tflops * 1e12)`` s and an element-wise op moving B bytes
    ``B / (gpu_tbytes_s * 1e12)`` s (an A100-like device at a realistic efficiency);
    each layer is LayerNorm, QKV projection, attention scores, softmax, scores x V,
    output projection, residual add, LayerNorm, FFN up (4 d), GELU, FFN down, residual
    add; an edge carries the producer's output activation; the backward op of each
    forward op costs twice its compute and reads the incoming gradient and the saved
    forward output.

    References
    ----------
    .. [1] M. Khani et al., "SiP-ML", SIGCOMM 2021, §4.1 (the Transformer workload).

    Examples
    --------
    >>> g = transformer_op_graph(layers=2)
    >>> len(g.ops), len(g.edges)
    (48, 73)
    """
    b, s, d = batch, seq, d_model
    act = 2.0 * b * s * d                      # one fp16 activation tensor, bytes
    att = 2.0 * b * heads * s * s              # fp16 attention scores

    def matmul(flops):
        return flops / (gpu_tflops * 1e12)

    def memory(nbytes):
        return nbytes / (gpu_tbytes_s * 1e12)

    # (name, compute_s, params_bytes, output bytes)
    layer = [("ln1", memory(2 * act), 4.0 * d, act),
             ("qkv", matmul(2 * b * s * d * 3 * d), 2.0 * 3 * d * d, 3 * act),
             ("scores", matmul(2 * b * s * s * d), 0.0, att),
             ("softmax", memory(2 * att), 0.0, att),
             ("attnv", matmul(2 * b * s * s * d), 0.0, act),
             ("proj", matmul(2 * b * s * d * d), 2.0 * d * d, act),
             ("res1", memory(3 * act), 0.0, act),
             ("ln2", memory(2 * act), 4.0 * d, act),
             ("ffn1", matmul(2 * b * s * d * 4 * d), 2.0 * 4 * d * d, 4 * act),
             ("gelu", memory(8 * act), 0.0, 4 * act),
             ("ffn2", matmul(2 * b * s * 4 * d * d), 2.0 * 4 * d * d, act),
             ("res2", memory(3 * act), 0.0, act)]
    ops, edges, forward = [], [], []
    prev = prev_out = None
    for i in range(layers):
        block_in = prev
        for name, compute_s, params, out in layer:
            op = f"L{i}.{name}"
            ops.append({"id": op, "compute_s": compute_s, "params_bytes": params})
            if prev is not None:
                edges.append({"src": prev, "dst": op, "bytes": prev_out})
            if name == "res1" and block_in is not None:
                edges.append({"src": block_in, "dst": op, "bytes": act})
            if name == "res2":
                edges.append({"src": f"L{i}.res1", "dst": op, "bytes": act})
            forward.append((op, compute_s, out))
            prev, prev_out = op, out
    for op, compute_s, out in reversed(forward):
        grad = f"{op}.grad"
        ops.append({"id": grad, "compute_s": 2 * compute_s})
        edges.append({"src": prev, "dst": grad, "bytes": prev_out})
        if prev != op:
            edges.append({"src": op, "dst": grad, "bytes": out})
        prev, prev_out = grad, out
    return OpGraph(ops, edges)


def _scored(result, what: str):
    """The envelope, or the run's error when ``solve`` refused the answer."""
    if result.status == "error" or result.objective is None:
        raise SolverFailure(f"{what}: status {result.status}: {result.info.get('message')}")
    return result


def _moves(info: dict) -> dict:
    return {k: info.get(k) for k in ("relocations", "relocated_ops", "ring_gpus")}


@register_task("placement.solve")
def solve_task(sizes: dict, seed: int, method: str, options: dict | None = None,
               time_limit_s: float | None = None, method_seed: int = 0) -> dict:
    """``solve(generate(seed, **sizes), method, **options)``: the envelope's objective,
    status, bound and runtime, and the CPU seconds of the whole ``solve`` call."""
    from fabricopt.methods import solve
    from fabricopt.problems.placement import generate

    instance = generate(seed, **sizes)
    result, cpu_s = cpu_timed(lambda: solve(instance, method, time_limit=time_limit_s,
                                            seed=method_seed, **(options or {})))
    _scored(result, f"{method} on seed {seed}")
    return {"value": result.objective, "status": result.status, "bound": result.bound,
            "bound_source": result.bound_source, "runtime_s": result.runtime_s,
            "cpu_s": cpu_s, "sub_ops": instance.size, "max_peers": instance.max_peers}


@register_task("placement.transformer")
def transformer_task(max_peers: int, gpus: int = 64, tau_s: float = 1e-5,
                     link_gbps: float = 400.0, layers: int = 24, repeats: int = 3,
                     ls_budget_s: float = 10.0) -> dict:
    """``balance`` and ``sipml`` CPU seconds on :func:`transformer_op_graph` on ``gpus``
    GPUs; the makespans ``solve`` scores for ``sipml``, ``sipml-ls`` (``ls_budget_s`` of
    wall clock) and ``unconstrained``, and the fast lower bound (``sipml``'s envelope)."""
    from fabricopt.methods import solve
    from fabricopt.algorithms.placement.sipml import balance, sipml

    graph = transformer_op_graph(layers=layers)
    instance, balance_cpu = cpu_timed(lambda: balance(
        graph, tau_s, gpus, max_peers=max_peers, link_gbps=link_gbps), repeats)
    _, sipml_cpu = cpu_timed(lambda: sipml(instance), repeats)
    ours = _scored(solve(instance, "sipml", bound_milp_s=0.0), "sipml")
    ls = _scored(solve(instance, "sipml-ls", time_limit=ls_budget_s, max_evals=10**9,
                       bound_milp_s=0.0), "sipml-ls")
    clique = _scored(solve(instance, "unconstrained", bound_milp_s=0.0), "unconstrained")
    return {"value": sipml_cpu, "ops": len(graph.ops), "edges": len(graph.edges),
            "sub_ops": instance.size, "deps": len(instance.deps), "gpus": gpus,
            "max_peers": max_peers, "balance_cpu_s": balance_cpu, "sipml_cpu_s": sipml_cpu,
            "sipml_s": ours.objective, "sipml_ls_s": ls.objective,
            "sipml_ls_runtime_s": ls.runtime_s, "sipml_ls_evals": ls.info.get("evals"),
            "unconstrained_s": clique.objective, "bound_s": ours.bound,
            "bound_source": ours.bound_source, **_moves(ours.info)}


@register_task("placement.family")
def family_task(family: str, seed: int, ls_evals: int, repeats: int = 1) -> dict:
    """On ``generate(seed, family=family)``: the makespans ``solve`` scores for
    ``unconstrained``, ``sipml`` (ring search), ``sipml`` on the full ring and
    ``sipml-ls`` (``max_evals=ls_evals``, seed 0); ``sipml``'s CPU seconds, its
    relocations, and the most ops the full ring puts on one GPU."""
    from fabricopt.methods import solve
    from fabricopt.algorithms.placement.sipml import sipml
    from fabricopt.problems.placement import generate

    instance = generate(seed, family=family)
    _, cpu_s = cpu_timed(lambda: sipml(instance), repeats)
    base = _scored(solve(instance, "unconstrained"), "unconstrained")
    ours = _scored(solve(instance, "sipml"), "sipml")
    ring = _scored(solve(instance, "sipml", rings="full"), "sipml full ring")
    ls = _scored(solve(instance, "sipml-ls", max_evals=ls_evals), "sipml-ls")
    held = max(Counter(ring.solution.gpu.values()).values())
    return {"value": ours.objective, "sub_ops": instance.size, "gpus": instance.gpus,
            "max_peers": instance.max_peers, "unconstrained_s": base.objective,
            "sipml_s": ours.objective, "full_ring_s": ring.objective,
            "sipml_ls_s": ls.objective, "ls_evals": ls_evals, "sipml_cpu_s": cpu_s,
            "full_ring_max_ops_per_gpu": held, **_moves(ours.info)}


@register_task("placement.scaling")
def scaling_task(ops: int, gpus: int = 64, max_peers: int = 15, seed: int = 0,
                 repeats: int = 3) -> dict:
    """``sipml``'s CPU seconds (ring search, and the full ring alone) on
    ``generate(seed, ops=ops, gpus=gpus, max_peers=max_peers)``, the instance's arrays
    built beforehand: the method alone."""
    from fabricopt.algorithms.placement.sipml import sipml
    from fabricopt.problems.placement import generate

    instance = generate(seed, ops=ops, gpus=gpus, max_peers=max_peers)
    instance.parents, instance.children, instance.compute_list   # cached arrays, untimed
    (_, info), cpu_s = cpu_timed(lambda: sipml(instance), repeats)
    _, full_cpu_s = cpu_timed(lambda: sipml(instance, rings="full"), repeats)
    return {"value": cpu_s, "sub_ops": instance.size, "gpus": gpus, "max_peers": max_peers,
            "sipml_cpu_s": cpu_s, "full_ring_cpu_s": full_cpu_s, **_moves(info)}


@register_task("placement.kl")
def kl_task(workload: str, fabric: str, gpus: int, max_k: int, gbps: float,
            switches: int = 16) -> dict:
    """Every candidate :func:`~fabricopt.fabrics.search_iteration_time` prices for
    ``workload`` on ``fabric`` (``make_fabric`` name) at ``gbps`` per GPU: the
    placement's own makespan, one GPU's serial time, the group estimate and the
    iteration time, and which one it keeps."""
    from fabricopt.fabrics import search_iteration_time
    from fabricopt.fabrics.comparison import make_fabric

    model = make_fabric(fabric, gbps, gpus, switches=switches)
    priced: list = []
    best = search_iteration_time(workload, model, gpus, max_k=max_k, priced=priced)
    candidates = []
    for t in priced:
        serial_s = sum(c for _, c in t.plan.ops)
        placed_s = t.plan.result.objective if t.plan.result is not None else serial_s
        candidates.append({"k": t.k, "l": t.l, "placed_s": placed_s, "serial_s": serial_s,
                           "mp_s": t.mp_s, "iteration_s": t.total_s,
                           "serial": bool(t.plan.serial), "best": t is best})
    return {"value": best.total_s, "label": model.label, "k": best.k, "l": best.l,
            "candidates": candidates}
