"""Fabric models: the port bound, shared ports, Elect-Flat's dominance, fluid ECMP against an explicit
Fat-tree, the optical fabrics against their problem kinds, and the cost counts."""

import itertools
import math
import re

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import fabricopt
from fabricopt import InfeasibleInstance, InvalidInstance, SolverFailure, SolverUnavailable
from fabricopt.algorithms.circuits import exact
from fabricopt.fabrics import models
from fabricopt.fabrics.models import (DirectConnect, ElectCluster, ElectFlat, FatTree, SipOcs,
                                      SipRing, cost_matched_fat_tree, method_available)
from fabricopt.fabrics.prices import DEFAULT_PRICES, Prices, fat_tree_counts
from fabricopt.fabrics.traffic import PairTraffic, Traffic, as_traffic, port_bound_s
from fabricopt.methods.result import SolverOutput
from fabricopt.problems.circuits import CircuitsInstance, circuit_counts
from fabricopt.problems.wavelengths import WavelengthsInstance

HAS_MCF = method_available("wavelengths", "mcf")
HAS_TOPOOPT = method_available("topology", "topoopt")
needs_mcf = pytest.mark.skipif(not HAS_MCF, reason="wavelengths/mcf is not registered yet")
needs_topoopt = pytest.mark.skipif(not HAS_TOPOOPT, reason="topology/topoopt is not registered yet")


@st.composite
def traffics(draw, min_n=2, max_n=8, even=False, rings=True):
    n = draw(st.integers(min_n, max_n))
    if even:
        n += n % 2
    cells = draw(st.lists(st.one_of(st.just(0.0), st.floats(1e3, 1e9)), min_size=n * n,
                          max_size=n * n))
    m = np.array(cells).reshape(n, n)
    np.fill_diagonal(m, 0.0)
    groups = []
    if rings and n >= 2 and draw(st.booleans()):
        members = draw(st.permutations(range(n)))[:draw(st.integers(2, n))]
        # whole bytes: circuits/exact overflows int64 on ratios like 1e3 / 1e-20 bytes
        groups.append({"members": list(members), "bytes": float(draw(st.integers(0, 10**9)))})
    return Traffic(m, groups)


def available_fabrics(b, n):
    """Every fabric at per-node bandwidth b that can carry any traffic on n nodes."""
    out = [ElectFlat(b), ElectCluster(b, b / 4, gpus_per_server=2), ElectCluster(b, 3 * b, 4),
           FatTree(n, b), FatTree(n, b, oversubscription=2.0, hosts_per_edge=2),
           SipOcs(n, b), SipOcs(n, b, method="greedy")]
    if HAS_MCF:
        out.append(SipRing(n, b / n, max_hops=n))   # n transceivers: any traffic fits
    if HAS_TOPOOPT and n % 2 == 0 and n >= 4:
        out.append(DirectConnect(2, b / 2))
    return out


@st.composite
def sparse_traffics(draw, max_n=40):
    """A few pairs among up to ``max_n`` nodes (repeats merge, self-pairs drop)."""
    n = draw(st.integers(1, max_n))
    pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1),
                                    st.floats(1.0, 1e10)), max_size=3 * n))
    src, dst, nbytes = zip(*pairs) if pairs else ((), (), ())
    return PairTraffic.from_pairs(n, src, dst, nbytes)


@settings(max_examples=60)
@given(sparse_traffics(), st.integers(1, 9), st.sampled_from([1.0, 2.5]))
def test_packet_fabrics_price_sparse_traffic_as_its_dense_matrix(traffic, per_box, oversub):
    n = traffic.nodes
    for fabric in (ElectFlat(100.0), ElectCluster(400.0, 150.0, gpus_per_server=per_box),
                   FatTree(n, 100.0), FatTree(n + 3, 100.0, oversubscription=oversub,
                                              hosts_per_edge=per_box)):
        assert fabric.sparse_pricing
        assert fabric.sparse_comm_time_s(traffic) == pytest.approx(
            fabric.comm_time(traffic.to_dense()), rel=1e-12, abs=0.0), fabric


def test_solver_fabrics_price_sparse_traffic_through_their_configuration():
    traffic = PairTraffic.from_pairs(4, [0, 1, 2], [1, 2, 3], [1e9, 2e9, 1e9])
    fabric = SipOcs(2, 16.0)
    assert not fabric.sparse_pricing
    assert fabric.sparse_comm_time_s(traffic) == fabric.comm_time(traffic.to_dense())


def test_a_fat_tree_refuses_sparse_traffic_on_more_nodes_than_hosts():
    with pytest.raises(InvalidInstance, match=r"traffic_bytes = '9 x 9'.*8 hosts"):
        FatTree(8, 100.0).sparse_comm_time_s(PairTraffic.from_pairs(9, [0], [8], [1.0]))


@settings(max_examples=30)
@given(traffics(), st.sampled_from([25.0, 400.0]))
def test_no_fabric_beats_the_port_bound_and_elect_flat_attains_it(traffic, b):
    bound = port_bound_s(traffic, b)
    assert ElectFlat(b).comm_time(traffic) == pytest.approx(bound, rel=1e-12)
    for fabric in available_fabrics(b, traffic.nodes):
        assert fabric.per_node_gbps == pytest.approx(b)
        assert fabric.comm_time(traffic) >= bound * (1 - 1e-9), fabric


@settings(max_examples=30)
@given(traffics(), st.sampled_from([25.0, 400.0]), st.sampled_from([1e-12, 1.0, 1e12]),
       st.integers(1, 7))
def test_no_configuration_delivers_sooner_than_the_fabric_s_own_bound(traffic, b, scale, hops):
    scaled = Traffic(traffic.matrix_bytes * scale,
                     [{"members": list(g.members), "bytes": g.bytes * scale}
                      for g in traffic.allreduce])
    fabrics = available_fabrics(b, traffic.nodes) + [SipRing(2, b / 2, max_hops=hops)]
    for fabric in fabrics:
        bound = fabric.comm_lower_bound_s(scaled)
        try:
            comm = fabric.comm_time(scaled)
        except InfeasibleInstance:      # a ring that cannot reach or carry every pair
            assert isinstance(fabric, SipRing)
            continue
        assert 0.0 <= bound <= comm * (1 + 1e-9), fabric
        if isinstance(fabric, SipRing) and scaled.total_matrix().any():
            # no GPU sends or receives more than its W transceivers carry: the port bound
            port = port_bound_s(scaled, fabric.per_node_gbps) / fabric.duty_cycle
            assert bound >= port * (1 - 1e-9), fabric
    # a pair beyond reach both ways round: no schedule, and the bound says so
    far = np.zeros((10, 10))
    far[0, 5] = 1.0
    assert SipRing(4, max_hops=4).comm_lower_bound_s(far) == float("inf")


@settings(max_examples=30)
@given(traffics(), st.sampled_from([25.0, 400.0]))
def test_concurrent_transfers_share_ports_and_packet_switches_never_beat_elect_flat(traffic, b):
    # Model-parallel transfers share ports among themselves, then the AllReduce's hops
    # among themselves; a circuit fabric keeps one configuration for both.
    flat = ElectFlat(b).allocate(traffic)
    for fabric in available_fabrics(b, traffic.nodes):
        if isinstance(fabric, DirectConnect):
            continue                    # forwarded routes share links, not ports
        a = fabric.allocate(traffic)
        phases = ((traffic.matrix_bytes, a.pair_gbps, flat.pair_gbps),
                  (traffic.ring_matrix(), a.pair_gbps if a.ring_gbps is None else a.ring_gbps,
                   flat.ring_gbps))
        for demand, rates, flat_rates in phases:
            used = np.where(demand > 0, rates, 0.0)
            assert used.sum(axis=1).max() <= b * (1 + 1e-9), fabric
            assert used.sum(axis=0).max() <= b * (1 + 1e-9), fabric
            if isinstance(fabric, (ElectCluster, FatTree)):
                assert np.all(used <= flat_rates * (1 + 1e-9)), fabric


def _port_shares_by_definition(total, gbps, group):
    """Each cell of :func:`models.port_shares` from its docstring, one at a time."""
    n = total.shape[0]
    where = list(range(n)) if group is None else [int(g) for g in group]
    crossing = [[total[i, j] if where[i] != where[j] else 0.0 for j in range(n)]
                for i in range(n)]
    out = {p: math.fsum(crossing[i][j] for i in range(n) if where[i] == p for j in range(n))
           for p in set(where)}
    into = {p: math.fsum(crossing[i][j] for j in range(n) if where[j] == p for i in range(n))
            for p in set(where)}
    rates = np.zeros((n, n))
    for i, j in itertools.product(range(n), repeat=2):
        if i == j:
            rates[i, j] = 0.0
        elif where[i] == where[j]:
            rates[i, j] = math.inf
        elif crossing[i][j] > 0:
            rates[i, j] = gbps * crossing[i][j] / max(out[where[i]], into[where[j]])
        else:
            rates[i, j] = gbps
    return rates


@given(traffics(rings=False), st.sampled_from([25.0, 400.0]), st.booleans(), st.data())
def test_port_shares_follow_their_definition(traffic, gbps, grouped, data):
    total = traffic.matrix_bytes
    group = (np.array(data.draw(st.lists(st.integers(0, 2), min_size=traffic.nodes,
                                         max_size=traffic.nodes)))
             if grouped else None)
    rates = models.port_shares(total, gbps, group)
    # the sums run in another order than the definition's exact ones: a few ulps
    np.testing.assert_allclose(rates, _port_shares_by_definition(total, gbps, group),
                               rtol=1e-12, atol=0)


@given(traffics(), st.sampled_from([25.0, 400.0]), st.integers(1, 4), st.data())
def test_port_shares_of_cells_are_the_cells_of_the_whole_matrix(traffic, gbps, per_group, data):
    # _PortShares.at prices the rings' hops without the N x N matrix: the same floats
    n = traffic.nodes
    group = np.arange(n) // per_group
    for matrix in (traffic.matrix_bytes, traffic.ring_matrix()):
        for levels in (((gbps, None),), ((gbps, None), (gbps / 3, group))):
            whole = models._PortShares(matrix, levels)()
            expected = models.port_shares(matrix, *levels[0])
            if len(levels) == 2:
                expected = np.minimum(expected, models.port_shares(matrix, *levels[1]))
            assert np.array_equal(whole, expected)
            cells = data.draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)),
                                       min_size=1, max_size=2 * n))
            i, j = (np.array(c) for c in zip(*cells))
            shares = models._PortShares(matrix, levels)
            assert np.array_equal(shares.at(i, j), whole[i, j])
            assert np.array_equal(shares.at(j, i), whole[j, i])     # loads kept, reused
            i, j = np.indices((n, n)).reshape(2, -1)
            assert np.array_equal(shares.at(i, j), whole[i, j])


@settings(max_examples=30)
@given(traffics(), st.sampled_from([25.0, 400.0]))
def test_a_packet_switch_prices_its_rings_before_and_after_its_rates_are_made(traffic, b):
    for fabric in (ElectFlat(b), ElectCluster(b, b / 4, gpus_per_server=2),
                   FatTree(traffic.nodes, b, oversubscription=2.0, hosts_per_edge=2)):
        lazy, made = fabric.allocate(traffic), fabric.allocate(traffic)
        assert isinstance(made.pair_gbps, np.ndarray) and isinstance(made.ring_gbps, np.ndarray)
        assert made.pair_gbps is made.pair_gbps                  # made once, then kept
        assert lazy.allreduce_s() == made.allreduce_s()
        assert np.array_equal(lazy.pair_gbps, made.pair_gbps)
        with pytest.raises(AttributeError):
            made.pair_gbps = np.zeros((traffic.nodes, traffic.nodes))     # frozen


def test_an_allocation_given_arrays_keeps_them():
    rates = np.array([[0.0, 2.0], [3.0, 0.0]])
    a = models.Allocation(Traffic([[0, 1e9], [0, 0]]), 1.0, rates)
    assert a.pair_gbps is rates and a.ring_gbps is None
    assert a.allreduce_s() == 0.0
    with pytest.raises(TypeError, match="pair_gbps"):
        models.Allocation(Traffic([[0, 1e9], [0, 0]]), 1.0)


def test_the_allreduce_gets_the_port_after_the_step_on_a_switch_not_on_circuits():
    m = np.zeros((4, 4))
    m[0, 1] = 9e9                                   # a heavy model-parallel transfer
    t = Traffic(m, [{"members": [0, 1, 2, 3], "bytes": 4e9}])   # 6 GB per ring hop
    flat = ElectFlat(16.0).allocate(t)
    assert flat.pair_gbps[0, 1] == 16.0              # alone in the step
    assert flat.allreduce_s() == pytest.approx(6e9 * 8 / 16e9)   # then the ring alone
    ocs = SipOcs(2, 16.0).allocate(t)                # 0 -> 1 and 0's ring hop share circuits
    assert ocs.ring_gbps is None and ocs.allreduce_s() >= flat.allreduce_s()


@st.composite
def circulant_traffics(draw):
    """Every node sends the same bytes to the nodes ``offsets`` ahead of it."""
    n = draw(st.integers(3, 10))
    offsets = draw(st.lists(st.integers(1, n - 1), min_size=1, max_size=min(4, n - 1),
                            unique=True))
    nbytes = float(draw(st.integers(1, 10**9)))
    m = np.zeros((n, n))
    for o in offsets:
        m[np.arange(n), (np.arange(n) + o) % n] = nbytes
    return m, len(offsets)


@settings(max_examples=30)
@given(circulant_traffics(), st.sampled_from([25.0, 400.0, 8192.0]))
def test_equal_per_flow_bandwidth_prices_electrical_and_optical_alike(case, b):
    m, peers = case
    ocs, flat = SipOcs(peers, b).allocate(m), ElectFlat(b).allocate(m)
    demanded = m > 0
    assert np.allclose(ocs.pair_gbps[demanded], b / peers)
    assert np.allclose(flat.pair_gbps[demanded], ocs.pair_gbps[demanded])
    assert flat.comm_time_s == pytest.approx(ocs.comm_time_s, rel=1e-9)


@given(st.integers(2, 40).flatmap(lambda n: st.permutations(range(n))), st.floats(1e3, 1e10),
       st.sampled_from([1.0, 2.0, 8.0]))
def test_full_bisection_fat_tree_equals_elect_flat_on_permutations(perm, nbytes, h):
    n = len(perm)
    m = np.zeros((n, n))
    for i, j in enumerate(perm):
        if i != j:
            m[i, j] = nbytes
    tree = FatTree(n, 100.0, hosts_per_edge=int(h))
    assert tree.comm_time(m) == pytest.approx(ElectFlat(100.0).comm_time(m), rel=1e-12)


def explicit_clos(pods, edges, hosts, aggs, cores):
    """A three-tier Clos: ``aggs`` per pod (each linked to every edge of its pod), core
    group a of ``cores`` switches linked to agg a of every pod; host id = edge*hosts + i."""
    g = nx.Graph()
    for p, e, i in itertools.product(range(pods), range(edges), range(hosts)):
        g.add_edge(("h", (p * edges + e) * hosts + i), ("e", p, e))
    for p, e, a in itertools.product(range(pods), range(edges), range(aggs)):
        g.add_edge(("e", p, e), ("a", p, a))
    for p, a, c in itertools.product(range(pods), range(aggs), range(cores)):
        g.add_edge(("a", p, a), ("c", a, c))
    return g


def ecmp_time(graph, m, gbps):
    """Split every flow evenly over all its shortest paths; the busiest directed link."""
    load = {}
    for s, t in zip(*np.nonzero(m)):
        paths = list(nx.all_shortest_paths(graph, ("h", int(s)), ("h", int(t))))
        for path in paths:
            for u, v in zip(path, path[1:]):
                load[(u, v)] = load.get((u, v), 0.0) + m[s, t] / len(paths)
    return max(8 * x / (gbps * 1e9) for x in load.values()) if load else 0.0


@settings(max_examples=15)
@given(st.sampled_from([(2, 2, 2, 2), (2, 2, 2, 1), (3, 2, 2, 1), (2, 3, 3, 3), (2, 2, 4, 2)]),
       st.data())
def test_fluid_ecmp_formula_matches_an_explicit_clos(shape, data):
    pods, edges, hosts, aggs = shape
    n = pods * edges * hosts
    m = data.draw(traffics(min_n=n, max_n=n, rings=False)).matrix_bytes
    graph = explicit_clos(pods, edges, hosts, aggs, cores=edges)
    tree = FatTree(n, 10.0, oversubscription=hosts / aggs, hosts_per_edge=hosts)
    assert tree.comm_time(m) == pytest.approx(ecmp_time(graph, m, 10.0), rel=1e-9)


def test_elect_cluster_server_nic_and_in_box_switch():
    f = ElectCluster(800.0, 100.0, gpus_per_server=4)
    m = np.zeros((8, 8))
    m[0, 1] = m[0, 2] = 1e9                     # in the box: GPU 0's port at 800 Gbps
    assert f.comm_time(m) == pytest.approx(16 / 800)
    m[1, 5] = m[2, 6] = 1e9                     # server 0's NIC sends 2 GB at 100 Gbps
    assert f.comm_time(m) == pytest.approx(16 / 100)
    rates = f.allocate(m).pair_gbps
    # GPU 0 splits its port over two peers; server 0's NIC over two transfers
    assert rates[0, 1] == 400.0 and rates[1, 5] == 50.0 and rates[0, 0] == 0.0


def test_sip_ocs_is_the_circuits_problem():
    rng = np.random.default_rng(4)
    inst = fabricopt.generate("circuits", seed=4, gpus=10, switches=4)
    f = SipOcs(4, 4 * inst.circuit_gbps)
    a = f.allocate(inst.traffic_bytes)
    assert a.comm_time_s == fabricopt.solve(inst, "exact").objective
    counts = a.pair_gbps / inst.circuit_gbps
    assert np.allclose(counts, np.round(counts)) and counts.sum(axis=1).max() <= 4
    perm = np.zeros((6, 6))
    perm[np.arange(6), rng.permutation(np.roll(np.arange(6), 1))] = 1e9
    np.fill_diagonal(perm, 0)
    assert SipOcs(3, 24.0).comm_time(perm) == pytest.approx(ElectFlat(24.0).comm_time(perm))
    star = np.zeros((5, 5))
    star[0, 1:] = 1.0                            # GPU 0 talks to 4 GPUs with 2 ports
    with pytest.raises(InfeasibleInstance, match="sip-ocs: the traffic has no circuits"):
        SipOcs(2, 10.0).allocate(star)
    assert SipOcs(2, 10.0).max_peers(k=8, l=4) == 1 and SipOcs(16, 1.0).max_peers(k=4, l=1) == 3


def _through_solve(fabric: SipOcs, traffic):
    """``solve``'s result for SiP-OCS's circuits instance of ``traffic`` and the pair
    rates of its switch configurations' circuit counts."""
    t = as_traffic(traffic)
    inst = CircuitsInstance(fabric.switches, fabric.circuit_gbps, t.total_matrix())
    result = fabricopt.solve(inst, fabric.method)
    rates = None if result.solution is None else \
        circuit_counts(inst, result.solution) * fabric.circuit_gbps
    return result, rates


@st.composite
def ocs_traffics(draw):
    """Small traffics with AllReduce rings, or generated circuits traffic up to 64 GPUs
    (heavy-tailed with ``skew`` 3)."""
    if draw(st.booleans()):
        return draw(traffics(max_n=10))
    inst = fabricopt.generate("circuits", seed=draw(st.integers(0, 10**6)),
                              gpus=draw(st.integers(2, 64)), switches=draw(st.integers(1, 16)),
                              skew=draw(st.sampled_from([1.0, 3.0])))
    return inst.traffic


@settings(max_examples=60, deadline=None)
@given(ocs_traffics(), st.integers(1, 12), st.sampled_from([25.0, 400.0, 8192.0]),
       st.sampled_from(["exact", "greedy"]))
def test_sip_ocs_priced_from_circuit_counts_equals_the_solve_path(traffic, switches, b, method):
    fabric = SipOcs(switches, b, method=method)
    if not as_traffic(traffic).total_matrix().any():
        assert fabric.allocate(traffic).result is None      # nothing to configure
        return
    result, rates = _through_solve(fabric, traffic)
    if result.status == "infeasible":
        with pytest.raises(InfeasibleInstance, match="sip-ocs: the traffic has no circuits "
                                                     "configuration: " + re.escape(result.message)):
            fabric.allocate(traffic)
        return
    a = fabric.allocate(traffic)
    assert a.result.solution is None and a.result.info["solution"].startswith("not built")
    assert a.comm_time_s == a.result.objective == result.objective          # bit-equal
    assert np.array_equal(a.pair_gbps, rates)
    assert (a.result.problem, a.result.method, a.result.status, a.result.limit) == \
        ("circuits", method, result.status, "none")
    if method == "exact":   # the shipped exact method's proof, certified as solve does
        assert (a.result.bound, a.result.gap, a.result.bound_source) == \
            (result.bound, result.gap, result.bound_source) == (result.objective, 0.0, "optimal")
    else:
        assert a.result.bound is None and "not computed" in a.result.info["bound"]


def test_a_plug_in_that_re_registers_a_counts_method_runs_through_solve(temporary_method):
    calls = []

    def mine(instance, *, time_limit=None, seed=0):
        calls.append(instance.gpus)
        return SolverOutput(exact(instance), "feasible")

    temporary_method("circuits", "exact", mine, options=())
    a = SipOcs(2, 16.0).allocate([[0, 1e9, 0], [0, 0, 1e9], [1e9, 0, 0]])
    assert calls == [3]
    assert a.result.status == "feasible" and a.result.solution is not None
    assert a.comm_time_s == 0.5 and a.pair_gbps[0, 1] == 16.0     # both switches carry 0 -> 1


def test_circuit_counts_that_fail_the_kind_s_check_are_a_solver_failure(monkeypatch):
    fn, _, status = models._COUNTS_METHODS["exact"]
    traffic = [[0, 1e9], [1e9, 0]]
    for counts, message in [
            (lambda inst: np.zeros((2, 2), dtype=np.int64),
             r"returned infeasible circuit counts: traffic_bytes\[0\]\[1\] = 1000000000.0 "
             r"has no circuit 0->1"),
            (lambda inst: np.array([[0, 3], [1, 0]]),
             r"returned infeasible circuit counts: counts\[0\]\[1\] = 3: more circuits than"),
            (lambda inst: [[0, -1], [1, 0]],
             r"returned infeasible circuit counts: counts\[0\]\[1\] = -1: must be an integer"),
            (lambda inst: 1 / 0, r"raised ZeroDivisionError: division by zero")]:
        monkeypatch.setitem(models._COUNTS_METHODS, "exact", (fn, counts, status))
        with pytest.raises(SolverFailure, match=r"sip-ocs: circuits/exact ended error: "
                                                r"method 'exact' " + message):
            SipOcs(2, 16.0).allocate(traffic)


def test_the_allocation_prices_other_traffic_on_its_circuits():
    a = SipOcs(2, 16.0).allocate([[0, 1e9, 0], [0, 0, 1e9], [1e9, 0, 0]])
    ring = np.array([[0, 2e9, 0], [0, 0, 1e9], [0, 0, 0]])
    assert a.dedicated_time_s(ring) == 1.0
    assert a.dedicated_time_s(np.zeros((3, 3))) == 0.0
    assert math.isinf(a.dedicated_time_s(ring.T))       # 1 -> 0 has no circuit


def test_sip_ring_reach_and_unknown_method():
    m = np.zeros((10, 10))
    m[0, 5] = 1.0                                 # 5 hops both ways round
    with pytest.raises(InfeasibleInstance, match="GPUs 0 and 5 are 5 hops apart"):
        SipRing(4, max_hops=4).allocate(m)
    m[0, 5], m[0, 2] = 0.0, 1.0
    with pytest.raises(SolverUnavailable, match="needs method 'nope' of the 'wavelengths'"):
        SipRing(4, max_hops=4, method="nope").allocate(m)
    assert SipRing(8).duty_cycle == pytest.approx(0.8)
    assert SipRing(4).with_bandwidth(1000.0).wavelengths == 40


@needs_mcf
def test_sip_ring_is_the_wavelengths_problem_with_the_duty_cycle():
    m = np.zeros((8, 8))
    m[0, 1], m[3, 1], m[5, 7] = 1e9, 2e9, 5e8
    f = SipRing(4, 25.0, max_hops=4)
    a = f.allocate(m)
    result = fabricopt.solve(f.instance(m), "mcf")
    assert a.comm_time_s == pytest.approx(result.objective / f.duty_cycle)
    assert a.pair_gbps.sum(axis=1).max() <= 4 * 25.0 * f.duty_cycle + 1e-9


@needs_mcf
def test_sip_ring_bounds_and_allocates_one_traffic_from_one_instance():
    m = np.zeros((8, 8))
    m[0, 1], m[3, 1], m[5, 7] = 1e9, 2e9, 5e8
    t, same = Traffic(m, [{"members": [0, 2, 4, 6], "bytes": 3e8}]), Traffic(m)
    f = SipRing(4, 25.0, max_hops=4)
    models._ring_instances.clear()
    bound = f.comm_lower_bound_s(t)
    shared = f._wavelengths_instance(t)
    a = f.allocate(t)
    assert f._wavelengths_instance(t) is shared
    assert f._wavelengths_instance(same) is not shared      # kept by object, not value
    assert SipRing(8, 25.0, max_hops=4)._wavelengths_instance(t) is not shared
    assert len(models._ring_instances) <= models._RING_INSTANCES_MAX
    # the reference: the instance written as JSON, solved and bounded apart
    spec = f.instance(t)
    result = fabricopt.solve(spec, "mcf")
    assert shared.to_dict() == spec and shared == WavelengthsInstance.from_dict(spec)
    assert a.comm_time_s == result.objective / f.duty_cycle
    assert a.result.solution.to_dict() == result.solution.to_dict()
    from fabricopt.bounds.wavelengths import count_bound
    assert bound == count_bound(WavelengthsInstance.from_dict(spec)) / f.duty_cycle


def _ring_traffic(m=None, **change):
    """A SiP-Ring test traffic on 8 nodes: its point-to-point bytes (``m``, changed at
    the given ``"i_j"`` cells) and one AllReduce ring; a fresh object every call."""
    if m is None:
        m = np.zeros((8, 8))
        m[0, 1], m[3, 1], m[5, 7] = 1e9, 2e9, 5e8
    m = m.copy()
    for cell, value in change.items():
        i, j = (int(v) for v in cell.split("_"))
        m[i, j] = value
    return Traffic(m, [{"members": [0, 2, 4, 6], "bytes": 3e8}])


@pytest.fixture
def ring_solves(monkeypatch):
    """The wavelengths instances SiP-Ring hands the solver (``models._solve``), from an
    empty store of kept results."""
    models._ring_results.clear()
    solved = []
    solve_ = models._solve

    def counting(fabric, kind, method, instance, **options):
        solved.append((method, instance))
        return solve_(fabric, kind, method, instance, **options)

    monkeypatch.setattr(models, "_solve", counting)
    yield solved
    models._ring_results.clear()


def _same_allocation(a, b):
    return (a.comm_time_s == b.comm_time_s and np.array_equal(a.pair_gbps, b.pair_gbps)
            and a.rings == b.rings and a.result.objective == b.result.objective
            and a.result.bound == b.result.bound and a.result.status == b.result.status
            and a.result.solution.to_dict() == b.result.solution.to_dict())


@needs_mcf
@pytest.mark.parametrize("method", ["mcf", "greedy", "milp"])
def test_sip_ring_solves_traffic_equal_in_content_once(ring_solves, method):
    f = SipRing(4, 25.0, max_hops=4, method=method)
    first, again = _ring_traffic(), _ring_traffic()
    a = f.allocate(first)
    kept = f.allocate(again)
    assert len(ring_solves) == 1
    assert kept.traffic is again and a.traffic is first
    models._ring_results.clear()                      # the reference: solved afresh
    fresh = f.allocate(_ring_traffic())
    assert len(ring_solves) == 2
    assert _same_allocation(kept, fresh) and _same_allocation(a, fresh)
    spec = f.instance(again)
    assert kept.result.objective == fabricopt.solve(spec, method).objective


@needs_mcf
def test_sip_ring_solves_again_when_a_parameter_or_a_byte_differs(ring_solves):
    f = SipRing(4, 25.0, max_hops=4)
    f.allocate(_ring_traffic())
    variants = [(SipRing(5, 25.0, max_hops=4), _ring_traffic()),
                (SipRing(4, 20.0, max_hops=4), _ring_traffic()),
                (SipRing(4, 25.0, max_hops=5), _ring_traffic()),
                (SipRing(4, 25.0, max_hops=4, method="greedy"), _ring_traffic()),
                (f, _ring_traffic(**{"5_7": np.nextafter(5e8, 1e9)})),   # one byte's last bit
                (f, _ring_traffic(**{"2_3": 1.0}))]
    for n, (fabric, traffic) in enumerate(variants, start=2):
        fabric.allocate(traffic)
        assert len(ring_solves) == n, fabric
    # max_hops is capped at N - 1 = 7: both rings solve one instance
    SipRing(4, 25.0, max_hops=7).allocate(_ring_traffic())
    SipRing(4, 25.0, max_hops=9).allocate(_ring_traffic())
    assert len(ring_solves) == len(variants) + 2
    # the first traffic is still kept
    f.allocate(_ring_traffic())
    assert len(ring_solves) == len(variants) + 2


@needs_mcf
def test_sip_ring_keeps_a_bounded_number_of_results(ring_solves, monkeypatch):
    monkeypatch.setattr(models, "_RING_RESULTS_MAX", 2)
    f = SipRing(4, 25.0, max_hops=4)
    for nbytes in (1e9, 2e9, 3e9):
        f.allocate(_ring_traffic(**{"0_1": nbytes}))
    assert len(models._ring_results) == 2 and len(ring_solves) == 3
    f.allocate(_ring_traffic(**{"0_1": 3e9}))         # the newest is kept
    assert len(ring_solves) == 3
    f.allocate(_ring_traffic(**{"0_1": 1e9}))         # the oldest was dropped
    assert len(ring_solves) == 4 and len(models._ring_results) == 2


@needs_mcf
def test_sip_ring_never_serves_a_re_registered_method_a_kept_result(ring_solves,
                                                                     temporary_method):
    from fabricopt.methods import wavelengths as wavelength_methods
    f = SipRing(4, 25.0, max_hops=4)
    shipped = f.allocate(_ring_traffic())
    calls = []

    def mine(instance, *, time_limit=None, seed=0):
        calls.append(instance)
        out = wavelength_methods.mcf(instance, time_limit=time_limit, seed=seed)
        return SolverOutput(out.solution, out.status, out.bound, {**out.info, "by": "mine"})

    temporary_method("wavelengths", "mcf", mine, options=())
    a, b = f.allocate(_ring_traffic()), f.allocate(_ring_traffic())
    assert len(calls) == 2 and len(ring_solves) == 3      # each traffic solved, none kept
    assert a.result.info["by"] == b.result.info["by"] == "mine"
    assert "by" not in shipped.result.info


@needs_mcf
def test_sip_ring_bounds_an_instance_once_for_its_pruning_and_its_solve(monkeypatch):
    from fabricopt.bounds import wavelengths as wavelength_bounds
    bounded = []
    count_bound = wavelength_bounds.count_bound

    def counting(instance):
        bounded.append(instance)
        return count_bound(instance)

    monkeypatch.setattr(wavelength_bounds, "count_bound", counting)
    models._ring_results.clear()
    f, t = SipRing(4, 25.0, max_hops=4), _ring_traffic()
    bound = f.comm_lower_bound_s(t)
    a = f.allocate(t)
    assert len(bounded) == 1
    spec = f.instance(t)
    reference = fabricopt.solve(spec, "mcf")              # bounds its own instance
    assert len(bounded) == 2
    assert bound == count_bound(WavelengthsInstance.from_dict(spec)) / f.duty_cycle
    assert a.result.bound == reference.bound and a.result.bound_source == reference.bound_source


@needs_topoopt
def test_direct_connect_is_the_topology_problem():
    t = Traffic(np.where(np.eye(8) > 0, 0.0, 1e6), [{"members": list(range(8)), "bytes": 4e9}])
    f = DirectConnect(4, 100.0)
    a = f.allocate(t)
    assert a.comm_time_s == fabricopt.solve(f.instance(t), "topoopt").objective
    assert a.comm_time_s >= port_bound_s(t, 400.0) * (1 - 1e-9)
    assert sum(share for _, share, _ in a.rings) == pytest.approx(1.0)
    assert 0 < a.allreduce_s() < float("inf")


def test_fat_tree_counts_follow_topoopt_appendix_g():
    c = fat_tree_counts(128)
    assert c["switch_ports"] / 8 == 80 == 5 * 8 ** 2 / 4       # k = 8: 80 switches of 8 ports
    assert FatTree(128, 100.0).hosts_per_edge == 4 and FatTree(1024, 1.0).hosts_per_edge == 8
    cost = FatTree(128, 100.0).cost_breakdown(128)
    p = DEFAULT_PRICES
    assert cost["switch_ports"] == 640 * p.switch_port_per_100g
    assert cost["transceivers"] == 2 * (128 + 256) * p.transceiver_per_100g
    assert FatTree(128, 200.0).cost_usd(128) > FatTree(128, 100.0).cost_usd(128)
    assert FatTree(128, 100.0, 2.0).cost_usd(128) < FatTree(128, 100.0).cost_usd(128)


def test_direct_connect_cost_counts():
    cost = DirectConnect(4, 100.0).cost_breakdown(128)
    p = DEFAULT_PRICES
    assert cost["nics"] == 128 * 4 * p.nic_port_per_100g
    assert cost["patch_panel_ports"] == 2 * 128 * 4 * p.patch_panel_port
    assert cost["lookahead_switches"] == 128 * 4 * p.lookahead_switch


def test_optical_switch_ports_do_not_scale_with_bandwidth():
    slow, fast = SipOcs(16, 400.0).cost_breakdown(64), SipOcs(16, 4000.0).cost_breakdown(64)
    assert slow["ocs_ports"] == fast["ocs_ports"] == 64 * 16 * DEFAULT_PRICES.ocs_port
    assert fast["sip_interfaces"] == 10 * slow["sip_interfaces"]
    assert ElectFlat(100.0).cost_usd(128) == FatTree(128, 100.0).cost_usd(128)
    free = Prices(**{name: 0.0 for name in Prices.__dataclass_fields__})
    assert ElectCluster(800.0, 400.0).cost_usd(64, free) == 0.0


@given(st.floats(1e4, 1e8), st.sampled_from([16, 128, 1000]))
def test_cost_matched_fat_tree_costs_the_target(target, hosts):
    fixed = FatTree(hosts, 1.0).cost_breakdown(hosts)["fibers"]
    if target <= fixed:
        with pytest.raises(InvalidInstance, match="does not exceed the Fat-tree's fixed cost"):
            cost_matched_fat_tree(target, hosts)
    else:
        assert cost_matched_fat_tree(target, hosts).cost_usd(hosts) == pytest.approx(target)


@pytest.mark.parametrize("fabric", [ElectFlat(100.0), ElectCluster(100.0, 50.0), FatTree(64, 100.0),
                                    SipOcs(4, 100.0), SipRing(4), DirectConnect(4, 25.0)])
def test_with_bandwidth_scales_the_per_node_bandwidth(fabric):
    assert fabric.with_bandwidth(800.0).per_node_gbps == pytest.approx(800.0)


@pytest.mark.parametrize("make, message", [
    (lambda: ElectFlat(0), r"gbps = 0.0: must be > 0"),
    (lambda: ElectCluster(10.0, -1.0), r"inter_gbps = -1.0: must be > 0"),
    (lambda: ElectCluster(10.0, 1.0, gpus_per_server=0), r"gpus_per_server = 0: must be >= 1"),
    (lambda: FatTree(0, 1.0), r"hosts = 0: must be >= 1"),
    (lambda: FatTree(8, 1.0, oversubscription=0.5), r"oversubscription = 0.5: must be >= 1"),
    (lambda: FatTree(2, 1.0).comm_time(np.zeros((3, 3))), r"has more nodes than the Fat-tree's 2 hosts"),
    (lambda: SipOcs(0, 1.0), r"switches = 0: must be >= 1"),
    (lambda: SipRing(0), r"wavelengths = 0: must be >= 1"),
    (lambda: SipRing(2, interval_s=0), r"interval_s = 0.0: must be > 0"),
    (lambda: DirectConnect(4, "fast"), r"link_gbps = 'fast': must be a number"),
    (lambda: Prices(ocs_port=-1), r"ocs_port = -1.0: must be >= 0"),
])
def test_bad_parameters_name_the_field(make, message):
    with pytest.raises(InvalidInstance, match=message):
        make()


@given(st.lists(st.sampled_from([0.0, -0.0, 1e-300, 5.0]), min_size=9, max_size=9),
       st.sampled_from([0.0, 1e-300, 4e9]))
def test_a_traffic_is_idle_exactly_when_its_total_is_zero(cells, ring_bytes):
    m = np.array(cells).reshape(3, 3)
    np.fill_diagonal(m, 0.0)
    t = Traffic(m, [{"members": [2, 0], "bytes": ring_bytes}])
    assert (models._idle(t) is None) == bool(t.total_matrix().any())
