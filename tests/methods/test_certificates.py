"""Certificates at the edges of the data: demands many orders of magnitude apart, tiny
and huge time scales. Every ``optimal`` is checked against an independent answer."""

import pytest

import fabricopt
from fabricopt.methods.milp_method import cbc_available
from crux_helpers import brute_force_priorities
from fabricopt.problems import check, instance_from_dict, priorities
from scaling import scale_times
from fabricopt.problems.tolerances import CERTIFY_RTOL

BACKENDS = ["highs", pytest.param("cbc", marks=pytest.mark.skipif(
    not cbc_available(), reason="PuLP's CBC binary is not installed"))]
TOPOLOGY_HEURISTICS = ["topoopt", "ring", "random-regular", "ocs-reconfig"]


def _topology(servers, degree, ring_members, ring_bytes, traffic):
    matrix = [[0.0] * servers for _ in range(servers)]
    for (i, j), b in traffic.items():
        matrix[i][j] = b
    return {"problem": "topology", "servers": servers, "degree": degree, "link_gbps": 8.0,
            "allreduce": [{"members": ring_members, "bytes": ring_bytes}],
            "traffic_bytes": matrix}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("ring_bytes", [3e3, 3.0])
@pytest.mark.parametrize("case", [
    # a 3 kB ring over all servers beside 20 GB and 10 GB of fixed traffic (1 GB/s links)
    (5, 2, [0, 1, 2, 3, 4], {(0, 4): 2e10, (4, 1): 1e10}),
    (4, 2, [0, 1, 2, 3], {(0, 2): 1e10}),
    (4, 1, [1, 2], {(0, 3): 3e10}),
])
def test_topology_milp_routes_a_3kB_ring_beside_10GB(case, ring_bytes, backend):
    # the ring is below any solver tolerance in link units: connectivity must still hold
    servers, degree, members, traffic = case
    inst = instance_from_dict(_topology(servers, degree, members, ring_bytes, traffic))
    exact = fabricopt.solve(inst, "milp", backend=backend)
    assert exact.status == "optimal", exact.info.get("message")
    assert check(inst, exact.solution)
    for method in TOPOLOGY_HEURISTICS:
        other = fabricopt.solve(inst, method)
        assert exact.objective <= other.objective * (1 + CERTIFY_RTOL), method


@pytest.mark.parametrize("method", ["milp", "milp-cbc", "exact", "crux"])
@pytest.mark.parametrize("scale", [1e-21, 1e-12, 1e-9, 1e21])
def test_priorities_certificates_hold_at_intensities_near_1e_9_and_1e21(scale, method):
    # cut weights far below the solvers' absolute gaps and tolerances, or far above
    backend = {"backend": "cbc"} if method == "milp-cbc" else {}
    if backend and not cbc_available():
        pytest.skip("PuLP's CBC binary is not installed")
    for seed in (4, 5):
        inst = instance_from_dict(scale_times(priorities.generate(seed, jobs=6, levels=2)
                                              .to_dict(), scale))
        best = brute_force_priorities(inst)
        r = fabricopt.solve(inst, method.removesuffix("-cbc"), **backend)
        assert r.status in ("optimal", "feasible"), r.info.get("message")
        assert r.bound is None or r.bound >= best * (1 - CERTIFY_RTOL)
        if r.status == "optimal":
            assert r.objective == pytest.approx(best, rel=CERTIFY_RTOL)


@pytest.mark.skipif(not cbc_available(), reason="PuLP's CBC binary is not installed")
@pytest.mark.parametrize("warm_start", [True, False])
def test_placement_milp_with_cbc_solves_a_feasible_instance(warm_start):
    inst = fabricopt.generate("placement", seed=2, ops=5, gpus=2, max_peers=1)
    r = fabricopt.solve(inst, "milp", backend="cbc", warm_start=warm_start)
    assert r.status == "optimal", r.info.get("message")
    assert r.objective == pytest.approx(fabricopt.solve(inst, "milp").objective, rel=CERTIFY_RTOL)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("seed", [8, 10, 21])
def test_priorities_milp_resolves_weights_spanning_1e_9_to_1(seed, backend):
    data = priorities.generate(seed, jobs=6, levels=2).to_dict()
    for k, job in enumerate(data["jobs"]):
        if k % 2:
            job["intensity"] *= 1e-9
    inst = instance_from_dict(data)
    r = fabricopt.solve(inst, "milp", backend=backend)
    assert r.status == "optimal", r.info.get("message")
    assert r.objective == pytest.approx(brute_force_priorities(inst), rel=CERTIFY_RTOL)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("scale", [1e-12, 1.0, 1e12])
def test_circuits_milp_proves_3_bytes_beside_1GB(scale, backend):
    # One switch, 0 -> 1 (3 bytes) and 1 -> 2 (1.1 GB): any permutation with both
    # circuits serves the 1.1 GB in 8 * 1145524095 / 400e9 s. A rate row with the
    # 3 bytes' coefficient (2.6e-9) made HiGHS report 2e-8 less, and that as its bound.
    inst = instance_from_dict(scale_times(
        {"problem": "circuits", "switches": 1, "circuit_gbps": 400.0,
         "traffic_bytes": [[0.0, 3.0, 0.0], [0.0, 0.0, 1145524095.0], [0.0, 0.0, 0.0]]},
        scale))
    r = fabricopt.solve(inst, "milp", backend=backend)
    assert r.status == "optimal", r.info.get("message")
    assert r.objective == pytest.approx(8 * 1145524095.0 * scale / 400e9, rel=CERTIFY_RTOL)
    assert r.objective == pytest.approx(fabricopt.solve(inst, "exact").objective,
                                        rel=CERTIFY_RTOL)
