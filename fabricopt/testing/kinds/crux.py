"""Strategies for ``crux`` instances: three jobs on a two-ToR Clos with one aggregation
switch, so that cross-ToR jobs share links, and two levels — small enough for
``enumerate`` to prove the optimum."""

from __future__ import annotations

from hypothesis import strategies as st

from fabricopt.testing.strategies import generated_instances, register_strategies


def _sizes(draw, max_size: int) -> dict:
    return {"jobs": draw(st.integers(3, max(3, max_size))), "levels": 2, "tors": 2,
            "hosts_per_tor": 3, "aggs": 1}


register_strategies("crux", generated_instances("crux", _sizes), max_size=3)
