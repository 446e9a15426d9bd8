"""Per-operator parallelization strategies (FlexFlow's search space, as TopoOpt uses it).

A job runs on ``n`` servers. Every operator of its op graph (built at the *global*
batch) gets an :class:`OpConfig`: the servers that hold a copy of it, a strided class
``offset, offset + n/g, offset + 2n/g, ...`` of ``g`` servers (TopoOpt's placement of
a group of size g, ``--net-opt 1``), over which the batch is split evenly:

- **data** (``g = n``): every server holds the op and a 1/n of the batch; its
  gradients are reduced by a ring-AllReduce over all servers;
- **model** (``g = 1``): one server holds the whole op (an embedding table) and runs
  it for the whole batch; no AllReduce;
- **hybrid** (``1 < g < n``): a copy on each of g servers, data-parallel among them
  (an AllReduce over the g) and model-parallel beside ops held by other servers.

The traffic each choice implies (:func:`strategy_traffic`):

- an AllReduce of the op's ``params_bytes`` over its servers, one group per distinct
  server set (the ops sharing a set are reduced together);
- for every edge u -> v, the activation of each sample moves from the server holding
  that sample in u to the one holding it in v: half the edge's bytes forward (the
  activation), half backward (its gradient), as the op graph's edge bytes count both.
  Between a model-parallel embedding and data-parallel layers this is the all-to-all
  of DLRM; between two configurations of equal servers it is nothing.

Iteration time on a fabric (:func:`price_strategy`) is the model of
:mod:`~fabricopt.fabrics.iteration` with per-operator placement::

    iteration_s = max(compute_s + mp_s + allreduce_s, fabric_s)

``compute_s`` is the busiest server's compute (each op's compute at the global batch
over its ``g``) or, if longer, the op graph's critical path at those durations,
``mp_s`` the fabric's time to deliver the activation traffic alone on
the configuration it chose for the whole iteration, ``allreduce_s`` the rings at their
pair rates, ``fabric_s`` the time to deliver everything at once. Stated
simplifications: ops on different servers overlap wherever the graph allows (no
pipelining of micro-batches, no scheduling gaps beyond those two bounds), compute does
not overlap communication.

References
----------
.. [1] W. Wang et al., "TopoOpt", NSDI 2023, §4.1 (alternating optimization over
   FlexFlow's strategies), App. D (DLRM: embeddings model-parallel, MLPs
   data-parallel; 4 GB AllReduce, 32 MB model-parallel transfers).
.. [2] Z. Jia, M. Zaharia, A. Aiken, "Beyond Data and Model Parallelism for Deep
   Neural Networks" (FlexFlow), MLSys 2019, §4 (per-operator configurations).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from fabricopt.errors import InfeasibleInstance, InvalidArgument
from fabricopt.problems._validate import as_float, as_int, fail
from fabricopt.problems.opgraph import OpGraph
from fabricopt.fabrics.models import Allocation, DirectConnect, Fabric
from fabricopt.fabrics.traffic import AllReduce, Traffic
from fabricopt.fabrics.workloads import BYTES_PER_VALUE, TRAINING_BYTES_PER_PARAM

__all__ = ["OpConfig", "Strategy", "replica_counts", "data_parallel", "greedy_start",
           "fit_memory",
           "strategy_traffic", "strategy_compute_s", "memory_bytes_per_server",
           "StrategyTime", "price_strategy", "activation_time_s"]


def replica_counts(servers: int) -> list[int]:
    """The group sizes an op may take: 1, 2, 4, ... dividing ``servers``, and ``servers``.

    Examples
    --------
    >>> replica_counts(12)
    [1, 2, 4, 12]
    """
    n = as_int("servers", servers, minimum=1, error=InvalidArgument)
    out, g = [], 1
    while g < n:
        if n % g == 0:
            out.append(g)
        g *= 2
    return out + [n]


@dataclass(frozen=True)
class OpConfig:
    """Where one op runs: ``replicas`` servers ``offset + i * (n // replicas)``."""

    replicas: int
    offset: int = 0

    def members(self, servers: int) -> tuple[int, ...]:
        """The op's servers, in batch-shard order.

        Examples
        --------
        >>> OpConfig(4, 1).members(16)
        (1, 5, 9, 13)
        """
        stride = servers // self.replicas
        return tuple(self.offset + i * stride for i in range(self.replicas))

    def kind(self, servers: int) -> str:
        """``data``, ``model`` or ``hybrid`` (see the module docstring)."""
        if self.replicas == servers:
            return "data"
        return "model" if self.replicas == 1 else "hybrid"


@dataclass(frozen=True)
class Strategy:
    """One :class:`OpConfig` per op of a graph on ``servers`` servers.

    Raises
    ------
    InvalidArgument
        If an op has no configuration, or one whose ``replicas`` does not divide
        ``servers`` or whose ``offset`` is outside ``0 .. servers/replicas - 1``.
    """

    servers: int
    configs: Mapping[str, OpConfig]

    def __post_init__(self):
        n = as_int("servers", self.servers, minimum=1, error=InvalidArgument)
        configs = dict(self.configs)
        for op, c in configs.items():
            if not isinstance(c, OpConfig):
                fail(f"configs[{op!r}]", c, "must be an OpConfig", InvalidArgument)
            if c.replicas < 1 or n % c.replicas:
                fail(f"configs[{op!r}].replicas", c.replicas,
                     f"must divide the {n} servers", InvalidArgument)
            if not 0 <= c.offset < n // c.replicas:
                fail(f"configs[{op!r}].offset", c.offset,
                     f"must be in 0..{n // c.replicas - 1}", InvalidArgument)
        object.__setattr__(self, "configs", configs)

    def check(self, graph: OpGraph) -> None:
        """Raise InvalidArgument unless every op of ``graph`` has a configuration."""
        for op in graph.ops:
            if op.id not in self.configs:
                fail("strategy", op.id, "has no configuration for this op", InvalidArgument)

    def replace(self, op: str, config: OpConfig) -> "Strategy":
        return Strategy(self.servers, {**self.configs, op: config})

    def kinds(self) -> dict[str, int]:
        """How many ops are data-, model- and hybrid-parallel."""
        out = {"data": 0, "model": 0, "hybrid": 0}
        for c in self.configs.values():
            out[c.kind(self.servers)] += 1
        return out

    def summary(self) -> str:
        """``data`` / ``model`` when every op is so, else the counts, e.g.
        ``hybrid: 64 model, 24 data``."""
        counts = {k: v for k, v in self.kinds().items() if v}
        if len(counts) == 1:
            return next(iter(counts))
        return "hybrid: " + ", ".join(f"{v} {k}" for k, v in counts.items())

    def to_dict(self) -> dict[str, Any]:
        return {"servers": self.servers,
                "configs": {op: [c.replicas, c.offset] for op, c in self.configs.items()}}


def data_parallel(graph: OpGraph, servers: int) -> Strategy:
    """Every op data-parallel over all servers.

    Examples
    --------
    >>> g = OpGraph([{"id": "a", "compute_s": 1.0}], [])
    >>> data_parallel(g, 4).summary()
    'data'
    """
    n = as_int("servers", servers, minimum=1, error=InvalidArgument)
    return Strategy(n, {op.id: OpConfig(n) for op in graph.ops})


def greedy_start(graph: OpGraph, servers: int) -> Strategy:
    """Data-parallel, except that an op whose AllReduce would move more than all its
    activations (``2 * params_bytes`` > the bytes on its edges) sits on one server,
    round-robin: FlexFlow's start for DLRM (embedding tables placed on servers, the
    rest data-parallel), found from the graph's numbers rather than op types (ours).

    Examples
    --------
    >>> g = OpGraph([{"id": "emb", "compute_s": 0.0, "params_bytes": 100.0},
    ...              {"id": "mlp", "compute_s": 1.0, "params_bytes": 3.0}],
    ...             [{"src": "emb", "dst": "mlp", "bytes": 8.0}])
    >>> greedy_start(g, 4).configs["emb"], greedy_start(g, 4).summary()
    (OpConfig(replicas=1, offset=0), 'hybrid: 1 data, 1 model')
    """
    strategy = data_parallel(graph, servers)
    moved = {}
    edge_bytes: dict[str, float] = {op.id: 0.0 for op in graph.ops}
    for e in graph.edges:
        edge_bytes[e.src] += e.bytes
        edge_bytes[e.dst] += e.bytes
    for op in graph.ops:
        if op.params_bytes > 0 and 2.0 * op.params_bytes > edge_bytes[op.id]:
            moved[op.id] = OpConfig(1, len(moved) % strategy.servers)
    return Strategy(strategy.servers, {**strategy.configs, **moved})


def memory_bytes_per_server(graph: OpGraph, strategy: Strategy, *,
                            training_bytes_per_param: float = TRAINING_BYTES_PER_PARAM
                            ) -> np.ndarray:
    """Training-state bytes each server holds: every op's parameters on each of its
    servers at ``training_bytes_per_param`` (mixed-precision Adam: 16)."""
    out = np.zeros(strategy.servers)
    scale = training_bytes_per_param / BYTES_PER_VALUE
    for op in graph.ops:
        if op.params_bytes:
            out[list(strategy.configs[op.id].members(strategy.servers))] += \
                op.params_bytes * scale
    return out


def fit_memory(graph: OpGraph, strategy: Strategy, memory_bytes: float, *,
               training_bytes_per_param: float = TRAINING_BYTES_PER_PARAM) -> Strategy:
    """``strategy`` with its largest replicated ops moved to one server each (the
    least-filled) until every server's training state fits in ``memory_bytes``:
    FlexFlow's start for DLRM (data-parallel, embedding tables placed on servers).

    Raises
    ------
    InfeasibleInstance
        If even one op does not fit on a server.

    Examples
    --------
    >>> g = OpGraph([{"id": t, "compute_s": 0.0, "params_bytes": 4.0} for t in "abc"]
    ...             + [{"id": "mlp", "compute_s": 1.0, "params_bytes": 1.0}], [])
    >>> s = fit_memory(g, data_parallel(g, 4), memory_bytes=60.0)
    >>> [s.configs[t].offset for t in "abc"], s.summary()
    ([0, 1, 2], 'hybrid: 1 data, 3 model')
    """
    memory = as_float("memory_bytes", memory_bytes, positive=True, error=InvalidArgument)
    n = strategy.servers
    scale = training_bytes_per_param / BYTES_PER_VALUE
    for op in graph.ops:
        if op.params_bytes * scale > memory:
            raise InfeasibleInstance(f"op {op.id}: {op.params_bytes * scale / 1e9:.1f} GB of "
                                     f"training state exceeds one server's "
                                     f"{memory / 1e9:.0f} GB")
    current = strategy
    replicated = sorted((op for op in graph.ops if op.params_bytes
                         and current.configs[op.id].replicas > 1),
                        key=lambda op: (-op.params_bytes, op.id))
    for op in replicated:
        used = memory_bytes_per_server(graph, current,
                                       training_bytes_per_param=training_bytes_per_param)
        if used.max() <= memory:
            break
        used[list(current.configs[op.id].members(n))] -= op.params_bytes * scale
        current = current.replace(op.id, OpConfig(1, int(np.argmin(used))))
    used = memory_bytes_per_server(graph, current,
                                   training_bytes_per_param=training_bytes_per_param)
    if used.max() > memory:
        raise InfeasibleInstance(f"no placement found that fits {memory / 1e9:.0f} GB per "
                                 f"server: the fullest holds {used.max() / 1e9:.1f} GB")
    return current


def _shard_overlap(src: tuple, dst: tuple) -> list[tuple[int, int, float]]:
    """``(src server, dst server, fraction of the batch)`` for consecutive equal shards."""
    a, b = len(src), len(dst)
    out, i, j, pos = [], 0, 0, 0.0
    while i < a and j < b:
        end = min((i + 1) / a, (j + 1) / b)
        out.append((src[i], dst[j], end - pos))
        pos = end
        if math.isclose(end, (i + 1) / a):
            i += 1
        if math.isclose(end, (j + 1) / b):
            j += 1
    return out


def strategy_traffic(graph: OpGraph, strategy: Strategy) -> Traffic:
    """The per-iteration traffic of ``graph`` (at the global batch) under ``strategy``.

    Examples
    --------
    DLRM's pattern: a table on server 0 feeding a data-parallel layer on 2 servers.

    >>> g = OpGraph([{"id": "emb", "compute_s": 0.0, "params_bytes": 100.0},
    ...              {"id": "mlp", "compute_s": 1.0, "params_bytes": 6.0}],
    ...             [{"src": "emb", "dst": "mlp", "bytes": 8.0}])
    >>> s = Strategy(2, {"emb": OpConfig(1, 0), "mlp": OpConfig(2)})
    >>> t = strategy_traffic(g, s)
    >>> t.matrix_bytes.tolist(), [(a.members, a.bytes) for a in t.allreduce]
    ([[0.0, 2.0], [2.0, 0.0]], [((0, 1), 6.0)])
    """
    strategy.check(graph)
    n = strategy.servers
    matrix = np.zeros((n, n))
    members = {op.id: strategy.configs[op.id].members(n) for op in graph.ops}
    for e in graph.edges:
        if e.bytes <= 0:
            continue
        for a, b, fraction in _shard_overlap(members[e.src], members[e.dst]):
            if a != b:
                matrix[a, b] += 0.5 * e.bytes * fraction
                matrix[b, a] += 0.5 * e.bytes * fraction
    groups: dict[tuple, float] = {}
    for op in graph.ops:
        m = members[op.id]
        if len(m) > 1 and op.params_bytes > 0:
            groups[m] = groups.get(m, 0.0) + op.params_bytes
    return Traffic(matrix, [AllReduce(m, b) for m, b in sorted(groups.items())])


def strategy_compute_s(graph: OpGraph, strategy: Strategy) -> float:
    """The compute term: the larger of the busiest server's load (each op's
    ``compute_s`` at the global batch over its servers, summed per server) and the
    critical path of the op graph with each op taking ``compute_s / replicas`` (ops
    on other servers overlap only where the graph lets them: layers of a chain run one
    after another wherever they are placed).

    Examples
    --------
    A chain of two layers on disjoint halves takes both layers' time, not the larger.

    >>> g = OpGraph([{"id": "a", "compute_s": 4.0}, {"id": "b", "compute_s": 4.0}],
    ...             [{"src": "a", "dst": "b", "bytes": 0.0}])
    >>> strategy_compute_s(g, Strategy(4, {"a": OpConfig(2, 0), "b": OpConfig(2, 1)}))
    4.0
    >>> strategy_compute_s(g, data_parallel(g, 4))
    2.0
    """
    strategy.check(graph)
    load = np.zeros(strategy.servers)
    duration = {}
    for op in graph.ops:
        c = strategy.configs[op.id]
        duration[op.id] = op.compute_s / c.replicas
        load[list(c.members(strategy.servers))] += duration[op.id]
    preds: dict[str, list[str]] = {}
    for e in graph.edges:
        preds.setdefault(e.dst, []).append(e.src)
    finish: dict[str, float] = {}
    for op in graph.topological_order():
        finish[op] = max((finish[p] for p in preds.get(op, ())), default=0.0) + duration[op]
    return float(max(load.max(), max(finish.values(), default=0.0)))


def activation_time_s(fabric: Fabric, allocation: Allocation, traffic: Traffic) -> float:
    """The time ``fabric``, configured as ``allocation`` for the whole iteration,
    takes to deliver ``traffic``'s point-to-point bytes alone.

    A direct-connect fabric is scored on its chosen topology and routes by the
    ``topology`` kind's own ``evaluate`` (the AllReduce groups' bytes set to 0); a
    fabric whose configuration does not depend on the traffic (Fat-tree, switch)
    prices the matrix alone.
    """
    if not traffic.matrix_bytes.any():
        return 0.0
    mp_only = Traffic(traffic.matrix_bytes, [AllReduce(g.members, 0.0)
                                             for g in traffic.allreduce])
    if isinstance(fabric, DirectConnect):
        from fabricopt.problems.topology import TopologyInstance, evaluate

        if allocation.result is None:
            return math.inf
        instance = TopologyInstance.from_dict(fabric.instance(mp_only))
        return float(evaluate(instance, allocation.result.solution))
    return float(fabric.allocate(mp_only).comm_time_s)


@dataclass(frozen=True, eq=False)
class StrategyTime:
    """One iteration of a strategy on a fabric (see the module docstring)."""

    total_s: float
    compute_s: float
    mp_s: float
    allreduce_s: float
    fabric_s: float
    strategy: Strategy
    allocation: Allocation | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {"iteration_s": self.total_s, "compute_s": self.compute_s, "mp_s": self.mp_s,
                "allreduce_s": self.allreduce_s, "fabric_s": self.fabric_s,
                "strategy": self.strategy.summary()}


def price_strategy(graph: OpGraph, strategy: Strategy, fabric: Fabric, *,
                   memory_bytes: float | None = None,
                   training_bytes_per_param: float = TRAINING_BYTES_PER_PARAM,
                   allocation: Allocation | None = None) -> StrategyTime:
    """The iteration time of ``strategy`` on ``fabric`` (see the module docstring).

    Parameters
    ----------
    graph : OpGraph
        At the global batch.
    strategy : Strategy
    fabric : Fabric
        Configured for the strategy's traffic (``fabric.allocate``) unless
        ``allocation`` is given.
    memory_bytes : float, optional
        Per-server memory; a strategy that overfills a server is infeasible.
    training_bytes_per_param : float
        Memory per parameter.
    allocation : Allocation, optional
        A configuration to price on instead (it must be for this strategy's traffic).

    Raises
    ------
    InfeasibleInstance
        If a server's training state exceeds ``memory_bytes``.

    Examples
    --------
    >>> from fabricopt.fabrics.models import ElectFlat
    >>> g = OpGraph([{"id": "a", "compute_s": 4.0, "params_bytes": 1e9}], [])
    >>> t = price_strategy(g, data_parallel(g, 4), ElectFlat(8.0))
    >>> t.compute_s, round(t.allreduce_s, 3)
    (1.0, 1.5)
    """
    if memory_bytes is not None:
        used = memory_bytes_per_server(graph, strategy,
                                       training_bytes_per_param=training_bytes_per_param)
        if used.max() > memory_bytes:
            raise InfeasibleInstance(f"server {int(used.argmax())} holds "
                                     f"{used.max() / 1e9:.1f} GB of training state, more "
                                     f"than {memory_bytes / 1e9:.0f} GB")
    traffic = strategy_traffic(graph, strategy)
    if allocation is None:
        allocation = fabric.allocate(traffic)
    compute_s = strategy_compute_s(graph, strategy)
    mp_s = activation_time_s(fabric, allocation, traffic)
    allreduce_s = allocation.allreduce_s()
    total = max(compute_s + mp_s + allreduce_s, allocation.comm_time_s)
    return StrategyTime(total, compute_s, mp_s, allreduce_s, allocation.comm_time_s, strategy,
                        allocation)
