"""Operator graphs of a DNN training step: the input shared by placement and the fabrics.

An :class:`OpGraph` is a DAG of operators, each with its compute time and the bytes of
parameters it holds, and edges carrying activation (or gradient) bytes. Workloads in
:mod:`fabricopt.fabrics` produce op graphs; :func:`fabricopt.algorithms.placement.sipml.balance`
splits one into a ``placement`` instance.

JSON::

    {"ops": [{"id": "conv1", "compute_s": 1.2e-4, "params_bytes": 37632}, ...],
     "edges": [{"src": "conv1", "dst": "bn1", "bytes": 3.2e6}, ...]}
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, Mapping

import networkx as nx

from fabricopt.errors import InvalidInstance
from fabricopt.problems._validate import (as_float, as_id, as_list, fail, reject_unknown_keys,
                                          require, shown)

__all__ = ["Op", "Edge", "OpGraph"]


@dataclass(frozen=True)
class Op:
    """One operator: ``compute_s`` seconds of compute, ``params_bytes`` of parameters."""

    id: str
    compute_s: float
    params_bytes: float = 0.0


@dataclass(frozen=True)
class Edge:
    """``bytes`` flow from op ``src`` to op ``dst`` (``dst`` waits for them)."""

    src: str
    dst: str
    bytes: float


@dataclass(frozen=True)
class OpGraph:
    """A validated DAG of operators.

    Parameters
    ----------
    ops : sequence of Op or dict
        Unique ids; ``compute_s >= 0``; ``params_bytes >= 0``.
    edges : sequence of Edge or dict
        Between known ops, ``bytes >= 0``, no cycle, at most one edge per ordered pair.

    Examples
    --------
    >>> g = OpGraph([{"id": "a", "compute_s": 1e-3}, {"id": "b", "compute_s": 2e-3}],
    ...             [{"src": "a", "dst": "b", "bytes": 1e6}])
    >>> g.topological_order()
    ['a', 'b']
    >>> g.total_params_bytes
    0.0
    """

    ops: tuple
    edges: tuple = ()

    def __post_init__(self):
        ops, seen = [], set()
        for k, op in enumerate(as_list("ops", self.ops)):
            if isinstance(op, Mapping):
                reject_unknown_keys(op, ("id", "compute_s", "params_bytes"), f"ops[{k}]")
                op = Op(require(op, "id"), require(op, "compute_s"), op.get("params_bytes", 0.0))
            elif not isinstance(op, Op):
                fail(f"ops[{k}]", op, "must be an object")
            op_id = as_id(f"ops[{k}].id", op.id)
            if op_id in seen:
                fail(f"ops[{k}].id", op_id, "repeats an earlier op id")
            seen.add(op_id)
            ops.append(Op(op_id, as_float(f"ops[{k}].compute_s", op.compute_s, minimum=0.0),
                          as_float(f"ops[{k}].params_bytes", op.params_bytes, minimum=0.0)))
        edges, pairs = [], set()
        for k, e in enumerate(as_list("edges", self.edges)):
            if isinstance(e, Mapping):
                reject_unknown_keys(e, ("src", "dst", "bytes"), f"edges[{k}]")
                e = Edge(require(e, "src"), require(e, "dst"), require(e, "bytes"))
            elif not isinstance(e, Edge):
                fail(f"edges[{k}]", e, "must be an object")
            for end in ("src", "dst"):
                if not isinstance(getattr(e, end), str) or getattr(e, end) not in seen:
                    fail(f"edges[{k}].{end}", getattr(e, end), "unknown op id")
            if e.src == e.dst:
                raise InvalidInstance(f"edges[{k}] = {shown(e.src)} -> {shown(e.dst)}: "
                                      f"an op cannot feed itself")
            if (e.src, e.dst) in pairs:
                raise InvalidInstance(f"edges[{k}] = {shown(e.src)} -> {shown(e.dst)}: "
                                      f"repeats an earlier edge")
            pairs.add((e.src, e.dst))
            edges.append(Edge(e.src, e.dst, as_float(f"edges[{k}].bytes", e.bytes, minimum=0.0)))
        object.__setattr__(self, "ops", tuple(ops))
        object.__setattr__(self, "edges", tuple(edges))
        if not nx.is_directed_acyclic_graph(self.graph):
            cycle = nx.find_cycle(self.graph)
            path = " -> ".join([u for u, _ in cycle] + [cycle[0][0]])
            raise InvalidInstance(f"edges: contain the cycle {path}")

    @cached_property
    def graph(self) -> nx.DiGraph:
        """The DAG as a networkx DiGraph (node attrs compute_s, params_bytes; edge attr bytes)."""
        g = nx.DiGraph()
        for op in self.ops:
            g.add_node(op.id, compute_s=op.compute_s, params_bytes=op.params_bytes)
        for e in self.edges:
            g.add_edge(e.src, e.dst, bytes=e.bytes)
        return g

    def topological_order(self) -> list[str]:
        """Op ids in a deterministic topological order (ties by position in ``ops``)."""
        position = {op.id: k for k, op in enumerate(self.ops)}
        return list(nx.lexicographical_topological_sort(self.graph, key=position.__getitem__))

    @property
    def total_params_bytes(self) -> float:
        """Bytes of all parameters: what a data-parallel AllReduce synchronizes."""
        return float(sum(op.params_bytes for op in self.ops))

    @property
    def total_compute_s(self) -> float:
        return float(sum(op.compute_s for op in self.ops))

    def to_dict(self) -> dict[str, Any]:
        return {"ops": [{"id": o.id, "compute_s": o.compute_s, "params_bytes": o.params_bytes}
                        for o in self.ops],
                "edges": [{"src": e.src, "dst": e.dst, "bytes": e.bytes} for e in self.edges]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "OpGraph":
        reject_unknown_keys(data, ("ops", "edges"))
        return cls(require(data, "ops"), data.get("edges", ()))
