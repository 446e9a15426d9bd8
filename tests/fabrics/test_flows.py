"""The step simulated with its transfers as max-min fair flows: worked cases by hand, the
fixed-rate longest path as the oracle where nothing is shared, bounds that hold on every
schedule, scale invariance, and the groups simulated alone or together."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fabricopt.fabrics.flows import Links, pair_links, port_links, step_s


def longest_path_s(ops, deps, gpu, delay):
    """The oracle: each GPU runs its ops in order, each as soon as its inputs arrived,
    a cross-GPU dependency taking ``delay(src, dst, bytes)`` seconds."""
    end, free = {}, {}
    preds = {}
    for s, d, b in deps:
        preds.setdefault(d, []).append((s, b))
    for op, compute in ops:
        g = gpu[op]
        start = free.get(g, 0.0)
        for s, b in preds.get(op, ()):
            lag = delay(s, op, b) if gpu[s] != g and b > 0 else 0.0
            start = max(start, end[s] + lag)
        end[op] = start + compute
        free[g] = end[op]
    return max(end.values())


@st.composite
def schedules(draw, max_gpus=4):
    """A random DAG in topological order, placed on k GPUs; its op order is the DAG's."""
    k = draw(st.integers(2, max_gpus))
    n = draw(st.integers(2, 9))
    ops = [(f"o{i}", draw(st.sampled_from([0.0, 0.5, 1.0, 2.0]))) for i in range(n)]
    deps = []
    for j in range(1, n):
        for i in sorted(draw(st.sets(st.integers(0, j - 1), max_size=3))):
            deps.append((f"o{i}", f"o{j}", draw(st.sampled_from([0.0, 1e9, 2e9, 4e9]))))
    gpu = {op: draw(st.integers(0, k - 1)) for op, _ in ops}
    return ops, deps, gpu, k


def test_two_transfers_from_one_port_share_it_then_one_gets_it_whole():
    # a -> b (1 GB) and a -> c (3 GB) leave GPU 0 together on an 8 Gbps port: 4 Gbps
    # each until b's arrives at 2 s, then c's last 2 GB alone at 8 Gbps: 2 s more.
    ops = [("a", 1.0), ("b", 1.0), ("c", 1.0)]
    deps = [("a", "b", 1e9), ("a", "c", 3e9)]
    where = {"a": 0, "b": 1, "c": 2}
    assert step_s(ops, deps, where, 3, 1, port_links(3, 8.0)) == pytest.approx(1 + 4 + 1)
    # on circuits of 8 Gbps per pair neither waits for the other
    assert step_s(ops, deps, where, 3, 1, pair_links(np.full((3, 3), 8.0))) == pytest.approx(5.0)


def test_a_server_uplink_is_shared_by_the_transfers_leaving_the_server():
    # GPUs 0, 1 in server 0 send 1 GB each to GPUs 2, 3 in server 1 over a 4 Gbps uplink
    ops = [("a", 0.0), ("b", 0.0), ("c", 0.0), ("d", 0.0)]
    deps = [("a", "c", 1e9), ("b", "d", 1e9)]
    where = {"a": 0, "b": 1, "c": 2, "d": 3}
    servers = np.array([0, 0, 1, 1])
    assert step_s(ops, deps, where, 4, 1, port_links(4, 100.0, servers, 4.0)) == pytest.approx(4.0)
    assert step_s(ops, deps, where, 4, 1, port_links(4, 100.0)) == pytest.approx(0.08)


def test_fair_sharing_is_blind_to_the_critical_path():
    # Why a fabric with more constraints can end a step sooner: a -> b (4 GB, then 3 s
    # of compute) and a -> c (2 GB) share GPU 0's 8 Gbps port. Alone on the port they
    # split it, c's arrives at 4 s and b's at 6 s: the step ends at 9 s. When a slow
    # 2 Gbps uplink holds a -> c back, a -> b gets the other 6 Gbps, arrives at 16/3 s,
    # and the step ends at 25/3 s (c's arrives at 8 s).
    ops = [("a", 0.0), ("b", 3.0), ("c", 0.0)]
    deps = [("a", "b", 4e9), ("a", "c", 2e9)]
    where = {"a": 0, "b": 1, "c": 2}
    flat = step_s(ops, deps, where, 3, 1, port_links(3, 8.0))
    cluster = step_s(ops, deps, where, 3, 1, port_links(3, 8.0, np.array([0, 0, 1]), 2.0))
    assert (flat, cluster) == (pytest.approx(9.0), pytest.approx(25 / 3))


# A plan whose step ends later when every port is twice as fast: a -> c (1 GB) is
# critical (c then computes 3 s); e5 -> x5 and e6 -> x6 (1 GB each) enter c's GPU too,
# once w3 -> e5 and w4 -> e6 (2 GB each, from t = 0) have arrived.
FASTER_IS_LATER = ([("w3", 0.0), ("w4", 0.0), ("a", 1.0), ("e5", 0.0), ("e6", 0.0),
                    ("c", 3.0), ("x5", 0.0), ("x6", 0.0)],
                   [("w3", "e5", 2e9), ("w4", "e6", 2e9), ("a", "c", 1e9), ("e5", "x5", 1e9),
                    ("e6", "x6", 1e9)],
                   {"w3": 3, "w4": 4, "a": 0, "e5": 5, "e6": 6, "c": 1, "x5": 1, "x6": 1})


@pytest.mark.parametrize("backend", ["compiled", "python"])
def test_twice_as_fast_ports_can_end_a_step_later(backend):
    # At 8 Gbps a -> c runs alone from 1 s to 2 s, when w3's and w4's bytes arrive:
    # c ends at 5 s. At 16 Gbps those arrive at 1 s, just as a -> c starts, and the
    # three transfers split GPU 1's ingress, 16/3 Gbps each: a -> c arrives at 2.5 s
    # and c ends at 5.5 s. Max-min fairness gives the early transfers their share
    # whether or not they are critical, so a step is not monotone in bandwidth.
    ops, deps, gpu = FASTER_IS_LATER
    steps = [step_s(ops, deps, gpu, 7, 1, port_links(7, gbps), backend) for gbps in (8.0, 16.0)]
    assert steps == [pytest.approx(5.0), pytest.approx(5.5)]


@pytest.mark.parametrize("backend", ["compiled", "python"])
def test_faster_gpu_ports_behind_a_fixed_uplink_can_end_a_step_later(backend):
    # Elect-Cluster's shape: GPUs 0, 1 in server 0 and 2, 3 in server 1, an 8 Gbps uplink
    # per server, GPU ports of 16 or 32 Gbps. a -> c (1 GB, critical: c computes 2 s)
    # leaves server 0 together with a -> b (1 GB, inside it); b's output b -> d (1 GB)
    # leaves server 0 too. At 16 Gbps a -> c and a -> b split GPU 0's port, 8 Gbps each,
    # and both arrive at 2 s, when b -> d starts: c ends at 4 s. At 32 Gbps a -> b takes
    # the 24 Gbps the uplink leaves it and arrives at 4/3 s; b -> d then halves a -> c's
    # share of the uplink, which arrives at 8/3 s: c ends at 14/3 s.
    ops = [("a", 1.0), ("b", 0.0), ("c", 2.0), ("d", 0.0)]
    deps = [("a", "c", 1e9), ("a", "b", 1e9), ("b", "d", 1e9)]
    where = {"a": 0, "b": 1, "c": 2, "d": 3}
    servers = np.array([0, 0, 1, 1])
    steps = [step_s(ops, deps, where, 4, 1, port_links(4, gbps, servers, 8.0), backend)
             for gbps in (16.0, 32.0)]
    assert steps == [pytest.approx(4.0), pytest.approx(14 / 3)]


def test_a_transfer_on_a_link_of_no_capacity_never_arrives():
    ops = [("a", 1.0), ("b", 1.0)]
    rates = np.array([[0.0, 0.0], [1.0, 0.0]])
    assert math.isinf(step_s(ops, [("a", "b", 1.0)], {"a": 0, "b": 1}, 2, 1, pair_links(rates)))


@settings(max_examples=60)
@given(schedules())
def test_unshared_transfers_take_the_fixed_rate_longest_path(schedule):
    # One transfer per GPU pair, each pair its own capacity: nothing is shared, and
    # the oracle is exact.
    ops, deps, gpu, k = schedule
    seen, unique = set(), []
    for s, d, b in deps:
        pair = (gpu[s], gpu[d])
        if pair[0] != pair[1] and b > 0:
            if pair in seen:
                continue
            seen.add(pair)
        unique.append((s, d, b))
    rates = 2.0 + np.arange(k * k, dtype=float).reshape(k, k)
    expected = longest_path_s(ops, unique, gpu,
                              lambda s, d, b: 8 * b / (rates[gpu[s], gpu[d]] * 1e9))
    assert step_s(ops, unique, gpu, k, 1, pair_links(rates)) == pytest.approx(expected, rel=1e-9)


@settings(max_examples=60)
@given(schedules(), st.sampled_from([1.0, 8.0, 100.0]))
def test_sharing_lies_between_the_full_rate_and_the_equal_split_longest_paths(schedule, gbps):
    ops, deps, gpu, k = schedule
    servers = np.arange(k) // 2
    for links in (port_links(k, gbps), port_links(k, gbps, servers, gbps / 3)):
        users = {}
        for s, d, b in deps:
            if gpu[s] != gpu[d] and b > 0:
                for r in links.route(gpu[s], gpu[d]):
                    users[r] = users.get(r, 0) + 1

        def full(s, d, b):
            return 8 * b / (min(links.capacity_gbps[r] for r in links.route(gpu[s], gpu[d])) * 1e9)

        def split(s, d, b):
            return 8 * b / (min(links.capacity_gbps[r] / users[r]
                                 for r in links.route(gpu[s], gpu[d])) * 1e9)

        t = step_s(ops, deps, gpu, k, 1, links)
        assert longest_path_s(ops, deps, gpu, full) * (1 - 1e-9) <= t
        assert t <= longest_path_s(ops, deps, gpu, split) * (1 + 1e-9)


@settings(max_examples=40)
@given(schedules(max_gpus=3))
def test_one_peer_per_port_prices_ports_and_circuits_alike(schedule):
    # With every GPU sending to at most one GPU and receiving from at most one, a
    # transfer shares its ports exactly as it shares its pair's circuits.
    ops, deps, gpu, k = schedule
    ring = {g: (g + 1) % k for g in range(k)}
    kept = [(s, d, b) for s, d, b in deps if gpu[s] == gpu[d] or ring[gpu[s]] == gpu[d]]
    circuits = np.zeros((k, k))
    for g in range(k):
        circuits[g, ring[g]] = 25.0
    assert step_s(ops, kept, gpu, k, 1, port_links(k, 25.0)) == pytest.approx(
        step_s(ops, kept, gpu, k, 1, pair_links(circuits)), rel=1e-12)


@settings(max_examples=40)
@given(schedules(), st.sampled_from([0.5, 2.0, 10.0]))
def test_faster_links_and_compute_together_scale_the_step(schedule, factor):
    ops, deps, gpu, k = schedule
    servers = np.arange(k) // 2
    t = step_s(ops, deps, gpu, k, 1, port_links(k, 8.0, servers, 3.0))
    fast = [(op, c / factor) for op, c in ops]
    assert step_s(fast, deps, gpu, k, 1, port_links(k, 8.0 * factor, servers, 3.0 * factor)) \
        == pytest.approx(t / factor, rel=1e-9)


@settings(max_examples=30)
@given(schedules(max_gpus=4), st.sampled_from([1, 2, 3]))
def test_groups_alone_or_together_give_the_same_step(schedule, l):
    ops, deps, gpu, k = schedule
    n = k * l
    for links in (port_links(n, 8.0), port_links(n, 8.0, np.arange(n) // 2, 3.0),
                  pair_links(np.full((n, n), 5.0))):
        alone = step_s(ops, deps, gpu, k, l, links)
        together = step_s(ops, deps, gpu, k, l, Links(links.capacity_gbps, links.route, None))
        assert alone == pytest.approx(together, rel=1e-9)


@given(st.lists(st.integers(0, 4), min_size=1, max_size=12), st.data())
def test_a_group_owns_its_uplinks_exactly_when_no_other_node_shares_its_servers(where, data):
    # the key's definition: the nodes of the group's servers are the group's own
    n = len(where)
    links = port_links(n, 8.0, np.array(where), 2.0)
    k = data.draw(st.integers(1, n))
    base = data.draw(st.integers(0, n - k))
    local = np.array(where[base:base + k])
    inside = np.flatnonzero(np.isin(where, local))
    own = local.min() == local.max() or (inside.min() == base and inside.max() == base + k - 1)
    key = links.group_key(base, k)
    assert (key == tuple((local - local[0]).tolist())) if own else (key is not None
                                                                   and not isinstance(key, tuple))
