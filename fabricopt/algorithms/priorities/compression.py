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
the general rules are ours (fabricopt docs, *Departures*, crux-3.4).

References
----------
.. [1] J. Cao et al., "Crux", SIGCOMM 2024, §4.3, Algorithm 1, Appendix B, Figure 13.
.. [2] F. F. Yao, "Efficient dynamic programming using quadrangle inequalities",
   STOC 1980 (monotone split points).
"""

from __future__ import annotations

from fabricopt.errors import InvalidArgument, InvalidOption

import time
from typing import Sequence

import numpy as np

from fabricopt.problems.priorities import PrioritiesInstance, PrioritiesSolution

__all__ = ["Dag", "random_topological_order", "best_split", "compress", "compress_search",
           "ranking", "sincronia_levels", "varys_levels", "cut_value", "compress_instance",
           "compress_instance_search", "rank_instance"]


class Dag:
    """A weighted DAG on nodes 0..n-1 in the two forms the algorithm needs.

    Parameters
    ----------
    n : int
    edges : sequence of (high, low, weight)
        Weights >= 0; at most one edge per ordered pair (as :func:`dag_edges` gives).
    """

    def __init__(self, n: int, edges: Sequence[tuple[int, int, float]]):
        self.n = int(n)
        e = np.array([(hi, lo) for hi, lo, _ in edges], dtype=np.int64).reshape(-1, 2)
        self.hi, self.lo = e[:, 0], e[:, 1]
        self.w = np.array([w for _, _, w in edges], dtype=float)
        if np.any(self.w < 0) or not np.all(np.isfinite(self.w)):
            raise InvalidArgument("edges: weights must be finite and >= 0")
        by_hi = np.argsort(self.hi, kind="stable")
        self.children = np.split(self.lo[by_hi], np.cumsum(np.bincount(self.hi, minlength=n))[:-1])
        self.indeg = np.bincount(self.lo, minlength=n).astype(np.int64)
        self.child_lists = [c.tolist() for c in self.children]

    def positions(self, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Positions in ``order`` of every edge's high and low end."""
        pos = np.empty(self.n, dtype=np.int64)
        pos[order] = np.arange(self.n)
        return pos[self.hi], pos[self.lo]

    def prefix_sums(self, order: np.ndarray) -> np.ndarray:
        """``S[j, i]``: weight of the edges from the first j nodes of ``order`` to the first i."""
        hi, lo = self.positions(order)
        S = np.zeros((self.n + 1, self.n + 1))
        np.add.at(S, (hi + 1, lo + 1), self.w)
        np.cumsum(S, axis=0, out=S)
        np.cumsum(S, axis=1, out=S)
        return S


class _DensePrefix:
    """``S[j, i]`` read from the dense (n+1)² prefix-sum matrix: O(n²) memory."""

    def __init__(self, dag: Dag, order: np.ndarray):
        self.S = dag.prefix_sums(order)

    def diagonal(self) -> np.ndarray:
        return np.diag(self.S).copy()

    def columns(self, cols: np.ndarray, j_lo: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """``S[j, cols[r]]`` for ``j = j_lo[r] .. j_lo[r]+lengths[r]-1``, concatenated."""
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        js = np.repeat(j_lo - starts, lengths) + np.arange(lengths.sum())
        return self.S[js, np.repeat(cols, lengths)]


class _SparsePrefix:
    """The same ``S[j, i]`` answered from the edge list: O(n + E) memory.

    In a topological order every edge runs from position ``a`` to ``b > a``, and
    ``S[j, i]`` sums the edges with ``a < j`` and ``b < i``. The divide and conquer asks,
    per depth, for runs ``S[j_lo..j_hi, i]`` of one column each, and the runs of one
    depth form a chain: sorted by ``i``, their ``j_lo`` never decrease either. The first
    entries of a chain come from one offline sweep (an edge counts from the first run
    past both its ends on), the rest of each run from a running sum over the edges with
    ``j_lo <= a < j_hi``: O(E log n + n) per depth.
    """

    def __init__(self, dag: Dag, order: np.ndarray):
        a, b = dag.positions(order)
        self.n = dag.n
        by_a = np.argsort(a, kind="stable")
        self.a, self.b, self.w = a[by_a], b[by_a], dag.w[by_a]
        self.first = np.searchsorted(self.a, np.arange(self.n + 1))   # first edge, a >= p

    def diagonal(self) -> np.ndarray:
        """``S[j, j]`` = weight of the edges with ``b < j`` (then ``a < j`` too)."""
        return np.concatenate([[0.0], np.cumsum(np.bincount(self.b, self.w, self.n))])

    def entries(self, j: np.ndarray, i: np.ndarray) -> np.ndarray:
        """``S[j[q], i[q]]`` along a chain: ``j`` and ``i`` both non-decreasing in q."""
        # the first q with j[q] > p, and with i[q] > p, for every position p
        positions = np.arange(self.n + 1)
        past_j = np.searchsorted(j, positions, side="right")
        past_i = np.searchsorted(i, positions, side="right")
        since = np.maximum(past_j[self.a], past_i[self.b])
        return np.cumsum(np.bincount(since, self.w, len(j) + 1))[:len(j)]

    def columns(self, cols: np.ndarray, j_lo: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """``S[j, cols[r]]`` for ``j = j_lo[r] .. j_lo[r]+lengths[r]-1``, concatenated."""
        chain = np.argsort(cols, kind="stable")
        anchor = np.empty(len(cols))
        anchor[chain] = self.entries(j_lo[chain], cols[chain])
        # the edges each run adds after its first entry: j_lo <= a < j_lo + length - 1
        e_lo, e_hi = self.first[j_lo], self.first[j_lo + lengths - 1]
        counts = e_hi - e_lo
        e_starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        edge = np.repeat(e_lo - e_starts, counts) + np.arange(counts.sum())
        gain = np.where(self.b[edge] < np.repeat(cols, counts), self.w[edge], 0.0)
        running = np.concatenate([[0.0], np.cumsum(gain)])
        run = np.repeat(np.arange(len(cols)), lengths)
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        js = np.repeat(j_lo - starts, lengths) + np.arange(lengths.sum())
        taken = e_starts[run] + self.first[js] - e_lo[run]
        return anchor[run] + (running[taken] - running[e_starts[run]])


def random_topological_order(dag: Dag, rng: np.random.Generator) -> np.ndarray:
    """A random BFS topological order (Kahn's algorithm with a FIFO queue).

    The initial sources are shuffled, and so is every batch of nodes that one node's
    removal releases (our reading of the paper's "random topological orders by BFS").

    Raises
    ------
    ValueError
        If the graph has a cycle.
    """
    # plain lists: per node, numpy calls on a handful of children cost more than the work
    indeg = dag.indeg.tolist()
    children = dag.child_lists
    order = [v for v, d in enumerate(indeg) if d == 0]
    rng.shuffle(order)
    head = 0
    while head < len(order):
        released = []
        for v in children[order[head]]:
            indeg[v] -= 1
            if not indeg[v]:
                released.append(v)
        head += 1
        if len(released) > 1:
            rng.shuffle(released)
        order.extend(released)
    if len(order) < dag.n:
        raise InvalidArgument("edges: the contention graph has a cycle (it must be a DAG)")
    return np.asarray(order, dtype=np.int64)


def _largest_argmax(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Per segment of ``values`` (segments begin at ``starts``), the offset of the last
    maximum from the segment start."""
    seg_max = np.maximum.reduceat(values, starts)
    seg_id = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, len(values))))
    index = np.arange(len(values))
    last = np.maximum.reduceat(np.where(values == seg_max[seg_id], index, -1), starts)
    return last - starts


def _monotone_row(base: np.ndarray, prefix, k: int, n: int, only_last: bool = False):
    """f(i, k) and the largest optimal j for i = k..n by divide and conquer over i.

    The largest optimal split point is non-decreasing in i (C is Monge), so the best j
    of the middle i of a range bounds the j of both halves; every recursion depth is
    one vectorized step over all its ranges. With ``only_last``, f(n, k) alone (every
    j < n scanned once).
    """
    f = np.full(n + 1, -np.inf)
    arg = np.zeros(n + 1, dtype=np.int64)
    # ranges of i and of their candidate j: i_lo..i_hi, j_lo..j_hi
    i_lo, i_hi = np.array([n if only_last else k]), np.array([n])
    j_lo, j_hi = np.array([k - 1]), np.array([n - 1])
    while len(i_lo):
        mids = (i_lo + i_hi) // 2
        top = np.minimum(j_hi, mids - 1)
        lengths = top - j_lo + 1
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        js = np.repeat(j_lo - starts, lengths) + np.arange(lengths.sum())
        vals = base[js] + prefix.columns(mids, j_lo, lengths)
        best = j_lo + _largest_argmax(vals, starts)
        f[mids] = vals[starts + best - j_lo]
        arg[mids] = best
        left, right = i_lo <= mids - 1, mids + 1 <= i_hi
        i_lo, i_hi, j_lo, j_hi = (np.concatenate([i_lo[left], mids[right] + 1]),
                                  np.concatenate([mids[left] - 1, i_hi[right]]),
                                  np.concatenate([j_lo[left], best[right]]),
                                  np.concatenate([best[left], j_hi[right]]))
    return f, arg


def _dense_row(base: np.ndarray, prefix: _DensePrefix, k: int, n: int,
               only_last: bool = False):
    """f(i, k) and the largest optimal j for every i, scanning every j < i."""
    S = prefix.S
    cols = np.arange(n + 1)
    M = base[:, None] + S                      # M[j, i] = f(j, k-1) + C(j, i)
    M[cols[:, None] >= cols[None, :]] = -np.inf
    j_best = n - np.argmax(M[::-1, :], axis=0)  # from the bottom: the largest j
    f = np.full(n + 1, -np.inf)
    arg = np.zeros(n + 1, dtype=np.int64)
    f[k:] = M[j_best[k:], cols[k:]]
    arg[k:] = j_best[k:]
    return f, arg


def best_split(dag: Dag, order: np.ndarray, levels: int, *,
               split: str = "monotone") -> tuple[float, list[int]]:
    """The best split of a topological order into at most ``levels`` consecutive blocks.

    Parameters
    ----------
    dag : Dag
    order : ndarray of int
        A topological order of it.
    levels : int
        K.
    split : {"monotone", "dense"}
        ``"dense"`` scans every split point j < i; ``"monotone"`` uses that the optimal
        split point never decreases in i (C is Monge; Yao 1980) and finds all of them
        by divide and conquer. Both take the largest optimal j.

    Returns
    -------
    value : float
        f(n, k*): the weight of the edges between different blocks.
    bounds : list of int
        Block end positions in ``order``: block b is ``order[bounds[b-1]:bounds[b]]``,
        block 0 first (the highest level).

    Notes
    -----
    With ``S`` the 2-D prefix sums of the weights in this order,
    ``C(j, i) = S[j, i] - S[j, j]`` is the weight entering block ``{j+1..i}`` from the
    prefix ``{1..j}``, and ``f(i, k) = max_{k-1 <= j < i} f(j, k-1) + C(j, i)``.
    ``"dense"`` stores ``S``: O(n²) memory and O(K n²) time. ``"monotone"`` never forms it:
    it asks O(n log n) entries per level, answered from the edges (an offline sweep for
    the first entry of each run of one column, running sums for the rest) in O(n + E)
    memory and O(K log n (n + E log n)) time for E edges. The two sum the
    same weights in different orders: with weights on a common binary grid (integers,
    say) whose total stays below 2**53 both are exact, hence identical; otherwise they
    agree to rounding.

    Examples
    --------
    Figure 13 of the paper: J1 -> J2 (weight 4), J3 -> J4 (weight 2), K = 2.

    >>> dag = Dag(4, [(0, 1, 4.0), (2, 3, 2.0)])
    >>> best_split(dag, np.array([0, 1, 2, 3]), 2)
    (4.0, [1, 4])
    >>> best_split(dag, np.array([0, 2, 1, 3]), 2)
    (6.0, [2, 4])
    """
    rows = {"monotone": (_monotone_row, _SparsePrefix), "dense": (_dense_row, _DensePrefix)}
    if split not in rows:
        raise InvalidOption(f"split = {split!r}: must be 'monotone' or 'dense'")
    if len(order) == 0:
        return 0.0, []
    row, prefix = rows[split]
    return _best_split(order, levels, row, prefix(dag, order))


def _best_split(order: np.ndarray, levels: int, row, prefix) -> tuple[float, list[int]]:
    """:func:`best_split` with the row rule and the ``S`` queries given."""
    n = len(order)
    kmax = min(int(levels), n)
    diag = prefix.diagonal()
    f_prev = np.full(n + 1, -np.inf)
    f_prev[0] = 0.0
    args = [None]
    best_value, best_k = -np.inf, 0
    for k in range(1, kmax + 1):
        # the last level needs f(n, k) alone: one column instead of a whole row
        f, arg = row(f_prev - diag, prefix, k, n, only_last=k == kmax)
        args.append(arg)
        if f[n] >= best_value:                     # ties: use more levels
            best_value, best_k = float(f[n]), k
        f_prev = f
    bounds = []
    i = n
    for k in range(best_k, 0, -1):
        bounds.append(int(i))
        i = int(args[k][i])
    return best_value, bounds[::-1]


def compress(n: int, edges: Sequence[tuple[int, int, float]], levels: int, *,
             orders: int = 10, seed: int = 0, split: str = "monotone"
             ) -> tuple[float, np.ndarray]:
    """Crux's Algorithm 1: the best sequence K-cut over ``orders`` random BFS orders.

    Parameters
    ----------
    n : int
        Jobs (nodes 0..n-1).
    edges : sequence of (high, low, weight)
        The contention DAG (:func:`fabricopt.problems.priorities.dag_edges`).
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
    Figure 13 (*Departures*, crux-3.3): intensities (4, 3, 2, 1), edges J1->J2, J3->J4.

    >>> value, level = compress(4, [(0, 1, 4.0), (2, 3, 2.0)], 2)
    >>> value, level.tolist()
    (6.0, [1, 0, 1, 0])
    """
    value, level, _ = compress_search(n, edges, levels, orders=orders, seed=seed, split=split)
    return value, level


def compress_search(n: int, edges: Sequence[tuple[int, int, float]], levels: int, *,
                    orders: int = 10, seed: int = 0, split: str = "monotone",
                    deadline: float | None = None) -> tuple[float, np.ndarray, int]:
    """:func:`compress` that may stop drawing orders at ``deadline``: ``(value, level, tried)``.

    ``deadline`` is a :func:`time.perf_counter` instant; once it has passed no further
    order is drawn, but the first is always split, so ``tried >= 1``. Orders are drawn
    from one seeded stream, so an uncut search is :func:`compress` exactly; a cut one
    depends on the machine's speed.

    Examples
    --------
    >>> compress_search(4, [(0, 1, 4.0), (2, 3, 2.0)], 2, deadline=0.0)[2]
    1
    """
    levels = int(levels)
    if levels < 1:
        raise InvalidArgument(f"levels = {levels}: must be >= 1")
    dag = Dag(n, edges)
    rng = np.random.default_rng(seed)
    best_value, best, tried = -np.inf, None, 0
    for _ in range(max(1, int(orders))):
        if tried and deadline is not None and time.perf_counter() >= deadline:
            break
        order = random_topological_order(dag, rng)
        value, bounds = best_split(dag, order, levels, split=split)
        tried += 1
        if value > best_value:                     # keep the first of equal cuts
            best_value, best = value, (order, bounds)
    level = np.zeros(n, dtype=np.int64)
    order, bounds = best
    start = 0
    for b, end in enumerate(bounds):
        level[order[start:end]] = levels - 1 - b
        start = end
    return max(best_value, 0.0), level, tried


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


def cut_value(edges: Sequence[tuple[int, int, float]], level: Sequence[int]) -> float:
    """Weight of the edges whose high end is on a strictly higher level."""
    return float(sum(w for hi, lo, w in edges if level[hi] > level[lo]))


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
    return compress_instance_search(instance, orders=orders, seed=seed, split=split)[0]


def compress_instance_search(instance: PrioritiesInstance, *, orders: int = 10, seed: int = 0,
                             split: str = "monotone", time_limit: float | None = None
                             ) -> tuple[PrioritiesSolution, dict]:
    """:func:`compress_instance` within ``time_limit``: ``(solution, info)``.

    No further BFS order is drawn once ``time_limit`` seconds have passed (one always
    is, see :func:`compress_search`; a cut makes the answer machine-dependent).
    ``info``: ``orders_tried`` and, when cut, ``time_limit_exceeded``.

    Examples
    --------
    >>> inst = PrioritiesInstance(2, [{"id": f"J{k}", "priority": 4 - k, "intensity": 4 - k}
    ...                               for k in range(4)], [["J0", "J1"], ["J2", "J3"]])
    >>> compress_instance_search(inst, time_limit=1e-9)[1]["orders_tried"]
    1
    """
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    _, level, tried = compress_search(len(instance.jobs), instance.edges, instance.levels,
                                      orders=orders, seed=seed, split=split,
                                      deadline=deadline)
    info = {"orders_tried": tried}
    if tried < max(1, int(orders)):
        info["time_limit_exceeded"] = (f"the time limit of {time_limit:g} s ran out: "
                                       f"{tried} of {orders} BFS orders split")
    solution = PrioritiesSolution({name: int(level[j]) for j, name in enumerate(instance.ids)})
    return solution, info


def rank_instance(instance: PrioritiesInstance, rule: str) -> PrioritiesSolution:
    """A ranking baseline, ``"sincronia"`` or ``"varys"``, on a ``priorities`` instance."""
    rules = {"sincronia": sincronia_levels, "varys": varys_levels}
    if rule not in rules:
        raise InvalidOption(f"rule = {rule!r}: must be one of {', '.join(rules)}")
    ids = instance.ids
    level = rules[rule](ranking(ids, [job.priority for job in instance.jobs]), instance.levels)
    return PrioritiesSolution({name: int(level[j]) for j, name in enumerate(ids)})
