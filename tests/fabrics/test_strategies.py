"""Per-operator strategies: the traffic each choice implies (against a per-sample
count), the data-parallel case against the k x l model, memory and bad input."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fabricopt.errors import InfeasibleInstance, InvalidArgument
from fabricopt.fabrics.iteration import iteration_time
from fabricopt.fabrics.models import DirectConnect, ElectFlat, FatTree
from fabricopt.fabrics.strategies import (OpConfig, Strategy, data_parallel, fit_memory,
                                          greedy_start, memory_bytes_per_server,
                                          price_strategy, replica_counts, strategy_compute_s,
                                          strategy_traffic)
from fabricopt.fabrics.workloads import Workload, dlrm, resnet50
from fabricopt.problems.opgraph import OpGraph


def chain(edge_bytes=64.0):
    ops = [{"id": x, "compute_s": c, "params_bytes": p}
           for x, c, p in (("emb", 0.0, 1e3), ("fc1", 8.0, 40.0), ("fc2", 4.0, 20.0))]
    edges = [{"src": "emb", "dst": "fc1", "bytes": edge_bytes},
             {"src": "fc1", "dst": "fc2", "bytes": edge_bytes}]
    return OpGraph(ops, edges)


def per_sample_matrix(graph, strategy, samples=64):
    """Brute force: move each sample's share of every edge between its holders."""
    n = strategy.servers
    out = np.zeros((n, n))
    for e in graph.edges:
        mu = strategy.configs[e.src].members(n)
        mv = strategy.configs[e.dst].members(n)
        for x in range(samples):
            a, b = mu[x * len(mu) // samples], mv[x * len(mv) // samples]
            if a != b:
                out[a, b] += e.bytes / samples / 2
                out[b, a] += e.bytes / samples / 2
    return out


configs = st.builds(lambda g, o: (g, o), st.sampled_from([1, 2, 4, 8]), st.integers(0, 7))


@settings(max_examples=60, deadline=None)
@given(st.lists(configs, min_size=3, max_size=3))
def test_activation_traffic_equals_the_per_sample_count(choices):
    graph = chain()
    strategy = Strategy(8, {op.id: OpConfig(g, o % (8 // g))
                            for op, (g, o) in zip(graph.ops, choices)})
    traffic = strategy_traffic(graph, strategy)
    assert np.allclose(traffic.matrix_bytes, per_sample_matrix(graph, strategy))
    # One AllReduce per distinct replicated server set, carrying its ops' parameters.
    expected = {}
    for op in graph.ops:
        m = strategy.configs[op.id].members(8)
        if len(m) > 1:
            expected[m] = expected.get(m, 0.0) + op.params_bytes
    assert {g.members: g.bytes for g in traffic.allreduce} == expected


@settings(max_examples=40, deadline=None)
@given(st.lists(configs, min_size=3, max_size=3))
def test_compute_and_memory_are_conserved(choices):
    graph = chain()
    strategy = Strategy(8, {op.id: OpConfig(g, o % (8 // g))
                            for op, (g, o) in zip(graph.ops, choices)})
    load = np.zeros(8)
    for op in graph.ops:
        c = strategy.configs[op.id]
        load[list(c.members(8))] += op.compute_s / c.replicas
    assert load.sum() == pytest.approx(graph.total_compute_s)
    # The chain emb -> fc1 -> fc2 runs its layers one after another.
    chain_s = sum(op.compute_s / strategy.configs[op.id].replicas for op in graph.ops)
    assert strategy_compute_s(graph, strategy) == pytest.approx(max(load.max(), chain_s))
    memory = memory_bytes_per_server(graph, strategy, training_bytes_per_param=2.0)
    assert memory.sum() == pytest.approx(sum(op.params_bytes * strategy.configs[op.id].replicas
                                             for op in graph.ops))


def test_data_parallel_equals_the_k_by_l_model_at_k_1():
    job = Workload("r50", resnet50, 256, "ResNet-50")
    for fabric in (ElectFlat(100.0), FatTree(8, 100.0)):
        ours = price_strategy(resnet50(256), data_parallel(resnet50(256), 8), fabric)
        theirs = iteration_time(job, fabric, gpus=8, k=1, l=8)
        assert ours.compute_s == pytest.approx(theirs.compute_s)
        assert ours.allreduce_s == pytest.approx(theirs.allreduce_s)
        assert ours.total_s == pytest.approx(theirs.total_s)


def test_dlrm_at_the_artifacts_size_runs_as_a_hybrid():
    graph = dlrm(8192, tables=64, rows_per_table=10_000_000, dim=128)
    memory = 4 * 80e9
    with pytest.raises(InfeasibleInstance, match="training state"):
        price_strategy(graph, data_parallel(graph, 16), ElectFlat(400.0), memory_bytes=memory)
    start = fit_memory(graph, greedy_start(graph, 16), memory)
    kinds = {op.id: start.configs[op.id].kind(16) for op in graph.ops}
    assert {kinds[f"emb{t}"] for t in range(64)} == {"model"}
    assert kinds["top.fc0"] == kinds["bottom.fc0"] == "data"
    t = price_strategy(graph, start, DirectConnect(4, 100.0), memory_bytes=memory)
    assert t.mp_s > 0 and t.allreduce_s > 0           # all-to-all and MLP AllReduce
    assert start.summary() == "hybrid: 9 data, 64 model"


def test_replica_counts_and_members():
    assert replica_counts(128) == [1, 2, 4, 8, 16, 32, 64, 128]
    assert OpConfig(2, 3).members(8) == (3, 7)
    assert OpConfig(8).kind(8) == "data" and OpConfig(2, 0).kind(8) == "hybrid"


@pytest.mark.parametrize("configs, message", [
    ({"a": OpConfig(3)}, r"configs\['a'\].replicas = 3: must divide the 8 servers"),
    ({"a": OpConfig(4, 2)}, r"configs\['a'\].offset = 2: must be in 0..1"),
    ({"a": (8, 0)}, r"configs\['a'\] = .*must be an OpConfig"),
])
def test_bad_strategies_name_the_field(configs, message):
    with pytest.raises(InvalidArgument, match=message):
        Strategy(8, configs)


def test_a_strategy_missing_an_op_is_refused():
    with pytest.raises(InvalidArgument, match="strategy = 'fc2': has no configuration"):
        strategy_traffic(chain(), Strategy(2, {"emb": OpConfig(1), "fc1": OpConfig(2)}))


def test_an_op_larger_than_a_server_is_infeasible():
    with pytest.raises(InfeasibleInstance, match="op emb: .* exceeds one server"):
        fit_memory(chain(), data_parallel(chain(), 4), memory_bytes=100.0)
