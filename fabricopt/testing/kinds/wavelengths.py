"""Strategies for ``wavelengths`` instances: few wavelengths (= transceivers per node)
and a short reach, so that both bind; the generator guarantees a schedule exists."""

from __future__ import annotations

from hypothesis import strategies as st

from fabricopt.testing.strategies import generated_instances, register_strategies


def _sizes(draw, max_size: int) -> dict:
    nodes = draw(st.integers(4, max(4, max_size)))
    return {"nodes": nodes, "wavelengths": draw(st.integers(1, 3)),
            "max_hops": draw(st.integers(1, max(1, nodes // 2)))}


register_strategies("wavelengths", generated_instances("wavelengths", _sizes), max_size=6)
