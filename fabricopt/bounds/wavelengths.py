"""Bounds on the optimum of a ``wavelengths`` instance (the longest transfer, minimized):
SiP-ML's count relaxation, solved fast."""

from __future__ import annotations

import math

from fabricopt.problems._transfer import links_needed, smallest_feasible_load
from fabricopt.problems._wavelength_counts import infeasibility, shortest_hops, violation
from fabricopt.problems.wavelengths import WavelengthsInstance

__all__ = ["count_bound", "kept_count_bound"]

#: Where :func:`kept_count_bound` keeps an instance's bound (in its ``__dict__``).
_CACHE = "_count_bound_s"


def count_bound(instance: WavelengthsInstance) -> float:
    """A lower bound on the longest transfer time: SiP-ML's count relaxation, fast.

    SiP-ML's ILP (*Departures*, sipml-2.2) counts lightpaths per pair and direction under
    per-segment capacity W and transceiver limits, without wavelength continuity.
    For a candidate per-lightpath load ``u`` every pair needs
    ``max(1, ceil(T_ij/u))`` lightpaths; feasibility is monotone in ``u`` and the
    optimum is one of the ``T_ij/m`` (m = 1..W), so bisection finds it. Pairs that
    only one fiber reaches load its segments exactly; pairs both fibers reach are
    bounded by cuts instead — at most 2W lightpaths leave any arc of consecutive nodes
    — and by the ring's total capacity. The result is the count relaxation's optimum
    exactly when no demanded pair can go both ways (e.g. whenever
    ``nodes > 2*max_hops``) and a valid, possibly weaker bound otherwise; the
    ``count-bound`` method solves the count ILP itself.

    Returns
    -------
    float
        Seconds; 0 without traffic, ``inf`` when :func:`infeasibility` finds a proof.

    Notes
    -----
    O(log(P·W)) rounds of O(N² + P·h) numpy work for P demanded pairs of at most h
    hops: about a millisecond for 128 nodes, so every ``solve`` applies it.

    Examples
    --------
    >>> from fabricopt.problems.wavelengths import WavelengthsInstance
    >>> inst = WavelengthsInstance(3, 2, 8.0, 1, [[0, 2e9, 0], [0, 0, 0], [0, 0, 0]])
    >>> count_bound(inst)   # two wavelengths 0 -> 1: 2e9 bytes over 2 x 8 Gbps
    1.0
    """
    size = instance.pairs[2]
    if not len(size):
        return 0.0
    if infeasibility(instance) is not None:
        return math.inf
    shortest = shortest_hops(instance)

    def feasible(u: float) -> bool:
        return violation(instance, links_needed(size, u, instance.wavelengths), shortest) is None

    # One lightpath each (u = max T) is feasible: infeasibility() found no violation.
    w = instance.wavelengths
    return 8.0 * smallest_feasible_load(size, w, feasible) / (instance.wavelength_gbps * 1e9)


def kept_count_bound(instance: WavelengthsInstance) -> float:
    """:func:`count_bound`, computed once per instance and kept on it (instances are
    frozen, so it never changes): the kind's bound, which ``solve`` applies to every
    result, and which SiP-Ring's pruning asks of an instance before solving it
    (:meth:`~fabricopt.fabrics.models.SipRing.comm_lower_bound_s`).
    :func:`count_bound` itself computes it on every call (what the benchmarks time).

    Examples
    --------
    >>> from fabricopt.problems.wavelengths import WavelengthsInstance
    >>> inst = WavelengthsInstance(3, 2, 8.0, 1, [[0, 2e9, 0], [0, 0, 0], [0, 0, 0]])
    >>> kept_count_bound(inst), kept_count_bound(inst) == count_bound(inst)
    (1.0, True)
    """
    found = instance.__dict__.get(_CACHE)
    if found is None:
        found = instance.__dict__[_CACHE] = count_bound(instance)
    return found
