"""The iteration-time model: exact cases, Elect-Flat's dominance, monotonicity in
bandwidth, memory, and the placement hand-off."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fabricopt import InfeasibleInstance, InvalidInstance, SolverUnavailable
from fabricopt.fabrics.comparison import make_fabric
from fabricopt.fabrics.iteration import (_critical_path_s, iteration_time, place,
                                         placement_instance, plan_from_placement,
                                         search_iteration_time)
from fabricopt.fabrics.models import (ElectCluster, ElectFlat, FatTree, SipOcs, SipRing,
                                      method_available)
from fabricopt.fabrics.workloads import (BYTES_PER_VALUE, DEFAULT_GPU_FLOPS,
                                         TRAINING_BYTES_PER_PARAM, Workload)
from fabricopt.problems.opgraph import OpGraph

HAS_PLACEMENT = method_available("placement", "sipml") and method_available("placement",
                                                                            "unconstrained")
needs_placement = pytest.mark.skipif(not HAS_PLACEMENT, reason="placement/sipml is not registered yet")


def toy_graph(batch, gpu_flops=DEFAULT_GPU_FLOPS):
    """A diamond a -> (b, c) -> d whose compute grows with the batch."""
    ops = [{"id": x, "compute_s": batch * 1e-4 * w, "params_bytes": p}
           for x, w, p in (("a", 1, 4e6), ("b", 3, 8e6), ("c", 2, 2e6), ("d", 1, 1e6))]
    edges = [{"src": s, "dst": d, "bytes": batch * 1e5} for s, d in
             (("a", "b"), ("a", "c"), ("b", "d"), ("c", "d"))]
    return OpGraph(ops, edges)


TOY = Workload("toy", toy_graph, 64, "a diamond")


def test_pure_data_parallel_is_compute_plus_ring_allreduce():
    t = iteration_time(TOY, ElectFlat(100.0), gpus=8, k=1, l=8)
    graph = toy_graph(8)
    ring = 2 * 7 / 8 * graph.total_params_bytes
    assert t.compute_s == pytest.approx(graph.total_compute_s)
    assert t.allreduce_s == pytest.approx(8 * ring / 100e9)
    assert t.total_s == pytest.approx(t.compute_s + t.allreduce_s)
    assert t.fabric_s == pytest.approx(t.allreduce_s)          # Elect-Flat: the port bound
    solo = iteration_time(TOY, ElectFlat(100.0), gpus=1, k=1, l=1)
    assert solo.allreduce_s == 0.0 and solo.total_s == pytest.approx(toy_graph(64).total_compute_s)


def test_elect_cluster_ring_crosses_the_server_nic():
    t = iteration_time(TOY, ElectCluster(1000.0, 100.0, gpus_per_server=4), gpus=8, k=1, l=8)
    ring = 2 * 7 / 8 * toy_graph(8).total_params_bytes
    assert t.allreduce_s == pytest.approx(8 * ring / 100e9)    # hops 3->4 and 7->0 leave a server


def test_critical_path_with_pair_rates_by_hand():
    graph = OpGraph([{"id": "a", "compute_s": 1.0, "params_bytes": 0.0},
                     {"id": "b", "compute_s": 1.0, "params_bytes": 0.0}],
                    [{"src": "a", "dst": "b", "bytes": 1e9}])
    inst = {"gpus": 2, "ops": [{"id": "a", "compute_s": 1.0}, {"id": "b", "compute_s": 1.0}],
            "deps": [{"src": "a", "dst": "b", "bytes": 1e9}]}
    plan = plan_from_placement("toy", graph, 1, inst, {"gpu": {"a": 0, "b": 1},
                                                       "start_s": {"a": 0.0, "b": 2.0}})
    t = iteration_time(TOY, ElectFlat(8.0), gpus=2, k=2, l=1, plan=plan, memory_bytes=None,
                       serial_fallback=False)
    assert (t.compute_s, t.mp_s, t.allreduce_s, t.fabric_s, t.total_s) == (2.0, 3.0, 0.0, 1.0, 3.0)
    # one GPU running both (2 s) beats the 1 s transfer: the fallback takes it
    alone = iteration_time(TOY, ElectFlat(8.0), gpus=2, k=2, l=1, plan=plan, memory_bytes=None)
    assert alone.plan.serial and (alone.mp_s, alone.total_s) == (2.0, 2.0)
    same = plan_from_placement("toy", graph, 1, inst, {"gpu": {"a": 1, "b": 1},
                                                       "start_s": {"a": 0.0, "b": 1.0}})
    assert iteration_time(TOY, ElectFlat(8.0), 2, 2, 1, plan=same).total_s == 2.0
    assert (plan.peers(), same.peers()) == (1, 0)
    assert plan.fits(SipOcs(1, 8.0)) and same.fits(SipOcs(1, 8.0))


@st.composite
def random_plans(draw):
    """A random placement of the toy diamond's two-way split on k GPUs, l groups."""
    k = draw(st.integers(2, 4))
    l = draw(st.sampled_from([1, 2, 4]))
    graph = toy_graph(64 // l)
    ops, deps = [], []
    for op in graph.ops:
        for part in range(2):
            ops.append({"id": f"{op.id}{part}", "compute_s": op.compute_s / 2, "group": op.id})
    for e in graph.edges:
        for p, q in ((0, 0), (1, 1)):
            deps.append({"src": f"{e.src}{p}", "dst": f"{e.dst}{q}", "bytes": e.bytes / 2})
    gpu = {op["id"]: draw(st.integers(0, k - 1)) for op in ops}
    rank = {x: i for i, x in enumerate(graph.topological_order())}
    start = {op["id"]: float(rank[op["group"]]) for op in ops}
    inst = {"gpus": k, "ops": ops, "deps": deps}
    return plan_from_placement(TOY, graph, l, inst, {"gpu": gpu, "start_s": start})


def fabrics_at(b, n):
    return [ElectCluster(b, b / 2, gpus_per_server=2), ElectCluster(b, 4 * b),
            FatTree(n, b), FatTree(n, b, 2.0, hosts_per_edge=2), SipOcs(8, b)]


def unshared_step_s(plan, gbps):
    """The step with every transfer alone on a link of ``gbps``: no fabric of that
    per-GPU bandwidth gives a transfer more, and sharing never speeds one up."""
    return _critical_path_s(plan, np.full((plan.gpus, plan.gpus), gbps))


@settings(max_examples=40)
@given(random_plans(), st.sampled_from([10.0, 100.0, 1000.0]))
def test_no_fabric_beats_elect_flat_with_every_transfer_alone(plan, b):
    # Elect-Flat shares its ports max-min fairly as transfers come and go; that is not
    # the best order for the critical path, so a fabric with more constraints (or
    # fixed circuits) can end a step sooner on some plans (tests/fabrics/test_flows.py,
    # fair sharing is blind to the critical path) -- but never sooner than every
    # transfer alone at the per-GPU bandwidth, and never delivers the traffic sooner.
    flat = iteration_time(TOY, ElectFlat(b), plan.gpus, plan.k, plan.l, plan=plan,
                          serial_fallback=False)
    bound = unshared_step_s(plan, b)
    assert bound * (1 - 1e-12) <= flat.mp_s
    for fabric in fabrics_at(b, plan.gpus):
        t = iteration_time(TOY, fabric, plan.gpus, plan.k, plan.l, plan=plan,
                           serial_fallback=False)
        assert bound * (1 - 1e-12) <= t.mp_s, fabric
        assert flat.fabric_s <= t.fabric_s * (1 + 1e-12), fabric
        assert flat.allreduce_s <= t.allreduce_s * (1 + 1e-12), fabric


@settings(max_examples=40)
@given(random_plans())
def test_iteration_time_stays_within_bounds_that_fall_as_bandwidth_rises(plan):
    # Fair sharing can make a step slightly slower on faster links (a transfer that
    # starts sooner overlaps a critical one); the step stays between the unshared
    # bound and the step with every transfer at 1/n of its port (n transfers in a
    # group: a port never carries more at once), both falling with b.
    crossing = sum(plan.gpu[a] != plan.gpu[z] and nbytes > 0 for a, z, nbytes in plan.deps)
    for make in (ElectFlat, lambda b: ElectCluster(b, 200.0, 2), lambda b: FatTree(plan.gpus, b, 4.0, 2),
                 lambda b: SipOcs(8, b)):
        for b in (25.0, 100.0, 1600.0):
            t = iteration_time(TOY, make(b), plan.gpus, plan.k, plan.l, plan=plan,
                               serial_fallback=False)
            assert unshared_step_s(plan, b) * (1 - 1e-12) <= t.mp_s
            if isinstance(make(b), ElectFlat):
                assert t.mp_s <= unshared_step_s(plan, b / max(1, crossing)) * (1 + 1e-12)


def test_elect_cluster_400_can_price_a_plan_slower_at_twice_the_gpu_bandwidth():
    # compare's elect-cluster-400 keeps 400 Gbps per 8-GPU server as the GPU ports grow.
    # a -> c (50 GB; c computes 2 s) leaves server 0 with a -> b (50 GB, inside it);
    # b -> d (50 GB) leaves it too. At 800 Gbps per GPU, a -> c and a -> b split GPU 0's
    # port and both arrive at 1 + 1 s, when b -> d starts: c ends at 4 s. At 1600 Gbps
    # a -> b takes the 1200 Gbps the server's 400 leave it and arrives at 1 + 1/3 s;
    # b -> d then halves a -> c's share of the 400, and c ends at 14/3 s.
    graph = OpGraph([{"id": x, "compute_s": c, "params_bytes": 0.0}
                     for x, c in (("a", 1.0), ("b", 0.0), ("c", 2.0), ("d", 0.0))],
                    [{"src": s, "dst": d, "bytes": 50e9} for s, d in
                     (("a", "c"), ("a", "b"), ("b", "d"))])
    inst = {"gpus": 16, "ops": [{"id": op.id, "compute_s": op.compute_s} for op in graph.ops],
            "deps": [{"src": e.src, "dst": e.dst, "bytes": e.bytes} for e in graph.edges]}
    plan = plan_from_placement("toy", graph, 1, inst, {"gpu": {"a": 0, "b": 1, "c": 8, "d": 9},
                                                       "start_s": {"a": 0, "b": 1, "c": 2, "d": 3}})
    times = [iteration_time(TOY, make_fabric("elect-cluster-400", gbps, 16), 16, 16, 1,
                            plan=plan, memory_bytes=None, serial_fallback=False)
             for gbps in (800.0, 1600.0)]
    assert [t.mp_s for t in times] == [pytest.approx(4.0), pytest.approx(14 / 3)]
    assert [t.total_s for t in times] == [t.mp_s for t in times]
    assert times[1].fabric_s == times[0].fabric_s == pytest.approx(2.0)   # 100 GB over 400 Gbps


def test_memory_limits_the_model_parallel_degree():
    big = Workload("big", lambda batch, gpu_flops=DEFAULT_GPU_FLOPS: OpGraph(
        [{"id": "w", "compute_s": 1.0, "params_bytes": 20e9}]), 8, "10 B parameters")
    with pytest.raises(InfeasibleInstance, match=r"big with k = 1: split evenly .* 160.0 GB"):
        iteration_time(big, ElectFlat(100.0), gpus=8, k=1, l=8)
    assert iteration_time(big, ElectFlat(100.0), 8, 1, 8, memory_bytes=None).total_s > 1.0
    with pytest.raises(InfeasibleInstance, match=r"no feasible \(k, l\) for big on 8 GPUs"):
        search_iteration_time(big, ElectFlat(100.0), 8, k_values=[1])


def test_search_keeps_the_fastest_and_uses_extra_plans():
    best = search_iteration_time(TOY, ElectFlat(100.0), 8, k_values=[1])
    assert (best.k, best.l) == (1, 8)
    cache = {}
    again = search_iteration_time(TOY, ElectFlat(100.0), 8, k_values=[1], plan_cache=cache,
                                  extra_plans=[best.plan])
    assert again.total_s == best.total_s and len(cache) == 1


@pytest.mark.parametrize("call, message", [
    (lambda: iteration_time(TOY, ElectFlat(1.0), gpus=8, k=2, l=2), r"gpus = 8: must equal k \* l = 2 \* 2"),
    (lambda: iteration_time(TOY, ElectFlat(1.0), gpus=3, k=1, l=3), r"l = 3: must divide the global batch 64"),
    (lambda: iteration_time("nope", ElectFlat(1.0), gpus=1, k=1, l=1), r"workload = 'nope': unknown"),
])
def test_bad_job_shapes_name_the_field(call, message):
    with pytest.raises(InvalidInstance, match=message):
        call()


def test_a_plan_for_another_job_is_refused():
    plan = place(TOY, ElectFlat(1.0), 1, 2)
    with pytest.raises(InvalidInstance, match=r"plan = 'toy k=1 l=2': is not a placement of toy with k = 1, l = 4"):
        iteration_time(TOY, ElectFlat(1.0), 4, 1, 4, plan=plan)


@pytest.mark.skipif(HAS_PLACEMENT, reason="the placement kind is registered")
def test_model_parallelism_without_the_placement_kind_is_unavailable():
    with pytest.raises(SolverUnavailable, match=r"placing k = 2 needs method 'unconstrained'"):
        iteration_time(TOY, ElectFlat(100.0), gpus=4, k=2, l=2)


@needs_placement
def test_placement_instance_is_the_balanced_graph():
    inst = placement_instance(toy_graph(8), 4, tau_s=1e-4, max_peers=2, link_gbps=50.0)
    assert (inst["problem"], inst["gpus"], inst["max_peers"], inst["link_gbps"]) == (
        "placement", 4, 2, 50.0)
    # every op of the graph is split into sub-ops that carry its compute
    total = sum(op["compute_s"] for op in inst["ops"])
    assert total == pytest.approx(toy_graph(8).total_compute_s)


@needs_placement
@pytest.mark.parametrize("fabric", [ElectFlat(400.0), SipOcs(3, 400.0)])
def test_placed_jobs_respect_the_fabric_degree(fabric):
    plan = place(TOY, fabric, 4, 2, tau_s=1e-4)
    assert plan.method == fabric.placement_method and plan.result.status in ("optimal", "feasible")
    peers = (plan.mp_bytes > 0).sum(axis=1).max()
    assert peers <= fabric.max_peers(4, 2)
    assert plan.params_bytes.sum() == pytest.approx(toy_graph(32).total_params_bytes)
    t = iteration_time(TOY, fabric, 8, 4, 2, plan=plan)
    assert t.compute_s <= t.mp_s <= t.total_s


@needs_placement
def test_a_group_never_estimates_worse_than_one_of_its_gpus():
    fabric = ElectFlat(1.0)          # placed by `unconstrained`, which splits the chain
    # a chain whose transfers cost more than its compute: the earliest-available rule
    # spreads it over the group and pays every transfer; one GPU is faster
    def chain(batch, gpu_flops=DEFAULT_GPU_FLOPS):
        ops = [{"id": f"o{i}", "compute_s": batch * 1e-4, "params_bytes": 1e3} for i in range(6)]
        edges = [{"src": f"o{i}", "dst": f"o{i + 1}", "bytes": batch * 1e6} for i in range(5)]
        return OpGraph(ops, edges)

    job = Workload("chain", chain, 8, "a chain")
    plan = place(job, fabric, 2, 1, tau_s=1e-3, memory_bytes=None)
    serial_s = chain(8).total_compute_s
    spread = iteration_time(job, fabric, 2, 2, 1, plan=plan, memory_bytes=None,
                            serial_fallback=False)
    assert spread.mp_s > serial_s                          # the placement itself is slower
    t = iteration_time(job, fabric, 2, 2, 1, plan=plan, memory_bytes=None)
    assert t.plan.serial and set(t.plan.gpu.values()) == {0} and not t.plan.mp_bytes.any()
    assert t.mp_s == pytest.approx(serial_s) and t.total_s <= spread.total_s
    best = search_iteration_time(job, fabric, 2, memory_bytes=None)
    assert best.mp_s <= serial_s * (1 + 1e-12)
    # where the model does not fit on one GPU the placement stands
    whole = chain(8).total_params_bytes / BYTES_PER_VALUE * TRAINING_BYTES_PER_PARAM
    tight = iteration_time(job, fabric, 2, 2, 1, plan=plan, memory_bytes=0.75 * whole)
    assert not tight.plan.serial
    # sipml (optical fabrics) keeps one GPU itself: its ring search tries it
    optical = place(job, SipOcs(switches=2, gbps=2.0), 2, 1, tau_s=1e-3, memory_bytes=None)
    assert optical.result.info["ring_gpus"] == 1 and set(optical.gpu.values()) == {0}


def test_search_refuses_a_traffic_workload_in_one_line():
    with pytest.raises(InvalidInstance, match=r"^workload = 'simai-micro': a traffic workload "
                                              r"\(SimAI/AICB\) carries its own parallelism"):
        search_iteration_time("simai-micro", ElectFlat(400.0), 8)


@settings(max_examples=20)
@given(random_plans())
def test_remembered_configurations_price_as_fresh_ones(plan):
    import fabricopt.fabrics.iteration as iteration

    fabric = SipOcs(4, 100.0)
    first = iteration_time(TOY, fabric, plan.gpus, plan.k, plan.l, plan=plan)
    again = iteration_time(TOY, SipOcs(4, 100.0), plan.gpus, plan.k, plan.l, plan=plan)
    iteration._allocations.clear()
    fresh = iteration_time(TOY, fabric, plan.gpus, plan.k, plan.l, plan=plan)
    assert first.total_s == again.total_s == fresh.total_s
    assert len(iteration._allocations) <= iteration._ALLOCATIONS_MAX


def test_fewer_configurations_are_remembered_for_more_gpus(monkeypatch):
    # each holds N x N arrays: the cache's cell budget, and never fewer than two
    import fabricopt.fabrics.iteration as iteration

    monkeypatch.setattr(iteration, "_ALLOCATIONS_MAX_CELLS", 3 * 8 ** 2)
    iteration._allocations.clear()
    for gbps in (100.0, 200.0, 300.0, 400.0, 500.0):
        iteration_time(TOY, ElectFlat(gbps), 8, 2, 4)
        assert len(iteration._allocations) <= 3
    for gbps in (100.0, 200.0, 300.0):
        iteration_time(TOY, ElectFlat(gbps), 16, 2, 8)
    assert len(iteration._allocations) == 2


@settings(max_examples=20)
@given(random_plans())
def test_a_plan_gives_one_traffic_object_equal_to_a_fresh_one(plan):
    import fabricopt.fabrics.iteration as iteration
    from fabricopt.fabrics.traffic import hybrid_traffic

    first = plan.traffic()
    assert plan.traffic() is first
    fresh = hybrid_traffic(plan.mp_bytes, plan.params_bytes, plan.k, plan.l)
    assert first.matrix_bytes.tobytes() == fresh.matrix_bytes.tobytes()
    assert first.allreduce == fresh.allreduce
    assert len(iteration._traffics) <= iteration._TRAFFICS_MAX


@settings(max_examples=40)
@given(random_plans(), st.sampled_from([10.0, 100.0, 1000.0]))
def test_no_fabric_prices_a_plan_below_its_lower_bound(plan, b):
    from fabricopt.fabrics.iteration import lower_bound_s

    for fabric in [ElectFlat(b), SipRing(max(1, round(b / 25)))] + fabrics_at(b, plan.gpus):
        try:
            t = iteration_time(TOY, fabric, plan.gpus, plan.k, plan.l, plan=plan,
                               serial_fallback=False)
        except InfeasibleInstance:       # a ring of too few wavelengths for the traffic
            continue
        assert lower_bound_s(plan, fabric) <= t.total_s * (1 + 1e-12), fabric


@needs_placement
@pytest.mark.parametrize("fabric", [ElectFlat(50.0), ElectCluster(400.0, 100.0, 2), SipOcs(3, 50.0)])
def test_pruning_by_the_lower_bound_keeps_the_same_best(fabric):
    full, pruned, placed = [], [], []
    best = search_iteration_time(TOY, fabric, 8, priced=full)
    kept = search_iteration_time(TOY, fabric, 8, priced=pruned, placed=placed, prune=True)
    assert kept.total_s == best.total_s and (kept.k, kept.l) == (best.k, best.l)
    assert len(pruned) <= len(full)
    # no cache: placements at the fabric's own limit are made inside iteration_time,
    # only the other rungs of its degree ladder here
    assert all(p.max_peers != fabric.max_peers(p.k, p.l) for p in placed)
    assert bool(placed) == any(len(fabric.max_peers_ladder(k, 8 // k)) > 1 for k in (2, 4, 8))
    placed.clear()
    with pytest.raises(InfeasibleInstance, match=r"k=1 l=8: its lower bound is at least 0 s"):
        search_iteration_time(TOY, fabric, 8, prune=True, beat_s=0.0, plan_cache={},
                              placed=placed, k_values=[1])
    assert len(placed) == 1


class _BoundlessRing(SipRing):
    """SiP-Ring without its configuration bound: what the search prices without it."""

    def comm_lower_bound_s(self, traffic) -> float:
        return 0.0


@needs_placement
@settings(max_examples=10, deadline=None)
@given(st.integers(2, 6), st.sampled_from([10.0, 100.0, 1000.0]), st.sampled_from([1e-4, 1e-3]))
def test_the_configuration_bound_prunes_without_changing_the_best(wavelengths, gbps, tau_s):
    ring = SipRing(wavelengths, gbps / wavelengths, max_hops=7)
    search = dict(tau_s=tau_s, prune=True, plan_cache={})
    answers, counts = [], []
    for fabric in (ring, _BoundlessRing(wavelengths, gbps / wavelengths, max_hops=7)):
        priced = []
        try:
            best = search_iteration_time(TOY, fabric, 8, priced=priced, **search)
        except InfeasibleInstance:
            best = None
        answers.append(None if best is None else (best.total_s, best.k, best.l,
                                                  best.plan.max_peers))
        counts.append(len(priced))
    assert answers[0] == answers[1]
    assert counts[0] <= counts[1]


@needs_placement
def test_the_search_places_with_fewer_peers_where_that_is_faster():
    # Four circuits per GPU, three for model parallelism: one peer gets all three, three
    # peers one each. The diamond's transfers are slow at 10 Gbps, so one peer wins.
    fabric = SipOcs(4, 10.0)
    assert fabric.max_peers_ladder(4, 2) == (3, 1)
    fixed = iteration_time(TOY, fabric, 8, 4, 2, tau_s=1e-3)
    best = search_iteration_time(TOY, fabric, 8, k_values=[4], tau_s=1e-3)
    assert fixed.plan.max_peers == 3 and best.plan.max_peers == 1
    assert best.plan.peers() == 1 and best.total_s < 0.9 * fixed.total_s
    # a packet switch gives every peer the whole port: one degree limit, k - 1
    assert ElectFlat(10.0).max_peers_ladder(4, 2) == (3,)


@needs_placement
@settings(max_examples=12, deadline=None)
@given(st.sampled_from([(2, 4), (4, 2), (8, 1)]), st.integers(2, 6),
       st.sampled_from([10.0, 100.0, 1000.0]), st.sampled_from([1e-4, 1e-3]),
       st.booleans(), st.booleans())
def test_the_peers_search_keeps_the_best_rung_and_never_loses_to_the_fixed_limit(
        shape, switches, gbps, tau_s, ring, prune):
    k, l = shape
    fabric = SipRing(switches, gbps / switches, max_hops=7) if ring else SipOcs(switches, gbps)
    ladder = fabric.max_peers_ladder(k, l)
    assert ladder[0] == fabric.max_peers(k, l) and len(set(ladder)) == len(ladder)
    assert all(1 <= p <= ladder[0] for p in ladder) and 1 in ladder
    # each rung placed and priced on its own: the search's answer is the least of them
    # (a ring with few wavelengths may have no configuration for a rung's traffic)
    rungs = []
    for p in ladder:
        try:
            rungs.append(iteration_time(TOY, fabric, 8, k, l, tau_s=tau_s,
                                        plan=place(TOY, fabric, k, l, tau_s=tau_s,
                                                   max_peers=p)).total_s)
        except InfeasibleInstance:
            rungs.append(None)
    search = dict(k_values=[k], tau_s=tau_s, prune=prune, plan_cache={} if prune else None)
    if all(t is None for t in rungs):
        with pytest.raises(InfeasibleInstance, match=r"^no feasible \(k, l\) for toy"):
            search_iteration_time(TOY, fabric, 8, **search)
        return
    best = search_iteration_time(TOY, fabric, 8, **search)
    assert best.total_s == min(t for t in rungs if t is not None)
    assert rungs[0] is None or best.total_s <= rungs[0]
    assert best.plan.k == 1 or best.plan.peers() <= best.plan.max_peers


@needs_placement
def test_a_degree_limit_above_the_fabric_s_is_refused():
    from fabricopt.errors import InvalidArgument

    with pytest.raises(InvalidArgument, match=r"^max_peers = 4: must be from 1 to sip-ocs's limit 3 "
                                               r"for k = 4, l = 2$"):
        place(TOY, SipOcs(4, 10.0), 4, 2, max_peers=4)


@needs_placement
def test_a_memory_floor_is_named_once_for_the_whole_peers_ladder():
    job = Workload("toy", toy_graph, 64, "a diamond")
    whole = toy_graph(32).total_params_bytes / BYTES_PER_VALUE * TRAINING_BYTES_PER_PARAM
    with pytest.raises(InfeasibleInstance) as caught:
        search_iteration_time(job, SipOcs(8, 10.0), 8, k_values=[4],
                              memory_bytes=whole / 8)
    message = str(caught.value)
    assert message.count("k=4 l=2") == 1 and "max_peers" not in message
