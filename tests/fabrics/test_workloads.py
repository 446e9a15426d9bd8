"""Workload graphs against the published sizes of the models and Megatron's FLOP formula."""

import pytest

from fabricopt import InvalidInstance
from fabricopt.fabrics import workloads as w
from fabricopt.problems.opgraph import OpGraph


def forward_flops(graph, gpu_flops=w.DEFAULT_GPU_FLOPS):
    return graph.total_compute_s * gpu_flops / w.TRAIN_FLOPS_FACTOR


def test_resnet50_matches_torchvision_parameters_and_multiply_adds():
    g = w.resnet50(batch=1)
    assert w.parameter_count(g) == 25_557_032          # torchvision.models.resnet50
    assert forward_flops(g) / 2 == pytest.approx(4.09e9, rel=0.01)   # 4.1 GMACs (v1.5)


def test_vgg16_matches_torchvision_parameters_and_multiply_adds():
    g = w.vgg16(batch=1)
    assert w.parameter_count(g) == 138_357_544         # torchvision.models.vgg16
    assert forward_flops(g) / 2 == pytest.approx(15.47e9, rel=0.01)


def test_bert_large_size():
    # HF bert-large-uncased: 335,141,888 parameters, of which the pooler is 1024*1024+1024.
    assert w.parameter_count(w.bert_large(batch=1)) == pytest.approx(335_141_888 - 1_049_600,
                                                                    rel=1e-3)


@pytest.mark.parametrize("config, nominal", [
    ("125M", 125e6), ("350M", 350e6), ("760M", 760e6), ("1.3B", 1.3e9), ("2.7B", 2.7e9),
    ("6.7B", 6.7e9), ("13B", 13e9), ("175B", 175e9)])
def test_gpt3_table_sizes(config, nominal):
    assert w.parameter_count(w.gpt3(config, seq_len=8)) == pytest.approx(nominal, rel=0.025)


@pytest.mark.parametrize("layers, d, heads, seq, vocab, batch",
                         [(2, 64, 4, 16, 100, 3), (40, 6144, 48, 2048, 51200, 1)])
def test_transformer_flops_match_megatron_formula(layers, d, heads, seq, vocab, batch):
    # Narayanan et al. 2021 eq. (3) without recomputation:
    # 72 B s l h^2 (1 + s/(6h) + V/(12 l h)) for forward + backward.
    g = w.transformer(batch, layers=layers, d_model=d, heads=heads, seq_len=seq, vocab=vocab)
    expected = 72 * batch * seq * layers * d ** 2 * (1 + seq / (6 * d) + vocab / (12 * layers * d))
    assert g.total_compute_s * w.DEFAULT_GPU_FLOPS == pytest.approx(expected, rel=2e-3)


def test_compute_scales_with_batch_and_throughput():
    a = w.resnet50(batch=4)
    b = w.resnet50(batch=8)
    c = w.resnet50(batch=4, gpu_flops=w.DEFAULT_GPU_FLOPS / 2)
    assert b.total_compute_s == pytest.approx(2 * a.total_compute_s)
    assert c.total_compute_s == pytest.approx(2 * a.total_compute_s)
    assert a.total_params_bytes == b.total_params_bytes


def test_edges_carry_activation_and_gradient():
    g = w.resnet50(batch=3)
    edge = next(e for e in g.edges if e.src == "conv1")
    # conv1 + max-pool output: 56 x 56 x 64 values per image, forward and backward, 2 bytes.
    assert edge.bytes == 2 * 3 * 56 * 56 * 64 * w.BYTES_PER_VALUE


def test_residual_edges_make_a_dag_with_skip_connections():
    g = w.transformer(1, layers=1, d_model=8, heads=2, seq_len=4, vocab=10)
    pairs = {(e.src, e.dst) for e in g.edges}
    assert {("embed", "L0.proj"), ("L0.proj", "L0.fc2")} <= pairs
    assert g.topological_order()[0] == "embed" and g.topological_order()[-1] == "head"


def test_dlrm_parameters():
    g = w.dlrm(batch=2, tables=3, rows_per_table=100, dim=16, bottom=(32, 16), top=(8, 1),
               dense_features=4)
    mlp = (4 * 32 + 32) + (32 * 16 + 16)
    pairs = 4 * 3 // 2
    top = ((pairs + 16) * 8 + 8) + (8 + 1)
    assert w.parameter_count(g) == 3 * 100 * 16 + mlp + top


@pytest.mark.parametrize("name", sorted(w.WORKLOADS))
def test_every_registered_workload_builds(name):
    workload = w.get_workload(name)
    g = workload.op_graph(workload.global_batch)
    assert isinstance(g, OpGraph) and g.total_compute_s > 0 and g.total_params_bytes > 0


@pytest.mark.parametrize("call, message", [
    (lambda: w.get_workload("alexnet"), r"workload = 'alexnet': unknown workload"),
    (lambda: w.get_workload("resnet50").op_graph(3), r"l = 3: must divide the global batch 8192"),
    (lambda: w.transformer(1, layers=2, d_model=10, heads=0, seq_len=4, vocab=5),
     r"heads = 0: must be >= 1"),
    (lambda: w.resnet50(batch=0), r"batch = 0: must be >= 1"),
    (lambda: w.resnet50(batch=1, gpu_flops=0), r"gpu_flops = 0.0: must be > 0"),
    (lambda: w.dlrm(dim=64), r"bottom = \(512, 256, 128\): must end with the embedding dimension 64"),
    (lambda: w.gpt3("1B"), r"config = '1B': unknown GPT-3 configuration"),
])
def test_bad_sizes_name_the_field(call, message):
    with pytest.raises(InvalidInstance, match=message):
        call()
