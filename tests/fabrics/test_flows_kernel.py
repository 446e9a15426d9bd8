"""The compiled event loop of the step simulation against the Python loop, its oracle:
the same step, bit for bit, on generated plans and links."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fabricopt.errors import InvalidArgument
from fabricopt.fabrics.flows import (Links, _Schedule, pair_links, port_links, step_s,
                                     step_s_of_arrays)


@st.composite
def plans(draw):
    """A random DAG in topological order on ``l`` groups of ``k`` GPUs, with several
    transfers per GPU pair in flight at once (ties in sizes and times on purpose)."""
    k = draw(st.integers(2, 5))
    l = draw(st.integers(1, 3))
    n = draw(st.integers(2, 14))
    ops = [(f"o{i}", draw(st.sampled_from([0.0, 0.25, 1.0, 3.0]))) for i in range(n)]
    deps = []
    for j in range(1, n):
        for i in sorted(draw(st.sets(st.integers(0, j - 1), max_size=4))):
            deps.append((f"o{i}", f"o{j}", draw(st.sampled_from([0.0, 1e8, 1e9, 3e9, 7.5e9]))))
    gpu = {op: draw(st.integers(0, k - 1)) for op, _ in ops}
    return ops, deps, gpu, k, l


@st.composite
def fabrics(draw, nodes):
    """Ports with or without shared uplinks, or per-pair capacities (some zero), each
    also with its groups simulated together (no group key)."""
    shape = draw(st.sampled_from(["ports", "uplinks", "pairs"]))
    if shape == "ports":
        links = port_links(nodes, draw(st.sampled_from([1.0, 8.0, 100.0])))
    elif shape == "uplinks":
        per = draw(st.integers(1, 3))
        links = port_links(nodes, draw(st.sampled_from([8.0, 100.0])), np.arange(nodes) // per,
                           draw(st.sampled_from([2.0, 3.0, 8.0])))
    else:
        rates = np.array(draw(st.lists(st.sampled_from([0.0, 2.0, 5.0, 25.0]),
                                       min_size=nodes * nodes, max_size=nodes * nodes)))
        links = pair_links(rates.reshape(nodes, nodes))
    if draw(st.booleans()):
        links = Links(links.capacity_gbps, links.route, None)
    return links


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_the_compiled_loop_gives_the_python_step_bit_for_bit(data):
    ops, deps, gpu, k, l = data.draw(plans())
    links = data.draw(fabrics(k * l))
    python = step_s(ops, deps, gpu, k, l, links, backend="python")
    compiled = step_s(ops, deps, gpu, k, l, links)
    assert compiled == python or (math.isinf(compiled) and math.isinf(python))


def _as_arrays(ops, deps, gpu):
    position = {op: i for i, (op, _) in enumerate(ops)}
    return (np.array([c for _, c in ops]), np.array([gpu[op] for op, _ in ops]),
            np.array([position[a] for a, _, _ in deps], dtype=np.int64),
            np.array([position[b] for _, b, _ in deps], dtype=np.int64),
            np.array([x for _, _, x in deps], dtype=float))


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_a_placement_as_arrays_is_the_same_schedule_and_step(data):
    ops, deps, gpu, k, l = data.draw(plans())
    links = data.draw(fabrics(k * l))
    arrays = _as_arrays(ops, deps, gpu)
    by_ids, by_arrays = _Schedule(ops, deps, gpu, k), _Schedule.from_arrays(*arrays, k)
    for name in ("n", "k", "compute", "gpu", "order", "inputs", "outputs", "crossing"):
        assert getattr(by_arrays, name) == getattr(by_ids, name), name
    for mine, theirs in zip(by_arrays.arrays(), by_ids.arrays()):
        assert mine.dtype == theirs.dtype and np.array_equal(mine, theirs)
    if links.pair_gbps is not None:
        python, compiled = (by_ids.fixed_rate(links.pair_gbps, l),
                            by_arrays.fixed_rate_compiled(links.pair_gbps, l))
        assert all(np.array_equal(a, b) for a, b in zip(compiled, python))
    for backend in ("compiled", "python"):
        expected = step_s(ops, deps, gpu, k, l, links, backend=backend)
        got = step_s_of_arrays(*arrays, k, l, links, backend=backend)
        assert got == expected or (math.isinf(got) and math.isinf(expected))


@settings(max_examples=60, deadline=None)
@given(plans(), st.lists(st.sampled_from([1.0, 3.0, 10.0]), min_size=1, max_size=64))
def test_uneven_links_fill_alike(plan, gbps):
    # Routes of four links of uneven capacities: progressive filling freezes flows
    # link by link, with ties between links.
    ops, deps, gpu, k, l = plan
    n = k * l
    base = port_links(n, 8.0, np.arange(n) // 2, 4.0)
    capacity = np.resize(np.array(gbps), base.capacity_gbps.shape[0])
    links = Links(capacity, base.route, None)
    assert step_s(ops, deps, gpu, k, l, links) == step_s(ops, deps, gpu, k, l, links,
                                                          backend="python")


def test_three_flows_on_two_links_share_as_bertsekas_and_gallager_fill():
    # f0 (a -> b) crosses GPU 0's port and GPU 1's; f1 (a -> c) GPU 0's port, f2
    # (d -> b) GPU 1's port: ports of 1 and 2 Gbps (egress 0, ingress 1) give f0 and
    # f1 0.5 Gbps each, f2 1.5 Gbps.
    ops = [("a", 0.0), ("d", 0.0), ("b", 0.0), ("c", 0.0)]
    deps = [("a", "b", 1e9), ("a", "c", 1e9), ("d", "b", 3e9)]
    where = {"a": 0, "d": 2, "b": 1, "c": 3}
    capacity = np.full(8, 100.0)
    capacity[0], capacity[4 + 1] = 1.0, 2.0
    links = Links(capacity, lambda i, j: (i, 4 + j), None)
    # f0, f1 end at 16 s (8 Gb at 0.5); f2 has 24 - 24 = 0 Gb left then: all at 16 s
    assert step_s(ops, deps, where, 4, 1, links) == pytest.approx(16.0)
    assert step_s(ops, deps, where, 4, 1, links) == step_s(ops, deps, where, 4, 1, links,
                                                          backend="python")


def test_an_unknown_backend_is_refused():
    with pytest.raises(InvalidArgument, match="backend: 'gpu'"):
        step_s([("a", 1.0)], [], {"a": 0}, 1, 1, port_links(1, 8.0), backend="gpu")
