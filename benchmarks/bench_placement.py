"""Placement benchmarks: SiP-ML's speed target and the MILP-vs-heuristics gap table.

Run with fabricopt installed (``pip install -e .`` in a checkout)::

    python benchmarks/bench_placement.py            # both parts
    python benchmarks/bench_placement.py --speed    # Transformer-scale sipml / sipml-ls
    python benchmarks/bench_placement.py --gap      # 30 random 10-12-op instances
    python benchmarks/bench_placement.py --gap --symmetry   # also the MILP's variants
    python benchmarks/bench_placement.py --families  # sipml vs the degree-free baseline
    python benchmarks/bench_placement.py --scaling   # sipml at 20,000 and 100,000 sub-ops
    python benchmarks/bench_placement.py --kl        # the (k, l) search, every candidate

It prints markdown tables; BENCHMARKS.md (``## placement``) records them.

Speed (issue 3): ``sipml`` places a Transformer-scale balanced graph of at least 20,000
sub-ops on 64 GPUs in under 2 s; ``sipml-ls`` improves it within a 10 s budget.
Families (issue 14): on the generator's named families (``generate(family=...)``),
per seed, ``sipml`` and ``sipml-ls`` against ``unconstrained`` (the degree-free list
schedule on ``max_peers + 1`` GPUs), relocation counts and ``sipml``'s CPU time.
Gap: on 30 random 10-12-op instances ``milp`` proves optimality and every heuristic's
mean and max primal gap ``|p - p*| / max(p, p*)`` to it is reported.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time


import fabricopt
from fabricopt.heuristics.sipml import balance, sipml
from fabricopt.problems.opgraph import OpGraph
from fabricopt.problems.placement import FAMILIES, generate, lower_bound
from fabricopt.benchmarks.metrics import primal_gap

HEURISTICS = ["sipml", "sipml-ls", "unconstrained", "round-robin"]


def transformer_op_graph(layers: int = 24, d_model: int = 1024, heads: int = 16,
                         seq: int = 512, batch: int = 64, gpu_tflops: float = 100.0,
                         gpu_tbytes_s: float = 1.5) -> OpGraph:
    """Forward and backward pass of a Transformer encoder stack as an op graph.

    The defaults are SiP-ML's Transformer (24 layers, d_model 1024, about 350 M
    parameters) at a local batch of 64 sequences of 512 tokens. Assumptions (ours):
    fp16 activations and weights; a matmul of F flops takes ``F / (gpu_tflops * 1e12)``
    s and an element-wise op moving B bytes takes ``B / (gpu_tbytes_s * 1e12)`` s (an
    A100-like device at a realistic efficiency); each layer is LayerNorm, QKV
    projection, attention scores, softmax, scores x V, output projection, residual add,
    LayerNorm, FFN up (4 d), GELU, FFN down, residual add; an edge carries the
    producer's output activation; the backward op of each forward op costs twice its
    compute and reads the incoming gradient and the saved forward output.
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


def _best_of(repeats, fn):
    """``(wall s, cpu s, value)``: the best of ``repeats`` runs (CPU time is the
    process's own, which other load on the machine disturbs less)."""
    walls, cpus, value = [], [], None
    for _ in range(repeats):
        began, began_cpu = time.perf_counter(), time.process_time()
        value = fn()
        walls.append(time.perf_counter() - began)
        cpus.append(time.process_time() - began_cpu)
    return min(walls), min(cpus), value


def speed(max_peers=(15, 7), repeats=3, ls_budget_s=10.0):
    """sipml and sipml-ls on the Transformer-scale balanced graph on 64 GPUs."""
    graph = transformer_op_graph()
    rows = []
    for peers in max_peers:
        balance_s, _, inst = _best_of(repeats, lambda: balance(graph, 1e-5, 64, max_peers=peers,
                                                                link_gbps=400.0))
        # the method alone; solve() then checks and scores its answer
        sipml_s, sipml_cpu, _ = _best_of(repeats, lambda: sipml(inst))
        result = fabricopt.solve(inst, "sipml")
        ls = fabricopt.solve(inst, "sipml-ls", time_limit=ls_budget_s, max_evals=10**9)
        clique = fabricopt.solve(inst, "unconstrained")
        rows.append((inst.size, len(inst.deps), peers, balance_s, sipml_s, sipml_cpu,
                     result.objective, ls.runtime_s, ls.objective, ls.info["evals"],
                     clique.objective, lower_bound(inst), result.info))
    print(f"Transformer op graph: {len(graph.ops)} ops, {len(graph.edges)} edges; "
          f"balanced with tau = 10 us on k = 64 GPUs, link 400 Gbps; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print()
    print(f"| sub-ops | deps | max_peers | balance s | sipml s (wall / cpu, best of {repeats}) "
          "| sipml makespan ms | sipml-ls s | sipml-ls makespan ms | LS evals | "
          "unconstrained (max_peers+1 GPUs) ms | lower bound ms | "
          "relocations / moved ops / ring kept |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for (n, m, peers, bal, sip, cpu, sip_obj, ls_s, ls_obj, evals, cl, lb, info) in rows:
        print(f"| {n} | {m} | {peers} | {bal:.2f} | {sip:.2f} / {cpu:.2f} | "
              f"{sip_obj * 1e3:.2f} | {ls_s:.1f} | {ls_obj * 1e3:.2f} | {evals} | "
              f"{cl * 1e3:.2f} | {lb * 1e3:.2f} | "
              f"{info['relocations']} / {info['relocated_ops']} / {info['ring_gpus']} |")
    print()


def families(seeds=4, big_seeds=1, ls_evals=2000, repeats=1):
    """sipml / unconstrained makespan ratios per family and seed (and sipml-ls's)."""
    print(f"`generate(seed, family=F)`; ratios are makespans over `unconstrained`'s; sipml "
          f"CPU s best of {repeats} (rings='search', the default); sipml-ls with "
          f"max_evals = {ls_evals} ({ls_evals // 4} above 5,000 sub-ops); load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores")
    print()
    print("| family | seed | sub-ops | gpus | max_peers | full ring / unc. | sipml / unc. | "
          "ring kept | sipml-ls / unc. | relocations | moved ops | max ops on one GPU "
          "(full ring) | sipml CPU s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    summary = []
    for name, sizes in FAMILIES.items():
        rows = []
        for seed in range(big_seeds if sizes["ops"] > 5000 else seeds):
            inst = generate(seed, family=name)
            _, cpu, (sol, info) = _best_of(repeats, lambda: sipml(inst))
            full, _ = sipml(inst, rings="full")
            base = fabricopt.solve(inst, "unconstrained").objective
            ours = fabricopt.solve(inst, "sipml").objective
            ring = fabricopt.solve(inst, "sipml", rings="full").objective
            evals = ls_evals if inst.size <= 5000 else ls_evals // 4
            ls = fabricopt.solve(inst, "sipml-ls", max_evals=evals).objective
            held = max(list(full.gpu.values()).count(g) for g in range(inst.gpus))
            rows.append((ring / base, ours / base, ls / base, cpu))
            print(f"| {name} | {seed} | {inst.size} | {inst.gpus} | {inst.max_peers} | "
                  f"{ring / base:.3f} | {ours / base:.3f} | {info['ring_gpus']} | "
                  f"{ls / base:.3f} | {info['relocations']} | {info['relocated_ops']} | "
                  f"{held} | {cpu:.2f} |", flush=True)
        summary.append((name, *zip(*rows)))
    print()
    print("| family | full ring / unc. mean (max) | sipml / unc. mean (max) | "
          "sipml-ls / unc. mean (max) | sipml CPU s max |")
    print("|---|---|---|---|---|")
    for name, ring, ours, ls, cpu in summary:
        cells = " | ".join(f"{statistics.mean(x):.3f} ({max(x):.3f})" for x in (ring, ours, ls))
        print(f"| {name} | {cells} | {max(cpu):.2f} |")
    print()


def scaling(sizes=(20000, 100000), gpus=64, max_peers=15, repeats=3):
    """sipml's CPU time on generate(0, ops=n, gpus=64, max_peers=15) (issue 15)."""
    print(f"| sub-ops | gpus | max_peers | sipml CPU s (best of {repeats}) | "
          "full ring alone CPU s | relocations | ring kept |")
    print("|---|---|---|---|---|---|---|")
    for n in sizes:
        inst = generate(0, ops=n, gpus=gpus, max_peers=max_peers)
        inst.parents, inst.children, inst.compute_list   # the instance's cached arrays
        _, cpu, (_, info) = _best_of(repeats, lambda: sipml(inst))
        _, full_cpu, _ = _best_of(repeats, lambda: sipml(inst, rings="full"))
        print(f"| {n} | {gpus} | {max_peers} | {cpu:.2f} | {full_cpu:.2f} | "
              f"{info['relocations']} | {info['ring_gpus']} |", flush=True)
    print()


def parallelism(workloads=("resnet50", "transformer"), gpus=1024, max_k=64, gbps=1024.0):
    """The (k, l) search of fabrics.search_iteration_time, every candidate shown."""
    from fabricopt.fabrics import search_iteration_time
    from fabricopt.fabrics.models import ElectFlat, SipOcs

    print(f"`search_iteration_time(w, fabric, {gpus}, max_k={max_k})`; B = {gbps:.0f} Gbps "
          "per GPU (SiP-OCS: 16 circuits). Times in ms; 'placed' is the placement's own "
          "makespan at the link estimate, 'serial' one GPU of the group running every op.")
    print()
    print("| workload | fabric | k x l | placed | serial | group estimate (mp_s) | "
          "iteration | kept |")
    print("|---|---|---|---|---|---|---|---|")
    for name in workloads:
        for fabric in (SipOcs(switches=16, gbps=gbps), ElectFlat(gbps)):
            priced = []
            best = search_iteration_time(name, fabric, gpus, max_k=max_k, priced=priced)
            for t in priced:
                plan = t.plan
                serial = sum(c for _, c in plan.ops)
                placed = plan.result.objective if plan.result is not None else serial
                mark = "serial" if plan.serial else ""
                print(f"| {name} | {fabric.label} | {t.k} x {t.l} | {placed * 1e3:.2f} | "
                      f"{serial * 1e3:.2f} | {t.mp_s * 1e3:.2f} {mark} | {t.total_s * 1e3:.2f} | "
                      f"{'**best**' if t is best else ''} |", flush=True)
    print()


def _gap(value, best):
    return primal_gap(value, best)


def gap_table(count=30, milp_limit_s=600.0, symmetry=False):
    """The 30-instance table: milp's optimum against every heuristic."""
    gaps = {m: [] for m in HEURISTICS}
    times = {m: [] for m in HEURISTICS + ["milp"]}
    bound_gaps, proven, closed = [], 0, []
    variants = {"full": True, "weak": "weak", "none": False} if symmetry else {}
    variant_times = {v: [] for v in variants}
    for seed in range(count):
        inst = generate(seed, ops=10 + seed % 3, gpus=4, max_peers=1 + seed % 2)
        milp = fabricopt.solve(inst, "milp", time_limit=milp_limit_s)
        proven += milp.status == "optimal"
        best = milp.objective
        times["milp"].append(milp.runtime_s)
        bound_gaps.append(_gap(lower_bound(inst), best))
        objective = {}
        for method in HEURISTICS:
            result = fabricopt.solve(inst, method)
            objective[method] = result.objective
            gaps[method].append(_gap(result.objective, best))
            times[method].append(result.runtime_s)
        if objective["sipml"] > best:
            closed.append((objective["sipml"] - objective["sipml-ls"]) /
                          (objective["sipml"] - best))
        for name, setting in variants.items():
            cold = fabricopt.solve(inst, "milp", time_limit=milp_limit_s, warm_start=False,
                                   symmetry_breaking=setting)
            assert abs(cold.objective - best) <= 1e-6 * best, (seed, name)
            variant_times[name].append(cold.runtime_s)
        print(f"  seed {seed}: {inst.size} ops, max_peers {inst.max_peers}, milp "
              f"{milp.status} {best * 1e6:.2f} us in {milp.runtime_s:.1f} s", file=sys.stderr)
    print(f"{count} instances: generate(seed, ops=10 + seed % 3, gpus=4, "
          f"max_peers=1 + seed % 2), seeds 0..{count - 1}; milp proved optimality on "
          f"{proven}/{count} (limit {milp_limit_s:.0f} s)")
    print()
    print("| method | mean gap to optimum | max gap | optimal on | mean runtime s | max runtime s |")
    print("|---|---|---|---|---|---|")
    print(f"| milp | 0 | 0 | {proven}/{count} | {statistics.mean(times['milp']):.2f} | "
          f"{max(times['milp']):.2f} |")
    for method in HEURISTICS:
        g = gaps[method]
        print(f"| {method} | {statistics.mean(g):.4f} | {max(g):.4f} | "
              f"{sum(x <= 1e-9 for x in g)}/{count} | {statistics.mean(times[method]):.4f} | "
              f"{max(times[method]):.4f} |")
    print(f"| lower bound | {statistics.mean(bound_gaps):.4f} | {max(bound_gaps):.4f} | "
          f"{sum(x <= 1e-9 for x in bound_gaps)}/{count} | | |")
    print()
    if closed:
        print(f"sipml-ls closes on average {statistics.mean(closed):.1%} of sipml's gap to the "
              f"optimum (over the {len(closed)} instances where sipml is not optimal).")
    if variants:
        print()
        print("| MILP symmetry breaking (no warm start) | mean runtime s | max runtime s |")
        print("|---|---|---|")
        for name, ts in variant_times.items():
            print(f"| {name} | {statistics.mean(ts):.2f} | {max(ts):.2f} |")
    print()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--speed", action="store_true")
    parser.add_argument("--gap", action="store_true")
    parser.add_argument("--symmetry", action="store_true",
                        help="with --gap: also time the MILP's symmetry-breaking variants")
    parser.add_argument("--families", action="store_true",
                        help="sipml against the degree-free baseline on the named families")
    parser.add_argument("--seeds", type=int, default=4, help="with --families: seeds per family")
    parser.add_argument("--scaling", action="store_true",
                        help="sipml's CPU time at 20,000 and 100,000 sub-ops on 64 GPUs")
    parser.add_argument("--kl", action="store_true",
                        help="the (k, l) search on ResNet-50 and the Transformer")
    parser.add_argument("--count", type=int, default=30)
    args = parser.parse_args(argv)
    if args.families:
        families(args.seeds)
    if args.scaling:
        scaling()
    if args.kl:
        parallelism()
    both = not (args.speed or args.gap or args.families or args.scaling or args.kl)
    if args.speed or both:
        speed()
    if args.gap or both:
        gap_table(args.count, symmetry=args.symmetry)


if __name__ == "__main__":
    main()
