"""Shared pieces of the ``topology`` heuristics: shortest-path routing, assembling a
solution from link counts, rings and routes, and the degree-1 case.

Every heuristic of the kind builds an n x n symmetric matrix of link counts, a list of
:class:`~fabricopt.problems.topology.Ring` and a :class:`RouteBook` of paths, then
calls :func:`assemble`.
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import shortest_path

from fabricopt.errors import InfeasibleInstance, InvalidArgument
from fabricopt.problems.topology import (Path, Ring, Route, TopologyInstance, TopologySolution,
                                         busiest_link_time, path_loads, ring_traffic)

__all__ = ["ShortestPaths", "RouteBook", "route_shortest", "shortest_routing_bound",
           "plain_rings", "merged_rings", "assemble", "assembled_score",
           "degree_one_solution", "add_links"]

# Sources per breadth-first-search call: bounds its n x sources matrices.
_SOURCES_PER_CALL = 256
# Levels of the all-sources-at-once search before it hands over to scipy's.
_FRONTIER_LEVELS = 24


def hop_counts(graph: csr_matrix, sources: Sequence[int]) -> np.ndarray:
    """Hop counts from each of ``sources`` to every server (-1 where unreachable).

    Breadth-first search from all sources at once, one sparse product per level while
    the levels are few (the low-diameter graphs of every method but a plain ring);
    past :data:`_FRONTIER_LEVELS` levels, scipy's search per source (compiled).

    Examples
    --------
    >>> step = np.roll(np.eye(5, dtype=bool), 1, axis=1)
    >>> hop_counts(csr_matrix(step | step.T), [0, 2]).tolist()   # a ring of 5
    [[0, 1, 2, 2, 1], [2, 1, 0, 1, 2]]
    """
    n = graph.shape[0]
    sources = np.asarray(sources, dtype=np.int64)
    adjacency = graph.astype(np.float32)
    hops = np.full((sources.size, n), -1, dtype=np.int64)
    hops[np.arange(sources.size), sources] = 0
    frontier = np.zeros((n, sources.size), dtype=np.float32)  # one column per source
    frontier[sources, np.arange(sources.size)] = 1.0
    level = 0
    while frontier.any():
        level += 1
        if level > _FRONTIER_LEVELS:
            found = shortest_path(graph, method="D", unweighted=True, indices=sources)
            return np.where(np.isinf(found), -1, found).astype(np.int64)
        reached = (adjacency @ frontier > 0) & (hops.T < 0)
        hops.T[reached] = level
        frontier = reached.astype(np.float32)
    return hops


class ShortestPaths:
    """Shortest paths on a link-count matrix, with a seeded choice among equal ones.

    Parameters
    ----------
    counts : array of int, shape (n, n)
        Symmetric parallel-link counts; a pair is adjacent when its count is > 0.
    rng : numpy.random.Generator
        Orders the predecessors when several shortest paths exist.

    Examples
    --------
    >>> counts = np.array([[0, 1, 0, 1], [1, 0, 1, 0], [0, 1, 0, 1], [1, 0, 1, 0]])
    >>> sp = ShortestPaths(counts, np.random.default_rng(0))
    >>> sorted(sp.paths(0, 2, k=4))
    [(0, 1, 2), (0, 3, 2)]
    """

    def __init__(self, counts: np.ndarray, rng: np.random.Generator):
        counts = np.asarray(counts)
        self._neighbours = [np.flatnonzero(row).tolist() for row in counts]
        self._graph = csr_matrix(counts > 0)
        self._rng = rng
        self._dist: dict[int, list[int]] = {}

    def prefetch(self, sources) -> None:
        """Compute the hop counts from every server in ``sources`` in one compiled call
        (one breadth-first search each), instead of one call per source."""
        todo = sorted({int(s) for s in sources if s not in self._dist})
        for start in range(0, len(todo), _SOURCES_PER_CALL):
            chunk = todo[start:start + _SOURCES_PER_CALL]
            for src, row in zip(chunk, hop_counts(self._graph, chunk).tolist()):
                self._dist[src] = row

    def distances(self, src: int) -> np.ndarray:
        """Hop counts from ``src`` (-1 where unreachable), by breadth-first search
        (scipy's, compiled)."""
        self.prefetch((src,))
        return np.array(self._dist[int(src)], dtype=np.int64)

    def paths(self, src: int, dst: int, k: int) -> list[tuple[int, ...]]:
        """Up to ``k`` distinct shortest paths src -> dst (empty if dst is unreachable)."""
        dist = self._dist.get(src)
        if dist is None:
            self.prefetch((src,))
            dist = self._dist[int(src)]
        neighbours = self._neighbours
        if dist[dst] < 0:
            return []
        found: list[tuple[int, ...]] = []
        # Walk back from dst over predecessors (one hop closer to src); every such walk
        # reaches src, so the first k walks are k distinct shortest paths. A stack entry
        # is (server, index of its successor's entry in `trail`): the suffix is read
        # off the trail when a walk reaches src, so a step costs O(1), not O(length).
        trail: list[tuple[int, int]] = []
        stack = [(int(dst), -1)]
        while stack and len(found) < k:
            v, after = stack.pop()
            if v == src:
                path = [v]
                while after >= 0:
                    v, after = trail[after]
                    path.append(v)
                found.append(tuple(path))
                continue
            trail.append((v, after))
            here = len(trail) - 1
            closer = dist[v] - 1
            preds = [u for u in neighbours[v] if dist[u] == closer]
            if len(preds) == 1:  # a permutation of one draws nothing from the generator
                stack.append((preds[0], here))
                continue
            for u in self._rng.permutation(preds)[::-1].tolist():
                stack.append((u, here))
        return found


class RouteBook:
    """Bytes per (src, dst, path), turned into routes with fractions at the end.

    Examples
    --------
    >>> book = RouteBook()
    >>> book.add(0, 2, [(0, 1, 2), (0, 3, 2)], 3.0)
    >>> book.add(0, 2, [(0, 2)], 2.0)
    >>> book.routes()[0]["paths"][0]
    {'nodes': [0, 1, 2], 'fraction': 0.3}
    """

    def __init__(self):
        self._bytes: dict[tuple[int, int], dict[tuple[int, ...], float]] = {}

    def add(self, src: int, dst: int, paths: Sequence[Sequence[int]], volume: float) -> None:
        """Send ``volume`` bytes src -> dst split evenly over ``paths``."""
        if volume <= 0:
            return
        if not paths:
            raise InvalidArgument(f"no path from {src} to {dst}")
        per_path = volume / len(paths)
        entry = self._bytes.setdefault((src, dst), {})
        for path in paths:
            key = tuple(map(int, path))
            entry[key] = entry.get(key, 0.0) + per_path

    def routes(self) -> list[dict]:
        """The routes of docs/formats.rst, topology, pairs and paths in a fixed order."""
        return [route.to_dict() for route in self.typed_routes()]

    def typed_routes(self) -> list[Route]:
        """:meth:`routes` as :class:`~fabricopt.problems.topology.Route` objects, built
        directly (a solution made from dicts converts every path node again)."""
        return [Route(src, dst, tuple(Path(nodes, fraction) for nodes, fraction in paths))
                for src, dst, paths in self.fractions()]

    def fractions(self) -> list[tuple[int, int, list[tuple[tuple[int, ...], float]]]]:
        """``(src, dst, [(nodes, fraction), ...])`` in the order of :meth:`routes`."""
        out = []
        for (src, dst), paths in sorted(self._bytes.items()):
            total = sum(paths.values())
            out.append((src, dst, [(p, b / total) for p, b in sorted(paths.items())]))
        return out


def route_shortest(book: RouteBook, counts: np.ndarray, demand: np.ndarray, *, paths: int,
                   rng: np.random.Generator) -> None:
    """Route every positive ``demand[s, t]`` over up to ``paths`` equal-length shortest
    paths of ``counts``, split evenly.

    Raises
    ------
    InfeasibleInstance
        If some demanded pair is not connected (the caller's topology is at fault).
    """
    sp = ShortestPaths(counts, rng)
    pairs = np.argwhere(demand > 0)
    sp.prefetch(pairs[:, 0].tolist())
    for s, t in pairs:
        s, t = int(s), int(t)
        found = sp.paths(s, t, paths)
        if not found:
            raise InfeasibleInstance(f"servers {s} and {t} have demand but are not connected")
        book.add(s, t, found, float(demand[s, t]))


def shortest_routing_bound(counts: np.ndarray, demand: np.ndarray,
                           link_bytes_per_s: float) -> float:
    """A lower bound on the busiest link's time of any shortest-path routing of
    ``demand`` on ``counts``, in seconds (``inf`` if a demanded pair is disconnected).

    Every byte from s to t crosses exactly ``dist(s, t)`` links whatever shortest paths
    carry it, and the busiest link's time is at least the total load over the total
    capacity (a maximum is at least a weighted mean).

    Examples
    --------
    >>> counts = np.array([[0, 1, 0, 1], [1, 0, 1, 0], [0, 1, 0, 1], [1, 0, 1, 0]])
    >>> demand = np.zeros((4, 4)); demand[0, 2] = 8.0
    >>> float(shortest_routing_bound(counts, demand, 1.0))   # 16 byte-hops, 8 link uses
    2.0
    """
    sources = np.flatnonzero(demand.sum(axis=1) > 0)
    if not sources.size:
        return 0.0
    capacity = float(np.asarray(counts).sum()) * link_bytes_per_s
    if capacity <= 0:
        return math.inf  # demand but no link at all
    graph = csr_matrix(np.asarray(counts) > 0)
    carried = 0.0
    for start in range(0, sources.size, _SOURCES_PER_CALL):
        chunk = sources[start:start + _SOURCES_PER_CALL]
        hops = shortest_path(graph, method="D", unweighted=True, indices=chunk)
        carried += float((demand[chunk] * np.where(demand[chunk] > 0, hops, 0.0)).sum())
    return carried / capacity


def plain_rings(instance: TopologyInstance) -> list[Ring]:
    """Each group's members in ascending order, both directions, half the bytes each."""
    rings = []
    for k, group in enumerate(instance.allreduce):
        order = sorted(group.members)
        rings += [Ring(k, order, 0.5), Ring(k, order[::-1], 0.5)]
    return rings


def _canonical(order: Sequence[int]) -> tuple[int, ...]:
    """The same cyclic order starting at its smallest member."""
    start = int(np.argmin(order))
    return tuple(int(v) for v in order[start:]) + tuple(int(v) for v in order[:start])


def merged_rings(rings: Iterable[Ring]) -> list[Ring]:
    """The rings with equal cyclic orders of a group merged (shares added), sorted."""
    shares: dict[tuple[int, tuple[int, ...]], float] = {}
    for ring in rings:
        key = (ring.group, _canonical(ring.order))
        shares[key] = shares.get(key, 0.0) + ring.share
    return [Ring(g, order, share) for (g, order), share in sorted(shares.items())]


def assemble(counts: np.ndarray, rings: Iterable[Ring], book: RouteBook) -> TopologySolution:
    """A solution from symmetric link counts, rings (equal cyclic orders merged) and routes."""
    counts = np.asarray(counts)
    links = [[int(i), int(j), int(counts[i, j])] for i, j in np.argwhere(np.triu(counts, 1) > 0)]
    return TopologySolution(links, merged_rings(rings), book.typed_routes())


def assembled_score(instance: TopologyInstance, counts: np.ndarray, rings: Sequence[Ring],
                    book: RouteBook) -> float:
    """``evaluate(instance, assemble(counts, rings, book))`` without building the
    solution: the same demand, loads and arithmetic, through the kind's own
    :func:`~fabricopt.problems.topology.path_loads` and
    :func:`~fabricopt.problems.topology.busiest_link_time`.

    ``counts`` must be symmetric with a zero diagonal (as every method builds them).

    Examples
    --------
    >>> from fabricopt.problems.topology import evaluate
    >>> inst = TopologyInstance(3, 2, 8.0, [{"members": [0, 1, 2], "bytes": 3e9}],
    ...                         [[0, 1e9, 0], [0, 0, 0], [0, 0, 0]])
    >>> counts = np.ones((3, 3), dtype=int) - np.eye(3, dtype=int)
    >>> rings = plain_rings(inst)
    >>> book = RouteBook()
    >>> route_shortest(book, counts, inst.traffic + ring_traffic(inst, rings), paths=2,
    ...                rng=np.random.default_rng(0))
    >>> assembled_score(inst, counts, rings, book) == evaluate(inst, assemble(counts, rings, book))
    True
    """
    demand = instance.traffic + ring_traffic(instance, merged_rings(rings))
    return busiest_link_time(path_loads(demand, book.fractions()), np.asarray(counts),
                             instance.link_bytes_per_s)


def add_links(counts: np.ndarray, i: int, j: int, copies: int = 1) -> None:
    """Add ``copies`` links between i and j to a symmetric count matrix (in place)."""
    counts[i, j] += copies
    counts[j, i] += copies


def degree_one_solution(instance: TopologyInstance) -> TopologySolution:
    """The only kind of solution with one interface per server: a matching.

    With ``degree = 1`` every server has at most one neighbour, so no path is longer
    than one hop: every pair with demand must be linked directly, the demanded pairs
    must form a matching, and an AllReduce group of three or more members with bytes
    can never be served (its members each send to a successor and receive from a
    different predecessor).

    Raises
    ------
    InfeasibleInstance
        With the rule that fails, when no solution exists.
    """
    rings = []
    for k, group in enumerate(instance.allreduce):
        if len(group.members) > 2 and group.bytes > 0:
            raise InfeasibleInstance(
                f"allreduce[{k}] has {len(group.members)} members but degree = 1: a server "
                f"can reach only its one neighbour, and a ring of 3 or more needs two")
        rings.append(Ring(k, sorted(group.members), 1.0))
    demand = instance.traffic + ring_traffic(instance, rings)
    n = instance.servers
    partner = [-1] * n
    counts = np.zeros((n, n), dtype=np.int64)
    for s, t in np.argwhere((demand + demand.T) > 0):
        s, t = int(s), int(t)
        if s > t:
            continue
        for a, b in ((s, t), (t, s)):
            if partner[a] not in (-1, b):
                raise InfeasibleInstance(
                    f"server {a} has demand with servers {partner[a]} and {b} but "
                    f"degree = 1 links it to one server only")
        partner[s], partner[t] = t, s
        counts[s, t] = counts[t, s] = 1
    book = RouteBook()
    for s, t in np.argwhere(demand > 0):
        book.add(int(s), int(t), [(int(s), int(t))], float(demand[s, t]))
    return assemble(counts, rings, book)
