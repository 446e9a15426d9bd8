"""A reader for the AICB / SimAI workload text format, and its per-iteration traffic.

The format (SimAI's ``astra-sim`` ``Workload::initialize_workload``): a header line
``POLICY key: value ...`` (``model_parallel_NPU_group`` = TP degree, ``ep``, ``pp``,
``vpp``, ``ga``, ``all_gpus``, ``pp_comm`` bytes), a line with the number of layer
rows, then one row per layer::

    name  dependency  fwd_compute fwd_comm fwd_bytes  ig_compute ig_comm ig_bytes
          wg_compute wg_comm wg_bytes  wg_update

Collectives are ``ALLREDUCE``, ``ALLGATHER``, ``REDUCESCATTER``, ``ALLTOALL`` and
``BROADCAST`` (in some of AICB's model files), with a suffix naming the group: none —
the tensor-parallel (TP) group in the forward and input-gradient passes, the
data-parallel (DP) group in the weight-gradient pass; ``_EP`` — the expert-parallel
group; ``_DP_EP`` — the expert-data-parallel group (SimAI maps them so in
``initialize_workload``). ``pp_comm`` may be written as a whole number with a zero
fraction (``pp_comm: 1048576.0``, as AICB writes it with sequence parallelism). The rows
are one GPU's iteration (every micro-batch), and every GPU runs the same rows in its
own groups.

Compute times are in the simulator's tick, which the file does not state: it is the
``time_unit_s`` parameter. Its default, 1 ns, is our reading (it puts a MoE layer's
forward at ~8 ms and the gradient step at ~30 ms, plausible on GPUs; 1 us would not be).

Traffic model (our assumptions, stated): ranks are laid out as Megatron does,
``rank = tp_rank + TP*(dp_rank + DP*pp_rank)`` with ``DP = N/(TP*PP)``; expert groups
are EP consecutive DP ranks, expert-data groups the DP ranks with equal position
within their EP group. A collective's byte count is its whole buffer (as NCCL's tests
count it) and runs as a ring — each member sends ``2(g-1)/g`` of it to its successor for
AllReduce, ``(g-1)/g`` for AllGather / ReduceScatter, all of it for Broadcast (NCCL's
pipelined chain: every hop carries the whole buffer) — except AllToAll, where each
member sends ``1/g`` of it to every other member. Pipeline parallelism sends ``pp_comm``
bytes per micro-batch across every boundary between consecutive virtual stages
(stage v on physical stage ``v mod PP``, ``PP*VPP`` virtual stages), forward and, as
gradients, backward.

References
----------
.. [1] aliyun/SimAI, ``astra-sim-alibabacloud/astra-sim/workload/Workload.cc``, and
   aliyun/aicb (the generator); the example files ship as package data,
   Apache-2.0 (``fabricopt/fabrics/data/simai/LICENSE`` and ``SOURCE.md``).
.. [2] D. Narayanan et al., "Efficient Large-Scale Language Model Training on GPU
   Clusters Using Megatron-LM", SC 2021, §2.2 (interleaved pipeline stages).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from fabricopt.errors import InvalidInstance
from fabricopt.problems._validate import as_float, as_int, fail
from fabricopt.fabrics.traffic import PairTraffic

__all__ = ["Collective", "SimAILayer", "SimAIWorkload", "PairTraffic", "read_simai",
           "parse_simai", "member_bytes", "PHASES", "GROUPS"]

PHASES = ("fwd", "ig", "wg")
#: The communication groups, in the order the traffic reports them.
GROUPS = ("TP", "DP", "EP", "DP_EP", "PP")
_OPS = ("ALLREDUCE", "ALLGATHER", "REDUCESCATTER", "ALLTOALL", "BROADCAST")
_SUFFIX_GROUP = {"_EP": "EP", "_DP_EP": "DP_EP"}


@dataclass(frozen=True)
class Collective:
    """One collective of one layer row: ``op`` over ``group`` moving ``bytes`` in ``phase``."""

    row: int
    layer: str
    phase: str
    op: str
    group: str
    bytes: int


def member_bytes(op: str, members: int, nbytes: float) -> tuple[str, float]:
    """How one member of a ``members``-GPU collective ``op`` of ``nbytes`` sends:
    (``ring``, bytes to its successor) or (``alltoall``, bytes to each other member).

    Examples
    --------
    >>> member_bytes("ALLREDUCE", 4, 100.0), member_bytes("ALLTOALL", 4, 100.0)
    (('ring', 150.0), ('alltoall', 25.0))
    >>> member_bytes("ALLGATHER", 1, 100.0), member_bytes("BROADCAST", 4, 100.0)
    (('ring', 0.0), ('ring', 100.0))
    """
    if op == "ALLTOALL":
        return "alltoall", (nbytes / members if members > 1 else 0.0)
    if op == "BROADCAST":
        return "ring", (float(nbytes) if members > 1 else 0.0)
    factor = 2.0 if op == "ALLREDUCE" else 1.0
    return "ring", factor * (members - 1) / members * nbytes


@dataclass(frozen=True)
class SimAILayer:
    """One row of the file (compute in ticks, comm as written)."""

    name: str
    dependency: int
    compute: tuple      # (fwd, ig, wg) ticks
    comm: tuple         # (fwd, ig, wg) type strings
    comm_bytes: tuple   # (fwd, ig, wg) bytes
    update: int


def _parse_comm(text: str, phase: str, where: str) -> tuple[str, str] | None:
    """``ALLGATHER_DP_EP`` in phase ``wg`` -> (``ALLGATHER``, ``DP_EP``); ``NONE`` -> None."""
    if text == "NONE":
        return None
    for op in _OPS:
        if text.startswith(op):
            suffix = text[len(op):]
            if suffix == "":
                return op, ("DP" if phase == "wg" else "TP")
            if suffix in _SUFFIX_GROUP:
                return op, _SUFFIX_GROUP[suffix]
    fail(where, text, f"unknown collective (known: NONE, {', '.join(_OPS)}, "
                      f"each optionally _EP or _DP_EP)")


def _parse_header(line: str) -> tuple[str, dict[str, Any]]:
    tokens = line.split()
    if not tokens:
        raise InvalidInstance("line 1: empty; expected the parallelism header")
    header: dict[str, Any] = {}
    i = 1
    while i < len(tokens):
        key = tokens[i].rstrip(":")
        if not (tokens[i].endswith(":") or key == "pp_comm") or i + 1 >= len(tokens):
            fail("line 1", tokens[i], "expected 'key: value' pairs after the policy")
        where = f"line 1: {key}"
        text = tokens[i + 1]
        value = _whole(text, where) if key == "pp_comm" else _int(text, where)
        count = as_int(where, value, minimum=0)
        if key in ("checkpoints", "checkpoint_initiates"):
            ids = tokens[i + 2:i + 2 + count]
            header[key] = [_int(t, f"line 1: {key}") for t in ids]
            i += 2 + count
        else:
            header[key] = count
            i += 2
    return tokens[0], header


def _whole(text: str, where: str) -> int:
    """A whole number, written ``1024`` or ``1024.0``."""
    try:
        value = float(text)
    except ValueError:
        fail(where, text, "must be a whole number")
    if not value.is_integer():
        fail(where, text, "must be a whole number")
    return int(value)


def _int(text: str, where: str) -> int:
    try:
        return int(text)
    except ValueError:
        fail(where, text, "must be an integer")


@dataclass(frozen=True)
class SimAIWorkload:
    """A parsed AICB / SimAI workload (see the module docstring).

    Attributes
    ----------
    policy : str
        The parallelism policy (e.g. ``HYBRID_TRANSFORMER_FWD_IN_BCKWD``).
    header : dict
        Every ``key: value`` of the header line.
    layers : tuple of SimAILayer
    time_unit_s : float
        Seconds per compute tick.
    name : str
        What tables and plots call it (:func:`read_simai`: the file's stem).
    """

    policy: str
    header: Mapping[str, Any]
    layers: tuple
    time_unit_s: float = 1e-9
    name: str = "simai"

    def _get(self, key: str, default: int = 1) -> int:
        return int(self.header.get(key, default))

    @property
    def tp(self) -> int:
        return self._get("model_parallel_NPU_group")

    @property
    def ep(self) -> int:
        return self._get("ep")

    @property
    def pp(self) -> int:
        return self._get("pp")

    @property
    def vpp(self) -> int:
        return self._get("vpp")

    @property
    def ga(self) -> int:
        return self._get("ga")

    @property
    def all_gpus(self) -> int:
        return self._get("all_gpus", 0)

    @property
    def pp_comm_bytes(self) -> int:
        return self._get("pp_comm", 0)

    def compute_ticks(self) -> dict[str, int]:
        """Per-iteration compute ticks by pass (``fwd``, ``ig``, ``wg``) and ``update``."""
        out = {p: sum(layer.compute[i] for layer in self.layers) for i, p in enumerate(PHASES)}
        out["update"] = sum(layer.update for layer in self.layers)
        return out

    @property
    def compute_s(self) -> float:
        """All compute of one GPU's iteration (three passes and updates), seconds."""
        return sum(self.compute_ticks().values()) * self.time_unit_s

    def collectives(self) -> list[Collective]:
        """Every collective of the file, in row order, passes in ``fwd, ig, wg`` order."""
        out = []
        for r, layer in enumerate(self.layers):
            for i, phase in enumerate(PHASES):
                parsed = _parse_comm(layer.comm[i], phase, f"row {r + 1} {phase}_comm")
                if parsed is not None and layer.comm_bytes[i] > 0:
                    out.append(Collective(r, layer.name, phase, parsed[0], parsed[1],
                                          layer.comm_bytes[i]))
        return out

    def comm_bytes(self) -> dict[tuple[str, str, str], int]:
        """Bytes summed by (phase, op, group), as written in the file."""
        totals: Counter = Counter()
        for c in self.collectives():
            totals[(c.phase, c.op, c.group)] += c.bytes
        return dict(totals)

    def group_sizes(self, gpus: int) -> dict[str, int]:
        """Group sizes for ``gpus`` GPUs: TP, DP = gpus/(TP*PP), EP, DP_EP = DP/EP, PP.

        Raises
        ------
        InvalidInstance
            If TP*PP does not divide ``gpus`` or EP does not divide DP.
        """
        gpus = as_int("gpus", gpus, minimum=1)
        if gpus % (self.tp * self.pp):
            fail("gpus", gpus, f"must be a multiple of TP*PP = {self.tp * self.pp}")
        dp = gpus // (self.tp * self.pp)
        if dp % self.ep:
            fail("gpus", gpus, f"gives DP = {dp}, which EP = {self.ep} must divide")
        return {"TP": self.tp, "DP": dp, "EP": self.ep, "DP_EP": dp // self.ep, "PP": self.pp}

    def groups(self, gpus: int) -> dict[str, np.ndarray]:
        """Member ranks of every group of each kind: an array (groups x size) per kind."""
        size = self.group_sizes(gpus)
        tp, dp, ep, pp = size["TP"], size["DP"], size["EP"], size["PP"]
        ranks = np.arange(gpus).reshape(pp, dp, tp)          # [pp_rank, dp_rank, tp_rank]
        experts = ranks.reshape(pp, dp // ep, ep, tp)
        return {"TP": ranks.reshape(-1, tp),
                "DP": ranks.transpose(0, 2, 1).reshape(-1, dp),
                "EP": experts.transpose(0, 1, 3, 2).reshape(-1, ep),
                "DP_EP": experts.transpose(0, 2, 3, 1).reshape(-1, dp // ep),
                "PP": ranks.transpose(1, 2, 0).reshape(-1, pp)}

    def per_member_bytes(self, gpus: int, collectives=None) -> dict[str, dict[str, float]]:
        """Bytes one member sends per iteration, by group kind: ``ring`` (to its ring
        successor) and ``alltoall`` (to each other member); of ``collectives`` (default
        all of :meth:`collectives`)."""
        size = self.group_sizes(gpus)
        out = {g: {"ring": 0.0, "alltoall": 0.0} for g in GROUPS}
        for c in self.collectives() if collectives is None else collectives:
            shape, nbytes = member_bytes(c.op, size[c.group], c.bytes)
            if nbytes > 0:
                out[c.group][shape] += nbytes
        return out

    def pipeline_crossings(self) -> np.ndarray:
        """How many virtual-stage boundaries go from physical stage s to s+1 (mod PP)."""
        pp, stages = self.pp, self.pp * self.vpp
        return np.bincount(np.arange(stages - 1) % pp, minlength=pp) if pp > 1 else np.zeros(1)

    def pattern(self, gpus: int, kind: str, shape: str, member_bytes: float = 1.0) -> PairTraffic:
        """One collective shape run at once by every group of ``kind`` on ``gpus`` GPUs.

        ``shape`` is ``ring`` (each member sends ``member_bytes`` to its ring successor,
        in member order) or ``alltoall`` (each member sends ``member_bytes`` to every
        other member). Groups of one member send nothing.

        Examples
        --------
        >>> w = parse_simai("MICRO model_parallel_NPU_group: 2 ep: 1 pp: 1\\n0\\n")
        >>> w.pattern(4, "TP", "ring", 5.0).to_dense().tolist()[0]
        [0.0, 5.0, 0.0, 0.0]
        """
        if kind not in GROUPS[:-1]:
            fail("kind", kind, f"must be one of {', '.join(GROUPS[:-1])}")
        if shape not in ("ring", "alltoall"):
            fail("shape", shape, "must be 'ring' or 'alltoall'")
        members = self.groups(gpus)[kind]
        size = members.shape[1]
        shifts = [] if size < 2 or member_bytes <= 0 else (
            [1] if shape == "ring" else list(range(1, size)))
        src = [members.ravel()] * len(shifts)
        dst = [np.roll(members, -shift, axis=1).ravel() for shift in shifts]
        if not shifts:
            return PairTraffic.from_pairs(gpus, [], [], [])
        return PairTraffic.from_pairs(gpus, np.concatenate(src), np.concatenate(dst),
                                        np.full(members.size * len(shifts), float(member_bytes)))

    def pipeline_traffic(self, gpus: int, scale: float = 1.0) -> PairTraffic:
        """The pipeline-parallel bytes of one iteration (times ``scale``): ``GA * pp_comm``
        per virtual-stage boundary, forward as activations and backward as gradients."""
        groups = self.groups(gpus)
        if self.pp < 2 or self.pp_comm_bytes <= 0 or scale <= 0:
            return PairTraffic.from_pairs(gpus, [], [], [])
        stages = groups["PP"]
        per_boundary = self.ga * self.pp_comm_bytes * scale
        crossings = self.pipeline_crossings()
        src, dst, nbytes = [], [], []
        for s in range(self.pp):
            if crossings[s]:
                a, b = stages[:, s], stages[:, (s + 1) % self.pp]
                sent = np.full(len(a), crossings[s] * per_boundary, dtype=float)
                src += [a, b]          # activations forward, gradients backward
                dst += [b, a]
                nbytes += [sent, sent]
        return PairTraffic.from_pairs(gpus, np.concatenate(src), np.concatenate(dst),
                                        np.concatenate(nbytes))

    def traffic(self, gpus: int, *, per_member: Mapping | None = None,
                pipeline_scale: float = 1.0) -> PairTraffic:
        """Per-iteration GPU-to-GPU bytes of the whole job on ``gpus`` GPUs.

        ``per_member`` (default :meth:`per_member_bytes`) gives, per group kind, the
        ``ring`` and ``alltoall`` bytes one member sends; ``pipeline_scale`` scales the
        pipeline bytes (0 leaves them out).

        Examples
        --------
        >>> w = parse_simai("MICRO model_parallel_NPU_group: 2 ep: 1 pp: 1\\n1\\n"
        ...                 "l -1 1 ALLREDUCE 100 1 NONE 0 1 NONE 0 1\\n")
        >>> w.traffic(2).to_dense().tolist()
        [[0.0, 100.0], [100.0, 0.0]]
        """
        per_member = self.per_member_bytes(gpus) if per_member is None else per_member
        parts = [self.pattern(gpus, kind, shape, per_member[kind][shape])
                 for kind in ("TP", "DP", "EP", "DP_EP") if kind in per_member
                 for shape in ("ring", "alltoall") if per_member[kind].get(shape, 0) > 0]
        parts.append(self.pipeline_traffic(gpus, pipeline_scale))
        return PairTraffic.from_pairs(gpus, np.concatenate([p.src for p in parts]),
                                        np.concatenate([p.dst for p in parts]),
                                        np.concatenate([p.bytes for p in parts]))


def parse_simai(text: str, *, time_unit_s: float = 1e-9, name: str = "simai") -> SimAIWorkload:
    """Parse the text of an AICB / SimAI workload file.

    Raises
    ------
    InvalidInstance
        Naming the line and field of the first malformed value, or a row count that
        does not match the second line.
    """
    time_unit_s = as_float("time_unit_s", time_unit_s, positive=True)
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if len(lines) < 2:
        raise InvalidInstance("the file needs a header line and a row-count line")
    policy, header = _parse_header(lines[0])
    rows = as_int("line 2", _int(lines[1].strip(), "line 2"), minimum=0)
    if len(lines) - 2 != rows:
        fail("line 2", rows, f"announces {rows} layer rows, the file has {len(lines) - 2}")
    layers = []
    for r, line in enumerate(lines[2:]):
        where = f"line {r + 3}"
        f = line.split()
        if len(f) != 12:
            fail(where, line.strip(), f"has {len(f)} fields, expected 12")
        ints = {i: as_int(f"{where} field {i + 1}", _int(f[i], f"{where} field {i + 1}"),
                          minimum=-1 if i == 1 else 0)
                for i in (1, 2, 4, 5, 7, 8, 10, 11)}
        for i, phase in zip((3, 6, 9), PHASES):
            _parse_comm(f[i], phase, f"{where} {phase}_comm")
        layers.append(SimAILayer(f[0], ints[1], (ints[2], ints[5], ints[8]), (f[3], f[6], f[9]),
                                 (ints[4], ints[7], ints[10]), ints[11]))
    return SimAIWorkload(policy, header, tuple(layers), time_unit_s, str(name))


def read_simai(path, *, time_unit_s: float = 1e-9) -> SimAIWorkload:
    """Read an AICB / SimAI workload file (see :func:`parse_simai`)."""
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise InvalidInstance(f"{path}: cannot read ({exc.strerror or exc})") from None
    return parse_simai(text, time_unit_s=time_unit_s, name=Path(path).stem)
