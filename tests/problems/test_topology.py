"""The topology format: round trips, validation messages, checker rules, evaluation, bound."""

import json
import math
import re

import numpy as np
import pytest
from hypothesis import given, strategies as st

import fabricopt
from fabricopt import InvalidInstance, InvalidSolution
from fabricopt.problems import check, evaluate, instance_from_dict, solution_from_dict
from fabricopt.problems.topology import (TopologyInstance, TopologySolution, demand_matrix,
                                         generate, link_loads, mean_hops)
from fabricopt.bounds.topology import lower_bound

from kind_json import assert_file_round_trip, edited

# 4 servers of degree 2 at 8 Gbps (1e9 bytes/s per link and direction); one AllReduce
# over all four (each member sends 2*3/4 * 4e9 = 6e9 bytes) and 1e9 bytes 0 -> 2.
BASE = {"problem": "topology", "servers": 4, "degree": 2, "link_gbps": 8.0,
        "allreduce": [{"members": [0, 1, 2, 3], "bytes": 4e9}],
        "traffic_bytes": [[0, 0, 1e9, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]}


def route(s, t, *paths):
    """A route over ``paths`` (lists of nodes) split evenly."""
    return {"src": s, "dst": t,
            "paths": [{"nodes": list(p), "fraction": 1 / len(paths)} for p in paths]}


# The ring 0-1-2-3-0 used both ways, half the bytes each; 0 -> 2 split over both sides.
GOOD = {"links": [[0, 1, 1], [1, 2, 1], [2, 3, 1], [0, 3, 1]],
        "rings": [{"group": 0, "order": [0, 1, 2, 3], "share": 0.5},
                  {"group": 0, "order": [0, 3, 2, 1], "share": 0.5}],
        "routes": [route(0, 1, [0, 1]), route(1, 2, [1, 2]), route(2, 3, [2, 3]),
                   route(3, 0, [3, 0]), route(1, 0, [1, 0]), route(2, 1, [2, 1]),
                   route(3, 2, [3, 2]), route(0, 3, [0, 3]),
                   route(0, 2, [0, 1, 2], [0, 3, 2])]}


with_ = edited


INST = instance_from_dict(BASE)


def sol(**changes):
    return solution_from_dict("topology", with_(GOOD, **changes))


def test_round_trips(tmp_path):
    assert assert_file_round_trip(BASE, tmp_path) == INST
    solution = sol()
    assert json.loads(fabricopt.dump(solution)) == GOOD
    assert TopologySolution.from_dict(solution.to_dict()) == solution


@pytest.mark.parametrize("changes, message", [
    (dict(servers=1), r"servers = 1: must be >= 2"),
    (dict(degree=0), r"degree = 0: must be >= 1"),
    (dict(degree=2.5), r"degree = 2.5: must be an integer"),
    (dict(link_gbps=0), r"link_gbps = 0.0: must be > 0"),
    (dict(allreduce={"members": [0, 1]}), r"allreduce = \{.*\}: must be a list"),
    (dict(allreduce=[[0, 1]]), r"allreduce\[0\] = \[0, 1\]: must be an object \{members, bytes\}"),
    (dict(allreduce=[{"members": [0, 4], "bytes": 1}]),
     r"allreduce\[0\]\.members\[1\] = 4: unknown server \(servers are 0\.\.3\)"),
    (dict(allreduce=[{"members": [0, -1], "bytes": 1}]), r"allreduce\[0\]\.members\[1\] = -1: must be >= 0"),
    (dict(allreduce=[{"members": [0, 2, 0], "bytes": 1}]),
     r"allreduce\[0\]\.members = \[0, 2, 0\]: repeats server 0"),
    (dict(allreduce=[{"members": [3], "bytes": 1}]),
     r"allreduce\[0\]\.members = \[3\]: needs at least 2 servers"),
    (dict(allreduce=[{"members": [0, 1], "bytes": -1}]), r"allreduce\[0\]\.bytes = -1.0: must be >= 0"),
    (dict(allreduce=[{"members": [0, 1], "bytes": float("nan")}]), r"allreduce\[0\]\.bytes = nan: must be finite"),
    (dict(allreduce=[{"members": [0, 1]}]), r"allreduce\[0\]\.bytes: missing required field"),
    (dict(allreduce=[{"members": [0, 1], "bytes": 1, "size": 2}]), r"allreduce\[0\]\.size: unknown field"),
    (dict(traffic_bytes=[[0, 1], [0, 0]]), r"traffic_bytes: has 2 entries, expected 4"),
    (dict(traffic_bytes=[[0, -5, 0, 0]] + [[0] * 4] * 3), r"traffic_bytes\[0\]\[1\] = -5.0: must be >= 0"),
    (dict(traffic_bytes=[[0] * 4, [0, 3, 0, 0]] + [[0] * 4] * 2), r"traffic_bytes\[1\]\[1\] = 3.0: the diagonal"),
    (dict(problem="topologies"), r"problem = 'topologies': unknown problem kind"),
    (dict(extra=1), r"extra: unknown field"),
])
def test_invalid_instances_name_field_and_value(changes, message):
    with pytest.raises(InvalidInstance, match=message):
        instance_from_dict(with_(BASE, **changes))


def test_missing_field():
    data = {k: v for k, v in BASE.items() if k != "allreduce"}
    with pytest.raises(InvalidInstance, match="allreduce: missing required field"):
        instance_from_dict(data)


@pytest.mark.parametrize("changes, message", [
    (dict(links=[[0, 1]]), r"links\[0\]: has 2 entries, expected 3"),
    (dict(links=[[0, 1, 0]]), r"links\[0\]\[2\] = 0: must be >= 1"),
    (dict(links=[[0, 1.5, 1]]), r"links\[0\]\[1\] = 1.5: must be an integer"),
    (dict(rings=[{"group": 0, "order": [0], "share": 1}]), r"rings\[0\]\.order = \[0\]: needs at least 2"),
    (dict(rings=[{"group": 0, "order": [0, 1], "share": -0.5}]), r"rings\[0\]\.share = -0.5: must be >= 0"),
    (dict(rings=[{"group": 0, "order": [0, 1]}]), r"rings\[0\]\.share: missing required field"),
    (dict(rings=[7]), r"rings\[0\] = 7: must be an object \{group, order, share\}"),
    (dict(routes=[{"src": 0, "dst": 1, "paths": [{"nodes": [0], "fraction": 1}]}]),
     r"routes\[0\]\.paths\[0\]\.nodes = \[0\]: needs at least 2 servers"),
    (dict(routes=[{"src": 0, "dst": 1, "paths": [{"nodes": [0, 1], "fraction": "all"}]}]),
     r"routes\[0\]\.paths\[0\]\.fraction = 'all': must be a number"),
    (dict(routes=[{"src": 0, "dst": 1, "paths": [], "via": 2}]), r"routes\[0\]\.via: unknown field"),
    (dict(extra=[]), r"extra: unknown field"),
])
def test_malformed_solutions(changes, message):
    with pytest.raises(InvalidSolution, match=message):
        sol(**changes)


@pytest.mark.parametrize("changes, message", [
    (dict(links=[[0, 9, 1]]), r"links\[0\]\[1\] = 9: unknown server \(servers are 0\.\.3\)"),
    (dict(rings=[{"group": 1, "order": [0, 1, 2, 3], "share": 1}]),
     r"rings\[0\]\.group = 1: unknown AllReduce group \(the instance has 1\)"),
    (dict(rings=[{"group": 0, "order": [0, 1, 2, 5], "share": 1}]), r"rings\[0\]\.order\[3\] = 5: unknown server"),
    (dict(routes=[route(0, 4, [0, 4])]), r"routes\[0\]\.dst = 4: unknown server"),
    (dict(routes=[route(0, 2, [0, 6, 2])]), r"routes\[0\]\.paths\[0\]\.nodes\[1\] = 6: unknown server"),
])
def test_unknown_servers_and_groups_are_invalid(changes, message):
    with pytest.raises(InvalidSolution, match=message):
        check(INST, sol(**changes))
    with pytest.raises(InvalidSolution, match=message):
        evaluate(INST, sol(**changes))


def test_good_solution_is_feasible():
    assert check(INST, sol()) == fabricopt.CheckResult(True, None)


def replace_route(k, new):
    routes = list(GOOD["routes"])
    routes[k] = new
    return routes


@pytest.mark.parametrize("changes, reason", [
    (dict(links=[[1, 0, 1], [1, 2, 1], [2, 3, 1], [0, 3, 1]]), r"links\[0\] = \[1, 0, 1\]: must have i < j"),
    (dict(links=[[0, 0, 1]] + GOOD["links"][1:]), r"links\[0\] = \[0, 0, 1\]: must have i < j"),
    (dict(links=GOOD["links"] + [[0, 1, 1]]), r"links\[4\] = \[0, 1, 1\]: the pair 0-1 is listed twice"),
    (dict(links=GOOD["links"] + [[1, 3, 1]]), r"server 1 uses 3 interfaces: more than degree = 2"),
    (dict(rings=[{"group": 0, "order": [0, 1, 2], "share": 1}]),
     r"rings\[0\]\.order = \[0, 1, 2\]: not an order of the members \[0, 1, 2, 3\] of allreduce\[0\]"),
    (dict(rings=[{"group": 0, "order": [0, 1, 2, 2], "share": 1}]), r"rings\[0\]\.order = \[0, 1, 2, 2\]: not an order"),
    (dict(rings=GOOD["rings"][:1]), r"allreduce\[0\]: ring shares sum to 0.5, not 1"),
    (dict(rings=[]), r"allreduce\[0\] has no ring"),
    (dict(routes=GOOD["routes"] + [route(1, 1, [1, 1])]), r"routes\[9\] \(1->1\): a route from a server to itself"),
    (dict(routes=GOOD["routes"] + [route(0, 1, [0, 1])]), r"routes\[9\] \(0->1\): the pair 0->1 is routed twice"),
    (dict(routes=replace_route(0, {"src": 0, "dst": 1, "paths": []})), r"routes\[0\] \(0->1\): has no path"),
    (dict(routes=replace_route(8, route(0, 2, [1, 2]))),
     r"routes\[8\] \(0->2\)\.paths\[0\] = \[1, 2\]: must run from 0 to 2"),
    (dict(routes=replace_route(8, route(0, 2, [0, 1, 0, 3, 2]))),
     r"routes\[8\] \(0->2\)\.paths\[0\] = \[0, 1, 0, 3, 2\]: visits a server twice"),
    (dict(routes=replace_route(8, route(0, 2, [0, 2]))),
     r"routes\[8\] \(0->2\)\.paths\[0\] = \[0, 2\]: servers 0 and 2 are not linked"),
    (dict(routes=replace_route(8, {"src": 0, "dst": 2, "paths": [{"nodes": [0, 1, 2], "fraction": 0.7}]})),
     r"routes\[8\] \(0->2\): path fractions sum to 0.7, not 1"),
    (dict(routes=GOOD["routes"][:8]), r"demand 0->2 = 1000000000.0 bytes has no route"),
    (dict(routes=GOOD["routes"][1:]), r"demand 0->1 = 3000000000.0 bytes has no route"),
])
def test_checker_rules(changes, reason):
    verdict = check(INST, sol(**changes))
    assert not verdict.feasible
    assert re.search(reason, verdict.reason), verdict.reason


def test_fractions_and_shares_within_tolerance_pass():
    rings = [{"group": 0, "order": [0, 1, 2, 3], "share": 0.5 + 4e-10},
             {"group": 0, "order": [0, 3, 2, 1], "share": 0.5}]
    assert check(INST, sol(rings=rings))
    rings[0]["share"] = 0.5 + 1e-8
    assert not check(INST, sol(rings=rings))


def test_routes_without_demand_are_allowed_and_free():
    extra = GOOD["routes"] + [route(1, 3, [1, 2, 3])]
    assert check(INST, sol(routes=extra))
    assert evaluate(INST, sol(routes=extra)) == evaluate(INST, sol())


def test_evaluate_is_busiest_link_time():
    # Ring traffic: 3e9 bytes each way on every link; 0 -> 2 adds 0.5e9 to 0->1, 1->2,
    # 0->3 and 3->2. At 1e9 bytes/s per link: 3.5 s.
    solution = sol()
    loads = link_loads(INST, solution)
    assert loads[0, 1] == pytest.approx(3.5e9) and loads[1, 0] == pytest.approx(3e9)
    assert evaluate(INST, solution) == pytest.approx(3.5)
    # Doubling every link halves it (and needs degree 4).
    doubled = TopologyInstance(4, 4, 8.0, BASE["allreduce"], BASE["traffic_bytes"])
    links = [[i, j, 2] for i, j, _ in GOOD["links"]]
    assert evaluate(doubled, sol(links=links)) == pytest.approx(1.75)


def test_mean_hops_weighted_by_bytes():
    # 8 ring pairs of 3e9 bytes at 1 hop, 1e9 bytes at 2 hops.
    assert mean_hops(INST, sol()) == pytest.approx((24e9 + 2e9) / 25e9)
    assert demand_matrix(INST, sol()).sum() == pytest.approx(25e9)


def test_no_demand_scores_zero():
    inst = TopologyInstance(3, 1, 1.0, [{"members": [0, 1], "bytes": 0}], [[0] * 3] * 3)
    solution = TopologySolution([], [{"group": 0, "order": [1, 0], "share": 1}], [])
    assert check(inst, solution)
    assert evaluate(inst, solution) == 0.0 and mean_hops(inst, solution) == 0.0
    assert lower_bound(inst) == 0.0


def test_unlinked_route_scores_inf():
    assert math.isinf(evaluate(INST, sol(routes=replace_route(8, route(0, 2, [0, 2])))))


def test_lower_bound_port_load_and_volume():
    # Port load: server 0 sends 6e9 + 1e9 over 2 links of 1e9 bytes/s.
    assert lower_bound(INST) == pytest.approx(3.5)
    # Volume: 4 servers send 1e9 each to all 3 others with degree 2: 2 at 1 hop and 1
    # at 2 hops (Moore), so 4 * 4e9 link-bytes over 4 * 2 links: 2 s > port load 1.5 s.
    all_to_all = (np.ones((4, 4)) - np.eye(4)) * 1e9
    inst = TopologyInstance(4, 2, 8.0, [], all_to_all.tolist())
    assert lower_bound(inst) == pytest.approx(2.0)


@given(seed=st.integers(0, 10**6), servers=st.integers(2, 12), degree=st.integers(1, 6),
       groups=st.integers(0, 3))
def test_generator_is_valid_and_seeded(seed, servers, degree, groups):
    a = generate(seed, servers=servers, degree=degree, groups=groups)
    assert a == generate(seed, servers=servers, degree=degree, groups=groups)
    assert len(a.allreduce) == groups and a.servers == servers
    assert instance_from_dict(json.loads(fabricopt.dump(a))) == a
    assert ((a.traffic > 0).sum(axis=1) == min(2, servers - 1)).all()


def test_generator_rejects_bad_sizes():
    with pytest.raises(InvalidInstance, match="mp_peers = 4: must be <= 3"):
        generate(0, servers=4, mp_peers=4)
    with pytest.raises(ValueError, match="colour: not a size option of the topology generator"):
        fabricopt.generate("topology", colour=3)


@given(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9),
                          st.lists(st.tuples(st.lists(st.integers(0, 9), min_size=2, max_size=5),
                                             st.just(0.0) | st.floats(1e-300, 1.0)),
                                   max_size=3)),
                max_size=6))
def test_routes_of_arrays_are_the_routes_built_one_by_one(routes):
    from fabricopt.problems.topology import Path, Route, RouteArrays, routes_of_arrays
    expected = [Route(s, t, tuple(Path(tuple(nodes), f) for nodes, f in paths))
                for s, t, paths in routes]
    assert routes_of_arrays(RouteArrays.from_routes(routes)) == expected


@pytest.mark.parametrize("route, message", [
    ((0, 1, [((0, -1), 1.0)]), r"nodes\[1\] = -1"),
    ((0, 1, [((0,), 1.0)]), r"nodes = \[0\]: needs at least 2 servers"),
    ((0, 1, [((0, 1), float("nan"))]), r"fraction = nan: must be finite"),
    ((0, 1, [((0, 1), 1e-310)]), r"fraction = 1e-310: too small"),
])
def test_routes_of_arrays_name_an_invalid_value_as_the_objects_do(route, message):
    from fabricopt.problems.topology import RouteArrays, routes_of_arrays
    with pytest.raises(InvalidSolution, match=message):
        routes_of_arrays(RouteArrays.from_routes([route]))


def test_servers_have_a_documented_maximum_even_with_sparse_traffic():
    # sparse traffic does not bound the server count by the file's size, and every
    # method holds per-server arrays: 10**9 servers would need gigabytes before any work
    from fabricopt.problems import instance_from_dict
    from fabricopt.problems.limits import MAX_SERVERS

    assert "``servers``                 2**20" in limits_doc()
    data = {"problem": "topology", "servers": MAX_SERVERS + 1, "degree": 2,
            "link_gbps": 100.0, "allreduce": [],
            "traffic_bytes": {"src": [0], "dst": [1], "bytes": [1e9]}}
    for servers in (MAX_SERVERS + 1, 10 ** 9):
        with pytest.raises(InvalidInstance, match=rf"^servers = {servers}: must be <= {MAX_SERVERS}$"):
            instance_from_dict({**data, "servers": servers})
    assert instance_from_dict({**data, "servers": MAX_SERVERS}).servers == MAX_SERVERS


def limits_doc() -> str:
    from fabricopt.problems import limits

    return limits.__doc__
