"""Baselines for the ``topology`` kind: a plain ring, a random regular graph, and
TopoOpt's OCS-reconfig demand greedy.

All three give each AllReduce group its members in ascending order, both directions
(:func:`~fabricopt.algorithms.topology.routing.plain_rings`), and route every demand
over up to ``paths`` equal-length shortest paths, split evenly.

References
----------
.. [1] W. Wang et al., "TopoOpt", NSDI 2023 (arXiv 2202.00433), §5 and Appendix D
   (OCS-reconfig); the artifact's ``DemandHeuristicNetworkOptimizer`` in
   Flasew/ffsim-opera ``src/clos/dyn_net_sch.cpp`` (fabricopt docs, *Departures*,
   topoopt-4.1).
"""

from __future__ import annotations

from fabricopt.errors import InvalidArgument

import heapq
import math

import networkx as nx
import numpy as np
from scipy.sparse.csgraph import connected_components

from fabricopt.problems._validate import as_int
from fabricopt.problems.topology import TopologyInstance, TopologySolution, demand_pairs
from fabricopt.algorithms.topology.routing import (RouteBook, add_links, assemble,
                                                   degree_one_solution, plain_rings,
                                                   route_shortest, shortest_routing_bound,
                                                   symmetric_counts)

__all__ = ["ring", "ring_lower_bound", "random_regular", "random_regular_counts", "ocs_reconfig",
           "ocs_greedy_counts", "connect_components"]


def _finish(instance: TopologyInstance, counts: np.ndarray, paths: int,
            rng: np.random.Generator) -> TopologySolution:
    rings = plain_rings(instance)
    book = RouteBook()
    route_shortest(book, counts, demand_pairs(instance, rings),
                   paths=as_int("paths", paths, minimum=1, error=InvalidArgument), rng=rng)
    return assemble(counts, rings, book)


def ring(instance: TopologyInstance, *, seed: int = 0, paths: int = 4) -> TopologySolution:
    """``degree // 2`` parallel copies of the bidirectional ring 0, 1, ..., n-1.

    A ring uses two interfaces per server (one to each neighbour); with an odd degree
    the last interface stays unused. With ``degree = 1`` the only solutions are
    matchings (:func:`~fabricopt.algorithms.topology.routing.degree_one_solution`).

    Examples
    --------
    >>> from fabricopt.problems.topology import generate
    >>> ring(generate(seed=0, servers=4, degree=5)).links
    ((0, 1, 2), (0, 3, 2), (1, 2, 2), (2, 3, 2))
    """
    if instance.degree == 1:
        return degree_one_solution(instance)
    return _finish(instance, _ring_counts(instance), paths, np.random.default_rng(seed))


def _ring_counts(instance: TopologyInstance):
    """The ring's link counts, sparse (O(n) memory)."""
    n = instance.servers
    servers = np.arange(n)
    return symmetric_counts(n, servers, (servers + 1) % n, instance.degree // 2)



def _bridges(counts: np.ndarray) -> set[tuple[int, int]]:
    """Links (i < j) whose removal disconnects their component; parallel links never do."""
    simple = nx.Graph((int(i), int(j)) for i, j in np.argwhere(np.triu(counts, 1) > 0))
    return {(min(a, b), max(a, b)) for a, b in nx.bridges(simple) if counts[a, b] == 1}


def _cheapest_link(counts: np.ndarray, members: list[int], weight: np.ndarray,
                   avoid: set[tuple[int, int]]) -> tuple[int, int] | None:
    """The lowest-weight link inside ``members`` not in ``avoid`` (None if there is none)."""
    best = None
    for i in members:
        for j in members:
            if i < j and counts[i, j] > 0 and (i, j) not in avoid:
                if best is None or weight[i, j] < weight[best]:
                    best = (i, j)
    return best


def connect_components(counts: np.ndarray, degree: int, weight: np.ndarray) -> None:
    """Join the components of a multigraph (in place), never exceeding ``degree``.

    Two components are merged, in order of preference, by a link between servers with
    free interfaces; by moving a singleton onto a link (a, b) of the other: a-s-b; or
    by a two-link swap (a0,a1),(b0,b1) -> (a0,b1),(a1,b0) of each one's lowest-
    ``weight`` link. A component without free interfaces has more links than a tree,
    so it always has a link that is not a bridge; swapping that one keeps the result
    connected (the artifact's ``connect_cc`` may pick two bridges and fail).

    Parameters
    ----------
    counts : array of int
        Symmetric link counts, modified in place.
    degree : int
        >= 2.
    weight : array
        Pair demand; the lowest-demand links are the ones given up.
    """
    while True:
        graph = nx.Graph()
        graph.add_nodes_from(range(len(counts)))
        graph.add_edges_from((int(i), int(j)) for i, j in np.argwhere(counts > 0))
        comps = sorted((sorted(c) for c in nx.connected_components(graph)), key=lambda c: c[0])
        if len(comps) == 1:
            return
        a, b = comps[0], comps[1]
        used = counts.sum(axis=1)
        free_a = [v for v in a if used[v] < degree]
        free_b = [v for v in b if used[v] < degree]
        if free_a and free_b:
            add_links(counts, free_a[0], free_b[0])
            continue
        if len(b) == 1 or len(a) == 1:
            single, other = (b[0], a) if len(b) == 1 else (a[0], b)
            i, j = _cheapest_link(counts, other, weight, set())
            add_links(counts, i, j, -1)
            add_links(counts, single, i)
            add_links(counts, single, j)
            continue
        if free_a:  # make ``a`` the side without free interfaces
            a, b = b, a
        bridges = _bridges(counts)
        a0, a1 = _cheapest_link(counts, a, weight, bridges)
        b0, b1 = (_cheapest_link(counts, b, weight, bridges)
                  or _cheapest_link(counts, b, weight, set()))
        add_links(counts, a0, a1, -1)
        add_links(counts, b0, b1, -1)
        add_links(counts, a0, b1)
        add_links(counts, a1, b0)


def random_regular_counts(n: int, degree: int, rng: np.random.Generator) -> np.ndarray:
    """A random connected ``degree``-regular multigraph without self-loops.

    The configuration model: ``n * degree`` interface stubs paired at random; a
    self-loop is swapped with a random other pair, which keeps every degree. With
    ``n * degree`` odd one server keeps an interface free. Components are then joined
    by :func:`connect_components`.
    """
    pairs = _random_regular_pairs(n, degree, rng)
    counts = np.zeros((n, n), dtype=np.int64)
    for u, v in pairs:
        add_links(counts, int(u), int(v))
    connect_components(counts, degree, np.zeros((n, n)))
    return counts


def _random_regular_pairs(n: int, degree: int, rng: np.random.Generator) -> np.ndarray:
    """The linked stub pairs of :func:`random_regular_counts` before components are
    joined, shape (links, 2)."""
    stubs = np.repeat(np.arange(n), degree)
    if stubs.size % 2:
        stubs = np.delete(stubs, rng.integers(stubs.size))
    pairs = rng.permutation(stubs).reshape(-1, 2)
    # A swap never makes a self-loop (the other pair holds no v), so only the pairs
    # that start as loops are visited, in order, as a scan of every pair would.
    for k in np.flatnonzero(pairs[:, 0] == pairs[:, 1]).tolist():
        while pairs[k, 0] == pairs[k, 1]:
            v = pairs[k, 0]
            others = np.flatnonzero((pairs[:, 0] != v) & (pairs[:, 1] != v))
            m = others[rng.integers(len(others))]
            pairs[k, 1], pairs[m, 0] = pairs[m, 0], pairs[k, 1]
    return pairs


def _joined(n: int, degree: int, counts, weight):
    """Sparse ``counts`` if their links join all n servers, else the dense counts
    :func:`connect_components` joins with ``weight()`` (a repair reads and rewrites the
    n x n matrix; a connected graph needs none)."""
    if connected_components(counts, directed=False)[0] == 1:
        return counts
    dense = counts.toarray()
    connect_components(dense, degree, weight())
    return dense


def random_regular(instance: TopologyInstance, *, seed: int = 0,
                   paths: int = 4) -> TopologySolution:
    """A random ``degree``-regular multigraph (an expander, as in Jellyfish), shortest paths.

    Examples
    --------
    >>> from fabricopt.problems.topology import check, generate
    >>> inst = generate(seed=0, servers=8, degree=3)
    >>> bool(check(inst, random_regular(inst, seed=1)))
    True
    """
    if instance.degree == 1:
        return degree_one_solution(instance)
    rng = np.random.default_rng(seed)
    n = instance.servers
    pairs = _random_regular_pairs(n, instance.degree, rng)
    counts = _joined(n, instance.degree, symmetric_counts(n, pairs[:, 0], pairs[:, 1]),
                     lambda: np.zeros((n, n)))
    return _finish(instance, counts, paths, rng)


def ocs_greedy_counts(pair_bytes: np.ndarray, degree: int) -> np.ndarray:
    """The OCS-reconfig greedy: the k-th parallel link of a pair is worth D / 2^(k-1).

    Repeatedly link the pair of highest remaining worth whose two servers both have a
    free interface; its worth then halves (whole bytes, as the artifact does). This
    maximizes ``sum_pairs D * sum_{k=1..L} 2^-(k-1)`` greedily.

    Parameters
    ----------
    pair_bytes : array, shape (n, n)
        Symmetric pair demand D{i,j}.
    degree : int

    Examples
    --------
    >>> d = np.array([[0, 8, 1], [8, 0, 3], [1, 3, 0]])
    >>> ocs_greedy_counts(d, 2).tolist()
    [[0, 2, 0], [2, 0, 0], [0, 0, 0]]
    """
    n = pair_bytes.shape[0]
    i, j = np.nonzero(np.triu(pair_bytes, 1) >= 1)
    links, _ = _ocs_greedy(n, i, j, pair_bytes[i, j], degree)
    counts = np.zeros((n, n), dtype=np.int64)
    for (a, b), copies in links.items():
        add_links(counts, a, b, copies)
    return counts


def _ocs_greedy(n: int, i, j, worth, degree: int) -> tuple[dict, np.ndarray]:
    """:func:`ocs_greedy_counts` on the pairs ``i[k] < j[k]`` of demand ``worth[k] >= 1``
    (the others are never linked), in O(pairs): ``({(i, j): links}, used interfaces)``."""
    # (worth, i, j) keys are distinct, so the order of the heap's entries is theirs
    heap = [(-math.floor(w), a, b) for a, b, w in zip(np.asarray(i).tolist(),
                                                     np.asarray(j).tolist(),
                                                     np.asarray(worth).tolist())]
    heapq.heapify(heap)
    used = np.zeros(n, dtype=np.int64)
    links: dict[tuple[int, int], int] = {}
    while heap:
        worth, i, j = heapq.heappop(heap)
        if used[i] >= degree or used[j] >= degree:
            continue  # a full server never frees an interface again: drop the entry
        links[i, j] = links.get((i, j), 0) + 1
        used[i] += 1
        used[j] += 1
        worth = (-worth) // 2
        if worth > 0:
            heapq.heappush(heap, (-worth, i, j))
    return links, used


def _connect_unused(links: dict, used: np.ndarray, degree: int,
                    rng: np.random.Generator) -> None:
    """Servers without links get a random path among them; then random pairs of servers
    with free interfaces are linked until at most one has any (the artifact's
    ``connect_unused_node``). ``links`` and ``used`` are updated in place."""
    def link(u: int, v: int) -> None:
        key = (min(u, v), max(u, v))
        links[key] = links.get(key, 0) + 1
        used[[u, v]] += 1

    unused = rng.permutation(np.flatnonzero(used == 0)).tolist()
    for u, v in zip(unused, unused[1:]):
        link(u, v)
    while True:
        free = np.flatnonzero(used < degree)
        if len(free) < 2:
            return
        u, v = rng.choice(free, size=2, replace=False).tolist()
        link(u, v)


def ocs_reconfig(instance: TopologyInstance, *, seed: int = 0,
                 paths: int = 4) -> TopologySolution:
    """TopoOpt's OCS-reconfig baseline: demand greedy with halving utility, then repairs.

    The demand includes the plain rings' AllReduce traffic; a pair's demand is
    ``max(D[i,j], D[j,i])``. After :func:`ocs_greedy_counts`, unused servers and free
    interfaces are linked at random and components joined (:func:`connect_components`).
    One reconfiguration of the artifact's periodic loop: for a fixed traffic matrix its
    later rounds see the same demand.

    Examples
    --------
    >>> from fabricopt.problems.topology import check, generate
    >>> inst = generate(seed=2, servers=8, degree=4)
    >>> bool(check(inst, ocs_reconfig(inst)))
    True
    """
    if instance.degree == 1:
        return degree_one_solution(instance)
    rng = np.random.default_rng(seed)
    n = instance.servers
    demand = demand_pairs(instance, plain_rings(instance))
    # max(D[i, j], D[j, i]) on the pairs i < j with demand either way, sparse
    low = np.minimum(demand.src, demand.dst)
    high = np.maximum(demand.src, demand.dst)
    i, j = np.unique(np.stack([low, high]), axis=1)
    pair = np.maximum(demand.get(i, j), demand.get(j, i))
    big = pair >= 1
    links, used = _ocs_greedy(n, i[big], j[big], pair[big], instance.degree)
    _connect_unused(links, used, instance.degree, rng)
    ends = np.array(list(links), dtype=np.int64).reshape(-1, 2)
    counts = _joined(n, instance.degree,
                     symmetric_counts(n, ends[:, 0], ends[:, 1], list(links.values())),
                     lambda: _PairWeights(zip(zip(i.tolist(), j.tolist()), pair.tolist())))
    return _finish(instance, counts, paths, rng)


class _PairWeights(dict):
    """Pair demand ``weight[i, j]`` (i < j) where some is listed, 0.0 elsewhere: what
    :func:`connect_components` reads of a dense matrix, in O(pairs)."""

    def __missing__(self, key):
        return 0.0


def ring_lower_bound(instance: TopologyInstance) -> float:
    """A lower bound on ``evaluate(instance, ring(instance))`` for any seed and ``paths``,
    without routing: :func:`~fabricopt.algorithms.topology.routing.shortest_routing_bound`
    on the ring's links and demand (0 with ``degree = 1``, where ``ring`` is a matching).

    Examples
    --------
    >>> from fabricopt.problems.topology import evaluate, generate
    >>> inst = generate(seed=0, servers=16, degree=4)
    >>> ring_lower_bound(inst) <= evaluate(inst, ring(inst))
    True
    """
    if instance.degree == 1:
        return 0.0
    n = instance.servers

    def ring_hops(src, dst):  # the shorter way round
        ahead = np.abs(src - dst)
        return np.minimum(ahead, n - ahead).astype(float)

    return shortest_routing_bound(_ring_counts(instance),
                                  demand_pairs(instance, plain_rings(instance)),
                                  instance.link_bytes_per_s, hops=ring_hops)
