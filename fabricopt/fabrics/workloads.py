"""DNN training workloads as operator graphs, with compute times from FLOPs.

Every model here is an :class:`~fabricopt.problems.opgraph.OpGraph` of one training
step at a given (local) batch: one op per layer or sub-layer, with

- ``compute_s`` = ``TRAIN_FLOPS_FACTOR`` x forward FLOPs / ``gpu_flops``: the backward
  pass costs about twice the forward (Kaplan et al. 2020, §2.1; Narayanan et al. 2021, §5.1),
  so a layer's forward and backward are lumped into one op (a stated simplification:
  the graph is the forward DAG and each op carries its whole training compute);
- ``params_bytes`` = parameters x ``BYTES_PER_VALUE``: the gradient bytes a data-parallel
  AllReduce synchronizes (bf16/fp16 gradients);
- edge ``bytes`` = 2 x the source's output activation in ``BYTES_PER_VALUE``: the
  activation forward plus the equally sized gradient that crosses the same cut backward.

A matrix product of an (m x k) by a (k x n) matrix counts ``2*m*k*n`` FLOPs. Layers
that are memory-bound (embedding lookups, pooling) get the FLOPs of their additions,
so their compute is negligible, as it is beside the matrix products.

The default GPU is A100-like: 312 TFLOP/s dense bf16 tensor-core peak (NVIDIA A100
datasheet) at 50 % utilization — Megatron-LM sustains 52 % of peak on A100s for GPT-3
175B (Narayanan et al. 2021, §5.1) — so ``DEFAULT_GPU_FLOPS = 156e12``, 80 GB of memory.

References
----------
.. [1] M. Khani et al., "SiP-ML", SIGCOMM 2021, §4.1 (ResNet-50, Transformer, Megatron).
.. [2] W. Wang et al., "TopoOpt", NSDI 2023, §5 and App. D (VGG, ResNet-50, BERT, DLRM).
.. [3] K. He et al., "Deep Residual Learning for Image Recognition", CVPR 2016, Table 1.
.. [4] K. Simonyan, A. Zisserman, "Very Deep Convolutional Networks", ICLR 2015, Table 1 (D).
.. [5] J. Devlin et al., "BERT", NAACL 2019, §3 (BERT-large: L=24, H=1024, A=16, 340M).
.. [6] T. Brown et al., "Language Models are Few-Shot Learners", 2020, Table 2.1.
.. [7] D. Narayanan et al., "Efficient Large-Scale Language Model Training on GPU
   Clusters Using Megatron-LM", SC 2021, Table 1 (the 18.4B configuration).
.. [8] M. Naumov et al., "Deep Learning Recommendation Model for Personalization and
   Recommendation Systems", 2019, §2 and §4 (DLRM).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from fabricopt.problems._validate import as_float, as_int, fail
from fabricopt.problems.opgraph import OpGraph

__all__ = ["A100_PEAK_FLOPS", "A100_UTILIZATION", "DEFAULT_GPU_FLOPS", "A100_MEMORY_BYTES",
           "BYTES_PER_VALUE", "TRAIN_FLOPS_FACTOR", "TRAINING_BYTES_PER_PARAM",
           "GPT3_CONFIGS", "resnet50", "vgg16", "transformer", "bert_large",
           "sipml_transformer", "gpt3", "megatron_18b", "dlrm", "candle_uno", "ncf",
           "CANDLE_UNO_FEATURES", "parameter_count",
           "Workload", "WORKLOADS", "get_workload"]

#: Dense bf16/fp16 tensor-core peak of an A100 (NVIDIA A100 datasheet), FLOP/s.
A100_PEAK_FLOPS = 312e12
#: Fraction of peak a well-tuned training job sustains (Megatron-LM: 52 % on A100s).
A100_UTILIZATION = 0.5
#: The default effective GPU throughput, FLOP/s.
DEFAULT_GPU_FLOPS = A100_PEAK_FLOPS * A100_UTILIZATION
#: A100 80 GB.
A100_MEMORY_BYTES = 80e9
#: Activations and gradients in bf16/fp16.
BYTES_PER_VALUE = 2
#: Forward + backward FLOPs as a multiple of the forward FLOPs.
TRAIN_FLOPS_FACTOR = 3
#: Memory per parameter for mixed-precision Adam: fp16 weights and gradients, fp32
#: master weights, momentum and variance (Rajbhandari et al., "ZeRO", SC 2020, §3.1).
TRAINING_BYTES_PER_PARAM = 16


class _Builder:
    """Collects ops and edges; converts FLOPs to seconds and values to bytes."""

    def __init__(self, batch: int, gpu_flops: float):
        self.batch = as_int("batch", batch, minimum=1)
        self.gpu_flops = as_float("gpu_flops", gpu_flops, positive=True)
        self.ops: list[dict] = []
        self.edges: list[dict] = []
        self.out_values: dict[str, float] = {}

    def op(self, op_id: str, fwd_flops: float, params: float, out_values: float,
           inputs: tuple = ()) -> str:
        """Add op ``op_id``; ``out_values`` is its output size in values for the whole batch."""
        self.ops.append({"id": op_id,
                         "compute_s": TRAIN_FLOPS_FACTOR * fwd_flops / self.gpu_flops,
                         "params_bytes": float(params * BYTES_PER_VALUE)})
        self.out_values[op_id] = float(out_values)
        for src in inputs:
            self.edge(src, op_id)
        return op_id

    def edge(self, src: str, dst: str) -> None:
        self.edges.append({"src": src, "dst": dst,
                           "bytes": 2.0 * self.out_values[src] * BYTES_PER_VALUE})

    def graph(self) -> OpGraph:
        return OpGraph(self.ops, self.edges)


def parameter_count(graph: OpGraph) -> float:
    """Parameters of a workload graph (its ``params_bytes`` over ``BYTES_PER_VALUE``)."""
    return graph.total_params_bytes / BYTES_PER_VALUE


def _conv(b: _Builder, op_id: str, inputs, hw_in: int, c_in: int, c_out: int, kernel: int,
          stride: int, *, bn: bool = True, bias: bool = False, pool: int = 1):
    """A 2-D convolution ('same' padding) with fused batch norm / ReLU / pooling.

    Returns the op id and the output spatial size (after an optional ``pool``-stride pool).
    """
    hw_out = math.ceil(hw_in / stride)
    macs = hw_out * hw_out * c_in * c_out * kernel * kernel
    params = c_in * c_out * kernel * kernel + (2 * c_out if bn else 0) + (c_out if bias else 0)
    hw_pooled = hw_out // pool
    b.op(op_id, 2.0 * macs * b.batch, params, b.batch * hw_pooled * hw_pooled * c_out, inputs)
    return op_id, hw_pooled


def _linear(b: _Builder, op_id: str, inputs, rows: int, d_in: int, d_out: int,
            bias: bool = True, extra_params: int = 0) -> str:
    """A dense layer applied to ``rows`` vectors (rows already include the batch)."""
    return b.op(op_id, 2.0 * rows * d_in * d_out, d_in * d_out + (d_out if bias else 0)
                + extra_params, rows * d_out, inputs)


def resnet50(batch: int = 32, *, gpu_flops: float = DEFAULT_GPU_FLOPS, image_size: int = 224,
             classes: int = 1000) -> OpGraph:
    """ResNet-50 (v1.5: stride on the 3x3 convolution) as a graph of 54 ops.

    One op per convolution (batch norm and ReLU fused; the stem's max-pool fused into
    ``conv1``), the residual addition fused into each block's last 1x1 convolution,
    and global average pooling fused into ``fc``. 25.56 M parameters and 4.1 G
    multiply-adds per 224x224 image, as He et al. (2016), Table 1.

    Parameters
    ----------
    batch : int
        Images per step on this replica.
    gpu_flops : float
        Effective GPU throughput in FLOP/s.
    image_size, classes : int
        Input resolution and classifier width.

    Returns
    -------
    OpGraph

    Examples
    --------
    >>> g = resnet50(batch=1)
    >>> len(g.ops), round(parameter_count(g) / 1e6, 2)
    (54, 25.56)
    """
    b = _Builder(batch, gpu_flops)
    prev, hw = _conv(b, "conv1", (), image_size, 3, 64, 7, 2, pool=2)
    c_in = 64
    for stage, (width, blocks, stride) in enumerate(((64, 3, 1), (128, 4, 2),
                                                     (256, 6, 2), (512, 3, 2)), start=1):
        for block in range(blocks):
            s = stride if block == 0 else 1
            name = f"layer{stage}.{block}"
            a, _ = _conv(b, f"{name}.conv1", (prev,), hw, c_in, width, 1, 1)
            c, hw_out = _conv(b, f"{name}.conv2", (a,), hw, width, width, 3, s)
            shortcut = prev
            if block == 0:
                shortcut, _ = _conv(b, f"{name}.downsample", (prev,), hw, c_in, 4 * width, 1, s)
            prev, _ = _conv(b, f"{name}.conv3", (c, shortcut), hw_out, width, 4 * width, 1, 1)
            hw, c_in = hw_out, 4 * width
    _linear(b, "fc", (prev,), batch, c_in, classes)
    return b.graph()


_VGG16 = (64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M")


def vgg16(batch: int = 32, *, gpu_flops: float = DEFAULT_GPU_FLOPS, image_size: int = 224,
          classes: int = 1000) -> OpGraph:
    """VGG-16 (configuration D): 13 convolutions and 3 dense layers in a chain.

    138.36 M parameters and 15.5 G multiply-adds per 224x224 image (Simonyan and
    Zisserman 2015, Table 2). Max-pooling is fused into the convolution before it.

    Examples
    --------
    >>> g = vgg16(batch=1)
    >>> len(g.ops), round(parameter_count(g) / 1e6, 2)
    (16, 138.36)
    """
    b = _Builder(batch, gpu_flops)
    prev, hw, c_in, k = None, image_size, 3, 0
    layers = list(_VGG16)
    for i, width in enumerate(layers):
        if width == "M":
            continue
        k += 1
        pool = 2 if i + 1 < len(layers) and layers[i + 1] == "M" else 1
        prev, hw = _conv(b, f"conv{k}", () if prev is None else (prev,), hw, c_in, width, 3, 1,
                         bn=False, bias=True, pool=pool)
        c_in = width
    d = c_in * hw * hw
    for j, width in enumerate((4096, 4096, classes), start=1):
        prev = _linear(b, f"fc{j}", (prev,), batch, d, width)
        d = width
    return b.graph()


def transformer(batch: int, *, layers: int, d_model: int, heads: int, seq_len: int,
                vocab: int, ffn: int | None = None, positions: int | None = None,
                token_types: int = 0, gpu_flops: float = DEFAULT_GPU_FLOPS,
                name: str = "") -> OpGraph:
    """A Transformer stack: embedding, ``layers`` blocks of 5 ops, and the output head.

    Each block is ``qkv`` (the fused Q/K/V projection), ``attn`` (scores and context:
    ``4*seq_len^2*d_model`` FLOPs per sequence), ``proj`` (output projection, with the
    attention residual), ``fc1`` and ``fc2`` (the MLP, with the MLP residual). The
    output head is tied to the token embedding (GPT-3 and BERT tie them), so it adds
    FLOPs but no parameters. Parameters per block: ``4*d^2 + 2*d*ffn`` weights plus
    biases and two layer norms.

    Parameters
    ----------
    batch : int
        Sequences per step on this replica.
    layers, d_model, heads, seq_len, vocab : int
        The model's shape. The head count changes neither FLOPs nor parameters here
        (GPT-3's Table 2.1 itself lists shapes whose heads x d_head != d_model).
    ffn : int, optional
        MLP width (default ``4*d_model``).
    positions : int, optional
        Learned position embeddings (default ``seq_len``).
    token_types : int
        Segment embeddings (BERT: 2).
    gpu_flops : float
        Effective GPU throughput in FLOP/s.
    name : str
        Prefix of the op ids.

    Returns
    -------
    OpGraph

    Raises
    ------
    InvalidInstance
        If a size is not a positive integer.

    Examples
    --------
    >>> g = transformer(1, layers=2, d_model=64, heads=4, seq_len=16, vocab=100)
    >>> [op.id for op in g.ops][:4]
    ['embed', 'L0.qkv', 'L0.attn', 'L0.proj']
    """
    layers = as_int("layers", layers, minimum=1)
    d = as_int("d_model", d_model, minimum=1)
    as_int("heads", heads, minimum=1)
    seq = as_int("seq_len", seq_len, minimum=1)
    vocab = as_int("vocab", vocab, minimum=1)
    f = 4 * d if ffn is None else as_int("ffn", ffn, minimum=1)
    positions = seq if positions is None else as_int("positions", positions, minimum=1)
    b = _Builder(batch, gpu_flops)
    tokens = b.batch * seq
    p = f"{name}." if name else ""
    prev = b.op(f"{p}embed", tokens * d, (vocab + positions + token_types) * d + 2 * d,
                tokens * d)
    for i in range(layers):
        q = f"{p}L{i}"
        qkv = _linear(b, f"{q}.qkv", (prev,), tokens, d, 3 * d, extra_params=2 * d)
        attn = b.op(f"{q}.attn", 4.0 * b.batch * seq * seq * d, 0, tokens * d, (qkv,))
        proj = _linear(b, f"{q}.proj", (attn, prev), tokens, d, d)
        fc1 = _linear(b, f"{q}.fc1", (proj,), tokens, d, f, extra_params=2 * d)
        prev = _linear(b, f"{q}.fc2", (fc1, proj), tokens, f, d)
    b.op(f"{p}head", 2.0 * tokens * d * vocab, 2 * d, tokens * vocab, (prev,))
    return b.graph()


def bert_large(batch: int = 8, *, seq_len: int = 512,
               gpu_flops: float = DEFAULT_GPU_FLOPS) -> OpGraph:
    """BERT-large: 24 layers, d_model 1024, 16 heads, 30,522-token WordPiece vocabulary,
    512 positions, 2 segment types — 334 M parameters without the pooler
    (Devlin et al. 2019: "340M").

    Examples
    --------
    >>> round(parameter_count(bert_large(batch=1, seq_len=128)) / 1e6)
    334
    """
    return transformer(batch, layers=24, d_model=1024, heads=16, seq_len=seq_len,
                       vocab=30522, positions=512, token_types=2, gpu_flops=gpu_flops)


#: GPT-3 model shapes (Brown et al. 2020, Table 2.1): layers, d_model, heads; context 2048.
GPT3_CONFIGS = {
    "125M": (12, 768, 12), "350M": (24, 1024, 16), "760M": (24, 1536, 16),
    "1.3B": (24, 2048, 24), "2.7B": (32, 2560, 32), "6.7B": (32, 4096, 32),
    "13B": (40, 5140, 40), "175B": (96, 12288, 96),
}
_GPT_VOCAB = 50257


def gpt3(config: str = "175B", batch: int = 1, *, seq_len: int = 2048,
         gpu_flops: float = DEFAULT_GPU_FLOPS) -> OpGraph:
    """A GPT-3 model of the paper's Table 2.1 (vocabulary 50,257, context 2048).

    Examples
    --------
    >>> round(parameter_count(gpt3("175B", seq_len=8)) / 1e9, 1)
    174.6
    >>> gpt3("1B")
    Traceback (most recent call last):
    ...
    fabricopt.errors.InvalidInstance: config = '1B': unknown GPT-3 configuration (known: 125M, 350M, 760M, 1.3B, 2.7B, 6.7B, 13B, 175B)
    """
    if config not in GPT3_CONFIGS:
        fail("config", config, f"unknown GPT-3 configuration (known: {', '.join(GPT3_CONFIGS)})")
    layers, d, heads = GPT3_CONFIGS[config]
    return transformer(batch, layers=layers, d_model=d, heads=heads, seq_len=seq_len,
                       vocab=_GPT_VOCAB, positions=2048, gpu_flops=gpu_flops)


def sipml_transformer(batch: int = 8, *, seq_len: int = 512,
                      gpu_flops: float = DEFAULT_GPU_FLOPS) -> OpGraph:
    """SiP-ML's 350 M-parameter Transformer.

    SiP-ML (§4.1) gives only the size; we take the GPT-3 "Medium" shape of that size
    (24 layers, d_model 1024, 16 heads; 356 M parameters) and, our assumption, sequences
    of 512 tokens.

    Examples
    --------
    >>> round(parameter_count(sipml_transformer(batch=1)) / 1e6)
    356
    """
    layers, d, heads = GPT3_CONFIGS["350M"]
    return transformer(batch, layers=layers, d_model=d, heads=heads, seq_len=seq_len,
                       vocab=_GPT_VOCAB, positions=2048, gpu_flops=gpu_flops)


def megatron_18b(batch: int = 1, *, seq_len: int = 2048,
                 gpu_flops: float = DEFAULT_GPU_FLOPS) -> OpGraph:
    """The 18.4 B GPT of Megatron-LM (Narayanan et al. 2021, Table 1: 40 layers,
    d_model 6144, 48 heads, vocabulary padded to 51,200) — SiP-ML's "Megatron"
    (§4.1 quotes 18 B parameters).

    Examples
    --------
    >>> round(parameter_count(megatron_18b(seq_len=8)) / 1e9, 1)
    18.4
    """
    return transformer(batch, layers=40, d_model=6144, heads=48, seq_len=seq_len, vocab=51200,
                       positions=2048, gpu_flops=gpu_flops)


def dlrm(batch: int = 2048, *, tables: int = 8, rows_per_table: int = 1_000_000, dim: int = 128,
         lookups_per_table: int = 1, dense_features: int = 13, bottom=(512, 256, 128),
         top=(1024, 1024, 512, 256, 1), gpu_flops: float = DEFAULT_GPU_FLOPS) -> OpGraph:
    """DLRM: a bottom MLP on dense features, one embedding lookup op per table, the
    pairwise dot-product interaction, and a top MLP (Naumov et al. 2019, Fig. 1).

    The default MLP shapes and the embedding dimension are those of the MLPerf DLRM
    benchmark (Criteo Terabyte: bottom 13-512-256-128, top 1024-1024-512-256-1); the
    default 8 tables of 1 M rows each are ours (a 1 B-parameter model; the Criteo
    tables would hold 24 B). An embedding op's FLOPs are its pooling additions.

    Examples
    --------
    >>> g = dlrm(batch=4, tables=2, rows_per_table=10, dim=4, bottom=(8, 4), top=(8, 1))
    >>> sorted(op.id for op in g.ops)
    ['bottom.fc0', 'bottom.fc1', 'emb0', 'emb1', 'interact', 'top.fc0', 'top.fc1']
    """
    tables = as_int("tables", tables, minimum=1)
    rows = as_int("rows_per_table", rows_per_table, minimum=1)
    dim = as_int("dim", dim, minimum=1)
    pool = as_int("lookups_per_table", lookups_per_table, minimum=1)
    b = _Builder(batch, gpu_flops)
    n = b.batch
    bottom = [as_int(f"bottom[{i}]", w, minimum=1) for i, w in enumerate(bottom)]
    top = [as_int(f"top[{i}]", w, minimum=1) for i, w in enumerate(top)]
    if not bottom or bottom[-1] != dim:
        fail("bottom", tuple(bottom), f"must end with the embedding dimension {dim}")
    prev, width = None, as_int("dense_features", dense_features, minimum=1)
    for i, w in enumerate(bottom):
        prev = _linear(b, f"bottom.fc{i}", () if prev is None else (prev,), n, width, w)
        width = w
    embs = [b.op(f"emb{t}", float(n * pool * dim), rows * dim, n * dim) for t in range(tables)]
    features = tables + 1
    pairs = features * (features - 1) // 2
    inter = b.op("interact", 2.0 * n * pairs * dim, 0, n * (pairs + dim), (prev, *embs))
    prev, width = inter, pairs + dim
    for i, w in enumerate(top):
        prev = _linear(b, f"top.fc{i}", (prev,), n, width, w)
        width = w
    return b.graph()


#: CANDLE Uno's input features and their widths (FlexFlow's ``candle_uno`` example:
#: ``feature_shapes`` and ``input_features``); the doses go straight to the concatenation.
CANDLE_UNO_FEATURES = (("dose1", 1), ("dose2", 1), ("cell.rnaseq", 942),
                       ("drug1.descriptors", 5270), ("drug1.fingerprints", 2048),
                       ("drug2.descriptors", 5270), ("drug2.fingerprints", 2048))


def candle_uno(batch: int = 64, *, feature_layers=(4192,) * 8, dense_layers=(4192,) * 4,
               gpu_flops: float = DEFAULT_GPU_FLOPS) -> OpGraph:
    """CANDLE Uno (drug-response MLP): one dense encoder per non-dose input feature,
    the encodings and doses concatenated, then dense layers to one output.

    Every encoder has its own weights, as in FlexFlow's ``candle_uno`` example (the
    Keras original shares them between the two drugs). The default widths are that
    example's; TopoOpt's artifact runs 16 encoder layers and 8 dense layers of 16,384.

    Examples
    --------
    >>> g = candle_uno(batch=2, feature_layers=(8, 8), dense_layers=(4,))
    >>> len(g.ops), [op.id for op in g.ops][-2:]
    (12, ['dense0', 'out'])
    """
    b = _Builder(batch, gpu_flops)
    feature_layers = [as_int(f"feature_layers[{i}]", w, minimum=1)
                      for i, w in enumerate(feature_layers)]
    dense_layers = [as_int(f"dense_layers[{i}]", w, minimum=1) for i, w in enumerate(dense_layers)]
    if not feature_layers:
        fail("feature_layers", (), "needs at least one layer")
    outputs, width_in = [], 0
    for name, width in CANDLE_UNO_FEATURES:
        if name.startswith("dose"):
            width_in += width
            continue
        prev, d = None, width
        for i, w in enumerate(feature_layers):
            prev = _linear(b, f"{name}.fc{i}", () if prev is None else (prev,), b.batch, d, w)
            d = w
        outputs.append(prev)
        width_in += d
    prev, d = None, width_in
    for i, w in enumerate(dense_layers):
        prev = _linear(b, f"dense{i}", tuple(outputs) if prev is None else (prev,), b.batch, d, w)
        d = w
    _linear(b, "out", (prev,) if prev else tuple(outputs), b.batch, d, 1)
    return b.graph()


def ncf(batch: int = 64, *, tables: int = 64, users_per_table: int = 1_000_000,
        items_per_table: int = 1_000_000, dim: int = 128, lookups_per_table: int = 1,
        mlp=(4096,) * 8, gpu_flops: float = DEFAULT_GPU_FLOPS) -> OpGraph:
    """Neural collaborative filtering (He et al. 2017, the MLP tower) with many tables:
    per table a user and an item embedding lookup, every vector concatenated into
    an MLP that ends in one output.

    TopoOpt's artifact runs 64 tables of 1 M users and 1 M items, dimension 128,
    bags of 100 lookups and an MLP of eight 4,096-wide layers.

    Examples
    --------
    >>> g = ncf(batch=2, tables=2, users_per_table=5, items_per_table=5, dim=4, mlp=(8,))
    >>> sorted(op.id for op in g.ops)
    ['item0', 'item1', 'mlp.fc0', 'out', 'user0', 'user1']
    """
    tables = as_int("tables", tables, minimum=1)
    dim = as_int("dim", dim, minimum=1)
    pool = as_int("lookups_per_table", lookups_per_table, minimum=1)
    users = as_int("users_per_table", users_per_table, minimum=1)
    items = as_int("items_per_table", items_per_table, minimum=1)
    mlp = [as_int(f"mlp[{i}]", w, minimum=1) for i, w in enumerate(mlp)]
    b = _Builder(batch, gpu_flops)
    n = b.batch
    embs = [b.op(f"{kind}{t}", float(n * pool * dim), rows * dim, n * dim)
            for t in range(tables) for kind, rows in (("user", users), ("item", items))]
    prev, d = None, 2 * tables * dim
    for i, w in enumerate(mlp):
        prev = _linear(b, f"mlp.fc{i}", tuple(embs) if prev is None else (prev,), n, d, w)
        d = w
    _linear(b, "out", (prev,) if prev else tuple(embs), n, d, 1)
    return b.graph()


@dataclass(frozen=True)
class Workload:
    """A named training job: an op-graph builder and the global batch it trains with.

    Attributes
    ----------
    name : str
        Registry key (``fabricopt compare --workload NAME``).
    build : callable
        ``build(batch, gpu_flops=...) -> OpGraph`` at a per-replica batch.
    global_batch : int
        Samples per iteration over all data-parallel replicas.
    description : str
        One line: model and source of the batch size.
    """

    name: str
    build: Callable[..., OpGraph]
    global_batch: int
    description: str

    def op_graph(self, data_parallel: int = 1, *, gpu_flops: float = DEFAULT_GPU_FLOPS) -> OpGraph:
        """The graph one model-parallel group runs: the global batch split ``data_parallel`` ways.

        Raises
        ------
        InvalidInstance
            If ``data_parallel`` does not divide the global batch.

        Examples
        --------
        >>> WORKLOADS["resnet50"].op_graph(data_parallel=8192).ops[0].id
        'conv1'
        """
        l = as_int("l", data_parallel, minimum=1)
        if self.global_batch % l:
            fail("l", l, f"must divide the global batch {self.global_batch} of {self.name}")
        return self.build(self.global_batch // l, gpu_flops=gpu_flops)


def _gpt3_175b(batch, *, gpu_flops=DEFAULT_GPU_FLOPS):
    return gpt3("175B", batch, gpu_flops=gpu_flops)


#: The workloads ``fabricopt compare`` knows. Global batches: ResNet-50 8192 and the
#: Transformer / Megatron 1024 follow SiP-ML's runs (SiP-ML §4.2; fabricopt docs,
#: *Departures*, sipml-1.6); GPT-3 175B 1536 sequences (3.2 M tokens, Brown et al.
#: Table 2.1); BERT-large 1024 sequences, VGG-16 and DLRM are ours.
WORKLOADS = {w.name: w for w in (
    Workload("resnet50", resnet50, 8192, "ResNet-50, 25.6M parameters, batch 8192 (SiP-ML)"),
    Workload("vgg16", vgg16, 1024, "VGG-16, 138M parameters, batch 1024"),
    Workload("bert-large", bert_large, 1024, "BERT-large, 334M parameters, 512 tokens, batch 1024"),
    Workload("transformer", sipml_transformer, 1024,
             "SiP-ML Transformer, 356M parameters, 512 tokens, batch 1024"),
    Workload("megatron", megatron_18b, 1024, "Megatron GPT 18.4B, 2048 tokens, batch 1024 (SiP-ML)"),
    Workload("gpt3-175b", _gpt3_175b, 1536, "GPT-3 175B, 2048 tokens, batch 1536 (Brown et al.)"),
    Workload("dlrm", dlrm, 8192, "DLRM, 8 tables x 1M rows x 128, MLPerf MLPs, batch 8192"),
)}


def get_workload(name: str) -> Workload:
    """The registered workload ``name``.

    Examples
    --------
    >>> get_workload("resnet50").global_batch
    8192
    """
    if name not in WORKLOADS:
        fail("workload", name, f"unknown workload (known: {', '.join(WORKLOADS)})")
    return WORKLOADS[name]
