"""Iteration time of a hybrid-parallel training job on a fabric — a model.

A job on N = k*l GPUs runs k-way model parallelism (MP) inside each of l groups and
l-way data parallelism (DP) across them (SiP-ML §3.2). The model:

1. **Place** the workload's op graph at the local batch ``global_batch / l`` on k GPUs:
   ``heuristics.sipml.balance(graph, tau_s, k)`` splits it into sub-ops of about
   ``tau_s`` (a ``placement`` instance), which ``fabricopt.solve`` places with the
   fabric's placement method — ``unconstrained`` on electrical fabrics, the
   degree-limited ``sipml`` on optical ones with the fabric's ``max_peers`` (SiP-ML
   §4.3 runs Algorithm 1 without the degree limit for electrical networks). With
   k = 1 there is nothing to place: one GPU runs every op back to back.
2. **Configure the fabric** for the job's whole per-iteration traffic: the MP bytes of
   the placement in every group plus one DP ring-AllReduce per GPU position
   (:func:`~fabricopt.fabrics.traffic.hybrid_traffic`), giving the pair rates and the
   communication time of :class:`~fabricopt.fabrics.models.Allocation`.
3. **Time it**: run each group's placement keeping its GPUs and its per-GPU op order,
   every op as soon as its GPU is free and its inputs have arrived, with the
   cross-GPU transfers as fluid flows sharing the fabric's links max-min fairly as
   they come and go (:func:`~fabricopt.fabrics.flows.step_s`: the MP step); add the
   ring-AllReduce at the pair rates of the rings (SiP-ML's ``paper/run.py`` also adds
   it after the step); and never finish before the fabric can deliver the
   iteration's traffic::

       iteration_s = max(mp_s + allreduce_s, fabric_s)

One rule for every fabric: compute and model-parallel transfers overlap along the
schedule, the AllReduce follows the step, and the iteration never ends before the
fabric can deliver its whole traffic. The step's transfers share what the fabric
gives them (:attr:`~fabricopt.fabrics.models.Allocation.links`): a packet switch's
ports (and a server's uplink), split among the transfers in progress, so a lone
transfer gets the whole port; an OCS's circuits and a ring's lightpaths, set once
for the iteration's whole traffic, split among that pair's transfers in progress.
With one transfer per port at a time the two agree exactly (tested). The AllReduce's
ring hops, all of equal size and concurrent, get their proportional share of the
ports on a switch (:func:`~fabricopt.fabrics.models.port_shares`) and their circuits
on an OCS.

Simplifications, stated: a fluid model, not a packet simulation; latency, launch
overheads and activation memory are ignored; a layer's forward and backward are one
op (see :mod:`~fabricopt.fabrics.workloads`); the optical fabrics are configured once
for the iteration's total traffic. Max-min fairness does not know the critical path:
a transfer that starts sooner on faster links may overlap a critical one, and a
fabric that holds back a non-critical transfer (a slow uplink, a fixed circuit) may
let a critical one through sooner, so iteration time is not always monotone in
bandwidth and another fabric can end a step before :class:`ElectFlat` on some plans
(:mod:`~fabricopt.fabrics.flows` gives the example). What holds on every plan: no
fabric ends the step before every transfer alone at the per-GPU bandwidth, nor
delivers the traffic before Elect-Flat's port bound.

References
----------
.. [1] M. Khani et al., "SiP-ML", SIGCOMM 2021, §3.2 (hybrid parallelism, Algorithm 1),
   §4.2 (MP/DP search), footnote 1 (ring AllReduce moves 2M per worker).
.. [2] fabricopt docs, *Departures*, sipml-1.5 and sipml-1.6 (how RostAM estimates
   iteration time).
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import cached_property
from operator import itemgetter
from collections.abc import Mapping, Sequence
from typing import Any, Callable

import numpy as np

from fabricopt.errors import (InfeasibleInstance, InvalidArgument, SolverFailure,
                              SolverUnavailable)
from fabricopt.problems._validate import as_float, as_int, fail
from fabricopt.problems.opgraph import OpGraph
from fabricopt.problems.placement import solution_arrays
from fabricopt.problems.tolerances import CERTIFY_RTOL
from fabricopt.methods import solve
from fabricopt.fabrics._path_kernel import longest_path_s
from fabricopt.fabrics.flows import step_s_of_arrays
from fabricopt.fabrics.models import Allocation, Fabric, method_available
from fabricopt.fabrics.traffic import (Traffic, hybrid_traffic, mp_traffic, params_per_gpu,
                                      ring_allreduce_bytes, transfer_s)
from fabricopt.fabrics.workloads import (A100_MEMORY_BYTES, BYTES_PER_VALUE, DEFAULT_GPU_FLOPS,
                                         TRAINING_BYTES_PER_PARAM, Workload, get_workload)

__all__ = ["Plan", "place", "plan_from_placement", "placement_instance", "IterationTime",
           "iteration_time", "search_iteration_time", "serial_plan", "DEFAULT_TAU_S",
           "lower_bound_s",
           "data_parallel_degrees"]

#: SiP-ML's compute quantum for the balanced graph (§4.1: 10 us).
DEFAULT_TAU_S = 10e-6


#: The traffics of the last plans asked (:meth:`Plan.traffic`): the search asks for a
#: candidate's bound, then prices it; N x N each, so only a few are kept.
_TRAFFICS_MAX = 2
_traffics: OrderedDict = OrderedDict()


def _traffic_key(plan: "Plan") -> tuple:
    """What a plan's traffic depends on (its arrays by value: plans are rebuilt)."""
    return (plan.k, plan.l, plan.mp_bytes.dtype.str, plan.mp_bytes.tobytes(),
            plan.params_bytes.dtype.str, plan.params_bytes.tobytes())


@dataclass(frozen=True, eq=False)
class Plan:
    """A placed hybrid-parallel job: one k-GPU placement, replicated in l groups.

    Attributes
    ----------
    workload : str
    k, l : int
    graph : OpGraph
        The op graph at the local batch.
    ops : sequence of (id, compute_s)
        Ops (or sub-ops) in execution order: by placed start time, ties topologically
        (a tuple, or for a placed plan a sequence that makes its tuples when read).
    deps : tuple of (src, dst, bytes)
    gpu : mapping
        Op id -> GPU in 0..k-1 (a dict, or for a placed plan its solution's read-only
        mapping, which makes its dict when read).
    mp_bytes : numpy.ndarray, shape (k, k)
        Model-parallel bytes inside one group per iteration.
    params_bytes : numpy.ndarray, shape (k,)
        Gradient bytes each GPU position holds.
    method : str or None
        The placement method (None for k = 1).
    result : Result or None
        The placement solve's result.
    serial : bool
        Whether one GPU of each group runs every op (:func:`serial_plan`).
    """

    workload: str
    k: int
    l: int
    graph: OpGraph
    ops: tuple
    deps: tuple
    gpu: Mapping
    mp_bytes: np.ndarray
    params_bytes: np.ndarray
    method: str | None = None
    result: Any = None
    max_peers: int | None = None
    serial: bool = False

    @property
    def gpus(self) -> int:
        return self.k * self.l

    @cached_property
    def compute_s(self) -> float:
        """The step with infinitely fast links (the placement's compute critical path)."""
        return _critical_path_s(self, None)

    @cached_property
    def serial_s(self) -> float:
        """Every op of a group back to back on one GPU: the sum of their compute, in
        ``ops`` order (the search reads it once per candidate and pricing)."""
        if "_arrays" in self.__dict__:
            return sum(self._arrays[0].tolist())   # the same floats, in the same order
        return sum(map(itemgetter(1), self.ops))

    @cached_property
    def _arrays(self) -> tuple:
        """The placement as arrays: per op (in ``ops`` order) its compute and GPU, per
        dep (in ``deps`` order) its ends' positions in ``ops`` and its bytes."""
        position = {op: i for i, (op, _) in enumerate(self.ops)}
        gpu = np.fromiter((self.gpu[op] for op, _ in self.ops), np.int64, len(self.ops))
        compute = np.fromiter((c for _, c in self.ops), float, len(self.ops))
        src = np.fromiter((position[d[0]] for d in self.deps), np.int64, len(self.deps))
        dst = np.fromiter((position[d[1]] for d in self.deps), np.int64, len(self.deps))
        nbytes = np.fromiter((d[2] for d in self.deps), float, len(self.deps))
        return compute, gpu, src, dst, nbytes

    @cached_property
    def _path_arrays(self):
        """The step as arrays for :func:`_critical_path_s`: per op (in ``ops`` order) its
        GPU and compute, per dep its ends' positions and GPUs and its bytes, the deps
        grouped by destination; None if a dep's source comes after its destination."""
        compute, gpu, src, dst, nbytes = self._arrays
        if (src >= dst).any():
            return None
        by = np.argsort(dst, kind="stable")
        ptr = np.zeros(len(compute) + 1, dtype=np.int64)
        np.cumsum(np.bincount(dst, minlength=len(compute)), out=ptr[1:])
        return gpu, compute, ptr, src[by], gpu[src[by]], gpu[dst[by]], nbytes[by]

    def traffic(self) -> Traffic:
        """The whole job's per-iteration traffic (MP in each group + DP rings): one
        object for the plan's repeated calls, so that a fabric's bound and its
        allocation of it can share their work (the last :data:`_TRAFFICS_MAX` kept)."""
        return _remembered(_traffics, _TRAFFICS_MAX, _traffic_key(self),
                           lambda: hybrid_traffic(self.mp_bytes, self.params_bytes, self.k,
                                                  self.l))

    def peers(self) -> int:
        """The most distinct GPUs one GPU sends model-parallel bytes to, or receives from."""
        used = self.mp_bytes > 0
        return int(max(used.sum(axis=1).max(), used.sum(axis=0).max()))

    def fits(self, fabric: Fabric) -> bool:
        """Does the placement keep within ``fabric``'s degree limit for this k x l?"""
        return self.k == 1 or self.peers() <= fabric.max_peers(self.k, self.l)

    def memory_bytes_per_gpu(self) -> float:
        """Training-state bytes on the fullest GPU (mixed-precision Adam, 16 B/param)."""
        return float(self.params_bytes.max() / BYTES_PER_VALUE * TRAINING_BYTES_PER_PARAM)


def data_parallel_degrees(workload: Workload, gpus: int) -> list[int]:
    """The l in 1, 2, 4, ... that divide both ``gpus`` and the workload's global batch."""
    out, l = [], 1
    while l <= gpus:
        if gpus % l == 0 and workload.global_batch % l == 0:
            out.append(l)
        l *= 2
    return out


def _sequential_plan(workload: Workload, graph: OpGraph, l: int) -> Plan:
    """k = 1: one GPU runs every op in topological order — no placement to make."""
    order = graph.topological_order()
    compute = {op.id: op.compute_s for op in graph.ops}
    return Plan(workload.name, 1, l, graph, tuple((o, compute[o]) for o in order),
                tuple((e.src, e.dst, e.bytes) for e in graph.edges), {o: 0 for o in order},
                np.zeros((1, 1)), np.array([graph.total_params_bytes]))


def placement_instance(graph: OpGraph, k: int, *, tau_s: float = DEFAULT_TAU_S,
                       max_peers: int | None = None, link_gbps: float = 100.0) -> dict:
    """The ``placement`` instance (docs/formats.rst, placement, as JSON) of one model-parallel group:
    ``heuristics.sipml.balance`` splits ``graph`` into sub-ops of about ``tau_s``.

    Parameters
    ----------
    graph : OpGraph
        The op graph at the group's local batch.
    k : int
        GPUs of the group.
    max_peers : int, optional
        Degree limit (default ``k - 1``: none).
    link_gbps : float
        The GPU-to-GPU bandwidth the placement assumes.

    Raises
    ------
    SolverUnavailable
        If the placement kind's ``balance`` is not installed.
    """
    return _balanced(graph, k, tau_s=tau_s, max_peers=max_peers, link_gbps=link_gbps).to_dict()


def _balanced(graph: OpGraph, k: int, *, tau_s: float, max_peers: int | None,
              link_gbps: float):
    """:func:`placement_instance` as the instance object (what ``solve`` reads: the
    object skips a JSON round trip, which at k = 1,024 parses half a million sub-ops)."""
    try:
        from fabricopt.algorithms.placement.sipml import balance
    except ImportError:
        raise SolverUnavailable("model parallelism (k > 1) needs the placement kind's "
                                "heuristics.sipml.balance, which is not installed here; "
                                "use k = 1 (pure data parallelism)") from None
    k = as_int("k", k, minimum=1)
    tau_s = as_float("tau_s", tau_s, positive=True)
    max_peers = max(1, k - 1) if max_peers is None else max_peers
    link_gbps = as_float("link_gbps", link_gbps, positive=True)
    # The sub-ops and deps depend on the graph, tau and k alone: a search balances the
    # same graph for every fabric and bandwidth, which differ in max_peers and link_gbps.
    key = (_graph_content(graph), tau_s, k)
    found = _balanced_graphs.get(key)
    if found is None:
        found = _balanced_graphs[key] = balance(graph, tau_s, k, max_peers=max_peers,
                                                link_gbps=link_gbps)
        while len(_balanced_graphs) > _BALANCED_MAX:
            _balanced_graphs.popitem(last=False)
        return found
    _balanced_graphs.move_to_end(key)
    return found._with_scalars(k, max_peers, link_gbps)


#: Balanced graphs remembered by content (graph, tau, k): at most this many, newest
#: kept (a search at N GPUs balances one graph per k, for every fabric and bandwidth).
_BALANCED_MAX = 16
_balanced_graphs: OrderedDict = OrderedDict()


def _graph_content(graph: OpGraph) -> tuple:
    """What the balanced graph of ``graph`` depends on: its ops and edges, in order."""
    return (tuple((op.id, op.compute_s, op.params_bytes) for op in graph.ops),
            tuple((e.src, e.dst, e.bytes) for e in graph.edges))


def place(workload, fabric: Fabric, k: int, l: int, *, tau_s: float = DEFAULT_TAU_S,
          gpu_flops: float = DEFAULT_GPU_FLOPS, seed: int = 0,
          time_limit: float | None = None, memory_bytes: float | None = None,
          max_peers: int | None = None) -> Plan:
    """Place a workload's k-way model-parallel step for ``fabric`` (step 1 of the model).

    Parameters
    ----------
    workload : Workload or str
    fabric : Fabric
        Gives the placement method, ``max_peers`` and the link estimate
        (``per_node_gbps``) of the ``placement`` instance.
    k, l : int
        Model- and data-parallel degrees.
    tau_s : float
        Compute quantum of the balanced graph (SiP-ML: 10 us).
    gpu_flops : float
        Effective GPU throughput.
    seed, time_limit
        Passed to the placement solve.
    memory_bytes : float, optional
        GPU memory: refuse k too small to hold the model's training state even
        split evenly (16 B per parameter), before placing anything.
    max_peers : int, optional
        The degree limit to place with, at most the fabric's ``max_peers(k, l)``
        (default: that limit).

    Returns
    -------
    Plan

    Raises
    ------
    SolverUnavailable
        If k > 1 and the ``placement`` kind or the method is not registered.
    InfeasibleInstance
        If the model cannot fit in ``memory_bytes`` on k GPUs, or the placement method
        proves there is no placement.
    InvalidArgument
        If ``max_peers`` is not an integer from 1 to the fabric's limit.
    SolverFailure
        If it ends without a solution.
    """
    workload = get_workload(workload) if isinstance(workload, str) else workload
    k = as_int("k", k, minimum=1)
    l = as_int("l", l, minimum=1)
    limit = fabric.max_peers(k, l)
    if max_peers is None:
        max_peers = limit
    elif not 1 <= as_int("max_peers", max_peers, error=InvalidArgument) <= limit:
        fail("max_peers", max_peers, f"must be from 1 to {fabric.label}'s limit {limit} "
                                     f"for k = {k}, l = {l}", InvalidArgument)
    graph = _remembered(_op_graphs, _OP_GRAPHS_MAX, (workload, l, gpu_flops),
                        lambda: workload.op_graph(l, gpu_flops=gpu_flops))
    if memory_bytes is not None:
        need = graph.total_params_bytes / k / BYTES_PER_VALUE * TRAINING_BYTES_PER_PARAM
        if need > memory_bytes:
            raise InfeasibleInstance(f"{workload.name} with k = {k}: split evenly a GPU "
                                     f"needs {need / 1e9:.1f} GB of training state, more "
                                     f"than {memory_bytes / 1e9:.0f} GB")
    if k == 1:
        return _sequential_plan(workload, graph, l)
    method = fabric.placement_method
    if not method_available("placement", method):
        raise SolverUnavailable(f"placing k = {k} needs method {method!r} of the "
                                f"'placement' problem kind, which is not registered here; "
                                f"use k = 1 (pure data parallelism)")
    instance = _balanced(graph, k, tau_s=tau_s, max_peers=max_peers,
                         link_gbps=fabric.per_node_gbps)
    # the placement and its makespan, without the bounds on the placement's optimum,
    # which no part of the cost model reads
    result = solve(instance, method, seed=seed, time_limit=time_limit, bound=False)
    if result.status == "infeasible":
        raise InfeasibleInstance(f"placement/{method}: no placement of {workload.name} on "
                                 f"k = {k} GPUs with max_peers = {max_peers}")
    if result.solution is None or result.status not in ("optimal", "feasible"):
        raise SolverFailure(f"placement/{method} ended {result.status}: "
                            f"{result.info.get('message', '')}")
    return _plan_from_solution(workload, graph, l, instance, result.solution, method=method,
                               result=result, max_peers=max_peers)


#: Op graphs by (workload, l, throughput): a search places one graph per l for every k,
#: degree limit, fabric and bandwidth (an OpGraph is immutable, so it is shared).
_OP_GRAPHS_MAX = 16
_op_graphs: OrderedDict = OrderedDict()


def _plan_parts(graph: OpGraph, instance) -> tuple:
    """What every plan of ``instance``'s sub-ops shares: their ids (an object array, to
    reorder at once), the deps as a plan holds them, and each sub-op's share of its op's
    parameters (an op's parameters split evenly over its sub-ops, as
    :func:`~fabricopt.fabrics.traffic.params_per_gpu` does), remembered for the sub-ops
    of the balanced graphs in use."""
    key = (id(instance.ops), _graph_content(graph))
    found = _plan_parts_seen.get(key)
    if found is not None and found[0] is instance.ops:
        return found[1]
    params = {op.id: op.params_bytes for op in graph.ops}
    origins = [op.id if op.group is None else op.group for op in instance.ops]
    pieces: dict[str, int] = {}
    for origin in origins:
        if origin not in params:
            fail("ops.group", origin, "names no op of the workload graph")
        pieces[origin] = pieces.get(origin, 0) + 1
    parts = (np.array([op.id for op in instance.ops], dtype=object),
             tuple((d.src, d.dst, d.bytes) for d in instance.deps),
             np.fromiter((params[o] / pieces[o] for o in origins), float, len(origins)))
    _plan_parts_seen[key] = (instance.ops, parts)   # the ops held: their id stays theirs
    while len(_plan_parts_seen) > _BALANCED_MAX:
        _plan_parts_seen.popitem(last=False)
    return parts


_plan_parts_seen: OrderedDict = OrderedDict()


def _plan_from_solution(workload, graph: OpGraph, l: int, instance, solution, *,
                        method: str | None, result, max_peers: int | None) -> Plan:
    """:func:`plan_from_placement` of a ``PlacementInstance`` and ``PlacementSolution``
    (objects, not JSON: the same plan, computed over arrays)."""
    n = instance.size
    ids, deps, share = _plan_parts(graph, instance)
    # indexed like instance.ops (arrays a solution made for this instance carries)
    gpu, start = solution_arrays(instance, solution)
    ranked = np.argsort(start, kind="stable")    # by start, ties by position
    # the bytes of every dep across two GPUs, added in dep order (as the JSON path does)
    src, dst = gpu[instance.dep_src], gpu[instance.dep_dst]
    mp = np.zeros((instance.gpus, instance.gpus))
    cross = src != dst
    np.add.at(mp, (src[cross], dst[cross]), instance._dep_bytes[cross])
    held = np.zeros(instance.gpus)
    np.add.at(held, gpu, share)
    name = workload if isinstance(workload, str) else workload.name
    plan = Plan(name, instance.gpus, as_int("l", l, minimum=1), graph,
                _RankedOps(ids, instance.compute[ranked], ranked), deps,
                solution.gpu, mp, held, method, result, max_peers)
    # Plan._arrays and _path_arrays from the arrays at hand (the plan's order is by start
    # time, ties by position, so every dep's source comes first in a feasible schedule)
    position = np.empty(n, dtype=np.int64)
    position[ranked] = np.arange(n)
    first, then = position[instance.dep_src], position[instance.dep_dst]
    plan.__dict__["_arrays"] = (instance.compute[ranked], gpu[ranked], first, then,
                                instance._dep_bytes)
    if not (first >= then).any():
        # the deps by destination in plan order, dep order within (a stable sort by
        # `then`): each op's run of the instance's deps-into groups, in plan order
        into, into_ptr = instance._deps_into
        count = np.diff(into_ptr)[ranked]
        ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(count, out=ptr[1:])
        by = into[np.repeat(into_ptr[ranked] - ptr[:-1], count)
                  + np.arange(len(then), dtype=np.int64)]
        plan.__dict__["_path_arrays"] = (
            gpu[ranked], instance.compute[ranked], ptr, first[by], src[by], dst[by],
            instance._dep_bytes[by])
    return plan


class _RankedOps(Sequence):
    """A plan's ``ops``, ``(id, compute_s)`` in execution order, kept as arrays: a
    placement of half a million sub-ops is priced without making half a million
    tuples, or reordering its ids, which only a reader of ``ops`` pays for (once).

    Parameters
    ----------
    ids : numpy.ndarray of object
        Op ids, ``ids[order[r]]`` the r-th to run (``ids[r]`` without ``order``).
    compute : numpy.ndarray
        ``compute_s`` of the r-th op to run.
    order : numpy.ndarray of int, optional

    Examples
    --------
    >>> ops = _RankedOps(np.array(["a", "b"], dtype=object), np.array([2.0, 1.0]), [1, 0])
    >>> len(ops), ops[0], list(ops) == [("b", 2.0), ("a", 1.0)]
    (2, ('b', 2.0), True)
    """

    __slots__ = ("_ids", "_order", "compute", "_tuple")

    def __init__(self, ids: np.ndarray, compute: np.ndarray, order=None):
        self._ids, self._order, self.compute = ids, order, compute
        self._tuple = None

    def _pairs(self) -> tuple:
        if self._tuple is None:
            ids = self._ids if self._order is None else self._ids[self._order]
            self._tuple = tuple(zip(ids.tolist(), self.compute.tolist()))
        return self._tuple

    def __len__(self) -> int:
        return len(self.compute)

    def __getitem__(self, index):
        return self._pairs()[index]

    def __iter__(self):
        return iter(self._pairs())

    def __eq__(self, other) -> bool:
        return isinstance(other, (tuple, list, _RankedOps)) and tuple(self) == tuple(other)

    __hash__ = None

    def __repr__(self) -> str:
        return f"_RankedOps({len(self)} ops)"


def serial_plan(plan: Plan) -> Plan:
    """``plan`` with GPU 0 of each group running every op back to back (in the plan's
    order), the other GPUs idle: no model-parallel traffic, GPU 0 holds the model."""
    params = np.zeros(plan.k)
    params[0] = plan.params_bytes.sum()
    return Plan(plan.workload, plan.k, plan.l, plan.graph, plan.ops, plan.deps,
                {o: 0 for o in plan.gpu}, np.zeros((plan.k, plan.k)), params, plan.method,
                plan.result, plan.max_peers, serial=True)


def plan_from_placement(workload, graph: OpGraph, l: int, instance: dict, solution: dict, *,
                        method: str | None = None, result=None,
                        max_peers: int | None = None) -> Plan:
    """A :class:`Plan` from a ``placement`` instance and solution as JSON (docs/formats.rst, placement).

    Ops run in the order of their start times (ties in instance order, which is
    topological for a feasible schedule).

    Examples
    --------
    >>> from fabricopt.fabrics.workloads import WORKLOADS
    >>> g = OpGraph([{"id": "a", "compute_s": 1.0, "params_bytes": 4.0},
    ...              {"id": "b", "compute_s": 1.0}], [{"src": "a", "dst": "b", "bytes": 8.0}])
    >>> inst = {"gpus": 2, "ops": [{"id": "a", "compute_s": 1.0}, {"id": "b", "compute_s": 1.0}],
    ...         "deps": [{"src": "a", "dst": "b", "bytes": 8.0}]}
    >>> plan = plan_from_placement("toy", g, 3, inst, {"gpu": {"a": 0, "b": 1},
    ...                                                "start_s": {"a": 0.0, "b": 1.5}})
    >>> plan.gpus, plan.mp_bytes.tolist(), plan.params_bytes.tolist()
    (6, [[0.0, 8.0], [0.0, 0.0]], [4.0, 0.0])
    """
    name = workload if isinstance(workload, str) else workload.name
    gpu, start = solution["gpu"], solution["start_s"]
    position = {op["id"]: i for i, op in enumerate(instance["ops"])}
    order = sorted(position, key=lambda o: (start[o], position[o]))
    compute = {op["id"]: float(op["compute_s"]) for op in instance["ops"]}
    return Plan(name, int(instance["gpus"]), as_int("l", l, minimum=1), graph,
                tuple((o, compute[o]) for o in order),
                tuple((d["src"], d["dst"], float(d["bytes"])) for d in instance["deps"]),
                {o: int(g) for o, g in gpu.items()}, mp_traffic(instance, gpu),
                params_per_gpu(graph, instance, gpu), method, result, max_peers)


def _critical_path_s(plan: Plan, pair_gbps: np.ndarray | float | None) -> float:
    """Longest path of every group's schedule with cross-GPU delays at the pair rates
    (a float: every pair at that rate; ``None``: infinitely fast links), per-GPU op
    order fixed; the slowest group.

    Compiled (:func:`~fabricopt.fabrics._path_kernel.longest_path_s`); a plan whose
    op order is not topological takes :func:`_critical_path_python`, which names the
    op that waits for a later one."""
    arrays = plan._path_arrays
    if arrays is None:
        if pair_gbps is not None and np.ndim(pair_gbps) == 0:
            pair_gbps = np.full((plan.gpus, plan.gpus), float(pair_gbps))
        return _critical_path_python(plan, pair_gbps)
    gpu, compute, ptr, parent, gi, gj, nbytes = arrays
    k, l = plan.k, plan.l
    # with one rate for every pair (or none) every group runs the same schedule
    uniform = pair_gbps is None or np.ndim(pair_gbps) == 0
    delay = np.zeros((len(parent), 1 if uniform else l))
    if pair_gbps is not None:
        cross = np.flatnonzero((gi != gj) & (nbytes != 0))
        if uniform:
            rates = np.full((len(cross), 1), float(pair_gbps))
        else:
            base = np.arange(l) * k
            rates = pair_gbps[base[None, :] + gi[cross, None], base[None, :] + gj[cross, None]]
        with np.errstate(divide="ignore"):
            delay[cross] = np.where(rates > 0, 8.0 * nbytes[cross, None] / (rates * 1e9),
                                    np.inf)
    return float(longest_path_s(k, gpu, compute, ptr, parent, delay))


def _critical_path_python(plan: Plan, pair_gbps: np.ndarray | None) -> float:
    """:func:`_critical_path_s` as a Python loop over the ops (the compiled one's oracle)."""
    k, l = plan.k, plan.l
    base = np.arange(l) * k
    preds: dict[str, list] = {}
    for src, dst, nbytes in plan.deps:
        gi, gj = plan.gpu[src], plan.gpu[dst]
        if gi == gj or pair_gbps is None or nbytes == 0:
            delay = np.zeros(l)
        else:
            rates = pair_gbps[base + gi, base + gj]
            with np.errstate(divide="ignore"):
                delay = np.where(rates > 0, 8.0 * nbytes / (rates * 1e9), np.inf)
        preds.setdefault(dst, []).append((src, delay))
    free = np.zeros((k, l))
    end: dict[str, np.ndarray] = {}
    for op, compute in plan.ops:
        g = plan.gpu[op]
        start = free[g].copy()
        for src, delay in preds.get(op, ()):
            np.maximum(start, end[src] + delay, out=start)
        end[op] = start + compute
        free[g] = end[op]
    return float(free.max()) if plan.ops else 0.0


@dataclass(frozen=True, eq=False)
class IterationTime:
    """One iteration of a placed job on a fabric (see the module docstring).

    Attributes
    ----------
    total_s : float
        ``max(mp_s + allreduce_s, fabric_s)``.
    compute_s : float
        The placement's critical path with infinitely fast links.
    mp_s : float
        The step with its transfers sharing the fabric's links
        (:func:`~fabricopt.fabrics.flows.step_s`).
    allreduce_s : float
        The DP ring-AllReduce at the rings' pair rates (0 when l = 1).
    fabric_s : float
        The fabric's time to deliver the iteration's traffic.
    """

    total_s: float
    compute_s: float
    mp_s: float
    allreduce_s: float
    fabric_s: float
    plan: Plan
    fabric: Fabric
    allocation: Allocation = field(repr=False)

    @property
    def k(self) -> int:
        return self.plan.k

    @property
    def l(self) -> int:
        return self.plan.l


def _check_memory(plan: Plan, memory_bytes: float | None) -> None:
    if memory_bytes is not None and plan.memory_bytes_per_gpu() > memory_bytes:
        raise InfeasibleInstance(
            f"{plan.workload} with k = {plan.k}: a GPU needs "
            f"{plan.memory_bytes_per_gpu() / 1e9:.1f} GB of training state, more than "
            f"{memory_bytes / 1e9:.0f} GB")


def iteration_time(workload, fabric: Fabric, gpus: int, k: int | None = None,
                   l: int | None = None, *, tau_s: float = DEFAULT_TAU_S,
                   gpu_flops: float = DEFAULT_GPU_FLOPS,
                   memory_bytes: float | None = A100_MEMORY_BYTES, plan: Plan | None = None,
                   seed: int = 0, serial_fallback: bool = True, **traffic_options):
    """The iteration time of ``workload`` on ``gpus = k*l`` GPUs of ``fabric``.

    A traffic workload (SimAI/AICB: a :class:`~fabricopt.fabrics.simai.workload.SimAIWorkload`,
    its file path, or ``simai-moe`` / ``simai-micro``) carries its own parallelism:
    give no k, l; it is priced by
    :func:`~fabricopt.fabrics.simai.iteration.simai_iteration_time`, which takes
    ``traffic_options`` (``mode``, ``overlap``, ``efficiency``, ...) and returns a
    :class:`~fabricopt.fabrics.simai.iteration.SimAIIterationTime`.

    Parameters
    ----------
    workload : Workload, SimAIWorkload, str or path
        A workload, the name of one in :data:`~fabricopt.fabrics.workloads.WORKLOADS`
        or of a shipped SimAI example, or the path of an AICB/SimAI file
        (:func:`~fabricopt.fabrics.resolve.resolve_workload`).
    fabric : Fabric
    gpus, k, l : int
        GPU count and the model- and data-parallel degrees, ``gpus == k * l``.
    tau_s, gpu_flops, seed
        See :func:`place`.
    memory_bytes : float or None
        GPU memory; a placement whose fullest GPU holds more training state
        (16 B per parameter) is infeasible. None skips the check.
    plan : Plan, optional
        A placement to reuse (from :func:`place`), e.g. to price one placement on
        several fabrics; it must be for the same workload, k and l.
    serial_fallback : bool
        Also price :func:`serial_plan` (when it fits in memory) and keep the faster, so
        that a group never does worse than one of its GPUs running every op: the
        earliest-available rule ignores transfers and can split a chain across GPUs.

    Returns
    -------
    IterationTime

    Raises
    ------
    InvalidInstance
        If ``gpus != k*l`` or ``l`` does not divide the global batch.
    InfeasibleInstance
        If the job does not fit in memory, or the fabric or placement has no
        configuration for it.
    SolverUnavailable
        If a method the model needs is not registered.

    Examples
    --------
    >>> from fabricopt.fabrics.models import ElectFlat
    >>> t = iteration_time("resnet50", ElectFlat(800.0), gpus=8, k=1, l=8)
    >>> t.total_s == t.compute_s + t.allreduce_s
    True
    >>> iteration_time("simai-micro", ElectFlat(800.0), gpus=8).bubble_s
    0.0
    """
    from fabricopt.fabrics.resolve import (is_traffic_workload, reject_traffic_options,
                                           resolve_workload)
    from fabricopt.fabrics.simai.iteration import simai_iteration_time

    workload = resolve_workload(workload)
    if is_traffic_workload(workload):
        for name, value in (("k", k), ("l", l), ("plan", plan)):
            if value is not None:
                fail(name, value, "a traffic workload (SimAI/AICB) carries its own "
                                  "parallelism: give no k, l or plan")
        return simai_iteration_time(workload, fabric, gpus, **traffic_options)
    reject_traffic_options(workload, traffic_options)
    if k is None or l is None:
        fail("k" if k is None else "l", None, f"{workload.name} is an op-graph workload: give "
                                             f"k and l (or use search_iteration_time)")
    gpus, k, l = (as_int(n, v, minimum=1) for n, v in (("gpus", gpus), ("k", k), ("l", l)))
    if gpus != k * l:
        fail("gpus", gpus, f"must equal k * l = {k} * {l}")
    if plan is None:
        plan = place(workload, fabric, k, l, tau_s=tau_s, gpu_flops=gpu_flops, seed=seed,
                     memory_bytes=memory_bytes)
    elif (plan.workload, plan.k, plan.l) != (workload.name, k, l):
        fail("plan", f"{plan.workload} k={plan.k} l={plan.l}",
             f"is not a placement of {workload.name} with k = {k}, l = {l}")
    _check_memory(plan, memory_bytes)
    best = _price(plan, fabric)
    # One GPU runs a group's ops back to back: never sooner than their sum, so a
    # placement already that fast needs no second pricing.
    if (serial_fallback and k > 1 and not plan.serial
            and plan.serial_s < best.total_s):
        alone = serial_plan(plan)
        # priced only if it might end sooner: configuring a fabric costs more than the bound
        if ((memory_bytes is None or alone.memory_bytes_per_gpu() <= memory_bytes)
                and lower_bound_s(alone, fabric) < best.total_s):
            other = _price(alone, fabric)
            if other.total_s < best.total_s:
                best = other
    return best


#: Fabric configurations remembered for the traffic they were made for: a search
#: prices the same traffic on one fabric many times (every one-GPU fallback of a
#: (k, l), the placements other fabrics found); at most this many, newest kept, and
#: fewer for more GPUs (each holds N x N arrays): as many as hold
#: :data:`_ALLOCATIONS_MAX_CELLS` cells per matrix, and never fewer than two.
_ALLOCATIONS_MAX = 16
_ALLOCATIONS_MAX_CELLS = 16 * 1024 ** 2
_allocations: OrderedDict = OrderedDict()


def _remembered(cache: OrderedDict, limit: int, key, make: Callable[[], Any]):
    """``cache[key]``, made by ``make()`` the first time; at most ``limit`` entries,
    the least recently used dropped. An unhashable key is not remembered."""
    try:
        found = cache.get(key)
    except TypeError:                   # e.g. a fabric with unhashable fields
        return make()
    if found is None:
        found = cache[key] = make()
        while len(cache) > limit:
            cache.popitem(last=False)
    else:
        cache.move_to_end(key)
    return found


def _allocate(fabric: Fabric, plan: Plan) -> Allocation:
    """``fabric.allocate(plan.traffic())``, remembered per fabric and traffic."""
    limit = min(_ALLOCATIONS_MAX, max(2, _ALLOCATIONS_MAX_CELLS // plan.gpus ** 2))
    return _remembered(_allocations, limit, (fabric,) + _traffic_key(plan),
                       lambda: fabric.allocate(plan.traffic()))


def _price(plan: Plan, fabric: Fabric) -> IterationTime:
    """Steps 2 and 3 of the model for a placed job."""
    allocation = _allocate(fabric, plan)
    compute_s = plan.compute_s
    mp_s = (step_s_of_arrays(*plan._arrays, plan.k, plan.l, allocation.step_links())
            if plan.k > 1 and plan.mp_bytes.any() else compute_s)
    allreduce_s = allocation.allreduce_s()
    total = max(mp_s + allreduce_s, allocation.comm_time_s)
    return IterationTime(total, compute_s, mp_s, allreduce_s, allocation.comm_time_s,
                         plan, fabric, allocation)


def lower_bound_s(plan: Plan, fabric: Fabric) -> float:
    """No fabric of ``fabric.per_node_gbps`` per GPU ends ``plan``'s iteration sooner.

    No fabric gives a transfer more than its per-node bandwidth, and sharing never
    speeds a transfer up, so the step takes at least its longest path with every
    transfer alone at that bandwidth; on a fabric whose nodes send and receive at most
    that bandwidth in all (:attr:`~fabricopt.fabrics.models.Fabric.node_limited_step`),
    it also takes the busiest GPU's model-parallel bytes at it; each GPU then sends its
    AllReduce bytes through its port; and the whole traffic needs the port bound.

    Examples
    --------
    >>> from fabricopt.fabrics.models import ElectFlat
    >>> t = iteration_time("resnet50", ElectFlat(400.0), gpus=8, k=1, l=8)
    >>> lower_bound_s(t.plan, ElectFlat(400.0)) <= t.total_s
    True
    """
    gbps = fabric.per_node_gbps
    step = (_critical_path_s(plan, gbps)
            if plan.k > 1 and plan.mp_bytes.any() else plan.compute_s)
    if fabric.node_limited_step and plan.k > 1:
        # every model-parallel byte a GPU sends or receives crosses its port in the step
        busiest = max(plan.mp_bytes.sum(axis=1).max(), plan.mp_bytes.sum(axis=0).max())
        step = max(step, transfer_s(float(busiest), gbps))
    ring = ring_allreduce_bytes(plan.l, float(plan.params_bytes.max())) if plan.l > 1 else 0.0
    return max(step + transfer_s(ring, gbps), _port_bound_s(plan, gbps))


#: How far below the port bound :func:`_port_bound_s` stays: its sums run over the k x k
#: block in another order than over the N x N rows, which moves them by a few ulps.
_SUM_ORDER_RTOL = 1e-12


def _port_bound_s(plan: Plan, gbps: float) -> float:
    """``port_bound_s(plan.traffic(), gbps)`` from the k x k block, without the N x N
    traffic: every GPU sends (receives) its position's model-parallel bytes plus one
    ring hop of its position's AllReduce. Lowered by :data:`_SUM_ORDER_RTOL`, so it
    never exceeds the port bound it stands for."""
    hop = np.zeros(plan.k)
    if plan.l > 1:
        for g, held in enumerate(plan.params_bytes.tolist()):
            if held > 0:
                hop[g] = ring_allreduce_bytes(plan.l, held)
    busiest = max(float((plan.mp_bytes.sum(axis=1) + hop).max()),
                  float((plan.mp_bytes.sum(axis=0) + hop).max()))
    return transfer_s(busiest, gbps) * (1.0 - _SUM_ORDER_RTOL)


def _peers_label(peers: int | None) -> str:
    return "" if peers is None else f" max_peers={peers}"


def _unique(reasons: list) -> list[str]:
    """Why each (k, l) failed, once per reason: a degree limit's ladder fails alike on
    memory, and the first rung tried speaks for the rest."""
    seen, out = set(), []
    for k, l, peers, text in reasons:
        if (k, l, text) not in seen:
            seen.add((k, l, text))
            out.append(f"k={k} l={l}{_peers_label(peers)}: {text}")
    return out


def search_iteration_time(workload, fabric: Fabric, gpus: int, *, k_values=None,
                          max_k: int | None = None, tau_s: float = DEFAULT_TAU_S,
                          gpu_flops: float = DEFAULT_GPU_FLOPS,
                          memory_bytes: float | None = A100_MEMORY_BYTES, seed: int = 0,
                          extra_plans=(), plan_cache: dict | None = None,
                          priced: list | None = None, placed: list | None = None,
                          prune: bool = False, beat_s: float = math.inf,
                          progress: Callable[[str], None] | None = None) -> IterationTime:
    """The best (k, l) for ``workload`` on ``gpus`` GPUs of ``fabric`` (SiP-ML §4.2).

    Tries l = 1, 2, 4, ... dividing the GPU count and the global batch, k = gpus / l,
    each k placed with every degree limit of ``fabric.max_peers_ladder(k, l)`` (on
    SiP-OCS and SiP-Ring fewer peers get more circuits each: SiP-ML §3, §4.2), and
    keeps the fastest feasible iteration; ties go to the fabric's own limit.
    ``extra_plans`` are placements found elsewhere (e.g. at another bandwidth) that are
    priced too. ``plan_cache``, a dict
    shared between calls, keeps every placement made, keyed by what determines it
    (workload, k, l, placement method, max_peers, link estimate, tau, throughput, seed).
    ``priced``, a list, receives every feasible :class:`IterationTime` computed;
    ``placed``, a list, every placement made or reused. With ``prune``, a placement
    whose :func:`lower_bound_s` (and its one-GPU fallback's) is no less than the best
    time found so far, or than ``beat_s`` (a time found elsewhere), is not priced: it
    cannot be kept. ``progress``, if given, is called with a line before each (k, l) is placed and
    priced, so a long search shows where it is.

    Raises
    ------
    InfeasibleInstance
        If no (k, l) is feasible; the message lists why each failed.
    InvalidInstance
        If ``workload`` is a traffic workload (SimAI/AICB), whose parallelism is fixed.
    SolverUnavailable
        If some k > 1 is tried and the placement kind is not registered.

    Examples
    --------
    >>> from fabricopt.fabrics.models import ElectFlat
    >>> best = search_iteration_time("resnet50", ElectFlat(400.0), 4, k_values=[1])
    >>> best.k, best.l
    (1, 4)
    """
    from fabricopt.fabrics.resolve import is_traffic_workload, resolve_workload

    workload = resolve_workload(workload)
    if is_traffic_workload(workload):
        # Its TP/PP/EP/DP degrees are fixed by the file: there is no (k, l) to choose.
        fail("workload", workload.name, "a traffic workload (SimAI/AICB) carries its own "
                                        "parallelism: price it with iteration_time")
    gpus = as_int("gpus", gpus, minimum=1)
    best, reasons = None, []
    candidates = []
    for l in data_parallel_degrees(workload, gpus):
        k = gpus // l
        if (k_values is not None and k not in k_values) or (max_k is not None and k > max_k):
            continue
        # None: the fabric's own degree limit; other rungs of its ladder by value.
        ladder = () if k == 1 else fabric.max_peers_ladder(k, l)[1:]
        candidates += [(k, l, None, peers) for peers in (None,) + ladder]
    candidates += [(p.k, p.l, p, None) for p in extra_plans]

    def plan_for(k: int, l: int, plan: Plan | None, peers: int | None) -> Plan | None:
        # Without a cache, a placement at the fabric's own limit is made inside
        # iteration_time; any other degree limit is placed here.
        if plan is None and (plan_cache is not None or peers is not None):
            limit = fabric.max_peers(k, l) if peers is None else peers
            key = (workload.name, k, l, gpu_flops, tau_s, seed) + (
                () if k == 1 else (fabric.placement_method, limit, fabric.per_node_gbps))
            cache = {} if plan_cache is None else plan_cache
            if key not in cache:
                cache[key] = place(workload, fabric, k, l, tau_s=tau_s, gpu_flops=gpu_flops,
                                   seed=seed, memory_bytes=memory_bytes, max_peers=peers)
            plan = cache[key]
        if plan is not None and placed is not None:
            placed.append(plan)
        return plan

    order = list(enumerate(candidates))
    bounds: dict[int, float] = {}
    if prune:
        # Place every candidate first and price them from the least lower bound up:
        # the best is then found early and bounds the rest.
        kept = []
        for n, (k, l, plan, peers) in order:
            if progress is not None:
                progress(f"k={k} l={l}{_peers_label(peers)} ({n + 1}/{len(candidates)}, "
                         f"placing)")
            try:
                plan = plan_for(k, l, plan, peers)
            except InfeasibleInstance as exc:
                reasons.append((k, l, peers, str(exc)))
                continue
            if plan is not None:
                bounds[n] = min(lower_bound_s(plan, fabric), plan.serial_s)
            kept.append((n, (k, l, plan, peers)))
        order = sorted(kept, key=lambda item: bounds.get(item[0], 0.0))
    best_n = -1

    def ruled_out(n: int, plan: Plan) -> bool:
        # A candidate that cannot end sooner than the best found (or than beat_s) is
        # not priced; one that might tie is, so ties go to the earlier candidate.
        if n not in bounds:
            return False
        if bounds[n] >= beat_s or (best is not None and bounds[n] > best.total_s):
            return True
        if best is None and beat_s == math.inf:
            return False
        # The fabric's own bound on configuring the plan's traffic costs more, so it is
        # asked only of a candidate the first bound lets through; the one-GPU fallback
        # keeps its own bound. The bound and the configuration's time are computed
        # apart: one the configuration attains may round above it, hence the margin.
        limit = min(beat_s, math.inf if best is None else best.total_s)
        comm = fabric.comm_lower_bound_s(plan.traffic())
        return min(comm, plan.serial_s) > limit * (1 + CERTIFY_RTOL)

    for n, (k, l, plan, peers) in order:
        if progress is not None:
            progress(f"k={k} l={l}{_peers_label(peers)} ({n + 1}/{len(candidates)}"
                     + (", a placement found elsewhere)" if plan is not None else ")"))
        if ruled_out(n, plan):
            reasons.append((k, l, peers, f"its lower bound is at least "
                           f"{min(beat_s, best.total_s if best else math.inf):.6g} s"))
            continue
        try:
            plan = plan if prune else plan_for(k, l, plan, peers)
            t = iteration_time(workload, fabric, gpus, k, l, tau_s=tau_s, gpu_flops=gpu_flops,
                               memory_bytes=memory_bytes, plan=plan, seed=seed)
        except InfeasibleInstance as exc:
            reasons.append((k, l, peers, str(exc)))
            continue
        if priced is not None:
            priced.append(t)
        if best is None or t.total_s < best.total_s or (t.total_s == best.total_s
                                                        and n < best_n):
            best, best_n = t, n
    if best is None:
        why = "; ".join(_unique(reasons) or ["none tried"])
        raise InfeasibleInstance(f"no feasible (k, l) for {workload.name} on {gpus} GPUs of "
                                 f"{fabric.label}: {why}")
    return best
