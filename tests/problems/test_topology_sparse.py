"""The topology format's sparse traffic form: validation, round trips, and results
identical to the dense form's."""

import json

import numpy as np
import pytest
import scipy.sparse
from hypothesis import HealthCheck, given, settings, strategies as st

import fabricopt
from fabricopt import InvalidInstance
from fabricopt.algorithms.topology.baselines import ring
from fabricopt.algorithms.topology.topoopt import topoopt
from fabricopt.problems import check, evaluate, instance_from_dict
from fabricopt.problems.sparse_traffic import SparseTraffic
from fabricopt.problems.topology import (TopologyInstance, TopologySolution, generate,
                                         link_loads, mean_hops)

BASE = {"problem": "topology", "servers": 4, "degree": 2, "link_gbps": 8.0,
        "allreduce": [{"members": [0, 1, 2, 3], "bytes": 4e9}],
        "traffic_bytes": {"src": [0, 3], "dst": [2, 1], "bytes": [1e9, 5e8]}}


def with_traffic(**changes):
    return dict(BASE, traffic_bytes=dict(BASE["traffic_bytes"], **changes))


def test_the_sparse_form_is_the_dense_matrix_it_lists():
    inst = instance_from_dict(BASE)
    dense = np.zeros((4, 4))
    dense[0, 2], dense[3, 1] = 1e9, 5e8
    assert inst.is_sparse and inst.traffic.tolist() == dense.tolist()
    assert inst.traffic_csr.toarray().tolist() == dense.tolist()
    src, dst, nbytes = inst.traffic_pairs
    assert (src.tolist(), dst.tolist(), nbytes.tolist()) == ([0, 3], [2, 1], [1e9, 5e8])


def test_the_sparse_form_round_trips_as_written(tmp_path):
    inst = instance_from_dict(BASE)
    assert inst.to_dict() == BASE
    path = tmp_path / "inst.json"
    fabricopt.dump(inst, path)
    assert json.loads(path.read_text())["traffic_bytes"] == BASE["traffic_bytes"]
    assert fabricopt.load(path) == inst


def test_a_scipy_sparse_matrix_is_the_sparse_form():
    matrix = scipy.sparse.coo_array(([1e9, 5e8], ([0, 3], [2, 1])), shape=(4, 4))
    inst = TopologyInstance(4, 2, 8.0, BASE["allreduce"], matrix)
    assert inst == instance_from_dict(BASE)


@pytest.mark.parametrize("changes, message", [
    ({"src": [0, 0], "dst": [2, 2]},
     r"^traffic_bytes\.dst\[1\] = 2: the pair 0->2 is listed twice \(also at 0\)$"),
    ({"dst": [2, 3]},
     r"^traffic_bytes\.dst\[1\] = 3: equals src\[1\] \(no traffic from a server to itself\)$"),
    ({"bytes": [1e9, -5.0]}, r"^traffic_bytes\.bytes\[1\] = -5\.0: must be >= 0$"),
    ({"bytes": [float("nan"), 1.0]}, r"^traffic_bytes\.bytes\[0\] = nan: must be finite$"),
    ({"src": [0, 4]},
     r"^traffic_bytes\.src\[1\] = 4: unknown server \(servers are 0\.\.3\)$"),
    ({"dst": [9, 1]},
     r"^traffic_bytes\.dst\[0\] = 9: unknown server \(servers are 0\.\.3\)$"),
    ({"src": [-1, 3]}, r"^traffic_bytes\.src\[0\] = -1: must be >= 0$"),
    ({"src": [0, "3"]}, r"^traffic_bytes\.src\[1\] = '3': must be an integer$"),
    ({"dst": [2]}, r"^traffic_bytes\.dst: has 1 entries, but traffic_bytes\.src has 2$"),
    ({"bytes": 5}, r"^traffic_bytes\.bytes = 5: must be a list$"),
    ({"weights": [1]}, r"^traffic_bytes\.weights: unknown field \(allowed: bytes, dst, src\)$"),
])
def test_invalid_sparse_traffic_names_field_and_value(changes, message):
    with pytest.raises(InvalidInstance, match=message):
        instance_from_dict(with_traffic(**changes))


def test_a_missing_sparse_list_is_named():
    data = dict(BASE, traffic_bytes={"src": [0], "bytes": [1.0]})
    with pytest.raises(InvalidInstance, match=r"^traffic_bytes\.dst: missing required field$"):
        instance_from_dict(data)


def test_a_scipy_matrix_of_the_wrong_shape_is_rejected():
    with pytest.raises(InvalidInstance, match=r"^traffic_bytes: a sparse matrix of shape "
                                              r"\(3, 3\), expected \(4, 4\)$"):
        TopologyInstance(4, 2, 8.0, [], scipy.sparse.eye_array(3, k=1))


def test_a_pair_whose_bytes_overflow_is_named_by_its_index():
    with pytest.raises(InvalidInstance, match=r"^traffic_bytes\.bytes\[1\] = 1e\+300: makes"):
        instance_from_dict(with_traffic(bytes=[1.0, 1e300]))


@st.composite
def instance_pairs(draw):
    """The same instance twice: dense and sparse (its pairs shuffled, with zeros listed)."""
    n = draw(st.integers(2, 9))
    degree = draw(st.integers(1, 6))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    traffic = np.where(rng.random((n, n)) < draw(st.floats(0.0, 1.0)),
                       np.round(rng.lognormal(18, 1, (n, n))), 0.0)
    np.fill_diagonal(traffic, 0.0)
    groups = [{"members": sorted(rng.choice(n, size=int(rng.integers(2, n + 1)),
                                            replace=False).tolist()),
               "bytes": float(np.round(rng.lognormal(20, 1)))}
              for _ in range(draw(st.integers(0, 3)))]
    listed = np.argwhere((traffic > 0) | (rng.random((n, n)) < 0.2))
    listed = listed[listed[:, 0] != listed[:, 1]]
    listed = listed[rng.permutation(len(listed))]
    pairs = {"src": listed[:, 0].tolist(), "dst": listed[:, 1].tolist(),
             "bytes": traffic[listed[:, 0], listed[:, 1]].tolist()}
    return (TopologyInstance(n, degree, 100.0, groups, traffic.tolist()),
            TopologyInstance(n, degree, 100.0, groups, pairs))


def _outcome(instance, method):
    try:
        solution = method(instance)
    except fabricopt.InfeasibleInstance as exc:
        return ("infeasible", str(exc))
    return (solution.to_dict(), evaluate(instance, solution), check(instance, solution),
            mean_hops(instance, solution), link_loads(instance, solution).tolist())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instance_pairs())
def test_dense_and_sparse_forms_give_identical_results(pair):
    dense, sparse = pair
    assert dense.traffic.tolist() == sparse.traffic.tolist()
    for method in (topoopt, ring):
        assert _outcome(dense, method) == _outcome(sparse, method)


@settings(max_examples=25, deadline=None)
@given(instance_pairs(), st.integers(0, 2**32 - 1))
def test_dense_and_sparse_forms_judge_any_solution_alike(pair, seed):
    """A random, mostly infeasible solution: the same verdict, reason and objective."""
    dense, sparse = pair
    n = dense.servers
    rng = np.random.default_rng(seed)
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n) if rng.random() < 0.5]
    links = [[i, j, int(rng.integers(1, 3))] for i, j in pairs]
    demanded = np.argwhere(dense.traffic > 0)
    routes = [{"src": int(s), "dst": int(t), "paths": [{"nodes": [int(s), int(t)],
                                                         "fraction": 1.0}]}
              for s, t in demanded if rng.random() < 0.9]
    rings = [{"group": k, "order": list(g.members), "share": 1.0}
             for k, g in enumerate(dense.allreduce)]
    solution = TopologySolution(links, rings, routes)
    assert check(dense, solution) == check(sparse, solution)
    assert evaluate(dense, solution) == evaluate(sparse, solution)


def test_generate_check_and_evaluate_never_build_the_dense_matrix():
    """The scale path stays O(pairs): the dense ``traffic`` is never computed."""
    inst = generate(seed=0, servers=512, degree=8, groups=1, mp_peers=4)
    assert isinstance(inst.traffic_bytes, SparseTraffic)
    solution = topoopt(inst)
    assert check(inst, solution) and evaluate(inst, solution) > 0
    mean_hops(inst, solution)
    assert "traffic" not in vars(inst)
