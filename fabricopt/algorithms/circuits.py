"""Circuit assignment for SiP-OCS without a MILP: an exact polynomial method and a greedy.

Both work on circuit *counts* ``c_ij`` and then realize them as one partial
permutation per switch with :func:`decompose`. Counts with every row and column sum
at most Q are always realizable: padded to a Q-regular bipartite multigraph they split
into Q perfect matchings (König's edge-colouring theorem), one per switch.

References
----------
.. [1] M. Khani et al., "SiP-ML", SIGCOMM 2021, §3.3 and Appendix A.2 (the problem).
.. [2] D. König, "Gráfok és alkalmazásuk a determinánsok és a halmazok elméletére",
   1916 (regular bipartite multigraphs split into perfect matchings).
"""

from __future__ import annotations

import heapq

import numpy as np

from fabricopt.errors import InfeasibleInstance, InvalidArgument, SolverFailure
from fabricopt.problems._transfer import links_needed, smallest_feasible_load
from fabricopt.problems.circuits import CircuitsInstance, CircuitsSolution
from fabricopt.algorithms._matching import perfect_bipartite_matching

__all__ = ["require_feasible", "exact_counts", "greedy_counts", "decompose", "exact", "greedy"]

def require_feasible(instance: CircuitsInstance) -> None:
    """Raise ``InfeasibleInstance`` if some GPU talks to more than Q peers in one direction.

    Every demanded pair needs a circuit and a GPU has one port per switch, so at most
    Q distinct destinations (and Q sources) per GPU is necessary — and sufficient.
    """
    demanded = instance.traffic > 0
    q = instance.switches
    for axis, what in ((1, "sends to"), (0, "receives from")):
        peers = demanded.sum(axis=axis)
        worst = int(np.argmax(peers))
        if peers[worst] > q:
            raise InfeasibleInstance(f"GPU {worst} {what} {int(peers[worst])} GPUs but has only "
                                     f"{q} ports (switches = {q})")


def exact_counts(instance: CircuitsInstance) -> np.ndarray:
    """The circuit counts that minimize the longest transfer time.

    The optimal max time is ``8*T_ij/(m*b)`` for some demanded pair and some
    ``m`` in 1..Q. For a candidate per-circuit load ``u = T_ij/m`` every pair needs
    ``ceil(T_kl/u)`` circuits, which is feasible iff every row and column sum is
    at most Q; feasibility is monotone in ``u``, so bisection over the sorted
    candidates finds the smallest feasible one.

    Returns
    -------
    numpy.ndarray
        N x N integer counts, 0 exactly where there is no traffic.
    """
    require_feasible(instance)
    traffic = instance.traffic
    q, n = instance.switches, traffic.shape[0]
    # the demanded cells in row-major order, as traffic[traffic > 0] lists them: each
    # bisection step sums their counts (whole numbers, so in any order exactly)
    # instead of N x N ones
    rows, cols = np.nonzero(traffic > 0)
    sizes = traffic[rows, cols]

    def feasible(u: float) -> bool:
        c = links_needed(sizes, u, q)
        return (np.bincount(rows, weights=c, minlength=n).max() <= q
                and np.bincount(cols, weights=c, minlength=n).max() <= q)

    counts = np.zeros(traffic.shape, dtype=np.int64)
    if len(sizes):
        # u = max T (one circuit each) is feasible: require_feasible passed.
        counts[rows, cols] = links_needed(sizes, smallest_feasible_load(sizes, q, feasible), q)
    return counts


def greedy_counts(instance: CircuitsInstance) -> np.ndarray:
    """Counts from the greedy baseline: one circuit per demanded pair, then each free
    circuit to the pair with the largest current transfer time that still has a free
    port at both ends."""
    require_feasible(instance)
    traffic = instance.traffic
    q = instance.switches
    counts = (traffic > 0).astype(np.int64)
    free_out = q - counts.sum(axis=1)
    free_in = q - counts.sum(axis=0)
    heap = [(-float(traffic[i, j]), int(i), int(j)) for i, j in np.argwhere(traffic > 0)]
    heapq.heapify(heap)
    while heap:
        _, i, j = heapq.heappop(heap)
        if free_out[i] > 0 and free_in[j] > 0:
            counts[i, j] += 1
            free_out[i] -= 1
            free_in[j] -= 1
            heapq.heappush(heap, (-float(traffic[i, j]) / counts[i, j], i, j))
        # else: both ends' capacity only shrinks, so this pair can never improve again
    return counts


def decompose(counts: np.ndarray, switches: int) -> list[list[int | None]]:
    """Split circuit counts into one partial permutation per switch.

    Parameters
    ----------
    counts : array of int, shape (N, N)
        ``counts[i, j]`` circuits i -> j; zero diagonal; row and column sums <= ``switches``.
    switches : int
        Q.

    Returns
    -------
    list of list
        ``configs[q][i] = j`` or None, with exactly ``counts[i, j]`` switches holding i -> j.

    Raises
    ------
    ValueError
        If a row or column sum exceeds Q or the diagonal is not 0.

    Examples
    --------
    >>> decompose(np.array([[0, 2], [1, 0]]), 2)
    [[1, 0], [1, None]]
    """
    counts = np.asarray(counts, dtype=np.int64)
    n = counts.shape[0]
    if np.any(np.diag(counts)) or np.any(counts < 0):
        raise InvalidArgument("counts: the diagonal must be 0 and all counts >= 0")
    rows, cols = counts.sum(axis=1), counts.sum(axis=0)
    if n and (rows.max() > switches or cols.max() > switches):
        raise InvalidArgument(f"counts: a row or column sum exceeds switches = {switches}")
    # Pad with dummy edges (unused ports) to a Q-regular bipartite multigraph: the
    # northwest-corner rule pairs the spare out-ports and in-ports in index order.
    spare_out, spare_in = np.cumsum(switches - rows), np.cumsum(switches - cols)
    cuts = np.union1d(spare_out, spare_in)
    starts = np.concatenate(([0], cuts[:-1])) if len(cuts) else cuts
    size = cuts - starts
    keep = size > 0
    pad_i = np.searchsorted(spare_out, starts[keep], side="right")
    pad_j = np.searchsorted(spare_in, starts[keep], side="right")
    # One entry per (i, j) pair with a circuit or a dummy edge, keyed i*n + j.
    key = np.concatenate((np.flatnonzero(counts), pad_i * n + pad_j))
    real_of = np.concatenate((counts.ravel()[np.flatnonzero(counts)],
                              np.zeros(len(pad_i), dtype=np.int64)))
    dummy_of = np.concatenate((np.zeros(len(key) - len(pad_i), dtype=np.int64), size[keep]))
    key, where = np.unique(key, return_inverse=True)
    real = np.bincount(where, weights=real_of, minlength=len(key)).astype(np.int64)
    dummy = np.bincount(where, weights=dummy_of, minlength=len(key)).astype(np.int64)
    configs = []
    for _ in range(switches):
        live = np.flatnonzero(real + dummy)
        partner = perfect_bipartite_matching(key[live] // n, key[live] % n, n)
        if np.any(partner < 0):
            raise SolverFailure("decompose: no perfect matching in a regular bipartite "
                                "multigraph (cannot happen; please report)")
        used = np.searchsorted(key, np.arange(n) * n + partner)
        is_real = real[used] > 0
        real[used[is_real]] -= 1
        dummy[used[~is_real]] -= 1
        configs.append([int(k) if r else None for k, r in zip(partner, is_real)])
    return configs


def exact(instance: CircuitsInstance) -> CircuitsSolution:
    """An optimal circuit assignment in polynomial time (ours).

    Bisection on the max transfer time over the O(N²Q) candidate values, then a
    König decomposition of the optimal counts into Q switch configurations.

    Raises
    ------
    InfeasibleInstance
        If some GPU has more than Q distinct peers in one direction.

    Notes
    -----
    Runs in O(N²Q log(N²Q)) for the bisection plus Q Hopcroft-Karp matchings
    (:func:`fabricopt.algorithms._matching.perfect_bipartite_matching`).

    Examples
    --------
    GPU 0 sends 3e9 bytes to GPU 1 and 1e9 to GPU 2 over two switches: a second
    circuit 0->1 would leave 0->2 without one, so the optimum is 3 s.

    >>> from fabricopt.problems.circuits import evaluate
    >>> inst = CircuitsInstance(2, 8.0, [[0, 3e9, 1e9], [0, 0, 0], [0, 0, 0]])
    >>> evaluate(inst, exact(inst))
    3.0
    """
    return CircuitsSolution(decompose(exact_counts(instance), instance.switches))


def greedy(instance: CircuitsInstance) -> CircuitsSolution:
    """The greedy baseline: largest current transfer time gets the next circuit.

    Notes
    -----
    This simple rule is in fact optimal (our observation; the tests check it against
    :func:`exact` and brute force). Pairs are served in decreasing current time, so
    when the pair at the top, at time ``u``, is first blocked by a full port, every pair
    holds exactly the fewest circuits it needs to finish in less than ``u``, and one
    more for the blocked pair would overfill that port: no assignment beats ``u``,
    which is what greedy keeps. It runs in O(E log E) for E circuits.

    Examples
    --------
    >>> from fabricopt.problems.circuits import evaluate
    >>> inst = CircuitsInstance(2, 8.0, [[0, 3e9, 1e9], [0, 0, 0], [0, 0, 0]])
    >>> evaluate(inst, greedy(inst)) == evaluate(inst, exact(inst)) == 3.0
    True
    """
    return CircuitsSolution(decompose(greedy_counts(instance), instance.switches))
