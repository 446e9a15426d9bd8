"""Imported by the bench's forkserver (:data:`fabricopt.bench.isolate._PRELOAD`): loads
every compiled kernel once (:func:`fabricopt.bench.warm.warm_all`), so that every run
forked from it starts with them loaded.

A warm-up that fails is left to the runs: each then loads its kernels itself before it
reports ready, and reports its own error.
"""

import logging

from fabricopt.bench.warm import warm_all

try:
    warm_all()
except Exception as exc:  # the runs load (and report) it themselves
    logging.getLogger("fabricopt").debug("compiled kernels not warmed: %s", exc)
