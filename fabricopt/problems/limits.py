"""The largest counts and magnitudes an instance may hold, in one table.

Validation accepts any finite number unless something bounds it, and some counts
size the work of every method (a greedy that hands out ``switches`` circuits one by
one, arrays of ``levels`` entries) or the memory of ``check`` (sets per GPU). Each
count therefore has a documented maximum far beyond any real fabric; a larger value
is an ``InvalidInstance`` naming the field and the maximum. Sizes that are the length
of a list or matrix in the file itself (GPUs of a traffic matrix, jobs, ops) are
bounded by the file and have no separate maximum; the generators build matrices of
at most ``MAX_GENERATED_SIDE`` = 4,096 rows.

===================  ==========================  =========
kind                 field                       maximum
===================  ==========================  =========
circuits             ``switches``                1,024
wavelengths          ``wavelengths``             1,024
topology             ``degree``                  1,024
placement            ``gpus``, ``max_peers``     4,096
priorities, crux     ``levels``                  1,024
crux                 ``jobs[k].gpus``            2**24
===================  ==========================  =========

These maxima are assumptions of this project, chosen to lie far beyond every fabric
that SiP-ML, TopoOpt and Crux describe (tens of switches, wavelengths, interfaces or
priority levels; clusters of thousands of GPUs), not figures from the papers.

Magnitudes: every input number must be finite, and so must every time or rate
derived from it (``8 * bytes / (gbps * 1e9)``, sums of such times); where one would
overflow, the instance is rejected naming the field (see :func:`finite_time`), and
``solve`` never returns a non-finite objective or bound.
"""

from __future__ import annotations

import math

from ..errors import InvalidInstance

__all__ = ["MAX_SWITCHES", "MAX_WAVELENGTHS", "MAX_DEGREE", "MAX_GPUS", "MAX_LEVELS",
           "MAX_JOB_GPUS", "MAX_GENERATED_SIDE", "LIMITS", "finite_time"]

MAX_SWITCHES = 1024
MAX_WAVELENGTHS = 1024
MAX_DEGREE = 1024
MAX_GPUS = 4096
MAX_LEVELS = 1024
MAX_JOB_GPUS = 2 ** 24
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


def finite_time(field: str, value: float, what: str, seconds: float) -> float:
    """``seconds``, or ``InvalidInstance`` naming ``field`` when it is not finite.

    ``what`` says which derived quantity overflowed, e.g. ``"its transfer time"``.

    Examples
    --------
    >>> finite_time("bytes", 4e9, "its transfer time", 8 * 4e9 / (32 * 1e9))
    1.0
    >>> finite_time("bytes", 1e308, "its transfer time", 8 * 1e308 / 1e9)
    Traceback (most recent call last):
    ...
    fabricopt.errors.InvalidInstance: bytes = 1e+308: its transfer time overflows (inf s); use smaller values
    """
    if not math.isfinite(seconds):
        raise InvalidInstance(f"{field} = {value!r}: {what} overflows ({seconds!r} s); "
                              f"use smaller values")
    return seconds
