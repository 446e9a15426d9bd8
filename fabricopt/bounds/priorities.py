"""Bounds on the optimum of a ``priorities`` instance (the cut weight, maximized)."""

from __future__ import annotations

from fabricopt.problems.priorities import PrioritiesInstance

__all__ = ["cut_weight_bound"]


def cut_weight_bound(instance: PrioritiesInstance) -> float:
    """An upper bound on the best cut: all the DAG's weight (0 with one level).

    It is attained whenever K is at least the number of jobs on the longest DAG path
    (level each job by its longest path to a sink).
    """
    if instance.levels < 2:
        return 0.0
    return float(sum(w for _, _, w in instance.edges))


