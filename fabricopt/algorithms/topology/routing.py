"""Shared pieces of the ``topology`` heuristics: shortest-path routing, assembling a
solution from link counts, rings and routes, and the degree-1 case.

Every heuristic of the kind builds an n x n symmetric matrix of link counts (a NumPy
array, or a scipy sparse matrix where n is large: :func:`symmetric_counts`), a list of
:class:`~fabricopt.problems.topology.Ring` and a :class:`RouteBook` of paths, then
calls :func:`assemble`. Demand is read as
:class:`~fabricopt.problems.topology.PairValues` (or a dense matrix), so nothing here
needs O(n^2) memory with sparse inputs.
"""

from __future__ import annotations

import math
from array import array
from typing import Iterable, NamedTuple, Sequence

import numpy as np
from scipy import sparse
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import shortest_path

from fabricopt.errors import InfeasibleInstance, InvalidArgument
from fabricopt.problems._validate import as_int
from fabricopt.problems.topology import (PairValues, Ring, Route, RouteArrays,
                                         TopologyInstance, TopologySolution, busiest_pair_time,
                                         demand_pairs, pair_loads, routes_of_arrays)
from fabricopt.algorithms.topology import _paths_kernel

__all__ = ["ShortestPaths", "RouteBook", "route_shortest", "shortest_routing_bound",
           "plain_rings", "merged_rings", "assemble", "assembled_score",
           "degree_one_solution", "add_links", "symmetric_counts", "count_pairs"]

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
    columns = np.arange(sources.size)
    adjacency = graph.astype(np.float32)
    # one column per source, so every array below is contiguous
    hops = np.full((n, sources.size), -1, dtype=np.int64)
    hops[sources, columns] = 0
    unseen = hops < 0
    frontier = np.zeros((n, sources.size), dtype=np.float32)
    frontier[sources, columns] = 1.0
    level = 0
    while True:
        level += 1
        reached = adjacency @ frontier > 0
        reached &= unseen
        if not reached.any():
            return hops.T
        if level > _FRONTIER_LEVELS:
            found = shortest_path(graph, method="D", unweighted=True, indices=sources)
            return np.where(np.isinf(found), -1, found).astype(np.int64)
        hops[reached] = level
        unseen ^= reached
        frontier = reached.astype(np.float32)


def symmetric_counts(n: int, i, j, copies=1):
    """The symmetric n x n sparse link counts of links ``i[k]``-``j[k]`` (``copies``
    each), parallel entries added: O(links) memory.

    Examples
    --------
    >>> symmetric_counts(3, [0, 1, 0], [1, 2, 1]).toarray().tolist()
    [[0, 2, 0], [2, 0, 1], [0, 1, 0]]
    """
    i = np.asarray(i, dtype=np.int64)
    j = np.asarray(j, dtype=np.int64)
    copies = np.broadcast_to(np.asarray(copies, dtype=np.int64), i.shape)
    out = sparse.csr_array((np.concatenate([copies, copies]),
                            (np.concatenate([i, j]), np.concatenate([j, i]))), shape=(n, n))
    out.sum_duplicates()
    out.eliminate_zeros()
    return out


def _as_csr(counts):
    """Link counts (dense or sparse) as a canonical CSR array (sorted, no zeros)."""
    if sparse.issparse(counts):
        out = sparse.csr_array(counts)
        out.sum_duplicates()
        out.eliminate_zeros()
        return out
    return sparse.csr_array(np.asarray(counts))


def count_pairs(counts) -> PairValues:
    """The linked ordered pairs of link counts (dense or sparse) and their counts."""
    coo = _as_csr(counts).tocoo()
    n = coo.shape[0]
    keys = coo.row.astype(np.int64) * n + coo.col
    order = np.argsort(keys, kind="stable")
    return PairValues(n, keys[order], coo.data.astype(np.int64)[order])


def _positive_pairs(demand) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(src, dst, bytes)`` arrays of the positive entries of demand (a dense matrix or
    :class:`~fabricopt.problems.topology.PairValues`), in row-major order."""
    if isinstance(demand, PairValues):
        keep = demand.values > 0
        return demand.src[keep], demand.dst[keep], demand.values[keep]
    demand = np.asarray(demand)
    src, dst = np.nonzero(demand > 0)
    return src.astype(np.int64), dst.astype(np.int64), demand[src, dst]


class ShortestPaths:
    """Shortest paths on a link-count matrix, with a seeded choice among equal ones.

    Pair by pair, in Python: :func:`route_shortest` finds the same paths with the same
    draws in one compiled walk over all pairs, and its tests check it against this.

    Parameters
    ----------
    counts : array of int, shape (n, n), or a scipy sparse matrix
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
        graph = _as_csr(counts)
        graph.sort_indices()
        self._neighbours = [a.tolist() for a in np.split(graph.indices, graph.indptr[1:-1])]
        self._graph = csr_matrix(graph > 0)
        self._rng = rng
        self._dist: dict[int, array] = {}

    def prefetch(self, sources) -> None:
        """Compute the hop counts from every server in ``sources`` in one compiled call
        (one breadth-first search each), instead of one call per source."""
        todo = sorted({int(s) for s in sources if s not in self._dist})
        for start in range(0, len(todo), _SOURCES_PER_CALL):
            chunk = todo[start:start + _SOURCES_PER_CALL]
            hops = hop_counts(self._graph, chunk)
            # compact rows that index to Python ints: 2 bytes a server, not a list's 8
            code, dtype = ("h", np.int16) if hops.max(initial=0) < 2**15 else ("q", np.int64)
            for src, row in zip(chunk, hops.astype(dtype)):
                self._dist[src] = array(code, row.tobytes())

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


class _Walks(NamedTuple):
    """:func:`route_shortest`'s paths: pair i (``src[i] -> dst[i]``, ``volume[i]`` > 0
    bytes, each pair once) has the paths ``pair_paths[i]:pair_paths[i + 1]``, distinct
    and ascending; path p visits ``nodes[path_nodes[p]:path_nodes[p + 1]]``."""

    src: np.ndarray
    dst: np.ndarray
    volume: np.ndarray
    pair_paths: np.ndarray
    path_nodes: np.ndarray
    nodes: np.ndarray

    def paths_of(self, i: int) -> list[tuple[int, ...]]:
        ends = self.path_nodes
        return [tuple(self.nodes[ends[p]:ends[p + 1]].tolist())
                for p in range(self.pair_paths[i], self.pair_paths[i + 1])]

    def arrays(self) -> RouteArrays:
        """The routes of pairs added once: the volume split evenly, the fraction each
        path's bytes over their sum added path by path (as :class:`RouteBook` adds)."""
        count = np.diff(self.pair_paths)
        share = self.volume / count
        total = share.copy()
        for more in range(1, int(count.max(initial=0))):
            total[count > more] += share[count > more]
        return RouteArrays(self.src, self.dst, self.pair_paths, self.path_nodes, self.nodes,
                           np.repeat(share / total, count))


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """``starts[0], starts[0] + 1, ..., starts[0] + lengths[0] - 1, starts[1], ...``"""
    begin = np.zeros(lengths.size, dtype=np.int64)
    np.cumsum(lengths[:-1], out=begin[1:])
    return np.arange(int(lengths.sum()), dtype=np.int64) + np.repeat(starts - begin, lengths)


def _take(routes: RouteArrays, index: np.ndarray) -> RouteArrays:
    """The routes ``routes[index[0]], routes[index[1]], ...``, with their paths."""
    first = routes.route_paths
    counts = first[index + 1] - first[index]
    path = _ranges(first[index], counts)
    starts = routes.path_nodes
    lengths = starts[path + 1] - starts[path]
    return RouteArrays(routes.src[index], routes.dst[index], _offsets(counts), _offsets(lengths),
                       routes.nodes[_ranges(starts[path], lengths)], routes.fraction[path])


def _concatenate(parts: Sequence[RouteArrays]) -> RouteArrays:
    """The routes of every part, in order."""
    def offsets(name):
        return _offsets(np.concatenate([np.diff(getattr(p, name)) for p in parts]))
    return RouteArrays(np.concatenate([p.src for p in parts]),
                       np.concatenate([p.dst for p in parts]), offsets("route_paths"),
                       offsets("path_nodes"), np.concatenate([p.nodes for p in parts]),
                       np.concatenate([p.fraction for p in parts]))


def _offsets(counts) -> np.ndarray:
    out = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=out[1:])
    return out


def _sequential_sum(values) -> float:
    """The floats added left to right, from 0.0 (what a route's fractions divide by)."""
    total = 0.0
    for value in values:
        total += value
    return total


class RouteBook:
    """Bytes per (src, dst, path), turned into routes with fractions at the end.

    A route's paths are the pair's paths in ascending order, each with its bytes over
    the pair's bytes (added path by path, in the order the paths were first added);
    the routes are in (src, dst) order. The pairs :func:`route_shortest` adds are kept
    as arrays: those added once are finished with array operations (the same
    arithmetic), the others as a dict of bytes per path.

    Examples
    --------
    >>> book = RouteBook()
    >>> book.add(0, 2, [(0, 1, 2), (0, 3, 2)], 3.0)
    >>> book.add(0, 2, [(0, 2)], 2.0)
    >>> book.routes()[0]["paths"][0]
    {'nodes': [0, 1, 2], 'fraction': 0.3}
    """

    def __init__(self):
        # in the order added: (src, dst, paths, volume) of add, or a _Walks
        self._added: list = []
        self._arrays: RouteArrays | None = None

    def add(self, src: int, dst: int, paths: Sequence[Sequence[int]], volume: float) -> None:
        """Send ``volume`` bytes src -> dst split evenly over ``paths``."""
        if volume <= 0:
            return
        if not paths:
            raise InvalidArgument(f"no path from {src} to {dst}")
        self._added.append((int(src), int(dst), [tuple(map(int, path)) for path in paths],
                            volume))
        self._arrays = None

    def _add_walks(self, walks: _Walks) -> None:
        self._added.append(walks)
        self._arrays = None

    def routes(self) -> list[dict]:
        """The routes of docs/formats.rst, topology, pairs and paths in a fixed order."""
        return [route.to_dict() for route in self.typed_routes()]

    def typed_routes(self) -> list[Route]:
        """:meth:`routes` as :class:`~fabricopt.problems.topology.Route` objects, built
        directly (a solution made from dicts converts every path node again)."""
        return routes_of_arrays(self.arrays())

    def fractions(self) -> list[tuple[int, int, list[tuple[tuple[int, ...], float]]]]:
        """``(src, dst, [(nodes, fraction), ...])`` in the order of :meth:`routes`."""
        flat = self.arrays()
        nodes = flat.nodes.tolist()
        starts = flat.path_nodes.tolist()
        paths = [(tuple(nodes[a:b]), f)
                 for a, b, f in zip(starts, starts[1:], flat.fraction.tolist())]
        first = flat.route_paths.tolist()
        return [(s, t, paths[a:b])
                for s, t, a, b in zip(flat.src.tolist(), flat.dst.tolist(), first, first[1:])]

    def arrays(self) -> RouteArrays:
        """:meth:`routes` as :class:`~fabricopt.problems.topology.RouteArrays` (what
        scoring reads, without a Python object per path)."""
        if self._arrays is None:
            self._arrays = self._finish()
        return self._arrays

    def _finish(self) -> RouteArrays:
        if not self._added:
            return RouteArrays.from_routes([])
        width = 1 + max(int(max(e.src.max(initial=0), e.dst.max(initial=0)))
                        if isinstance(e, _Walks) else max(e[:2]) for e in self._added)

        def keys(entry) -> np.ndarray:
            if isinstance(entry, _Walks):
                return entry.src * width + entry.dst
            return np.array([entry[0] * width + entry[1]], dtype=np.int64)

        # pairs added more than once, or by add: a dict of bytes per path each
        every, adds = np.unique(np.concatenate([keys(e) for e in self._added]),
                                return_counts=True)
        mixed = set(every[adds > 1].tolist())
        mixed.update(entry[0] * width + entry[1] for entry in self._added
                     if not isinstance(entry, _Walks))
        added: dict[int, list] = {key: [] for key in mixed}
        parts = []
        for entry in self._added:
            if not isinstance(entry, _Walks):
                added[entry[0] * width + entry[1]].append((entry[2], entry[3]))
                continue
            shared = np.isin(keys(entry), list(mixed))
            for i in np.flatnonzero(shared).tolist():
                added[int(entry.src[i]) * width + int(entry.dst[i])].append(
                    (entry.paths_of(i), float(entry.volume[i])))
            parts.append(_take(entry.arrays(), np.flatnonzero(~shared)))
        routes = []
        for key in sorted(added):
            per_path: dict[tuple[int, ...], float] = {}
            for paths, volume in added[key]:
                share = volume / len(paths)
                for path in paths:
                    per_path[path] = per_path.get(path, 0.0) + share
            total = _sequential_sum(per_path.values())
            routes.append((key // width, key % width,
                           [(path, b / total) for path, b in sorted(per_path.items())]))
        flat = _concatenate(parts + [RouteArrays.from_routes(routes)])
        return _take(flat, np.argsort(flat.src * width + flat.dst, kind="stable"))


def route_shortest(book: RouteBook, counts, demand, *, paths: int,
                   rng: np.random.Generator) -> None:
    """Route every positive ``demand[s, t]`` (a dense matrix or
    :class:`~fabricopt.problems.topology.PairValues`) over up to ``paths`` equal-length
    shortest paths of ``counts`` (dense or sparse, >= 0), split evenly, pairs in
    row-major order.

    The paths, and the draws from ``rng``, are those of :meth:`ShortestPaths.paths`
    called pair by pair; the walk is compiled
    (:func:`~fabricopt.algorithms.topology._paths_kernel.shortest_paths`).

    Raises
    ------
    InfeasibleInstance
        If some demanded pair is not connected (the caller's topology is at fault).
    """
    paths = as_int("paths", paths, minimum=1, error=InvalidArgument)
    graph = _as_csr(counts)
    graph.sort_indices()
    src, dst, volume = _positive_pairs(demand)
    src, dst, indptr, indices = (np.ascontiguousarray(a, dtype=np.int64)
                                 for a in (src, dst, graph.indptr, graph.indices))
    routed, pair_paths, path_nodes, nodes = _paths_kernel.shortest_paths(
        indptr, indices, src, dst, paths, rng)
    book._add_walks(_Walks(src[:routed], dst[:routed], volume[:routed], pair_paths,
                           path_nodes, nodes))
    if routed < src.size:
        raise InfeasibleInstance(f"servers {int(src[routed])} and {int(dst[routed])} have "
                                 f"demand but are not connected")


def shortest_routing_bound(counts, demand, link_bytes_per_s: float, *,
                           hops=None) -> float:
    """A lower bound on the busiest link's time of any shortest-path routing of
    ``demand`` on ``counts``, in seconds (``inf`` if a demanded pair is disconnected).

    Every byte from s to t crosses exactly ``dist(s, t)`` links whatever shortest paths
    carry it, and the busiest link's time is at least the total load over the total
    capacity (a maximum is at least a weighted mean).

    ``hops``, if given, is ``dist`` for graphs that have it in closed form: a function
    of the arrays ``(src, dst)`` returning each pair's hop count (as floats); otherwise
    breadth-first search from every source with demand.

    Examples
    --------
    >>> counts = np.array([[0, 1, 0, 1], [1, 0, 1, 0], [0, 1, 0, 1], [1, 0, 1, 0]])
    >>> demand = np.zeros((4, 4)); demand[0, 2] = 8.0
    >>> float(shortest_routing_bound(counts, demand, 1.0))   # 16 byte-hops, 8 link uses
    2.0
    """
    src, dst, volume = (np.asarray(a) for a in _positive_pairs(demand))
    if not src.size:
        return 0.0
    graph = _as_csr(counts)
    capacity = float(graph.sum()) * link_bytes_per_s
    if capacity <= 0:
        return math.inf  # demand but no link at all
    sources, row_of = np.unique(src, return_inverse=True)
    chunks = [(row_of >= start) & (row_of < start + _SOURCES_PER_CALL)
              for start in range(0, sources.size, _SOURCES_PER_CALL)]
    if hops is None:
        graph = csr_matrix(graph > 0)
        pair_hops = np.empty(src.size)
        for k, mine in enumerate(chunks):
            start = k * _SOURCES_PER_CALL
            found = shortest_path(graph, method="D", unweighted=True,
                                  indices=sources[start:start + _SOURCES_PER_CALL])
            pair_hops[mine] = found[row_of[mine] - start, dst[mine]]
    else:
        pair_hops = np.asarray(hops(src, dst), dtype=float)
    # summed per chunk of sources, as the search delivers them
    carried = 0.0
    for mine in chunks:
        carried += float((volume[mine] * pair_hops[mine]).sum())
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


def assemble(counts, rings: Iterable[Ring], book: RouteBook) -> TopologySolution:
    """A solution from symmetric link counts (dense or sparse), rings (equal cyclic
    orders merged) and routes."""
    pairs = count_pairs(counts)
    upper = (pairs.src < pairs.dst) & (pairs.values > 0)
    links = [[i, j, c] for i, j, c in zip(pairs.src[upper].tolist(), pairs.dst[upper].tolist(),
                                          pairs.values[upper].tolist())]
    return TopologySolution(links, merged_rings(rings), book.typed_routes())


def assembled_score(instance: TopologyInstance, counts, rings: Sequence[Ring],
                    book: RouteBook) -> float:
    """``evaluate(instance, assemble(counts, rings, book))`` without building the
    solution: the same demand, loads and arithmetic, through the kind's own
    :func:`~fabricopt.problems.topology.pair_loads` and
    :func:`~fabricopt.problems.topology.busiest_pair_time`.

    ``counts`` must be symmetric with a zero diagonal (as every method builds them).

    Examples
    --------
    >>> from fabricopt.problems.topology import evaluate
    >>> inst = TopologyInstance(3, 2, 8.0, [{"members": [0, 1, 2], "bytes": 3e9}],
    ...                         [[0, 1e9, 0], [0, 0, 0], [0, 0, 0]])
    >>> counts = np.ones((3, 3), dtype=int) - np.eye(3, dtype=int)
    >>> rings = plain_rings(inst)
    >>> book = RouteBook()
    >>> route_shortest(book, counts, demand_pairs(inst, rings), paths=2,
    ...                rng=np.random.default_rng(0))
    >>> assembled_score(inst, counts, rings, book) == evaluate(inst, assemble(counts, rings, book))
    True
    """
    loads = pair_loads(demand_pairs(instance, merged_rings(rings)), book.arrays())
    return busiest_pair_time(loads, count_pairs(counts), instance.link_bytes_per_s)


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
    demand = demand_pairs(instance, rings)
    n = instance.servers
    partner = [-1] * n
    linked_a, linked_b = [], []
    src, dst = demand.src.tolist(), demand.dst.tolist()
    for s, t in sorted({(min(a, b), max(a, b)) for a, b in zip(src, dst)}):
        for a, b in ((s, t), (t, s)):
            if partner[a] not in (-1, b):
                raise InfeasibleInstance(
                    f"server {a} has demand with servers {partner[a]} and {b} but "
                    f"degree = 1 links it to one server only")
        if partner[s] == -1:
            linked_a.append(s)
            linked_b.append(t)
        partner[s], partner[t] = t, s
    book = RouteBook()
    for s, t, volume in zip(src, dst, demand.values.tolist()):
        book.add(s, t, [(s, t)], volume)
    counts = symmetric_counts(n, linked_a, linked_b)
    return assemble(counts, rings, book)
