"""Strategies for ``topology`` instances: a degree below ``servers - 1``, so the degree
limit binds, on few enough servers for the MILP to prove the optimum."""

from __future__ import annotations

from hypothesis import strategies as st

from fabricopt.testing.strategies import generated_instances, register_strategies


def _sizes(draw, max_size: int) -> dict:
    servers = draw(st.integers(4, max(4, max_size)))
    return {"servers": servers, "degree": draw(st.integers(2, servers - 2)),
            "groups": draw(st.integers(1, 2))}


register_strategies("topology", generated_instances("topology", _sizes), max_size=5)
