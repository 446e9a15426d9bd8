"""The alternating optimization: the fixed-topology pricer against the topology
kind's own score, the strategy search's guarantees, and the rounds it records."""

import numpy as np
import pytest

from fabricopt.errors import InfeasibleInstance, InvalidArgument
from fabricopt.fabrics.cosearch import FixedTopology, alternate, one_shot, search_strategy
from fabricopt.fabrics.models import DirectConnect, ElectFlat
from fabricopt.fabrics.strategies import (data_parallel, greedy_start,
                                          price_strategy)
from fabricopt.fabrics.workloads import dlrm
from fabricopt.problems.opgraph import OpGraph
from fabricopt.problems.topology import TopologyInstance, TopologySolution, evaluate


def circulant(n, jumps):
    counts = np.zeros((n, n), dtype=int)
    for i in range(n):
        for p in jumps:
            counts[i, (i + p) % n] += 1
            counts[(i + p) % n, i] += 1
    return counts


def test_fixed_topology_scores_like_the_topology_kind():
    n, gbps = 8, 25.0
    counts = circulant(n, (1, 3))
    rng = np.random.default_rng(0)
    demand = rng.uniform(0, 1e8, (n, n)) * (rng.random((n, n)) < 0.5)
    np.fill_diagonal(demand, 0)
    topo = FixedTopology(counts, gbps)
    # The same single shortest paths, written as a topology solution.
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import shortest_path
    _, pred = shortest_path(csr_matrix(counts > 0), method="D", unweighted=True,
                            return_predecessors=True)
    routes = []
    for s, t in np.argwhere(demand > 0):
        path, v = [int(t)], int(t)
        while v != s:
            v = int(pred[s, v])
            path.append(v)
        routes.append({"src": int(s), "dst": int(t),
                       "paths": [{"nodes": path[::-1], "fraction": 1}]})
    links = [[int(i), int(j), int(counts[i, j])] for i, j in np.argwhere(np.triu(counts) > 0)]
    instance = TopologyInstance(n, 4, gbps, [], demand.tolist())
    truth = evaluate(instance, TopologySolution(links, [], routes))
    assert topo.busiest_link_s(demand) == pytest.approx(truth)
    assert int(topo.hops.max()) == 2


def test_a_disconnected_topology_is_refused():
    counts = np.zeros((4, 4), dtype=int)
    counts[0, 1] = counts[1, 0] = 1
    with pytest.raises(InfeasibleInstance, match="does not connect"):
        FixedTopology(counts, 10.0)


def tables(n_tables=4):
    ops = [{"id": f"t{i}", "compute_s": 1e-4, "params_bytes": 2e9} for i in range(n_tables)]
    ops.append({"id": "mlp", "compute_s": 4e-3, "params_bytes": 1e7})
    edges = [{"src": f"t{i}", "dst": "mlp", "bytes": 1e6} for i in range(n_tables)]
    return OpGraph(ops, edges)


def test_search_is_seeded_and_never_worse_than_its_start():
    graph = tables()
    price = lambda s: price_strategy(graph, s, ElectFlat(100.0)).total_s   # noqa: E731
    start = data_parallel(graph, 8)
    first = search_strategy(graph, start, price, budget=60, seed=3)
    again = search_strategy(graph, start, price, budget=60, seed=3)
    assert first.strategy == again.strategy and first.time_s == again.time_s
    assert first.time_s <= price(start)
    assert first.time_s == pytest.approx(price(first.strategy))
    # The tables' AllReduce dwarfs their activations: the search leaves data parallelism.
    assert first.strategy.summary() != "data"


def test_search_respects_memory():
    graph = tables()
    price = lambda s: price_strategy(graph, s, ElectFlat(100.0)).total_s   # noqa: E731
    start = greedy_start(graph, 8)
    memory = 16e9 / 2 * 2 + 1e9       # one table's training state and a little more
    found = search_strategy(graph, start, price, budget=80, seed=0, memory_bytes=memory)
    price_strategy(graph, found.strategy, ElectFlat(100.0), memory_bytes=memory)


def test_alternation_records_rounds_and_keeps_the_best():
    graph = dlrm(1024, tables=8, rows_per_table=100_000, dim=64, bottom=(128, 64),
                 top=(256, 1))
    fabric = DirectConnect(4, 25.0)
    start = greedy_start(graph, 8)
    run = alternate(graph, start, fabric, rounds=3, budget=30, seed=1)
    assert run.rounds[0].iteration_s == pytest.approx(
        price_strategy(graph, start, fabric).total_s)
    assert run.best.total_s == min(run.round_times_s())
    assert 2 <= len(run.rounds) <= 4
    # The best is re-priced by the fabric itself, not by the search's model.
    assert run.best.total_s == pytest.approx(
        price_strategy(graph, run.best.strategy, fabric).total_s)
    shot = one_shot(graph, start, fabric, budget=30, seed=1)
    assert shot.total_s == pytest.approx(price_strategy(graph, shot.strategy, fabric).total_s)


def test_alternation_needs_a_direct_connect_fabric():
    graph = tables()
    with pytest.raises(InvalidArgument, match="fabric = elect-flat: the alternation"):
        alternate(graph, data_parallel(graph, 8), ElectFlat(100.0))
    with pytest.raises(InvalidArgument, match="budget = -1"):
        search_strategy(graph, data_parallel(graph, 8), lambda s: 1.0, budget=-1)
