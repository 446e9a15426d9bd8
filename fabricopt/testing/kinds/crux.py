"""Strategies for ``crux`` instances: two or three jobs on a small Clos, sharing
links, with fewer levels than jobs — small enough for ``enumerate`` to prove the
optimum."""

from __future__ import annotations

from hypothesis import strategies as st

from ..strategies import generated_instances, register_strategies


def _sizes(draw, max_size: int) -> dict:
    jobs = draw(st.integers(2, max(2, min(3, max_size))))
    return {"jobs": jobs, "levels": draw(st.integers(1, jobs - 1)), "tors": 2,
            "hosts_per_tor": 2}


register_strategies("crux", generated_instances("crux", _sizes), max_size=3)
