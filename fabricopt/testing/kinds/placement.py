"""Strategies for ``placement`` instances: more ops than GPUs and a binding degree.

``max_peers`` is drawn below ``gpus - 1`` so that the degree limit matters (a method
that ignores it is caught), with at least two ops per GPU-and-a-half, while the MILP
still proves the optimum in a second or two (at most 8 ops, 4 GPUs).
"""

from __future__ import annotations

from hypothesis import strategies as st

from fabricopt.testing.strategies import generated_instances, register_strategies


def _sizes(draw, max_size: int) -> dict:
    top = max(max_size, 5)
    gpus = draw(st.integers(3, min(4, top - 2)))
    return {"gpus": gpus, "max_peers": draw(st.integers(1, gpus - 2)),
            "ops": draw(st.integers(gpus + 2, top))}


register_strategies("placement", generated_instances("placement", _sizes), max_size=8)
