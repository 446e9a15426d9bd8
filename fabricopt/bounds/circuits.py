"""Bounds on the optimum of a ``circuits`` instance (the longest transfer, minimized)."""

from __future__ import annotations

from fabricopt.problems.circuits import CircuitsInstance

__all__ = ["port_load_bound"]


def port_load_bound(instance: CircuitsInstance) -> float:
    """A lower bound on the optimum: the busiest port's bytes spread over all Q circuits.

    If the max time is t then ``c_ij >= 8*T_ij / (t*b)``; the Q ports of GPU i give
    ``sum_j c_ij <= Q``, so ``t >= 8 * sum_j T_ij / (Q*b)``, and likewise per column.
    """
    t = instance.traffic
    if not (t > 0).any():
        return 0.0
    busiest = max(t.sum(axis=1).max(), t.sum(axis=0).max())
    return float(8.0 * busiest / (instance.switches * instance.circuit_gbps * 1e9))


