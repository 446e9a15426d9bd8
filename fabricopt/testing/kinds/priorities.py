"""Strategies for ``priorities`` instances: more jobs than levels, so jobs must share
levels and the compression matters."""

from __future__ import annotations

from hypothesis import strategies as st

from fabricopt.testing.strategies import generated_instances, register_strategies


def _sizes(draw, max_size: int) -> dict:
    levels = draw(st.integers(2, 3))
    return {"levels": levels, "jobs": draw(st.integers(levels + 1, max(levels + 1, max_size)))}


register_strategies("priorities", generated_instances("priorities", _sizes), max_size=10)
