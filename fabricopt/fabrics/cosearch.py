"""TopoOpt's alternating optimization: a per-operator strategy search that sees the
topology, and a topology built for the strategy it finds.

TopoOpt (§4.1) splits the search into two planes and alternates: FlexFlow's MCMC
search over parallelization strategies on a fixed topology (Comp. x Comm.), then
TopologyFinder on the traffic of the best strategy (Comm. x Topo.), until the
iteration time stops improving or a number of rounds is reached.

- :func:`search_strategy` is the strategy plane: a seeded simulated-annealing walk
  over per-operator configurations (:class:`~fabricopt.fabrics.strategies.OpConfig`).
  A move re-draws one op's configuration (a random group size and offset) or, with
  probability ``propagate`` (FlexFlow's ``--enable-propagation``), copies a
  neighbouring op's; a worse strategy is accepted with probability
  ``exp(-alpha * (t - t_current) / t_current)`` (ours: a relative form of FlexFlow's
  ``exp(-alpha * (t - t_current))``, so ``alpha`` does not depend on the time unit);
  strategies that overfill a server's memory are rejected. Every ``budget // 10``
  steps the walk restarts from the best strategy (FlexFlow's reset).
- :class:`FixedTopology` prices a strategy on a topology that stays fixed: one
  shortest path per pair (the artifact's ``ShortestPathNetworkRoutingStrategy``),
  AllReduce rings over each group's servers in order, both directions. It is the
  search's cost model on a direct-connect fabric; each round's reported time is the
  fabric's own (:func:`~fabricopt.fabrics.strategies.price_strategy`: TopologyFinder
  on the round's strategy, its rings and multipath routes, scored by the
  ``topology`` kind).
- :func:`alternate` runs the rounds and records each one's iteration time;
  :func:`one_shot` is the path without the alternation: the strategy searched on the
  ideal switch of the same per-server bandwidth (a topology-blind FlexFlow), then one
  TopologyFinder call for it.

References
----------
.. [1] W. Wang et al., "TopoOpt", NSDI 2023, §4.1 (alternating optimization), §4.2
   (TopologyFinder).
.. [2] Z. Jia, M. Zaharia, A. Aiken, "Beyond Data and Model Parallelism for Deep
   Neural Networks" (FlexFlow), MLSys 2019, §5 (MCMC over strategies).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import shortest_path

from fabricopt.errors import InfeasibleInstance, InvalidArgument
from fabricopt.problems._validate import as_float, as_int
from fabricopt.problems.opgraph import OpGraph
from fabricopt.fabrics.models import DirectConnect, ElectFlat, Fabric
from fabricopt.fabrics.strategies import (OpConfig, Strategy, StrategyTime,
                                          memory_bytes_per_server, price_strategy,
                                          replica_counts, strategy_compute_s, strategy_traffic)
from fabricopt.fabrics.traffic import Traffic, ring_allreduce_bytes
from fabricopt.fabrics.workloads import TRAINING_BYTES_PER_PARAM

__all__ = ["FixedTopology", "SearchResult", "search_strategy", "Round", "Alternation",
           "alternate", "one_shot"]


class FixedTopology:
    """Prices traffic on fixed symmetric link counts: one shortest path per pair.

    Parameters
    ----------
    counts : array-like, shape (n, n)
        Links between servers (symmetric, zero diagonal).
    link_gbps : float
        Capacity of one link in each direction.
    rings : sequence of (order, share, bytes)
        Ring orders to reuse for groups of the same servers (an allocation's rings).

    Raises
    ------
    InfeasibleInstance
        If the links do not connect every server.

    Examples
    --------
    A 4-server ring; 0 -> 2 takes two hops.

    >>> ring = np.array([[0, 1, 0, 1], [1, 0, 1, 0], [0, 1, 0, 1], [1, 0, 1, 0]])
    >>> topo = FixedTopology(ring, 8.0)
    >>> demand = np.zeros((4, 4)); demand[0, 2] = 1e9
    >>> topo.busiest_link_s(demand), int(topo.hops[0, 2])
    (1.0, 2)
    """

    def __init__(self, counts, link_gbps: float, rings=()):
        counts = np.asarray(counts, dtype=np.int64)
        # Ring orders TopologyFinder chose, by member set: (order, share) lists.
        self._rings: dict[frozenset, list] = {}
        for order, share, _ in rings:
            self._rings.setdefault(frozenset(order), []).append((np.asarray(order), share))
        n = counts.shape[0]
        self.link_gbps = as_float("link_gbps", link_gbps, positive=True, error=InvalidArgument)
        graph = csr_matrix(counts > 0)
        dist, pred = shortest_path(graph, method="D", unweighted=True,
                                   return_predecessors=True)
        if np.isinf(dist).any():
            raise InfeasibleInstance("the topology does not connect every server")
        self.hops = dist.astype(np.int64)
        links = np.argwhere(counts > 0)
        index = {(int(a), int(b)): k for k, (a, b) in enumerate(links)}
        capacity = counts[links[:, 0], links[:, 1]] * self.link_gbps
        rows, cols = [], []
        bottleneck = np.full((n, n), np.inf)
        for s in range(n):
            for t in range(n):
                if s == t:
                    continue
                v, slowest = t, np.inf
                while v != s:
                    u = int(pred[s, v])
                    k = index[(u, v)]
                    rows.append(s * n + t)
                    cols.append(k)
                    slowest = min(slowest, capacity[k])
                    v = u
                bottleneck[s, t] = slowest
        self._incidence = csr_matrix((np.ones(len(rows)), (rows, cols)),
                                     shape=(n * n, len(links)))
        self._capacity_bytes_per_s = capacity * 1e9 / 8.0
        self.pair_gbps = np.where(np.isinf(bottleneck), 0.0, bottleneck)
        self.servers = n

    def busiest_link_s(self, demand: np.ndarray) -> float:
        """The busiest directed link's time for ``demand`` bytes, in seconds."""
        loads = self._incidence.T @ np.asarray(demand, dtype=float).ravel()
        return float((loads / self._capacity_bytes_per_s).max()) if loads.size else 0.0

    def ring_demand(self, traffic: Traffic) -> tuple[np.ndarray, float]:
        """(bytes per pair of every group's rings, the slowest ring's time): the rings
        TopologyFinder chose for a group of the same servers, else the servers in
        order, both directions."""
        demand = np.zeros((self.servers, self.servers))
        slowest = 0.0
        for g in traffic.allreduce:
            src = np.asarray(g.members)
            orders = self._rings.get(frozenset(g.members)) or [(src, 0.5), (src[::-1], 0.5)]
            for order, share in orders:
                per_hop = share * ring_allreduce_bytes(len(src), g.bytes)
                if per_hop <= 0:
                    continue
                nxt = np.roll(order, -1)
                demand[order, nxt] += per_hop
                rate = float(self.pair_gbps[order, nxt].min())
                slowest = max(slowest, 8.0 * per_hop / (rate * 1e9))
        return demand, slowest

    def price(self, graph: OpGraph, strategy: Strategy) -> StrategyTime:
        """The iteration time of ``strategy`` on this topology (the model of
        :func:`~fabricopt.fabrics.strategies.price_strategy`)."""
        traffic = strategy_traffic(graph, strategy)
        rings, allreduce_s = self.ring_demand(traffic)
        mp_s = self.busiest_link_s(traffic.matrix_bytes)
        fabric_s = self.busiest_link_s(traffic.matrix_bytes + rings)
        compute_s = strategy_compute_s(graph, strategy)
        return StrategyTime(max(compute_s + mp_s + allreduce_s, fabric_s), compute_s, mp_s,
                            allreduce_s, fabric_s, strategy)

    @classmethod
    def of(cls, fabric: DirectConnect, allocation) -> "FixedTopology":
        """The topology a direct-connect fabric's allocation built."""
        n = allocation.traffic.nodes
        counts = np.zeros((n, n), dtype=np.int64)
        for i, j, c in allocation.result.solution.to_dict()["links"]:
            counts[i, j] += c
            counts[j, i] += c
        return cls(counts, fabric.link_gbps, allocation.rings)


@dataclass(frozen=True)
class SearchResult:
    """The best strategy a search found, its time under the search's cost model, the
    number of strategies priced and how many were accepted."""

    strategy: Strategy
    time_s: float
    evaluations: int
    accepted: int


def _neighbours(graph: OpGraph) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {op.id: [] for op in graph.ops}
    for e in graph.edges:
        out[e.src].append(e.dst)
        out[e.dst].append(e.src)
    return out


def search_strategy(graph: OpGraph, start: Strategy,
                    price: Callable[[Strategy], float], *, budget: int = 200,
                    seed: int = 0, alpha: float = 20.0, propagate: float = 0.25,
                    memory_bytes: float | None = None,
                    training_bytes_per_param: float = TRAINING_BYTES_PER_PARAM
                    ) -> SearchResult:
    """Simulated annealing over per-operator configurations (see the module docstring).

    Parameters
    ----------
    graph : OpGraph
        At the global batch.
    start : Strategy
        Where the walk begins (it must fit in memory).
    price : callable
        Strategy -> iteration seconds: the cost model the search minimizes.
    budget : int
        Strategies priced after the start.
    seed : int
    alpha : float
        Acceptance temperature on the relative change.
    propagate : float
        Probability that a move copies a neighbour's configuration.
    memory_bytes : float, optional
        Per-server memory; strategies that exceed it are rejected unpriced.

    Returns
    -------
    SearchResult
        Never worse than ``start`` under ``price``.

    Examples
    --------
    Two tables that do not fit on every server next to each other: the search moves
    one table (or both) off the replicated layout.

    >>> from fabricopt.fabrics.strategies import data_parallel, price_strategy
    >>> g = OpGraph([{"id": "t0", "compute_s": 1e-3, "params_bytes": 4e9},
    ...              {"id": "t1", "compute_s": 1e-3, "params_bytes": 4e9}], [])
    >>> slow = lambda s: price_strategy(g, s, ElectFlat(100.0)).total_s
    >>> result = search_strategy(g, data_parallel(g, 4), slow, budget=40, seed=1)
    >>> result.time_s < slow(data_parallel(g, 4))
    True
    """
    budget = as_int("budget", budget, minimum=0, error=InvalidArgument)
    alpha = as_float("alpha", alpha, minimum=0.0, error=InvalidArgument)
    propagate = as_float("propagate", propagate, minimum=0.0, maximum=1.0,
                         error=InvalidArgument)
    start.check(graph)
    rng = np.random.default_rng(seed)
    n = start.servers
    sizes = replica_counts(n)
    ops = [op.id for op in graph.ops]
    near = _neighbours(graph)

    def fits(s: Strategy) -> bool:
        return memory_bytes is None or memory_bytes_per_server(
            graph, s, training_bytes_per_param=training_bytes_per_param).max() <= memory_bytes

    current, current_t = start, float(price(start))
    best, best_t = current, current_t
    evaluations, accepted = 0, 0
    reset = max(1, budget // 10)
    for step in range(budget):
        if step and step % reset == 0:
            current, current_t = best, best_t
        op = ops[int(rng.integers(len(ops)))]
        if near[op] and rng.random() < propagate:
            other = near[op][int(rng.integers(len(near[op])))]
            config = current.configs[other]
        else:
            g = sizes[int(rng.integers(len(sizes)))]
            config = OpConfig(g, int(rng.integers(n // g)))
        if config == current.configs[op]:
            continue
        candidate = current.replace(op, config)
        if not fits(candidate):
            continue
        t = float(price(candidate))
        evaluations += 1
        if t < current_t or (math.isfinite(t) and current_t > 0 and
                             rng.random() < math.exp(-alpha * (t - current_t) / current_t)):
            current, current_t = candidate, t
            accepted += 1
            if t < best_t:
                best, best_t = candidate, t
    return SearchResult(best, best_t, evaluations, accepted)


@dataclass(frozen=True)
class Round:
    """One round: the strategy searched on the previous topology, its time there
    (the search's model), and its time on the topology TopologyFinder built for it."""

    strategy: Strategy
    searched_s: float
    iteration_s: float
    evaluations: int


@dataclass(frozen=True, eq=False)
class Alternation:
    """What :func:`alternate` did: the rounds and the best iteration found."""

    best: StrategyTime
    rounds: tuple = field(default=())

    def round_times_s(self) -> list[float]:
        return [r.iteration_s for r in self.rounds]


def _fabric_time(graph, strategy, fabric, memory_bytes, training_bytes_per_param):
    return price_strategy(graph, strategy, fabric, memory_bytes=memory_bytes,
                          training_bytes_per_param=training_bytes_per_param)


def one_shot(graph: OpGraph, start: Strategy, fabric: Fabric, *, budget: int = 200,
             seed: int = 0, memory_bytes: float | None = None,
             training_bytes_per_param: float = TRAINING_BYTES_PER_PARAM,
             alpha: float = 20.0) -> StrategyTime:
    """The strategy searched on the ideal switch of ``fabric``'s per-server bandwidth,
    priced once on ``fabric`` (for a direct-connect fabric: one TopologyFinder call).
    On an electrical fabric the search prices on the fabric itself."""
    ideal = ElectFlat(fabric.per_node_gbps) if isinstance(fabric, DirectConnect) else fabric

    def model(s):
        return price_strategy(graph, s, ideal).total_s

    found = search_strategy(graph, start, model, budget=budget, seed=seed, alpha=alpha,
                            memory_bytes=memory_bytes,
                            training_bytes_per_param=training_bytes_per_param)
    return _fabric_time(graph, found.strategy, fabric, memory_bytes, training_bytes_per_param)


def alternate(graph: OpGraph, start: Strategy, fabric: DirectConnect, *, rounds: int = 4,
              budget: int = 200, seed: int = 0, memory_bytes: float | None = None,
              training_bytes_per_param: float = TRAINING_BYTES_PER_PARAM,
              alpha: float = 20.0, first: StrategyTime | None = None) -> Alternation:
    """TopoOpt's alternation on a direct-connect fabric (see the module docstring).

    Round 0 prices ``start`` (or takes ``first``, a priced strategy such as
    :func:`one_shot`'s) on the topology TopologyFinder builds for it. Each further round
    searches strategies on the last topology (:class:`FixedTopology`, ``budget``
    strategies), builds the topology for the best one and prices it there; the
    alternation stops after ``rounds`` rounds or at the first round that does not
    improve on the best iteration time.

    Returns
    -------
    Alternation
        ``best`` (the fastest strategy with the topology it was priced on) and every
        round, round 0 included.

    Examples
    --------
    >>> from fabricopt.fabrics.strategies import data_parallel
    >>> g = OpGraph([{"id": "a", "compute_s": 1e-3, "params_bytes": 1e8},
    ...              {"id": "b", "compute_s": 1e-3, "params_bytes": 1e8}],
    ...             [{"src": "a", "dst": "b", "bytes": 1e6}])
    >>> run = alternate(g, data_parallel(g, 8), DirectConnect(4, 25.0), rounds=2, budget=10)
    >>> run.best.total_s == min(run.round_times_s())
    True
    """
    rounds = as_int("rounds", rounds, minimum=0, error=InvalidArgument)
    if not isinstance(fabric, DirectConnect):
        raise InvalidArgument(f"fabric = {fabric.label}: the alternation builds topologies, "
                              f"it needs a direct-connect fabric")
    best = first if first is not None else _fabric_time(graph, start, fabric, memory_bytes,
                                                        training_bytes_per_param)
    history = [Round(best.strategy, best.total_s, best.total_s, 0)]
    for r in range(1, rounds + 1):
        topology = FixedTopology.of(fabric, best.allocation)
        found = search_strategy(graph, best.strategy,
                                lambda s: topology.price(graph, s).total_s, budget=budget,
                                seed=seed + r, alpha=alpha, memory_bytes=memory_bytes,
                                training_bytes_per_param=training_bytes_per_param)
        if found.strategy == best.strategy:
            history.append(Round(found.strategy, found.time_s, best.total_s,
                                 found.evaluations))
            break
        priced = _fabric_time(graph, found.strategy, fabric, memory_bytes,
                              training_bytes_per_param)
        history.append(Round(found.strategy, found.time_s, priced.total_s, found.evaluations))
        if priced.total_s >= best.total_s:
            break
        best = priced
    return Alternation(best, tuple(history))
