"""Arithmetic shared by the kinds scored by their longest transfer over unit links.

In ``circuits`` and ``wavelengths`` a pair with T bytes over c links (circuits,
lightpaths) of b Gbps each takes ``8*T / (c*b*1e9)`` seconds, and the objective is the
longest such time over the pairs with traffic.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

__all__ = ["max_transfer_time", "unserved_pair", "links_needed", "smallest_feasible_load"]

# Relative slack when rounding T/u up: T/u may land a hair above an integer in floating point.
_CEIL_RTOL = 1e-12


def max_transfer_time(traffic: np.ndarray, counts: np.ndarray, link_gbps: float) -> float:
    """``max over T_ij > 0 of 8*T_ij / (counts_ij * link_gbps * 1e9)``; 0 without traffic,
    ``inf`` if a pair with traffic has no link.

    Examples
    --------
    >>> max_transfer_time(np.array([[0, 2e9], [1e9, 0]]), np.array([[0, 2], [1, 0]]), 8.0)
    1.0
    """
    demanded = traffic > 0
    if not demanded.any():
        return 0.0
    with np.errstate(divide="ignore"):
        times = 8.0 * traffic[demanded] / (counts[demanded] * link_gbps * 1e9)
    return float(times.max())


def unserved_pair(traffic: np.ndarray, counts: np.ndarray) -> tuple[int, int] | None:
    """The first pair (row-major) with traffic and no link, or None."""
    missing = (traffic > 0) & (counts == 0)
    if not missing.any():   # the common case, without argwhere's pass over N x N cells
        return None
    i, j = np.argwhere(missing)[0]
    return int(i), int(j)


def links_needed(sizes: np.ndarray, load: float, most: int) -> np.ndarray:
    """Links each transfer needs so that no link carries more than ``load`` bytes (>= 1).

    A transfer can never get more than ``most`` links, so counts are capped at
    ``most + 1`` (still "too many"): sizes spanning 20 orders of magnitude would
    otherwise overflow int64 and come back as garbage.

    Examples
    --------
    >>> links_needed(np.array([1e3, 3e-20]), 3e-20, most=4)
    array([5, 1])
    """
    needed = np.ceil(np.asarray(sizes, float) / load * (1 - _CEIL_RTOL))
    return np.clip(needed, 1, most + 1).astype(np.int64)


def smallest_feasible_load(sizes: np.ndarray, most: int,
                           feasible: Callable[[float], bool]) -> float:
    """The smallest per-link load ``u`` among ``{T/m : T in sizes, m = 1..most}`` with
    ``feasible(u)``, by bisection.

    The optimum of a longest-transfer problem in which no pair gets more than ``most``
    links is one of these values; ``feasible`` must be monotone (true from some value
    on) and true at ``max(sizes)`` (one link each).

    Examples
    --------
    >>> smallest_feasible_load(np.array([6.0, 4.0]), 2, lambda u: u >= 3.5)
    4.0
    """
    values = np.unique(np.asarray(sizes, float))
    candidates = np.unique((values[:, None] / np.arange(1, most + 1)[None, :]).ravel())
    lo, hi = 0, len(candidates) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if feasible(candidates[mid]):
            hi = mid
        else:
            lo = mid + 1
    return float(candidates[lo])
