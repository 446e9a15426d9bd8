"""TopoOpt's TopologyFinder and its building blocks: TotientPerms, SelectPermutations,
CoinChangeMod.

AllReduce is *mutable*: a ring over g members may visit them in any cyclic order. The
*regular* rings ``m_i -> m_(i+p mod g)`` with p coprime to g are Hamiltonian
(TotientPerms: φ(g) of them, directed). TopologyFinder gives each AllReduce group a few
of them with jumps in roughly geometric progression (SelectPermutations), so that the
union is a low-diameter circulant; servers that are not adjacent reach each other by
writing the offset as a sum of jumps (CoinChangeMod). Model-parallel traffic gets the
remaining interfaces by repeated maximum-weight matching.

We implement the paper's intent, not the artifact's bugs: the degree
is split between AllReduce and MP in proportion to their bytes (the artifact gives all
of it to AllReduce; ``mp_degree=0`` reproduces that), AllReduce degree is split over the
groups in proportion to their bytes (the artifact's formula is inverted), matching
weights use both directions, ties are broken by a seeded generator, and the guards the
C++ lacks are in place (index clamp, more jumps asked than candidates exist, coins that
do not generate Z_n).

References
----------
.. [1] W. Wang et al., "TopoOpt: Co-optimizing Network Topology and Parallelization
   Strategy for Distributed Training Jobs", NSDI 2023 (arXiv 2202.00433), §4.2
   (TopologyFinder), §4.3 (traffic mutability, TotientPerms), Appendix D
   (SelectPermutations, CoinChangeMod).
"""

from __future__ import annotations

from fabricopt.errors import InvalidArgument, InvalidOption

import math
import time
from bisect import bisect_left
from dataclasses import dataclass
from functools import partial
from typing import Sequence

import numpy as np
from scipy import sparse

from fabricopt.problems._validate import as_int
from fabricopt.problems.topology import (Ring, TopologyInstance, TopologySolution,
                                         demand_pairs, evaluate, ring_bytes_per_member)
from fabricopt.algorithms.topology.baselines import ring as plain_ring, ring_lower_bound
from fabricopt.algorithms.topology.routing import (RouteBook, assemble, assembled_score,
                                                   degree_one_solution, route_shortest,
                                                   symmetric_counts)
from fabricopt.algorithms._matching import (greedy_weight_matching, integer_weights,
                                            max_weight_matching)

__all__ = ["totient_perms", "select_permutations", "CoinTable", "coin_change_mod",
           "circulant_diameter", "circulant_mean_hops", "regular_ring", "degree_split",
           "RingClass", "ALLOCATIONS", "allocate_rings", "mp_matching", "coin_path_nodes",
           "topology_finder", "topoopt", "topoopt_search", "MATCHINGS"]


# Relative margin by which a candidate's lower bound must exceed the best score for the
# candidate to be dismissed unbuilt.
_BOUND_RTOL = 1e-9


def totient_perms(n: int) -> list[int]:
    """The jumps p of the regular rings ``i -> i+p (mod n)``: 1 <= p < n, gcd(p, n) = 1.

    Each is one Hamiltonian cycle; there are φ(n) (Euler's totient) of them, directed,
    and p and n-p walk the same cycle in opposite directions.

    Parameters
    ----------
    n : int
        Group size, >= 2.

    Returns
    -------
    list of int
        Ascending.

    References
    ----------
    TopoOpt §4.3 and Appendix D; fabricopt docs, *Departures*, topoopt-1.1.

    Examples
    --------
    >>> totient_perms(12)
    [1, 5, 7, 11]
    >>> totient_perms(2)
    [1]
    """
    n = as_int("n", n, minimum=2, error=InvalidArgument)
    p = np.arange(1, n)
    return p[np.gcd(p, n) == 1].tolist()


def select_permutations(candidates: Sequence[int], m: int, *, bidirectional: bool = True,
                        modulus: int | None = None) -> list[int]:
    """Choose ``m`` jumps in roughly geometric progression (TopoOpt's SelectPermutations).

    Starting at the smallest candidate, each next target is the previous one times
    ``q = (max/min) ** (1/m)`` (``1/(m-1)`` when not bidirectional, so that the largest
    candidate is reached); each pick is the smallest unused candidate at or above the
    target. With bidirectional rings every jump p also brings n-p, so the sequence stops
    below the largest candidate; offsets are then sums of at most m "digits" and the
    circulant's diameter is O(m * n^(1/m)).

    Parameters
    ----------
    candidates : sequence of int
        Positive jumps, e.g. :func:`totient_perms`.
    m : int
        How many to choose, >= 1.
    bidirectional : bool
        Whether each ring is also used in reverse (the artifact's setting).
    modulus : int, optional
        If given, p and ``modulus - p`` count as one choice (one undirected ring).

    Returns
    -------
    list of int
        Ascending, ``min(m, distinct choices)`` jumps: when more are asked than exist,
        all of them (the authors' C++ runs off the end of its array here).

    References
    ----------
    TopoOpt Appendix D; the artifact's ``SpMulMat::choose_n_geo`` (fabricopt docs,
    *Departures*, topoopt-1.3).

    Examples
    --------
    >>> select_permutations(totient_perms(128), 4)
    [1, 5, 13, 39]
    >>> select_permutations(totient_perms(16), 3, bidirectional=False)
    [1, 5, 15]
    >>> select_permutations(totient_perms(6), 2, modulus=6)   # 1 and 5 are one ring
    [1]
    """
    cjs = sorted({as_int(f"candidates[{k}]", c, minimum=1, error=InvalidArgument)
                  for k, c in enumerate(candidates)})
    if not cjs:
        raise InvalidArgument("candidates = []: need at least one jump")
    m = as_int("m", m, minimum=1, error=InvalidArgument)

    def mirror(c: int) -> int:
        return (modulus - c) % modulus if modulus else c

    choices = len({min(c, mirror(c)) for c in cjs})
    m = min(m, choices)
    if m == 1:
        return [cjs[0]]
    ratio = (cjs[-1] / cjs[0]) ** (1.0 / (m - (0 if bidirectional else 1)))
    used: set[int] = set()
    result = []
    target = float(cjs[0])
    for _ in range(m):
        # Floating-point error can push the target just past the last candidate: clamp.
        start = min(bisect_left(cjs, target), len(cjs) - 1)
        free = [c for c in cjs[start:] if c not in used] or \
               [c for c in reversed(cjs[:start]) if c not in used]
        pick = free[0]
        result.append(pick)
        used |= {pick, mirror(pick)}
        target *= ratio
    return sorted(result)


@dataclass(frozen=True)
class CoinTable:
    """Fewest-coin decompositions of every offset of Z_n (see :func:`coin_change_mod`).

    Attributes
    ----------
    n : int
    coins : tuple of int
        The coins used, mirrors included when bidirectional.
    hops : numpy.ndarray
        ``hops[r]``: fewest coins summing to r mod n (``hops[0] = 0``).
    last : numpy.ndarray
        ``last[r]``: the last coin of one fewest-coin decomposition of r.
    """

    n: int
    coins: tuple
    hops: np.ndarray
    last: np.ndarray

    def path(self, offset: int) -> list[int]:
        """Coins ``c_1, ..., c_h`` (h = ``hops[offset]``) with sum ≡ offset (mod n).

        The prefix sums are distinct and non-zero, so a route s, s+c_1, s+c_1+c_2, ...
        is a simple path.
        """
        r = int(offset) % self.n
        coins = []
        while r:
            c = int(self.last[r])
            coins.append(c)
            r = (r - c) % self.n
        return coins[::-1]

    @property
    def diameter(self) -> int:
        """The largest hop count over all offsets."""
        return int(self.hops.max())

    @property
    def mean_hops(self) -> float:
        """Mean hop count over the n-1 non-zero offsets."""
        return float(self.hops[1:].mean()) if self.n > 1 else 0.0


def coin_change_mod(n: int, coins: Sequence[int], *, bidirectional: bool = True,
                    seed: int = 0) -> CoinTable:
    """CoinChangeMod: the fewest coins summing to every offset modulo n.

    Equivalently, breadth-first search on the circulant (Cayley) graph of Z_n with the
    coins as generators: one table serves every source, since every coin is a link at
    every server. Level-synchronous and vectorized: O(n * len(coins)) work.

    Parameters
    ----------
    n : int
        >= 2.
    coins : sequence of int
        Jumps, taken mod n; none may be ≡ 0.
    bidirectional : bool
        Also allow ``n - c`` for every coin c (the rings are used both ways).
    seed : int
        Among equally short decompositions the last coin is chosen uniformly at random
        with this seed (the artifact's tie-break is not uniform); hop counts do not
        depend on it.

    Returns
    -------
    CoinTable

    Raises
    ------
    ValueError
        If the coins do not generate Z_n (some offsets are unreachable; the artifact
        loops forever here) or a coin is ≡ 0 (mod n).

    References
    ----------
    TopoOpt Appendix D; the artifact's ``SpMulMat::all_coin_change`` (fabricopt docs,
    *Departures*, topoopt-2).

    Examples
    --------
    >>> table = coin_change_mod(12, [1, 5])
    >>> table.hops.tolist()
    [0, 1, 2, 3, 2, 1, 2, 1, 2, 3, 2, 1]
    >>> sum(table.path(3)) % 12, len(table.path(3))
    (3, 3)
    >>> coin_change_mod(8, [2, 4])
    Traceback (most recent call last):
    ...
    fabricopt.errors.InvalidArgument: coins = [2, 4]: do not generate Z_8 (every sum is a multiple of gcd 2), so offset 1 is unreachable
    """
    n = as_int("n", n, minimum=2, error=InvalidArgument)
    raw = [as_int(f"coins[{k}]", c, error=InvalidArgument) for k, c in enumerate(coins)]
    if not raw:
        raise InvalidArgument("coins = []: need at least one coin")
    for c in raw:
        if c % n == 0:
            raise InvalidArgument(f"coins = {raw}: {c} ≡ 0 (mod {n}) is not a jump")
    gcd = math.gcd(n, *raw)
    if gcd != 1:
        raise InvalidArgument(f"coins = {raw}: do not generate Z_{n} (every sum is a multiple of "
                         f"gcd {gcd}), so offset 1 is unreachable")
    used = {c % n for c in raw}
    if bidirectional:
        used |= {(n - c) % n for c in used}
    coin_arr = np.array(sorted(used), dtype=np.int64)
    rng = np.random.default_rng(seed)
    hops = np.full(n, -1, dtype=np.int64)
    last = np.zeros(n, dtype=np.int64)
    hops[0] = 0
    frontier = np.zeros(1, dtype=np.int64)
    level = 0
    while frontier.size:
        level += 1
        reached = ((frontier[:, None] + coin_arr[None, :]) % n).ravel()
        coin_of = np.broadcast_to(coin_arr, (frontier.size, coin_arr.size)).ravel()
        new = hops[reached] < 0
        reached, coin_of = reached[new], coin_of[new]
        if not reached.size:
            break
        # Shuffle, then keep each offset's first occurrence: a uniform tie-break.
        order = rng.permutation(reached.size)
        reached, coin_of = reached[order], coin_of[order]
        frontier, first = np.unique(reached, return_index=True)
        hops[frontier] = level
        last[frontier] = coin_of[first]
    return CoinTable(n, tuple(int(c) for c in coin_arr), hops, last)


def circulant_diameter(n: int, jumps: Sequence[int], *, bidirectional: bool = True) -> int:
    """Diameter of the circulant graph of Z_n with links i -> i+p for p in ``jumps``.

    Examples
    --------
    >>> circulant_diameter(128, [1, 13])
    10
    """
    return coin_change_mod(n, jumps, bidirectional=bidirectional).diameter


def circulant_mean_hops(n: int, jumps: Sequence[int], *, bidirectional: bool = True) -> float:
    """Mean shortest-path hops over all ordered pairs of distinct servers of that circulant.

    Examples
    --------
    >>> round(circulant_mean_hops(128, [1, 13]), 3)
    5.622
    """
    return coin_change_mod(n, jumps, bidirectional=bidirectional).mean_hops


def regular_ring(members: Sequence[int], p: int) -> list[int]:
    """The ring visiting ``members[0], members[p], members[2p], ...`` (indices mod g).

    Examples
    --------
    >>> regular_ring([10, 11, 12, 13, 14], 2)
    [10, 12, 14, 11, 13]
    """
    g = len(members)
    return [int(members[(i * p) % g]) for i in range(g)]


def degree_split(degree: int, allreduce_bytes: float, mp_bytes: float,
                 mp_degree: int | None = None) -> tuple[int, int]:
    """Interfaces for AllReduce rings and for MP matching: ``(ar_degree, mp_degree)``.

    In proportion to their bytes on the wire, as TopoOpt §4.2 says, with AllReduce's
    share rounded to an even number (each bidirectional ring uses two interfaces per
    server) of at least 2: that ring keeps every server connected. An odd ``degree``
    leaves its last interface to MP matching, which uses one per round.

    Parameters
    ----------
    degree : int
        >= 2.
    allreduce_bytes, mp_bytes : float
        Total ring-AllReduce bytes and total MP bytes.
    mp_degree : int, optional
        Force the MP share (``0`` reproduces the published artifact).

    Raises
    ------
    ValueError
        If ``degree < 2`` or ``mp_degree`` leaves fewer than 2 or an odd number of
        interfaces for the bidirectional rings.

    Examples
    --------
    >>> degree_split(8, 3e9, 1e9)
    (6, 2)
    >>> degree_split(5, 1e9, 0.0)
    (4, 1)
    >>> degree_split(6, 1e9, 1e9, mp_degree=3)
    Traceback (most recent call last):
    ...
    fabricopt.errors.InvalidOption: mp_degree = 3: leaves 3 interfaces for AllReduce, but bidirectional rings use them in pairs (degree - mp_degree must be even)
    """
    degree = as_int("degree", degree, minimum=2, error=InvalidArgument)
    if mp_degree is not None:
        mp = as_int("mp_degree", mp_degree, minimum=0, maximum=degree - 2, error=InvalidArgument)
        if (degree - mp) % 2:
            raise InvalidOption(f"mp_degree = {mp}: leaves {degree - mp} interfaces for AllReduce, "
                             f"but bidirectional rings use them in pairs "
                             f"(degree - mp_degree must be even)")
        return degree - mp, mp
    total = allreduce_bytes + mp_bytes
    share = allreduce_bytes / total if total > 0 else 1.0
    ar = 2 * math.floor(degree * share / 2 + 0.5)
    ar = min(max(ar, 2), degree - degree % 2)
    return ar, degree - ar


@dataclass(frozen=True)
class RingClass:
    """The AllReduce groups over one member set, and the ring jumps they got.

    Attributes
    ----------
    members : tuple of int
        Ascending; ring jumps index into it.
    groups : tuple of int
        Indices of the instance's groups with exactly these members (empty for the
        connectivity ring).
    member_bytes : float
        Bytes each member sends over all those groups' rings.
    jumps : tuple of int
        Regular-ring jumps over ``members``, repeated when parallel copies are used;
        empty when the class got no interfaces (its rings are routed over others).
    """

    members: tuple
    groups: tuple
    member_bytes: float
    jumps: tuple


def _jumps(g: int, count: int) -> tuple[int, ...]:
    if count == 0:
        return ()
    chosen = select_permutations(totient_perms(g), count, modulus=g)
    return tuple(chosen[i % len(chosen)] for i in range(count))


#: Ring allocations :func:`allocate_rings` knows: TopoOpt's shares in proportion to
#: traffic, or every AllReduce interface to the all-server class.
ALLOCATIONS = ("proportional", "full")


def allocate_rings(instance: TopologyInstance, ar_degree: int, *,
                   allocation: str = "proportional") -> list[RingClass]:
    """Give AllReduce groups ring jumps within ``ar_degree`` interfaces per server.

    Groups over the same member set share rings (the artifact aggregates by group size,
    which is the same thing for its strided placements). A ring jump uses two interfaces
    at each member. With ``allocation="proportional"`` (TopoOpt §4.2: d_k in proportion
    to the group's AllReduce traffic; the artifact's formula is inverted) a class wants
    ``max(1, round(ar_degree/2 * bytes / busiest member's bytes))`` jumps, the per-member
    bytes of all classes through its busiest member being the ``ar_degree/2`` jumps
    there; classes take what they want in order of bytes, capped by the interfaces
    their members have left, so a small class may get none and ride the others' rings.
    With ``"full"`` the all-server class takes every jump. Some ring must span every
    server, so that the graph is connected (the artifact's ``all_ring`` rule): the
    all-server class goes first and gets at least one jump, and without an all-server
    group a plain ring ``0, 1, ..., n-1`` takes two interfaces first.

    Parameters
    ----------
    instance : TopologyInstance
    ar_degree : int
        Interfaces per server for AllReduce rings (even).
    allocation : {"proportional", "full"}

    Returns
    -------
    list of RingClass
        The all-server class (a group's or the connectivity ring) first.

    Raises
    ------
    ValueError
        For an unknown ``allocation``.

    Examples
    --------
    >>> inst = TopologyInstance(8, 4, 100.0, [{"members": list(range(8)), "bytes": 1e9},
    ...     {"members": [0, 2, 4, 6], "bytes": 1e9}], [[0] * 8] * 8)
    >>> [(c.members, c.jumps) for c in allocate_rings(inst, 4)]
    [((0, 1, 2, 3, 4, 5, 6, 7), (1,)), ((0, 2, 4, 6), (1,))]
    >>> [c.jumps for c in allocate_rings(inst, 4, allocation="full")]
    [(1, 3), ()]
    """
    if allocation not in ALLOCATIONS:
        raise InvalidOption(f"allocation = {allocation!r}: must be one of {', '.join(ALLOCATIONS)}")
    n = instance.servers
    full = tuple(range(n))
    classes: dict[tuple[int, ...], list] = {}
    for k, group in enumerate(instance.allreduce):
        entry = classes.setdefault(tuple(sorted(group.members)), [[], 0.0])
        entry[0].append(k)
        entry[1] += ring_bytes_per_member(group)
    load = np.zeros(n)
    for members, (_, member_bytes) in classes.items():
        load[list(members)] += member_bytes
    free = np.full(n, ar_degree, dtype=np.int64)
    out = []
    if full not in classes:
        out.append(RingClass(full, (), 0.0, (1,)))
        free -= 2
    half = ar_degree // 2
    ranked = sorted(classes, key=lambda m: (m != full, -classes[m][1], -len(m), m))
    got = {}
    for members in ranked:
        member_bytes = classes[members][1]
        if allocation == "full":
            want = half if members == full else 0
        else:
            want = 0
            if member_bytes > 0:
                want = max(1, math.floor(half * member_bytes / load[list(members)].max() + 0.5))
            if members == full:
                want = max(want, 1)
        idx = list(members)
        got[members] = min(want, int(free[idx].min()) // 2)
        free[idx] -= 2 * got[members]
    for members in ranked:
        groups, member_bytes = classes[members]
        out.append(RingClass(members, tuple(groups), member_bytes,
                             _jumps(len(members), got[members])))
    return out


#: The matchings :func:`mp_matching` can use: ``"blossom"``, a maximum-weight matching
#: (TopoOpt's), or ``"greedy"``, heaviest pair first (at least half its weight; see
#: :func:`mp_matching`).
MATCHINGS = {"blossom": max_weight_matching, "greedy": greedy_weight_matching}


def mp_matching(traffic: np.ndarray, ports, rng: np.random.Generator, *,
                matching: str = "blossom"):
    """The MP sub-topology: maximum-weight matchings with diminishing weights.

    Each round links the pairs of a maximum-weight matching, among the servers with an
    interface left, on ``w{u,v} = (T[u,v] + T[v,u]) / (links so far + 1)``, then pairs
    the still unmatched ones at random (the zero-weight edges of the artifact's perfect
    matching); rounds go on while two servers have interfaces left.

    Parameters
    ----------
    traffic : array, shape (n, n), or a scipy sparse matrix
        MP bytes.
    ports : int or array of int
        Interfaces per server for MP (the same for all, or one each).
    rng : numpy.random.Generator
    matching : {"blossom", "greedy"}
        ``"blossom"`` (TopoOpt's) takes each round's maximum-weight matching
        (:func:`~fabricopt.algorithms._matching.max_weight_matching`: exact, with an LP
        pruning before the blossom on large graphs). ``"greedy"`` links the heaviest
        pairs first, in O(pairs log pairs), with at least half the maximum weight
        (93-96 % on generated instances). Neither gives the lower
        busiest link on every instance (fabricopt docs, *Departures*, topoopt-3.2).

    Returns
    -------
    scipy.sparse.csr_array
        Symmetric link counts (O(links) memory).

    References
    ----------
    TopoOpt §4.2; the artifact's ``generate_mp_matching`` (fabricopt docs, *Departures*,
    topoopt-3.2).

    Examples
    --------
    >>> t = np.array([[0, 9, 1, 0], [0, 0, 0, 1], [0, 0, 0, 5], [0, 0, 0, 0]])
    >>> mp_matching(t, 1, np.random.default_rng(0)).toarray().tolist()
    [[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0]]
    """
    n = traffic.shape[0]
    left = np.broadcast_to(np.asarray(ports, dtype=np.int64), (n,)).tolist()
    # w{u,v} on the pairs u < v with traffic either way, in row-major order
    traffic = sparse.csr_array(traffic)
    upper = sparse.triu(traffic + traffic.T, k=1).tocoo()
    order = np.lexsort((upper.col, upper.row))
    keep = upper.data[order] > 0
    pairs = list(zip(upper.row[order][keep].tolist(), upper.col[order][keep].tolist()))
    match = MATCHINGS[matching]
    weight = upper.data[order][keep].tolist()
    links: dict[tuple[int, int], int] = {}
    while sum(1 for v in left if v > 0) >= 2:
        live = [k for k, (i, j) in enumerate(pairs) if left[i] > 0 and left[j] > 0]
        edges = [pairs[k] for k in live]
        scaled = integer_weights([weight[k] for k in live],
                                 [links.get(e, 0) + 1 for e in edges])
        chosen = match(n, edges, scaled)
        matched = {v for e in chosen for v in e}
        rest = rng.permutation([v for v in range(n) if left[v] > 0 and v not in matched])
        chosen += list(zip(rest[::2].tolist(), rest[1::2].tolist()))
        for u, v in chosen:
            key = (min(u, v), max(u, v))
            links[key] = links.get(key, 0) + 1
            left[u] -= 1
            left[v] -= 1
    return symmetric_counts(n, [u for u, _ in links], [v for _, v in links], list(links.values()))


def coin_path_nodes(table: CoinTable, src: int, dst: int) -> list[int]:
    """The servers from ``src`` to ``dst`` along the table's fewest-coin path.

    Examples
    --------
    >>> coin_path_nodes(coin_change_mod(12, [1, 5]), 0, 3)[::3]
    [0, 3]
    """
    nodes = [int(src)]
    for c in table.path(dst - src):
        nodes.append((nodes[-1] + c) % table.n)
    return nodes


def _coin_ring(members: tuple, table: CoinTable) -> list[int]:
    """The regular ring over ``members`` whose hops, routed by coins, are fewest."""
    arr = np.array(members)
    best, best_cost = None, None
    for p in totient_perms(len(members)):
        order = arr[(np.arange(len(members)) * p) % len(members)]
        cost = int(table.hops[(np.roll(order, -1) - order) % table.n].sum())
        if best_cost is None or cost < best_cost:
            best, best_cost = order.tolist(), cost
    return best


def topology_finder(instance: TopologyInstance, classes: Sequence[RingClass], *,
                    seed: int = 0, paths: int = 4, matching: str = "blossom"
                    ) -> TopologySolution:
    """Steps 2-4 of TopologyFinder for one ring allocation (see :func:`topoopt`).

    Parameters
    ----------
    instance : TopologyInstance
    classes : sequence of RingClass
        From :func:`allocate_rings`, the all-server class first.
    seed : int
    paths : int
    matching : {"blossom", "greedy"}
        The MP matching (:func:`mp_matching`).

    Returns
    -------
    TopologySolution

    Examples
    --------
    >>> from fabricopt.problems.topology import check, generate
    >>> inst = generate(seed=0, servers=8, degree=4)
    >>> bool(check(inst, topology_finder(inst, allocate_rings(inst, 4))))
    True
    """
    return assemble(*_finder_parts(instance, classes, seed=seed, paths=paths,
                                   matching=_matching_name(matching)))


def _matching_name(matching) -> str:
    if matching not in MATCHINGS:
        raise InvalidArgument(f"matching = {matching!r}: must be one of "
                              f"{', '.join(MATCHINGS)}")
    return matching


def _finder_parts(instance: TopologyInstance, classes: Sequence[RingClass], *,
                  seed: int, paths: int, matching: str) -> tuple:
    """:func:`topology_finder` before assembling: link counts, rings and routes."""
    n = instance.servers
    rng = np.random.default_rng(seed)
    ring_from, ring_to = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)]
    for cls in classes:
        members = np.asarray(cls.members, dtype=np.int64)
        for p in cls.jumps:
            ring_from.append(members)
            ring_to.append(np.roll(members, -p))
    counts = symmetric_counts(n, np.concatenate(ring_from), np.concatenate(ring_to))
    table = coin_change_mod(n, classes[0].jumps, seed=seed)
    book = RouteBook()
    direct, coin_routed = [], []
    for cls in classes:
        if cls.jumps:
            share = 1.0 / (2 * len(cls.jumps))
            orders = [regular_ring(cls.members, p) for p in cls.jumps]
            target = direct
        else:
            share = 0.5
            orders = [_coin_ring(cls.members, table)]
            target = coin_routed
        for k in cls.groups:
            for order in orders:
                target += [Ring(k, order, share), Ring(k, order[::-1], share)]
    # coin_routed holds (forward, reverse) pairs: the reverse ring's hop b -> a walks the
    # forward hop's coin path backwards (the artifact negates the path), so the two
    # halves of a group load opposite directions of the same links.
    for forward in coin_routed[::2]:
        volume = forward.share * ring_bytes_per_member(instance.allreduce[forward.group])
        for a, b in forward.successors():
            nodes = coin_path_nodes(table, a, b)
            book.add(a, b, [nodes], volume)
            book.add(b, a, [nodes[::-1]], volume)
    # Interfaces no ring could use (a member set's rings fill only its members) go to MP.
    counts = counts + mp_matching(instance.traffic_csr, instance.degree - counts.sum(axis=1),
                                  rng, matching=matching)
    route_shortest(book, counts, demand_pairs(instance, direct), paths=paths, rng=rng)
    return counts, direct + coin_routed, book


def _finder_candidate(instance: TopologyInstance, classes: Sequence[RingClass], *,
                      seed: int, paths: int, matching: str):
    """(a function assembling the candidate's solution, its score)."""
    parts = _finder_parts(instance, classes, seed=seed, paths=paths, matching=matching)
    return partial(assemble, *parts), assembled_score(instance, *parts)


def _ring_candidate(instance: TopologyInstance, *, seed: int, paths: int):
    """(a function returning the plain ring's solution, its score)."""
    solution = plain_ring(instance, seed=seed, paths=paths)
    return (lambda: solution), evaluate(instance, solution)


def topoopt(instance: TopologyInstance, *, seed: int = 0, mp_degree: int | None = None,
            paths: int = 4, candidates: bool = True, time_limit: float | None = None,
            matching: str = "blossom") -> TopologySolution:
    """TopologyFinder: AllReduce rings + MP matchings, CoinChangeMod and shortest-path routes.

    1. Split the degree between AllReduce and MP (:func:`degree_split`).
    2. AllReduce sub-topology: per member set, TotientPerms rings chosen by
       SelectPermutations (:func:`allocate_rings`, in proportion to traffic); each
       group's bytes are spread evenly over its rings, both directions, one hop each.
    3. MP sub-topology by repeated maximum-weight matching (:func:`mp_matching`) on
       every interface the rings left: the MP share, and (ours) those of servers outside
       a member set whose rings filled its members' AllReduce share.
    4. Routes: a group that got no ring of its own uses the regular ring over its
       members that is fewest coin-hops on the all-server circulant, both directions
       (the reverse ring along the mirrored coin paths), routed by CoinChangeMod; MP
       traffic over up to ``paths`` equal-length shortest paths of the final graph,
       split evenly (the artifact takes one).

    With ``candidates`` (ours, after TopoOpt's alternating optimization, which keeps
    the topology whose simulated iteration is fastest) a few allocations are built and
    scored by the kind's own objective (:func:`fabricopt.problems.topology.evaluate`),
    and the best is kept (the first of equal ones): the paper's, every interface to
    AllReduce (the artifact's ``mp_degree=0``) and two fewer to AllReduce, each with
    proportional and all-to-the-full-ring allocations, and the plain ring of the
    ``ring`` baseline. So the answer is never worse than that ring. With ``mp_degree``
    given, only its split is tried and the plain ring only if it uses that split.

    Parameters
    ----------
    instance : TopologyInstance
    seed : int
        Tie-breaks (coin change, shortest paths, leftover matching pairs).
    mp_degree : int, optional
        Interfaces for MP matching; default in proportion to bytes.
    paths : int
        Most equal-length shortest paths an MP demand is split over.
    candidates : bool
        Score the candidate allocations (default); False builds the paper's only.
    time_limit : float, optional
        Wall-clock seconds for the candidates (see :func:`topoopt_search`).
    matching : {"blossom", "greedy"}
        The MP matching of step 3: TopoOpt's maximum-weight (default), or heaviest
        pair first (:func:`mp_matching`).

    Returns
    -------
    TopologySolution

    Raises
    ------
    InfeasibleInstance
        With ``degree = 1`` when the demand is not a matching (no ring fits then).
    ValueError
        If ``mp_degree`` leaves an odd number of interfaces (or fewer than 2) for rings.

    References
    ----------
    TopoOpt §4.2 (TopologyFinder), §4.3 and Appendix D; fabricopt docs, *Departures*,
    topoopt-3 and topoopt-4.2.

    Examples
    --------
    >>> from fabricopt.problems.topology import check, evaluate, generate
    >>> from fabricopt.algorithms.topology.baselines import ring
    >>> inst = generate(seed=0, servers=8, degree=4)
    >>> solution = topoopt(inst)
    >>> bool(check(inst, solution)), evaluate(inst, solution) <= evaluate(inst, ring(inst))
    (True, True)
    """
    return topoopt_search(instance, seed=seed, mp_degree=mp_degree, paths=paths,
                          candidates=candidates, time_limit=time_limit,
                          matching=matching)[0]


def topoopt_search(instance: TopologyInstance, *, seed: int = 0, mp_degree: int | None = None,
                   paths: int = 4, candidates: bool = True, time_limit: float | None = None,
                   matching: str = "blossom") -> tuple[TopologySolution, dict]:
    """:func:`topoopt` and what its candidate search did: ``(solution, info)``.

    Parameters are those of :func:`topoopt`. With ``time_limit`` no further candidate
    is built once that many seconds have passed since the call began; the first
    candidate (the paper's allocation) is always completed, so at least one answer is
    returned. A limit that cuts the search makes the answer depend on the machine's
    speed; leave it out (or keep it loose) for reproducible results: without a cut the
    answer is the same as without a limit.

    Returns
    -------
    solution : TopologySolution
    info : dict
        ``candidates_scored`` (allocations built and scored, the plain ring included,
        or dismissed by a lower bound), ``candidates_bounded`` (of those, dismissed
        unbuilt: the plain ring when
        :func:`~fabricopt.algorithms.topology.baselines.ring_lower_bound` is above the
        best score so far, so it could not have been kept),
        ``candidates_total`` (how many the search would score) and, when the limit
        stopped it early, ``time_limit_exceeded`` saying so.

    Examples
    --------
    >>> from fabricopt.problems.topology import generate
    >>> inst = generate(seed=0, servers=8, degree=4)
    >>> solution, info = topoopt_search(inst)
    >>> solution == topoopt(inst), "time_limit_exceeded" in info
    (True, False)
    >>> _, info = topoopt_search(inst, time_limit=1e-9)
    >>> info["candidates_scored"], info["candidates_total"]
    (1, 4)
    >>> info["time_limit_exceeded"]
    'stopped after 1 of 4 candidates: the time limit of 1e-09 s ran out'
    """
    began = time.perf_counter()
    matching = _matching_name(matching)
    if instance.degree == 1:
        return degree_one_solution(instance), {"candidates_scored": 1, "candidates_total": 1,
                                               "candidates_bounded": 0}
    paths = as_int("paths", paths, minimum=1, error=InvalidArgument)
    degree = instance.degree
    allreduce_bytes = sum(len(g.members) * ring_bytes_per_member(g) for g in instance.allreduce)
    ar_degree, _ = degree_split(degree, allreduce_bytes, float(instance.traffic_pairs[2].sum()),
                                mp_degree)
    if not candidates:
        return (topology_finder(instance, allocate_rings(instance, ar_degree),
                                seed=seed, paths=paths, matching=matching),
                {"candidates_scored": 1, "candidates_total": 1, "candidates_bounded": 0})
    splits = [ar_degree]
    if mp_degree is None:
        splits += [degree - degree % 2, ar_degree - 2]
    # The distinct allocations, cheap to list; building and scoring each is the cost.
    todo, tried = [], set()
    for ar in dict.fromkeys(a for a in splits if a >= 2):
        for allocation in ALLOCATIONS:
            classes = allocate_rings(instance, ar, allocation=allocation)
            key = (ar, tuple((c.members, c.jumps) for c in classes))
            if key not in tried:
                tried.add(key)
                todo.append(classes)
    # (build, lower bound on its score or None). A TopologyFinder candidate is scored
    # from its parts (assembled_score: evaluate's arithmetic, without building the
    # solution); only the best one is assembled. The plain ring gets a bound: its long
    # routes cost more than all the other candidates together at a thousand servers.
    builders = [(partial(_finder_candidate, instance, classes, seed=seed, paths=paths,
                         matching=matching), None)
                for classes in todo]
    if mp_degree is None or mp_degree == degree % 2:
        builders.append((partial(_ring_candidate, instance, seed=seed, paths=paths),
                         partial(ring_lower_bound, instance)))
    best, best_time, scored, bounded = None, math.inf, 0, 0
    for build, bound in builders:
        if scored and time_limit is not None and time.perf_counter() - began >= time_limit:
            break
        scored += 1
        # A candidate whose bound is above the best score so far cannot be kept, so it
        # is not built; the margin keeps rounding from dismissing an equal one.
        if bound is not None and bound() > best_time * (1 + _BOUND_RTOL):
            bounded += 1
            continue
        candidate, time_s = build()
        if time_s < best_time:  # the first of equal ones
            best, best_time = candidate, time_s
    best = best()
    info = {"candidates_scored": scored, "candidates_total": len(builders),
            "candidates_bounded": bounded}
    if scored < len(builders):
        info["time_limit_exceeded"] = (f"stopped after {scored} of {len(builders)} "
                                       f"candidates: the time limit of {time_limit:g} s ran out")
    return best, info
