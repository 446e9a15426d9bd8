"""Bounds on the optimum of a ``crux`` instance (GPU utilization, maximized)."""

from __future__ import annotations

import math

from fabricopt.problems.crux import CruxInstance

__all__ = ["utilization_bound"]


def utilization_bound(instance: CruxInstance) -> float:
    """An upper bound on any solution's utilization.

    Every iteration of job j lasts at least its standalone iteration ``T_j``
    (:attr:`CruxInstance.standalone_iteration_s`), so at most ``ceil((w + C_j)/T_j)``
    of its compute phases meet a window of length ``w``.
    """
    w = instance.window
    num = den = 0.0
    for job, T in zip(instance.jobs, instance.standalone_iteration_s):
        busy = min(w, job.compute_s * math.ceil((w + job.compute_s) / T * (1 + 1e-12)))
        num += job.gpus * busy
        den += job.gpus * w
    return num / den if den > 0 else 0.0


