"""The compiled shortest-path walk and the array-backed RouteBook against their Python
references: the walk of ShortestPaths.paths (same paths, same draws from the
generator) and a RouteBook that keeps a dict of bytes per path."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fabricopt.errors import InfeasibleInstance, InvalidArgument
from fabricopt.algorithms.topology import _paths_kernel as kernel
from fabricopt.algorithms.topology import routing as tr
from fabricopt.algorithms.topology.routing import RouteBook, ShortestPaths, route_shortest
from fabricopt.problems.topology import PairValues, RouteArrays, pair_loads


@st.composite
def graphs(draw, max_n=24):
    """Symmetric link counts 0..2, zero diagonal: random (often disconnected) or a
    circulant with a few jumps (many equal shortest paths), as the methods build."""
    n = draw(st.integers(2, max_n))
    counts = np.zeros((n, n), dtype=np.int64)
    if draw(st.booleans()):
        density = draw(st.sampled_from([0.1, 0.3, 0.7]))
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        upper = np.triu((rng.random((n, n)) < density) * rng.integers(1, 3, (n, n)), 1)
        counts = upper + upper.T
    else:
        for jump in draw(st.lists(st.integers(1, max(1, n - 1)), min_size=1, max_size=3)):
            servers = np.arange(n)
            counts[servers, (servers + jump) % n] += 1
            counts[(servers + jump) % n, servers] += 1
        np.fill_diagonal(counts, 0)
    return counts


def reference_walks(counts, src, dst, k, rng):
    """ShortestPaths.paths pair by pair, stopping at the first unreachable pair."""
    sp = ShortestPaths(counts, rng)
    out = []
    for s, t in zip(src.tolist(), dst.tolist()):
        found = sp.paths(s, t, k)
        if not found:
            break
        out.append(sorted(found))
    return out


def kernel_walks(counts, src, dst, k, rng):
    graph = tr._as_csr(counts)
    graph.sort_indices()
    routed, pair_paths, path_nodes, nodes = kernel.shortest_paths(
        graph.indptr.astype(np.int64), graph.indices.astype(np.int64), src, dst, k, rng)
    nodes = nodes.tolist()
    return [[tuple(nodes[path_nodes[p]:path_nodes[p + 1]])
             for p in range(pair_paths[i], pair_paths[i + 1])] for i in range(routed)]


@settings(max_examples=150)
@given(graphs(), st.integers(0, 2**32 - 1), st.integers(1, 6), st.floats(0.1, 1.0),
       st.booleans())
def test_the_compiled_walk_finds_the_references_paths_with_the_same_draws(
        counts, seed, k, share, row_major):
    n = len(counts)
    pick = np.random.default_rng(seed)
    src, dst = np.nonzero((pick.random((n, n)) < share) & ~np.eye(n, dtype=bool))
    if not row_major:   # sources out of order: each run of one source searches afresh
        order = pick.permutation(src.size)
        src, dst = src[order], dst[order]
    src, dst = src.astype(np.int64), dst.astype(np.int64)
    ours, theirs = np.random.default_rng(seed), np.random.default_rng(seed)
    expected = reference_walks(counts, src, dst, k, theirs)
    assert kernel_walks(counts, src, dst, k, ours) == expected
    assert ours.bit_generator.state == theirs.bit_generator.state


def test_the_compiled_walk_on_a_long_ring_grows_its_buffers():
    # 301 servers: paths of 151 servers, two equal ones to the far side
    n = 301
    servers = np.arange(n)
    counts = np.zeros((n, n), dtype=np.int64)
    counts[servers, (servers + 1) % n] = counts[(servers + 1) % n, servers] = 1
    src = np.zeros(n - 1, dtype=np.int64)
    dst = np.arange(1, n, dtype=np.int64)
    ours, theirs = np.random.default_rng(3), np.random.default_rng(3)
    expected = reference_walks(counts, src, dst, 4, theirs)
    assert kernel_walks(counts, src, dst, 4, ours) == expected
    assert max(len(p) for paths in expected for p in paths) == 151


@kernel.njit
def permute_all(rng, sizes):
    """kernel._permute of 0, 7, 14, ... for each size, concatenated."""
    out = np.empty(sizes.sum(), np.int64)
    at = 0
    for m in sizes:
        order = kernel._permute(rng, np.arange(m) * 7)
        for i in range(m):
            out[at + i] = order[i]
        at += m
    return out


@given(st.integers(0, 2**32 - 1), st.lists(st.integers(1, 40), min_size=1, max_size=30))
def test_the_compiled_permutation_draws_as_numpys(seed, sizes):
    ours, theirs = np.random.default_rng(seed), np.random.default_rng(seed)
    got = permute_all(ours, np.array(sizes, dtype=np.int64))
    expected = np.concatenate([theirs.permutation(np.arange(m) * 7) for m in sizes])
    assert got.tolist() == expected.tolist()
    assert ours.bit_generator.state == theirs.bit_generator.state


class DictRouteBook:
    """The reference: bytes per path in a dict per pair, summed on demand."""

    def __init__(self):
        self.bytes = {}

    def add(self, src, dst, paths, volume):
        if volume <= 0:
            return
        per_path = volume / len(paths)
        entry = self.bytes.setdefault((src, dst), {})
        for path in paths:
            key = tuple(map(int, path))
            entry[key] = entry.get(key, 0.0) + per_path

    def fractions(self):
        out = []
        for (src, dst), paths in sorted(self.bytes.items()):
            total = 0.0
            for b in paths.values():
                total += b
            out.append((src, dst, [(p, b / total) for p, b in sorted(paths.items())]))
        return out


@settings(max_examples=100)
@given(graphs(max_n=10), st.integers(0, 2**32 - 1), st.integers(1, 4),
       st.lists(st.sampled_from(["add", "route"]), min_size=1, max_size=5))
def test_the_route_book_finishes_as_a_dict_of_bytes_per_path_does(counts, seed, k, steps):
    # pairs added once by route_shortest take the array path; pairs added again, or
    # by add, the dict path: both must give the reference's floats
    n = len(counts)
    pick = np.random.default_rng(seed)
    ours, theirs = RouteBook(), DictRouteBook()
    for step in steps:
        demand = np.where(pick.random((n, n)) < 0.3, pick.lognormal(0, 1, (n, n)), 0.0)
        np.fill_diagonal(demand, 0.0)
        if step == "add":
            for s, t in zip(*np.nonzero(demand)):
                paths = [tuple(pick.permutation(n)[:int(pick.integers(1, n + 1))].tolist())
                         for _ in range(int(pick.integers(1, 4)))]
                paths = [(int(s),) + p + (int(t),) for p in paths]
                ours.add(int(s), int(t), paths, float(demand[s, t]))
                theirs.add(int(s), int(t), paths, float(demand[s, t]))
            continue
        rng = np.random.default_rng(int(pick.integers(2**32)))
        try:
            route_shortest(ours, counts, demand, paths=k, rng=rng)
        except InfeasibleInstance:
            pass
        walks = ours._added[-1]
        for i in range(walks.src.size):
            theirs.add(int(walks.src[i]), int(walks.dst[i]), walks.paths_of(i),
                       float(walks.volume[i]))
    assert ours.fractions() == theirs.fractions()
    flat = ours.arrays()
    assert RouteArrays.from_routes(theirs.fractions()).fraction.tolist() == flat.fraction.tolist()


def test_route_shortest_stops_at_the_first_unconnected_pair_and_names_it():
    counts = np.zeros((4, 4), dtype=np.int64)
    tr.add_links(counts, 0, 1)
    tr.add_links(counts, 2, 3)
    demand = np.zeros((4, 4))
    demand[0, 1] = demand[1, 3] = demand[2, 3] = 1.0
    book = RouteBook()
    with pytest.raises(InfeasibleInstance, match="servers 1 and 3 have demand but are not"):
        route_shortest(book, counts, demand, paths=2, rng=np.random.default_rng(0))
    assert [(s, t) for s, t, _ in book.fractions()] == [(0, 1)]


def loop_loads(demand, routes):
    """pair_loads as a Python addition per hop, in the order of routes, paths, hops."""
    loads = {}
    for src, dst, paths in routes:
        volume = float(demand.get([src], [dst])[0])
        if volume <= 0:
            continue
        for nodes, fraction in paths:
            for a, b in zip(nodes, nodes[1:]):
                key = a * demand.n + b
                loads[key] = loads.get(key, 0.0) + fraction * volume
    return loads


@given(st.integers(2, 7), st.integers(0, 2**32 - 1))
def test_pair_loads_of_route_arrays_add_in_the_loops_order(n, seed):
    rng = np.random.default_rng(seed)
    keys = np.flatnonzero(rng.random(n * n) < 0.5)
    demand = PairValues(n, keys, rng.lognormal(0, 1, keys.size) * (rng.random(keys.size) < 0.8))
    routes = []
    for key in rng.permutation(n * n)[:int(rng.integers(0, n * n))].tolist():
        src, dst = divmod(key, n)
        paths = [((src,) + tuple(rng.integers(0, n, int(rng.integers(0, 4))).tolist())
                  + (dst,), float(rng.random())) for _ in range(int(rng.integers(0, 3)))]
        routes.append((src, dst, paths))
    expected = loop_loads(demand, routes)
    got = pair_loads(demand, RouteArrays.from_routes(routes))
    assert dict(zip(got.keys.tolist(), got.values.tolist())) == expected


def test_route_shortest_rejects_fewer_than_one_path():
    with pytest.raises(InvalidArgument, match="paths = 0"):
        route_shortest(RouteBook(), np.ones((2, 2)), np.ones((2, 2)), paths=0,
                       rng=np.random.default_rng(0))
