"""The topology flow relaxation: never above the MILP optimum (exact on small groups),
never below the port-load bound, never above any heuristic's checked answer."""

import pytest

import fabricopt
from fabricopt.problems.topology import TopologyInstance, generate
from fabricopt.bounds.topology import lower_bound
from fabricopt.bounds.topology import heuristic_bound, relaxation_bound

CYCLE = TopologyInstance(3, 2, 8.0, [], [[0, 1e9, 0], [0, 0, 1e9], [1e9, 0, 0]])


def test_relaxation_beats_the_port_bound_where_link_directions_differ():
    optimum = fabricopt.solve(CYCLE, "milp")
    assert optimum.status == "optimal" and optimum.objective == pytest.approx(2 / 3)
    assert float(lower_bound(CYCLE)) == pytest.approx(0.5)
    assert relaxation_bound(CYCLE) == pytest.approx(2 / 3, rel=1e-6)
    assert relaxation_bound(CYCLE) <= optimum.objective
    # one commodity lets every server's supply meet its own demand: nothing beyond t0
    assert relaxation_bound(CYCLE, commodities=1) == pytest.approx(0.5)
    r = fabricopt.solve(CYCLE, "ring")
    assert r.bound_source == "flow-relaxation" and r.bound == pytest.approx(2 / 3)


@pytest.mark.parametrize("sizes", [dict(servers=6, degree=3), dict(servers=6, degree=4),
                                   dict(servers=5, degree=2, mp_peers=3)])
@pytest.mark.parametrize("seed", [0, 1])
def test_relaxation_is_below_the_milp_optimum(sizes, seed):
    inst = generate(seed=seed, **sizes)
    exact = fabricopt.solve(inst, "milp", time_limit=60)
    lp = relaxation_bound(inst)
    assert float(lower_bound(inst)) <= lp * (1 + 1e-9)
    merged = relaxation_bound(inst, commodities=2)     # a further relaxation: never above
    assert float(lower_bound(inst)) * (1 - 1e-9) <= merged <= lp * (1 + 1e-9)
    if exact.status == "optimal":
        assert lp <= exact.objective * (1 + 1e-9)
    for method in ("topoopt", "ring", "random-regular", "ocs-reconfig"):
        r = fabricopt.solve(inst, method, flow_relaxation=True)
        assert r.status == "feasible" and lp <= r.objective * (1 + 1e-9)


def test_heuristics_name_their_bound_and_validate_the_option():
    inst = generate(seed=0, servers=16, degree=4)
    r = fabricopt.solve(inst, "topoopt")
    assert r.bound_source in ("port-load", "volume")
    assert heuristic_bound(inst, relaxation=False).source == r.bound_source
    try:   # a bad option is the caller's error, reported or raised
        bad = fabricopt.solve(inst, "ring", flow_relaxation="yes")
    except ValueError as exc:
        assert "flow_relaxation = 'yes'" in str(exc)
    else:
        assert bad.status == "error" and "flow_relaxation = 'yes'" in bad.info["message"]
