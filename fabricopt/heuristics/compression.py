"""Priority compression into K levels: Crux's Algorithm 1 and two baselines.

A valid compression of a contention DAG splits its jobs into K ordered levels with no
edge pointing from a lower level to a higher one; its value is the weight of the
edges cut (endpoints on different levels). Crux (§4.3, Algorithm 1) observes that
every valid K-cut is a split of some topological order into K consecutive blocks
(Theorems 2 and 3), solves the best split of one order exactly by dynamic
programming, and keeps the best over ``m`` random BFS topological orders.

The baselines ignore the DAG and cut the priority ranking: Sincronia-style (the top
K-1 jobs get their own levels, the rest share the lowest) and Varys-style (K
contiguous blocks of near-equal size). The paper defines them only by its Figure 13;
the general rules are notes/crux.md §3.4's.

References
----------
.. [1] J. Cao et al., "Crux", SIGCOMM 2024, §4.3, Algorithm 1, Appendix B, Figure 13.
.. [2] F. F. Yao, "Efficient dynamic programming using quadrangle inequalities",
   STOC 1980 (monotone split points).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..problems.priorities import PrioritiesInstance, PrioritiesSolution

__all__ = ["weight_matrix", "random_topological_order", "best_split", "compress",
           "ranking", "sincronia_levels", "varys_levels", "cut_value",
           "compress_instance", "rank_instance"]


def weight_matrix(n: int, edges: Sequence[tuple[int, int, float]]) -> np.ndarray:
    """The dense ``n x n`` matrix ``W[high, low] = weight`` of a DAG's edge list."""
    w = np.zeros((n, n))
    for hi, lo, weight in edges:
        w[hi, lo] = weight
    return w


def random_topological_order(weights: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random BFS topological order (Kahn's algorithm with a FIFO queue).

    The initial sources are shuffled, and so is every batch of nodes that one node's
    removal releases (our reading of the paper's "random topological orders by BFS").
    An edge is any nonzero entry of ``weights`` or of its boolean pattern.

    Raises
    ------
    ValueError
        If the graph has a cycle.
    """
    adj = weights != 0
    n = len(adj)
    indeg = adj.sum(axis=0).astype(np.int64)
    children = [np.flatnonzero(row) for row in adj]
    queue = np.flatnonzero(indeg == 0)
    rng.shuffle(queue)
    order = queue.tolist()
    head = 0
    while head < len(order):
        ch = children[order[head]]
        head += 1
        if len(ch):
            indeg[ch] -= 1
            released = ch[indeg[ch] == 0]
            if len(released) > 1:
                rng.shuffle(released)
            order.extend(released.tolist())
    if len(order) < n:
        raise ValueError("weights: the contention graph has a cycle (it must be a DAG)")
    return np.asarray(order, dtype=np.int64)


def best_split(weights: np.ndarray, order: np.ndarray, levels: int, *,
               split: str = "monotone") -> tuple[float, list[int]]:
    """The best split of a topological order into at most ``levels`` consecutive blocks.

    Parameters
    ----------
    weights : ndarray, shape (n, n)
        ``W[high, low]`` edge weights (>= 0) of a DAG.
    order : ndarray of int
        A topological order of it.
    levels : int
        K.
    split : {"monotone", "dense"}
        ``"dense"`` scans every split point j < i; ``"monotone"`` only
        ``j >= g(i-1, k)`` (the optimal split point never decreases, by the Monge
        property of C; both take the largest optimal j and give the same answer).

    Returns
    -------
    value : float
        f(n, k*): the weight of the edges between different blocks.
    bounds : list of int
        Block end positions in ``order``: block b is ``order[bounds[b-1]:bounds[b]]``,
        block 0 first (the highest level).

    Notes
    -----
    With ``S`` the 2-D prefix sums of ``W`` in this order, ``C(j, i) = S[j, i] - S[j, j]``
    is the weight entering block ``{j+1..i}`` from the prefix ``{1..j}``, and
    ``f(i, k) = max_{k-1 <= j < i} f(j, k-1) + C(j, i)``. O(K n^2) time, O(n^2) memory.

    Examples
    --------
    Figure 13 of the paper: J1 -> J2 (weight 4), J3 -> J4 (weight 2), K = 2.

    >>> w = weight_matrix(4, [(0, 1, 4.0), (2, 3, 2.0)])
    >>> best_split(w, np.array([0, 1, 2, 3]), 2)
    (4.0, [1, 4])
    >>> best_split(w, np.array([0, 2, 1, 3]), 2)
    (6.0, [2, 4])
    """
    if split not in ("monotone", "dense"):
        raise ValueError(f"split = {split!r}: must be 'monotone' or 'dense'")
    n = len(order)
    if n == 0:
        return 0.0, []
    kmax = min(int(levels), n)
    S = np.zeros((n + 1, n + 1))
    S[1:, 1:] = weights[np.ix_(order, order)].cumsum(axis=0).cumsum(axis=1)
    diag = np.diag(S).copy()
    f_prev = np.full(n + 1, -np.inf)
    f_prev[0] = 0.0
    arg = np.zeros((kmax + 1, n + 1), dtype=np.int64)
    best_value, best_k = -np.inf, 0
    cols = np.arange(n + 1)
    for k in range(1, kmax + 1):
        base = f_prev - diag                       # f(j, k-1) - S[j, j]
        f = np.full(n + 1, -np.inf)
        if split == "dense":
            M = base[:, None] + S                  # M[j, i] = f(j, k-1) + C(j, i)
            M[cols[:, None] >= cols[None, :]] = -np.inf   # only j < i
            # argmax from the bottom: ties go to the largest j
            j_best = n - np.argmax(M[::-1, :], axis=0)
            f[k:] = M[j_best[k:], cols[k:]]
            arg[k, k:] = j_best[k:]
        else:
            lo = k - 1
            for i in range(k, n + 1):
                vals = base[lo:i] + S[lo:i, i]
                j = lo + (i - 1 - lo) - int(np.argmax(vals[::-1]))
                f[i] = vals[j - lo]
                arg[k, i] = j
                lo = j
        if f[n] >= best_value:                     # ties: use more levels
            best_value, best_k = float(f[n]), k
        f_prev = f
    bounds = []
    i = n
    for k in range(best_k, 0, -1):
        bounds.append(int(i))
        i = arg[k, i]
    return best_value, bounds[::-1]


def compress(weights: np.ndarray, levels: int, *, orders: int = 10, seed: int = 0,
             split: str = "monotone") -> tuple[float, np.ndarray]:
    """Crux's Algorithm 1: the best sequence K-cut over ``orders`` random BFS orders.

    Parameters
    ----------
    weights : ndarray, shape (n, n)
        ``W[high, low] >= 0`` of the contention DAG (see :func:`weight_matrix`).
    levels : int
        K, the levels available.
    orders : int
        m, the random topological orders tried (the paper uses 10).
    seed : int
        Seed of the orders.
    split : {"monotone", "dense"}
        See :func:`best_split`.

    Returns
    -------
    value : float
        The cut weight found.
    level : ndarray of int
        Each job's level, 0..K-1 (the first block gets K-1, the highest).

    Examples
    --------
    Figure 13 (notes/crux.md §3.3): intensities (4, 3, 2, 1), edges J1->J2, J3->J4.

    >>> w = weight_matrix(4, [(0, 1, 4.0), (2, 3, 2.0)])
    >>> value, level = compress(w, 2)
    >>> value, level.tolist()
    (6.0, [1, 0, 1, 0])
    """
    n = len(weights)
    levels = int(levels)
    if levels < 1:
        raise ValueError(f"levels = {levels}: must be >= 1")
    rng = np.random.default_rng(seed)
    best_value, best = -np.inf, None
    for _ in range(max(1, int(orders))):
        order = random_topological_order(weights, rng)
        value, bounds = best_split(weights, order, levels, split=split)
        if value > best_value:                     # keep the first of equal cuts
            best_value, best = value, (order, bounds)
    level = np.zeros(n, dtype=np.int64)
    order, bounds = best
    start = 0
    for b, end in enumerate(bounds):
        level[order[start:end]] = levels - 1 - b
        start = end
    return max(best_value, 0.0), level


def ranking(ids: Sequence[str], priority: Sequence[float]) -> list[int]:
    """Job indices from the highest priority to the lowest (tie: the smaller id first)."""
    return sorted(range(len(ids)), key=lambda j: (-priority[j], ids[j]))


def sincronia_levels(rank: Sequence[int], levels: int) -> np.ndarray:
    """Sincronia-style: ranks 1..K-1 get levels K-1..1, every other job level 0.

    Examples
    --------
    >>> sincronia_levels([0, 1, 2, 3], 2).tolist()
    [1, 0, 0, 0]
    """
    level = np.zeros(len(rank), dtype=np.int64)
    for r, j in enumerate(rank[: levels - 1]):
        level[j] = levels - 1 - r
    return level


def varys_levels(rank: Sequence[int], levels: int) -> np.ndarray:
    """Varys-style: K contiguous blocks of the ranking, sizes ``ceil(n/K)`` first.

    Examples
    --------
    >>> varys_levels([0, 1, 2, 3], 2).tolist()
    [1, 1, 0, 0]
    """
    level = np.zeros(len(rank), dtype=np.int64)
    for b, block in enumerate(np.array_split(np.asarray(rank, dtype=np.int64), levels)):
        level[block] = levels - 1 - b
    return level


def cut_value(weights: np.ndarray, level: np.ndarray) -> float:
    """Weight of the edges whose endpoints are on different levels (high above low)."""
    hi, lo = np.nonzero(weights)
    keep = level[hi] > level[lo]
    return float(weights[hi[keep], lo[keep]].sum())


def compress_instance(instance: PrioritiesInstance, *, orders: int = 10, seed: int = 0,
                      split: str = "monotone") -> PrioritiesSolution:
    """:func:`compress` applied to a ``priorities`` instance.

    Examples
    --------
    >>> inst = PrioritiesInstance(2, [{"id": f"J{k}", "priority": 4 - k, "intensity": 4 - k}
    ...                               for k in range(4)], [["J0", "J1"], ["J2", "J3"]])
    >>> dict(compress_instance(inst).level)
    {'J0': 1, 'J1': 0, 'J2': 1, 'J3': 0}
    """
    weights = weight_matrix(len(instance.jobs), instance.edges)
    _, level = compress(weights, instance.levels, orders=orders, seed=seed, split=split)
    return PrioritiesSolution({name: int(level[j]) for j, name in enumerate(instance.ids)})


def rank_instance(instance: PrioritiesInstance, rule: str) -> PrioritiesSolution:
    """A ranking baseline, ``"sincronia"`` or ``"varys"``, on a ``priorities`` instance."""
    rules = {"sincronia": sincronia_levels, "varys": varys_levels}
    if rule not in rules:
        raise ValueError(f"rule = {rule!r}: must be one of {', '.join(rules)}")
    ids = instance.ids
    level = rules[rule](ranking(ids, [job.priority for job in instance.jobs]), instance.levels)
    return PrioritiesSolution({name: int(level[j]) for j, name in enumerate(ids)})
