"""Matchings for the hot paths of ``topoopt`` and the circuit decomposition:
rustworkx's compiled blossom, and a Hopcroft-Karp that never goes pathological.

rustworkx takes integer weights only, so :func:`integer_weights` scales the rational weights ``value / divisor`` to integers
exactly (every float is a dyadic rational) whenever they fit the kernel's range.

On large graphs the blossom (cubic in the nodes) is preceded by a pruning that keeps
every edge of every maximum-weight matching: HiGHS solves the matching LP, tightened by
odd-set cuts [3]_, and its duals, rounded to an exactly feasible integer dual, give
each edge a reduced cost; an edge whose reduced cost exceeds the gap between the dual
bound and a known matching's weight is in no maximum-weight matching [4]_. What is left
falls apart into small components, each matched by the blossom.

References
----------
.. [1] J. Edmonds, "Paths, trees, and flowers", Canad. J. Math. 17, 1965 (blossoms).
.. [2] J. E. Hopcroft and R. M. Karp, "An n^(5/2) algorithm for maximum matchings in
   bipartite graphs", SIAM J. Comput. 2(4), 1973.
.. [3] J. Edmonds, "Maximum matching and a polyhedron with 0,1-vertices", J. Res. Nat.
   Bur. Standards 69B, 1965 (the odd-set inequalities).
.. [4] G. L. Nemhauser and L. A. Wolsey, *Integer and Combinatorial Optimization*,
   Wiley, 1988, §I.2.4 (reduced-cost fixing).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Sequence

import numpy as np
import rustworkx as rx
from scipy import sparse
from scipy.optimize import linprog
from scipy.sparse.csgraph import connected_components

__all__ = ["integer_weights", "max_weight_matching", "maximum_matching_edges",
           "greedy_weight_matching", "perfect_bipartite_matching",
           "hopcroft_karp"]

# rustworkx computes in i128; the blossom's duals and slacks reach a few times the
# largest weight, so 2**96 leaves ample headroom.
_EXACT_LIMIT = 2 ** 96
# Beyond it, weights are rounded to this many bits relative to the largest one:
# finer than the 53-bit floats networkx would have summed.
_ROUNDED_BITS = 62
# From this many edges on, the LP pruning runs before the blossom: below it HiGHS's
# start-up costs more than the pruning saves (topoopt's rounds at 1,024 servers, 4,090
# edges, cost about 0.06 CPU s either way; at 2,048 servers 0.3 s pruned, 0.46 s whole).
PRUNE_MIN_EDGES = 4096
# Rounds of odd-set cuts; each re-solves the LP. Fewer rounds only prune less.
_CUT_ROUNDS = 8
_FRACTIONAL = 1e-6


def integer_weights(values: Sequence[float], divisors: Sequence[int]) -> list[int]:
    """Positive integers proportional to ``values[e] / divisors[e]``, exactly if possible.

    Parameters
    ----------
    values : sequence of float
        Positive finite weights.
    divisors : sequence of int
        Positive integers.

    Returns
    -------
    list of int
        ``W[e] = c * values[e] / divisors[e]`` for one common ``c > 0`` when the reduced
        integers stay below 2**96 (so every comparison of sums is exact); otherwise each
        ratio rounded to 62 bits relative to the largest (at least 1).

    Notes
    -----
    A float is ``M * 2**E`` with an integer 53-bit mantissa ``M``; aligning exponents and
    multiplying by the least common multiple of the divisors gives exact integers.

    Examples
    --------
    >>> integer_weights([3.0, 0.5, 1.5], [1, 2, 3])
    [12, 1, 2]
    """
    if not len(values):
        return []
    mantissa, exponent = np.frexp(np.asarray(values, dtype=float))
    mantissas = [int(m) for m in np.ldexp(mantissa, 53)]
    exponents = (exponent - 53).tolist()
    low = min(exponents)
    divisors = [int(d) for d in divisors]
    lcm = math.lcm(*divisors)
    exact = [(m << (e - low)) * (lcm // d) for m, e, d in zip(mantissas, exponents, divisors)]
    common = math.gcd(*exact) or 1
    exact = [w // common for w in exact]
    top = max(exact)
    if top < _EXACT_LIMIT:
        return exact
    shift = top.bit_length() - _ROUNDED_BITS
    return [max(1, (w + (1 << (shift - 1))) >> shift) for w in exact]


def max_weight_matching(n: int, edges: Sequence[tuple[int, int]],
                        weights: Sequence[int]) -> list[tuple[int, int]]:
    """A maximum-weight matching of a graph on nodes ``0..n-1`` (not max-cardinality).

    Parameters
    ----------
    n : int
        Number of nodes.
    edges : sequence of (int, int)
        Simple undirected edges.
    weights : sequence of int
        Integer weight per edge (see :func:`integer_weights`).

    Returns
    -------
    list of (int, int)
        Matched pairs ``(u, v)`` with ``u < v``, sorted.

    Notes
    -----
    Graphs of at least :data:`PRUNE_MIN_EDGES` edges are pruned first
    (:func:`maximum_matching_edges`) and the blossom matches each component of what is
    left; smaller graphs go to the blossom whole. Both give a maximum weight; where
    several matchings have it, which one is returned can differ between the two paths.

    Examples
    --------
    >>> max_weight_matching(4, [(0, 1), (1, 2), (2, 3)], [2, 3, 2])
    [(0, 1), (2, 3)]
    """
    key = (int(n), tuple((int(u), int(v)) for u, v in edges), tuple(int(w) for w in weights))
    return list(_max_weight_matching(*key))


# topoopt's candidates repeat whole matchings (6 calls, 4 distinct graphs at 1,024
# servers); the matching is the costliest step, so the last few answers are kept.
@lru_cache(maxsize=8)
def _max_weight_matching(n: int, edges: tuple, weights: tuple) -> tuple:
    if len(edges) < PRUNE_MIN_EDGES:
        return _blossom(n, edges, weights)
    keep = maximum_matching_edges(n, edges, weights)
    return _blossom_by_component(n, [edges[k] for k in keep], [weights[k] for k in keep])


def _blossom(n: int, edges: Sequence[tuple[int, int]], weights: Sequence[int]) -> tuple:
    graph = rx.PyGraph(multigraph=False)
    graph.add_nodes_from(range(n))
    graph.add_edges_from([(u, v, w) for (u, v), w in zip(edges, weights)])
    found = rx.max_weight_matching(graph, weight_fn=lambda w: w)
    return tuple(sorted((min(u, v), max(u, v)) for u, v in found))


def _blossom_by_component(n: int, edges: list, weights: list) -> tuple:
    """The blossom on each connected component apart (its cost grows with all the
    graph's nodes, isolated ones included)."""
    if not edges:
        return ()
    ends = np.array(edges, dtype=np.int64)
    graph = sparse.coo_array((np.ones(len(ends)), (ends[:, 0], ends[:, 1])), shape=(n, n))
    _, label = connected_components(graph, directed=False)
    by_component: dict[int, list[int]] = {}
    for k, c in enumerate(label[ends[:, 0]].tolist()):
        by_component.setdefault(c, []).append(k)
    found = []
    for ks in by_component.values():
        if len(ks) == 1:
            if weights[ks[0]] > 0:
                found.append(edges[ks[0]])
            continue
        nodes = sorted({v for k in ks for v in edges[k]})
        index = {v: i for i, v in enumerate(nodes)}
        local = _blossom(len(nodes), [(index[edges[k][0]], index[edges[k][1]]) for k in ks],
                         [weights[k] for k in ks])
        found += [(nodes[a], nodes[b]) for a, b in local]
    return tuple(sorted((min(u, v), max(u, v)) for u, v in found))


def maximum_matching_edges(n: int, edges: Sequence[tuple[int, int]],
                           weights: Sequence[int]) -> list[int]:
    """Indices of a set of edges that holds every maximum-weight matching.

    Parameters and weights as :func:`max_weight_matching`'s.

    Returns
    -------
    list of int
        Sorted indices into ``edges``: every edge of every maximum-weight matching is
        among them, whatever the LP solver's accuracy.

    Notes
    -----
    HiGHS solves the matching LP (``x >= 0``, at most 1 at each node), adding in rounds
    the odd-set inequalities ``x(E(S)) <= (|S| - 1) / 2`` that its solution violates on
    the odd components of its fractional edges [3]_. Its duals, rounded up to integers
    and then raised where an edge's constraint is still short, are an exactly feasible
    dual ``(y, z)`` of value ``U``; every matching ``M`` then weighs at most
    ``U - sum of the reduced costs of M's edges``. A matching of weight ``L`` is read
    off the LP (its edges above 1/2, then the heaviest free ones), so an edge whose
    reduced cost exceeds ``U - L`` is in no maximum-weight matching [4]_. The proof is
    in Python integers, so a loose LP only prunes less.

    Examples
    --------
    >>> maximum_matching_edges(4, [(0, 1), (1, 2), (2, 3)], [2, 3, 2])
    [0, 2]
    """
    m = len(edges)
    weights = [int(w) for w in weights]
    top = max(weights, default=0)
    if top <= 0:
        return []
    ends = np.array(edges, dtype=np.int64).reshape(m, 2)
    u, v = ends[:, 0], ends[:, 1]
    cost = -np.array([w / top for w in weights])
    every = np.arange(m)
    node_rows = sparse.csr_array((np.ones(2 * m), (np.r_[u, v], np.r_[every, every])),
                                 shape=(n, m))
    odd_sets: list[np.ndarray] = []     # node sets of the cuts
    inside: list[np.ndarray] = []       # the edges within each
    for round_ in range(_CUT_ROUNDS + 1):
        rows = sparse.vstack([node_rows] + [_indicator(k, m) for k in inside], format="csr")
        bound = np.r_[np.ones(n), [(len(s) - 1) // 2 for s in odd_sets]]
        lp = linprog(cost, A_ub=rows, b_ub=bound, bounds=(0, None), method="highs")
        if lp.status != 0:              # no certificate: nothing can be pruned
            return list(range(m))
        new = [] if round_ == _CUT_ROUNDS else _violated_odd_sets(n, u, v, lp.x)
        if not new:
            break
        for nodes, ks in new:
            odd_sets.append(nodes)
            inside.append(ks)
    dual = np.maximum(-lp.ineqlin.marginals, 0.0) * float(top)
    y = [math.ceil(d) for d in dual[:n].tolist()]
    z = [math.ceil(d) for d in dual[n:].tolist()]
    in_sets = [0] * m                   # sum of z over the odd sets holding each edge
    for zs, ks in zip(z, inside):
        if zs:
            for k in ks.tolist():
                in_sets[k] += zs
    us, vs = u.tolist(), v.tolist()
    for k in range(m):                  # raise y where the rounded dual is still short
        short = weights[k] - y[us[k]] - y[vs[k]] - in_sets[k]
        if short > 0:
            y[us[k]] += short
    upper = sum(y) + sum(zs * ((len(s) - 1) // 2) for zs, s in zip(z, odd_sets))
    lower = _rounded_weight(n, us, vs, weights, lp.x)
    gap = upper - lower
    return [k for k in range(m) if y[us[k]] + y[vs[k]] + in_sets[k] - weights[k] <= gap]


def _indicator(columns: np.ndarray, m: int) -> sparse.csr_array:
    return sparse.csr_array((np.ones(len(columns)), (np.zeros(len(columns), dtype=np.int64),
                                                     columns)), shape=(1, m))


def _violated_odd_sets(n: int, u: np.ndarray, v: np.ndarray, x: np.ndarray) -> list:
    """The odd components of the LP's fractional edges whose odd-set inequality it
    violates: ``(nodes, edges within)`` each."""
    fractional = (x > _FRACTIONAL) & (x < 1 - _FRACTIONAL)
    if not fractional.any():
        return []
    graph = sparse.coo_array((np.ones(int(fractional.sum())), (u[fractional], v[fractional])),
                             shape=(n, n))
    _, label = connected_components(graph, directed=False)
    size = np.bincount(label, minlength=label.max() + 1)
    within = label[u] == label[v]
    held = np.bincount(label[u][within], weights=x[within], minlength=len(size))
    found = []
    for c in np.flatnonzero((size >= 3) & (size % 2 == 1)
                            & (held > (size - 1) // 2 + _FRACTIONAL)).tolist():
        found.append((np.flatnonzero(label == c), np.flatnonzero(within & (label[u] == c))))
    return found


def _rounded_weight(n: int, us: list, vs: list, weights: list, x: np.ndarray) -> int:
    """The weight of a matching: the LP's edges above 1/2 (no two share a node), then
    the heaviest edges whose ends are both free."""
    taken = bytearray(n)
    total = 0
    for k in sorted(range(len(weights)), key=lambda k: (x[k] <= 0.5, -weights[k])):
        if not taken[us[k]] and not taken[vs[k]]:
            taken[us[k]] = taken[vs[k]] = 1
            total += weights[k]
    return total


def greedy_weight_matching(n: int, edges: Sequence[tuple[int, int]],
                           weights: Sequence[int]) -> list[tuple[int, int]]:
    """A matching by weight, heaviest first: each edge joins it unless an end is taken.

    O(m log m), and at least half the weight of a maximum-weight matching (each edge of
    the maximum one is blocked by a heavier or equal chosen edge at one of its ends, and
    a chosen edge blocks at most two). Equal weights keep the order of ``edges``.
    Parameters and result as :func:`max_weight_matching`'s.

    Examples
    --------
    >>> greedy_weight_matching(4, [(0, 1), (1, 2), (2, 3)], [2, 3, 2])   # blossom: 4
    [(1, 2)]
    """
    order = sorted(range(len(edges)), key=lambda e: -weights[e])
    taken = bytearray(int(n))
    out = []
    for e in order:
        u, v = int(edges[e][0]), int(edges[e][1])
        if not taken[u] and not taken[v]:
            taken[u] = taken[v] = 1
            out.append((min(u, v), max(u, v)))
    return sorted(out)


def perfect_bipartite_matching(rows: np.ndarray, cols: np.ndarray, n: int) -> np.ndarray:
    """For each left node, its partner in a maximum matching of a bipartite graph.

    Hopcroft-Karp [2]_ with an iterative depth-first search: each phase layers the
    graph by a breadth-first search from the free left nodes, then follows each free
    node's layered edges, never retrying an edge and marking a node that leads
    nowhere as a dead end, so a phase reads every edge at most once (O(E)) and there
    are O(sqrt(V)) phases. A greedy pass seeds the matching.

    Parameters
    ----------
    rows, cols : array of int
        Edge ``e`` joins left node ``rows[e]`` and right node ``cols[e]`` (both in 0..n-1);
        duplicates allowed.
    n : int
        Nodes per side.

    Returns
    -------
    numpy.ndarray
        ``partner[i]``, the right node matched to left node ``i``, or -1.

    Notes
    -----
    scipy's ``maximum_bipartite_matching`` (also Hopcroft-Karp) can take tens of
    seconds on the layered graphs a parallelism plan's circuit counts produce (1,024
    nodes, 5,088 edges); this search does the same graph in milliseconds.

    Examples
    --------
    >>> perfect_bipartite_matching(np.array([0, 0, 1]), np.array([0, 1, 0]), 2).tolist()
    [1, 0]
    """
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    key = np.unique(rows * n + cols) if len(rows) else np.zeros(0, dtype=np.int64)
    ptr = np.searchsorted(key, np.arange(n + 1) * n).tolist()
    adj = (key % n).tolist() if n else []
    return np.array(hopcroft_karp(ptr, adj, n)[0], dtype=np.int64)


def hopcroft_karp(ptr: list[int], adj: list[int], n: int) -> tuple[list[int], int]:
    """A maximum matching of the bipartite graph whose left node ``u`` has the right
    neighbours ``adj[ptr[u]:ptr[u + 1]]`` (``n`` nodes per side), and the work done.

    Returns
    -------
    partner : list of int
        The right node matched to each left node, or -1.
    edge_reads : int
        Edges read over all phases: at most ``2 E + n`` a phase, and Hopcroft-Karp
        needs at most ``2 sqrt(n) + 2`` phases.

    Examples
    --------
    >>> hopcroft_karp([0, 2, 3], [0, 1, 0], 2)[0]
    [1, 0]
    """
    match_left, match_right = [-1] * n, [-1] * n
    for u in range(n):                      # greedy seed
        for v in adj[ptr[u]:ptr[u + 1]]:
            if match_right[v] < 0:
                match_left[u], match_right[v] = v, u
                break
    edge_reads = len(adj)
    while True:
        free = [u for u in range(n) if match_left[u] < 0]
        layer = [-1] * n
        for u in free:
            layer[u] = 0
        # layers of left nodes by an alternating BFS, up to the first layer with an
        # edge to a free right node: the shortest augmenting paths end there
        queue, head, limit = list(free), 0, n
        while head < len(queue) and layer[queue[head]] <= limit:
            u = queue[head]
            head += 1
            for v in adj[ptr[u]:ptr[u + 1]]:
                w = match_right[v]
                if w < 0:
                    limit = layer[u]
                elif layer[w] < 0:
                    layer[w] = layer[u] + 1
                    queue.append(w)
        edge_reads += sum(ptr[u + 1] - ptr[u] for u in queue[:head])
        if limit == n:
            break
        nxt = ptr[:n]                       # next edge to try per left node
        via = [-1] * n                      # the right node a path left u through
        for root in free:
            stack = [root]
            while stack:
                u = stack[-1]
                end, pushed = ptr[u + 1], False
                while nxt[u] < end:
                    v = adj[nxt[u]]
                    nxt[u] += 1
                    w = match_right[v]
                    if w < 0:
                        if layer[u] != limit:
                            continue
                        # a shortest augmenting path: flip it along the stack
                        for t in range(len(stack) - 1, -1, -1):
                            x = stack[t]
                            target = v if t == len(stack) - 1 else via[x]
                            match_left[x], match_right[target] = target, x
                        stack = []
                        pushed = True
                        break
                    if layer[w] == layer[u] + 1 and layer[u] < limit:
                        via[u] = v
                        stack.append(w)
                        pushed = True
                        break
                if not pushed:
                    layer[u] = -2           # a dead end for the rest of the phase
                    stack.pop()
        edge_reads += sum(nxt[u] - ptr[u] for u in range(n))
    return match_left, edge_reads
