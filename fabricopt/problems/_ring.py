"""The geometry of SiP-Ring's two counter-rotating fibers.

Fiber ``cw``: segment s is the link s -> s+1 (mod N); fiber ``ccw``: segment s is the
link s -> s-1. A lightpath of either fiber occupies a circular range of its fiber's
segment indices, which is all that colouring, loads and conflicts need.
"""

from __future__ import annotations

import numpy as np

__all__ = ["DIRECTIONS", "arc", "segment_load", "segment_name"]

#: The two fibers, in the order used for direction codes (0 = cw, 1 = ccw).
DIRECTIONS = ("cw", "ccw")


def arc(nodes: int, src, dst, ccw):
    """The segments a lightpath uses, as a circular range ``(first, hops)``.

    A cw lightpath a -> b uses cw segments a, a+1, ..., b-1; a ccw one uses ccw
    segments a, a-1, ..., b+1. Either way the segment indices form the circular range
    ``first, first+1, ..., first+hops-1`` (mod N) of its own fiber. Works elementwise
    on numpy arrays.

    Parameters
    ----------
    nodes : int
        N.
    src, dst : int or array of int
    ccw : bool or array of bool
        True for the ccw fiber.

    Returns
    -------
    first, hops : int or array of int
        ``hops`` is 0 when ``src == dst``.

    Examples
    --------
    >>> arc(8, 6, 1, False)     # cw 6 -> 1 uses cw segments 6, 7, 0
    (6, 3)
    >>> arc(8, 1, 6, True)      # ccw 1 -> 6 uses ccw segments 1, 0, 7
    (7, 3)
    """
    cw_hops = (dst - src) % nodes
    ccw_hops = (src - dst) % nodes
    if isinstance(ccw, np.ndarray):
        return np.where(ccw, (dst + 1) % nodes, src), np.where(ccw, ccw_hops, cw_hops)
    return ((dst + 1) % nodes, ccw_hops) if ccw else (src, cw_hops)


def segment_load(nodes: int, first, hops, weight=None) -> np.ndarray:
    """Per-segment sum of ``weight`` (default 1) over the circular ranges ``[first, first+hops)``.

    Examples
    --------
    >>> segment_load(4, [3, 0], [2, 1]).tolist()      # arcs {3, 0} and {0}
    [2.0, 0.0, 0.0, 1.0]
    """
    n = nodes
    first, hops = np.asarray(first, np.int64), np.asarray(hops, np.int64)
    weight = np.ones(len(first)) if weight is None else np.asarray(weight, float)
    diff = np.zeros(2 * n + 1)
    np.add.at(diff, first, weight)
    np.add.at(diff, first + hops, -weight)
    load = np.cumsum(diff)[:2 * n]
    return load[:n] + load[n:]


def segment_name(direction: int, s: int, n: int) -> str:
    """``"cw segment 5 (5->0)"``: a segment in words, for messages.

    Examples
    --------
    >>> segment_name(1, 0, 6)
    'ccw segment 0 (0->5)'
    """
    return f"{DIRECTIONS[direction]} segment {s} ({s}->{(s + (1 if direction == 0 else -1)) % n})"
