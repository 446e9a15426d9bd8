"""The largest counts and magnitudes an instance may hold, in one table.

Validation accepts any finite number unless something bounds it, and some counts
size the work of every method (a greedy that hands out ``switches`` circuits one by
one, arrays of ``levels`` entries) or the memory of ``check`` (sets per GPU). Each
count therefore has a documented maximum far beyond any real fabric; a larger value
is an ``InvalidInstance`` naming the field and the maximum. Sizes that are the length
of a list or matrix in the file itself (GPUs of a traffic matrix, jobs, ops) are
bounded by the file and have no separate maximum; the generators build matrices of
at most ``MAX_GENERATED_SIDE`` = 4,096 rows and ``MAX_GENERATED_COUNT`` = 100,000
jobs, links or ops. Integers in solutions (GPUs, nodes,
wavelengths, link counts, levels, path indices) are at most ``MAX_INDEX`` = 2**31 - 1,
an ``InvalidSolution`` beyond it.

===================  ==========================  =========
kind                 field                       maximum
===================  ==========================  =========
circuits             ``switches``                1,024
wavelengths          ``wavelengths``             1,024
topology             ``degree``                  1,024
topology             ``servers``                 2**20
placement            ``gpus``, ``max_peers``     4,096
priorities, crux     ``levels``                  1,024
crux                 ``jobs[k].gpus``            2**24
===================  ==========================  =========

These maxima are assumptions of this project, chosen to lie far beyond every fabric
that SiP-ML, TopoOpt and Crux describe (tens of switches, wavelengths, interfaces or
priority levels; clusters of thousands of GPUs), not figures from the papers.

Magnitudes: every input number must be finite, and at least ``MIN_MAGNITUDE`` = 1e-300
in magnitude unless it is 0 (:mod:`fabricopt.problems._validate`), and so must every time or rate
derived from it (``8 * bytes / (gbps * 1e9)``, sums of such times); where one would
exceed :data:`MAX_DERIVED` (1e300), the instance is rejected naming the field that
causes it (see :func:`check_magnitude`), so that ``solve`` never returns a non-finite
objective or bound.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from fabricopt.errors import InvalidInstance
from fabricopt.problems._validate import shown

__all__ = ["MAX_SWITCHES", "MAX_WAVELENGTHS", "MAX_DEGREE", "MAX_GPUS", "MAX_LEVELS",
           "MAX_JOB_GPUS", "MAX_SERVERS", "MAX_INDEX", "MAX_GENERATED_SIDE", "MAX_GENERATED_COUNT",
           "MAX_DERIVED", "LIMITS", "check_magnitude", "check_rate", "check_transfer",
           "check_traffic"]

MAX_SWITCHES = 1024
MAX_WAVELENGTHS = 1024
MAX_DEGREE = 1024
MAX_GPUS = 4096
MAX_LEVELS = 1024
MAX_JOB_GPUS = 2 ** 24
#: Most servers of a topology instance: with sparse traffic the count is not bounded by
#: the file, and every method holds arrays of one entry per server.
MAX_SERVERS = 2 ** 20
#: Largest integer a solution may hold (a GPU, node, server, wavelength, link count,
#: level or path index): every real one is far smaller, and sums of them stay inside
#: int64 where ``check`` counts them with numpy.
MAX_INDEX = 2 ** 31 - 1
#: Most jobs, links or ops a generator draws.
MAX_GENERATED_COUNT = 100_000
#: Largest matrix side a generator builds (an N x N matrix of floats: 128 MB here).
MAX_GENERATED_SIDE = 4096

#: ``(kind, field) -> maximum``: the table above, for documentation and tests.
LIMITS = {
    ("circuits", "switches"): MAX_SWITCHES,
    ("wavelengths", "wavelengths"): MAX_WAVELENGTHS,
    ("topology", "degree"): MAX_DEGREE,
    ("placement", "gpus"): MAX_GPUS,
    ("placement", "max_peers"): MAX_GPUS,
    ("priorities", "levels"): MAX_LEVELS,
    ("crux", "levels"): MAX_LEVELS,
    ("crux", "jobs[0].gpus"): MAX_JOB_GPUS,
}


#: Largest total that an instance may imply (bits, seconds, GPU-seconds): the methods
#: add and multiply such totals, so a factor of 1e8 is left below the float maximum.
MAX_DERIVED = 1e300


def check_magnitude(field: str, value: Any, what: str, derived: float) -> float:
    """``derived``, or ``InvalidInstance`` naming ``field`` (whose ``value`` makes it so)
    when it is not finite or exceeds :data:`MAX_DERIVED`.

    Examples
    --------
    >>> check_magnitude("circuit_gbps", 100.0, "the rate in bit/s", 100.0 * 1e9)
    100000000000.0
    >>> check_magnitude("circuit_gbps", 5e-324, "the transfer times", 8e9 / 5e-315)
    Traceback (most recent call last):
    ...
    fabricopt.errors.InvalidInstance: circuit_gbps = 5e-324: makes the transfer times inf, beyond 1e+300
    """
    if not (math.isfinite(derived) and abs(derived) <= MAX_DERIVED):
        raise InvalidInstance(f"{field} = {shown(value)}: makes {what} {derived:.3g}, "
                              f"beyond {MAX_DERIVED:g}")
    return derived


def check_rate(field: str, gbps: float) -> float:
    """``gbps * 1e9`` bit/s, checked by :func:`check_magnitude`."""
    return check_magnitude(field, gbps, "the rate in bit/s", gbps * 1e9)


def check_transfer(bytes_field: str, nbytes: float, total_bytes: float, rate_field: str,
                   gbps: float) -> float:
    """Seconds to move ``total_bytes`` at ``gbps``, every step checked: the rate, the
    bits (``8 * total_bytes``, blamed on ``bytes_field`` holding ``nbytes``) and the
    time (blamed on the rate: with at most 1e300 bits, only a rate below 1 bit/s makes
    it overflow)."""
    rate = check_rate(rate_field, gbps)
    bits = check_magnitude(bytes_field, nbytes, "the bits to move", 8.0 * total_bytes)
    return check_magnitude(rate_field, gbps, "the transfer times", bits / rate)


def check_traffic(field: str, traffic: np.ndarray, rate_field: str, gbps: float,
                  factor: float = 1.0) -> float:
    """:func:`check_transfer` of ``factor`` times all of a traffic matrix, blaming its
    largest cell. ``factor`` bounds how often a byte may be counted (hops of a path)."""
    if traffic.size == 0:
        return check_rate(rate_field, gbps) * 0.0
    with np.errstate(over="ignore", invalid="ignore"):
        total = float(traffic.sum()) * factor
    i, j = np.unravel_index(int(np.argmax(traffic)), traffic.shape)
    return check_transfer(f"{field}[{i}][{j}]", float(traffic[i, j]), total, rate_field, gbps)
