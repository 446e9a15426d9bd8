"""Matchings through compiled kernels: rustworkx's blossom, scipy's Hopcroft-Karp.

Both replace pure-Python networkx calls on the hot paths of ``topoopt`` and the
circuit decomposition. rustworkx takes integer weights only, so
:func:`integer_weights` scales the rational weights ``value / divisor`` to integers
exactly (every float is a dyadic rational) whenever they fit the kernel's range.

References
----------
.. [1] J. Edmonds, "Paths, trees, and flowers", Canad. J. Math. 17, 1965 (blossoms).
.. [2] J. E. Hopcroft and R. M. Karp, "An n^(5/2) algorithm for maximum matchings in
   bipartite graphs", SIAM J. Comput. 2(4), 1973.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import rustworkx as rx
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_bipartite_matching

__all__ = ["integer_weights", "max_weight_matching", "perfect_bipartite_matching"]

# rustworkx computes in i128; the blossom's duals and slacks reach a few times the
# largest weight, so 2**96 leaves ample headroom.
_EXACT_LIMIT = 2 ** 96
# Beyond it, weights are rounded to this many bits relative to the largest one:
# finer than the 53-bit floats networkx would have summed.
_ROUNDED_BITS = 62


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

    Examples
    --------
    >>> max_weight_matching(4, [(0, 1), (1, 2), (2, 3)], [2, 3, 2])
    [(0, 1), (2, 3)]
    """
    graph = rx.PyGraph(multigraph=False)
    graph.add_nodes_from(range(n))
    graph.add_edges_from([(int(u), int(v), int(w)) for (u, v), w in zip(edges, weights)])
    found = rx.max_weight_matching(graph, weight_fn=lambda w: w)
    return sorted((min(u, v), max(u, v)) for u, v in found)


def perfect_bipartite_matching(rows: np.ndarray, cols: np.ndarray, n: int) -> np.ndarray:
    """For each left node, its partner in a maximum matching of a bipartite graph.

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

    Examples
    --------
    >>> perfect_bipartite_matching(np.array([0, 0, 1]), np.array([0, 1, 0]), 2).tolist()
    [1, 0]
    """
    graph = csr_matrix((np.ones(len(rows), dtype=np.int32), (rows, cols)), shape=(n, n))
    return maximum_bipartite_matching(graph, perm_type="column")
