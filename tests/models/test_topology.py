"""The topology MILP: hand-solved optima, never worse than a heuristic, CBC == HiGHS."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import fabricopt
from fabricopt.models.topology import build, is_exact, ring_candidates
from fabricopt.problems import check, evaluate
from fabricopt.problems.topology import TopologyInstance, generate
from fabricopt.bounds.topology import lower_bound
from fabricopt.milp import ColumnValues
from fabricopt.methods.milp_method import cbc_available
from milp_helpers import assert_start_satisfies_every_row

HEURISTICS = ["topoopt", "ring", "random-regular", "ocs-reconfig"]


def test_triangle_meets_the_port_bound():
    # 3 servers of degree 2 must form a triangle; each member sends 2*2/3*3e9 = 4e9 bytes,
    # best split over both ring directions: 2e9 per link at 1e9 bytes/s = 2 s.
    inst = TopologyInstance(3, 2, 8.0, [{"members": [0, 1, 2], "bytes": 3e9}], [[0] * 3] * 3)
    r = fabricopt.solve(inst, "milp")
    assert r.status == "optimal" and r.objective == pytest.approx(2.0)
    assert sorted(r.solution.links) == [(0, 1, 1), (0, 2, 1), (1, 2, 1)]
    assert sorted(ring.share for ring in r.solution.rings) == pytest.approx([0.5, 0.5])


def test_mp_traffic_reorders_the_ring():
    # 4 servers of degree 2: AllReduce over all (6e9 bytes per member) plus 2e9 bytes
    # 0 -> 2 and 1 -> 3. On the ring 0-1-2-3 the MP bytes take two hops and links 1->2
    # and 0->3 carry 10e9 between them (5 s); the ring 0-2-1-3 carries them directly,
    # with 1/3 of the ring bytes forward: 4 s on every link, the port bound.
    traffic = np.zeros((4, 4))
    traffic[0, 2] = traffic[1, 3] = 2e9
    inst = TopologyInstance(4, 2, 8.0, [{"members": [0, 1, 2, 3], "bytes": 4e9}], traffic.tolist())
    exact = fabricopt.solve(inst, "milp")
    assert exact.status == "optimal" and exact.objective == pytest.approx(4.0)
    assert sorted(exact.solution.links) == [(0, 2, 1), (0, 3, 1), (1, 2, 1), (1, 3, 1)]
    assert fabricopt.solve(inst, "ring").objective == pytest.approx(5.0)
    # restricted to TopoOpt's regular rings over sorted members: worse, and no proof
    restricted = fabricopt.solve(inst, "milp", max_ring_orders=1)
    assert restricted.status == "feasible" and "restricted" in restricted.info
    assert exact.objective < restricted.objective * (1 - 1e-6)
    assert not is_exact(inst, 1) and is_exact(inst)


def test_ring_candidates_are_all_directed_cycles():
    assert len(ring_candidates(range(6))) == 120
    assert len(set(ring_candidates(range(6)))) == 120
    assert ring_candidates(range(9), max_ring_orders=5040) == [
        tuple((i * p) % 9 for i in range(9)) for p in (1, 2, 4, 5, 7, 8)]


def test_degree_one_instance_is_proven_infeasible():
    inst = TopologyInstance(4, 1, 8.0, [{"members": [0, 1, 2], "bytes": 1.0}], [[0] * 4] * 4)
    assert fabricopt.solve(inst, "milp").status == "infeasible"


def test_no_demand():
    inst = TopologyInstance(3, 2, 8.0, [{"members": [0, 2], "bytes": 0.0}], [[0] * 3] * 3)
    r = fabricopt.solve(inst, "milp")
    assert r.status == "optimal" and r.objective == 0.0


@settings(max_examples=10)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 6), d=st.integers(2, 4),
       method=st.sampled_from(HEURISTICS))
def test_every_heuristic_solution_is_a_point_of_the_model(seed, n, d, method):
    # encode() maps a heuristic's answer into the model and every constraint holds: the
    # model does not cut off feasible solutions; decode() gives it back no worse.
    inst = generate(seed, servers=n, degree=d)
    model = build(inst)
    heuristic = fabricopt.solve(inst, method).solution
    start = model.encode(heuristic)
    assert_start_satisfies_every_row(model, start, tol=1e-7)
    back = model.decode(ColumnValues(model.problem.arrays().names, start))
    assert check(inst, back)
    assert evaluate(inst, back) <= evaluate(inst, heuristic) * (1 + 1e-7)
    lam = start[model.problem.blocks["lam"].start]
    assert lower_bound(inst) / lam == pytest.approx(evaluate(inst, heuristic), rel=1e-9)


@settings(max_examples=8)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 5), d=st.integers(2, 4),
       peers=st.integers(0, 4), groups=st.integers(0, 2))
def test_milp_is_optimal_and_beats_every_heuristic(seed, n, d, peers, groups):
    inst = generate(seed, servers=n, degree=d, groups=groups, mp_peers=min(peers, n - 1))
    exact = fabricopt.solve(inst, "milp", warm_start=False)
    assert exact.status == "optimal" and check(inst, exact.solution)
    assert exact.objective >= lower_bound(inst) * (1 - 1e-9)
    for method in HEURISTICS:
        assert exact.objective <= fabricopt.solve(inst, method).objective * (1 + 1e-7)


@pytest.mark.skipif(not cbc_available(), reason="PuLP's CBC binary is not installed")
@pytest.mark.parametrize("seed", range(3))
def test_cbc_agrees_with_highs(seed):
    inst = generate(seed, servers=4, degree=3, mp_peers=2)
    highs = fabricopt.solve(inst, "milp")
    cbc = fabricopt.solve(inst, "milp", backend="cbc")
    assert cbc.status == highs.status == "optimal" and cbc.info["solver"] == "cbc"
    assert cbc.objective == pytest.approx(highs.objective, rel=1e-6)


def test_time_limited_eight_servers_keeps_the_warm_start():
    inst = generate(seed=0, servers=8, degree=3, mp_peers=4, mp_bytes=5e8)
    heuristic = fabricopt.solve(inst, "topoopt")
    r = fabricopt.solve(inst, "milp", time_limit=1.0)
    assert r.status in ("optimal", "feasible") and check(inst, r.solution)
    assert r.objective <= heuristic.objective * (1 + 1e-9)
    assert r.bound is not None and r.bound <= r.objective * (1 + 1e-9)
