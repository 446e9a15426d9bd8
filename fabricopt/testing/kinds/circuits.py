"""Strategies for ``circuits`` instances (docs/formats.rst, circuits).

A matrix is drawn as a list of demands ``(i, j, bytes)`` — a few round byte counts
or arbitrary floats — and N is at least one more than the largest GPU named, so
hypothesis shrinks a failure by dropping demands and lowering GPU numbers: the
counterexample is a handful of demands among a few GPUs. A feasible instance has at
most Q demanded peers per GPU in each direction; instead of filtering, each row keeps
its first Q non-zero cells and then each column does, so almost every draw is used (a
binding draw that capping leaves with no more pairs than switches is rejected).
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import reject, strategies as st

from fabricopt.problems.circuits import CircuitsInstance
from fabricopt.testing.strategies import expect, generic_invalid_instances, register_strategies

__all__ = ["circuits_instances", "invalid_circuits_instances"]

_BYTES = st.one_of(
    st.sampled_from([1e6, 2e6, 2.5e6, 8e6, 3e7]),
    st.floats(min_value=1.0, max_value=1e12),
)


def _cap_peers(traffic: np.ndarray, q: int) -> np.ndarray:
    """Zero all but the first ``q`` non-zero cells of every row, then of every column."""
    t = traffic.copy()
    for axis in (1, 0):
        lines = t if axis == 1 else t.T  # a view: writing to it writes to t
        for line in lines:
            nonzero = np.flatnonzero(line)
            line[nonzero[q:]] = 0.0
    return t


def circuits_instances(max_size: int = 5, *, feasible: bool = True, max_switches: int = 4,
                       min_gpus: int = 3, binding: bool | None = None) -> st.SearchStrategy:
    """Valid ``CircuitsInstance`` with ``min_gpus..max_size`` GPUs and 1..``max_switches``
    switches; with ``feasible`` (the default) a circuit assignment always exists.

    With ``binding`` (default: when ``feasible``) more pairs are demanded than there
    are switches, so circuits must share switches and the port limits matter.
    """
    if binding is None:
        binding = feasible

    @st.composite
    def draw_instance(draw):
        top = max(min_gpus, max_size)
        gpu = st.integers(0, top - 1)
        n = draw(st.integers(min_gpus, top))
        q = draw(st.integers(1, max_switches))
        gbps = draw(st.sampled_from([400.0, 100.0, 25.0]))
        # j = i + offset (mod top): never i == j, and shrinks towards neighbours
        pairs = st.tuples(gpu, st.integers(1, max(1, top - 1)), _BYTES).map(
            lambda d: (d[0], (d[0] + d[1]) % top, d[2]))
        most = top * (top - 1)
        demands = draw(st.lists(pairs, min_size=min(q + 1, most) if binding else 0,
                                max_size=most, unique_by=lambda d: d[:2]))
        n = max([n] + [max(i, j) + 1 for i, j, _ in demands])
        traffic = np.zeros((n, n))
        for i, j, size in demands:
            if i != j:
                traffic[i, j] += size
        if feasible:
            traffic = _cap_peers(traffic, q)
        if binding and np.count_nonzero(traffic) <= q:
            reject()   # capping the peers left no more pairs than switches (rare)
        return CircuitsInstance(q, gbps, traffic.tolist())

    return draw_instance()


def invalid_circuits_instances(max_size: int = 5) -> st.SearchStrategy:
    """JSON objects the ``circuits`` kind must reject, with the field each error names."""
    valid = circuits_instances(max_size, feasible=False, min_gpus=2)

    @st.composite
    def mutate(draw):
        data = draw(valid).to_dict()
        t = data["traffic_bytes"]
        n = len(t)
        i = draw(st.integers(0, n - 1))
        j = draw(st.integers(0, n - 2))
        j += j >= i  # j != i
        how = draw(st.sampled_from(["negative", "diagonal", "not_finite", "cell_type",
                                    "ragged", "extra_row", "empty", "switches",
                                    "circuit_gbps"]))
        if how == "negative":
            t[i][j] = -draw(st.sampled_from([5.0, 1e6, 1e-3]))
            return expect(data, f"traffic_bytes[{i}][{j}]", "must be >= 0")
        if how == "diagonal":
            t[i][i] = draw(st.sampled_from([1.0, 5e6]))
            return expect(data, f"traffic_bytes[{i}][{i}]", "the diagonal must be 0")
        if how == "not_finite":
            t[i][j] = draw(st.sampled_from([math.inf, -math.inf, math.nan]))
            return expect(data, f"traffic_bytes[{i}][{j}]", "must be finite")
        if how == "cell_type":
            t[i][j] = draw(st.sampled_from(["5e6", None, [1.0]]))
            return expect(data, f"traffic_bytes[{i}][{j}]", "must be a number")
        if how == "ragged":
            t[i].pop()
            return expect(data, f"traffic_bytes[{i}]", f"has {n - 1} entries, expected {n}")
        if how == "extra_row":
            t.append([0.0] * n)
            return expect(data, "traffic_bytes[0]", f"has {n} entries, expected {n + 1}")
        if how == "empty":
            data["traffic_bytes"] = []
            return expect(data, "traffic_bytes", "must have at least one row")
        if how == "switches":
            value, rule = draw(st.sampled_from([(0, "must be >= 1"), (-2, "must be >= 1"),
                                                (1.5, "must be an integer"),
                                                (True, "must be an integer"),
                                                ("4", "must be an integer")]))
            data["switches"] = value
            return expect(data, "switches", rule)
        value, rule = draw(st.sampled_from([(0, "must be > 0"), (-100.0, "must be > 0"),
                                            (math.inf, "must be finite"),
                                            (math.nan, "must be finite"),
                                            ("fast", "must be a number")]))
        data["circuit_gbps"] = value
        return expect(data, "circuit_gbps", rule)

    return st.one_of(mutate(), generic_invalid_instances("circuits", valid))


register_strategies("circuits", circuits_instances, invalid=invalid_circuits_instances,
                    max_size=5)
