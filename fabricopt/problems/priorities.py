"""``priorities`` — Crux priority compression into K levels (docs/formats.rst, priorities).

Jobs carry a priority ``P_j`` (Crux: ``k_j * I_j``) and a GPU intensity ``I_j``; pairs of
jobs that share a link contend. The contention DAG has one edge per distinct pair,
from the higher-priority job to the lower (tie: the smaller id is higher), weighted by
the intensity of the higher job. A solution puts every job on a hardware level
0..K-1 (higher = served first) so that no edge points from a lower level to a higher
one; it scores, maximized, the weight of the edges whose endpoints land on different
levels (a Max K-Cut of the DAG).

References
----------
.. [1] J. Cao et al., "Crux: GPU-Efficient Communication Scheduling for Deep Learning
   Training", SIGCOMM 2024, §4.3 and Appendix B.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from fabricopt.errors import InvalidSolution
from fabricopt.problems._kind import CheckResult, ProblemKind, register_kind
from fabricopt.problems.limits import MAX_GENERATED_COUNT, MAX_INDEX, MAX_LEVELS, check_magnitude
from fabricopt.problems._validate import (as_float, as_id, as_int, as_list, as_object, fail,
                                          reject_unknown_keys, require, shown)

__all__ = ["PriorityJob", "PrioritiesInstance", "PrioritiesSolution", "dag_edges",
           "check", "evaluate", "generate", "as_level_map",
           "check_level_map"]

_INSTANCE_KEYS = ("problem", "levels", "jobs", "contention")
_JOB_KEYS = ("id", "priority", "intensity")


@dataclass(frozen=True)
class PriorityJob:
    """A job of a ``priorities`` instance: ``id``, ``priority`` (any finite number;
    only the order matters) and ``intensity`` (>= 0; the weight of its out-edges)."""

    id: str
    priority: float
    intensity: float

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "priority": self.priority, "intensity": self.intensity}


def dag_edges(ids: Sequence[str], priority: Sequence[float], intensity: Sequence[float],
              pairs: Iterable[tuple[int, int]]) -> tuple[tuple[int, int, float], ...]:
    """The contention DAG: one edge ``(high, low, weight)`` per distinct pair of indices.

    The edge runs from the higher-priority job to the lower; a tie goes to the smaller
    id; the weight is the intensity of the higher job. Edges are sorted by
    ``(high, low)``. Both ``problems.crux`` and the Crux heuristics build the DAG here.

    Examples
    --------
    >>> dag_edges(["a", "b", "c"], [1.0, 3.0, 3.0], [5.0, 2.0, 4.0], [(0, 1), (2, 1), (1, 0)])
    ((1, 0, 2.0), (1, 2, 2.0))
    """
    edges = {}
    for x, y in pairs:
        if x == y:
            continue
        hi, lo = sorted((x, y), key=lambda j: (-priority[j], ids[j]))
        edges[hi, lo] = float(intensity[hi])
    return tuple((hi, lo, w) for (hi, lo), w in sorted(edges.items()))


@dataclass(frozen=True)
class PrioritiesInstance:
    """A priority-compression instance.

    Parameters
    ----------
    levels : int
        K, the hardware priority levels available, 1 to ``MAX_LEVELS`` (1,024, see
        :mod:`fabricopt.problems.limits`).
    jobs : sequence of PriorityJob or mapping
        Each with a unique ``id``, a finite ``priority`` and an ``intensity`` >= 0.
    contention : sequence of [id, id]
        Pairs of jobs that share at least one link; repeats and both orders are allowed
        (one edge per distinct pair), a job may not contend with itself.

    Examples
    --------
    >>> inst = PrioritiesInstance(2, [{"id": "a", "priority": 2, "intensity": 5},
    ...                               {"id": "b", "priority": 1, "intensity": 1}],
    ...                           [["b", "a"]])
    >>> inst.edges
    ((0, 1, 5.0),)
    """

    levels: int
    jobs: tuple
    contention: tuple

    def __post_init__(self):
        set_ = object.__setattr__
        set_(self, "levels", as_int("levels", self.levels, minimum=1, maximum=MAX_LEVELS))
        jobs = []
        raw_jobs = as_list("jobs", self.jobs)
        if not raw_jobs:
            fail("jobs", self.jobs, "must list at least one job")
        for k, job in enumerate(raw_jobs):
            where = f"jobs[{k}]"
            job = as_object(where, job, _JOB_KEYS)
            jobs.append(PriorityJob(
                as_id(f"{where}.id", require(job, "id", where=where)),
                as_float(f"{where}.priority", require(job, "priority", where=where)),
                as_float(f"{where}.intensity", require(job, "intensity", where=where),
                         minimum=0.0)))
        set_(self, "jobs", tuple(jobs))
        index = {}
        for k, job in enumerate(jobs):
            if job.id in index:
                fail(f"jobs[{k}].id", job.id, f"repeats jobs[{index[job.id]}].id")
            index[job.id] = k
        pairs = []
        for k, pair in enumerate(as_list("contention", self.contention)):
            pair = as_list(f"contention[{k}]", pair, length=2)
            for side in (0, 1):
                name = as_id(f"contention[{k}][{side}]", pair[side])
                if name not in index:
                    fail(f"contention[{k}][{side}]", name, "unknown job")
            if pair[0] == pair[1]:
                fail(f"contention[{k}]", pair, "a job cannot contend with itself")
            pairs.append((pair[0], pair[1]))
        set_(self, "contention", tuple(pairs))
        # the cut weight sums each job's intensity over at most every other job
        with np.errstate(over="ignore"):
            weights = np.array([job.intensity for job in jobs], dtype=float)
            k = int(np.argmax(weights))
            check_magnitude(f"jobs[{k}].intensity", jobs[k].intensity, "the total cut weight",
                            float(weights.sum()) * len(jobs))

    @cached_property
    def index(self) -> Mapping[str, int]:
        """Job id -> position in ``jobs``."""
        return MappingProxyType({job.id: k for k, job in enumerate(self.jobs)})

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(job.id for job in self.jobs)

    @cached_property
    def edges(self) -> tuple[tuple[int, int, float], ...]:
        """The contention DAG as ``(high, low, weight)`` job-index triples."""
        return dag_edges(self.ids, [j.priority for j in self.jobs],
                         [j.intensity for j in self.jobs],
                         [(self.index[a], self.index[b]) for a, b in self.contention])

    def to_dict(self) -> dict[str, Any]:
        return {"problem": "priorities", "levels": self.levels,
                "jobs": [job.to_dict() for job in self.jobs],
                "contention": [list(pair) for pair in self.contention]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "PrioritiesInstance":
        reject_unknown_keys(data, _INSTANCE_KEYS)
        return cls(require(data, "levels"), require(data, "jobs"), require(data, "contention"))


def as_level_map(field: str, value: Any) -> Mapping[str, int]:
    """A read-only ``{job id: level}`` map with integer levels >= 0 (``InvalidSolution``)."""
    if not isinstance(value, Mapping):
        fail(field, value, "must be an object mapping job ids to levels", InvalidSolution)
    out = {}
    for name, lev in value.items():
        as_id(f"{field} key", name, InvalidSolution)
        out[name] = as_int(f"{field}[{name!r}]", lev, minimum=0, maximum=MAX_INDEX,
               error=InvalidSolution)
    return MappingProxyType(out)


@dataclass(frozen=True)
class PrioritiesSolution:
    """``level[job id]`` in 0..K-1 for every job; higher is served first."""

    level: Mapping[str, int]

    def __post_init__(self):
        object.__setattr__(self, "level", as_level_map("level", self.level))

    def to_dict(self) -> dict[str, Any]:
        return {"level": dict(self.level)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "PrioritiesSolution":
        reject_unknown_keys(data, ("level",), error=InvalidSolution)
        return cls(require(data, "level", InvalidSolution))


def check_level_map(ids: Sequence[str], levels: int, level: Mapping[str, int]) -> None:
    """Raise ``InvalidSolution`` unless ``level`` names exactly the jobs, each on 0..K-1."""
    known = set(ids)
    for name, lev in level.items():
        if name not in known:
            fail(f"level[{name!r}]", lev, "unknown job", InvalidSolution)
        if lev >= levels:
            fail(f"level[{name!r}]", lev, f"no such level (levels are 0..{levels - 1})",
                 InvalidSolution)
    for name in ids:
        if name not in level:
            raise InvalidSolution(f"level: job {shown(name)} has no level")


def _levels(instance: PrioritiesInstance, solution: PrioritiesSolution) -> np.ndarray:
    check_level_map(instance.ids, instance.levels, solution.level)
    return np.array([solution.level[name] for name in instance.ids], dtype=np.int64)


def check(instance: PrioritiesInstance, solution: PrioritiesSolution) -> CheckResult:
    """Feasible iff ``level[high] >= level[low]`` on every DAG edge.

    Raises
    ------
    InvalidSolution
        If a job is missing, unknown, or on a level outside 0..K-1.

    Examples
    --------
    >>> inst = PrioritiesInstance(2, [{"id": "a", "priority": 2, "intensity": 5},
    ...                               {"id": "b", "priority": 1, "intensity": 1}], [["a", "b"]])
    >>> check(inst, PrioritiesSolution({"a": 0, "b": 1})).reason
    "job 'a' (priority 2) outranks 'b' (priority 1), which it contends with, but is on level 0 below 1"
    """
    lev = _levels(instance, solution)
    for hi, lo, _ in instance.edges:
        if lev[hi] < lev[lo]:
            a, b = instance.jobs[hi], instance.jobs[lo]
            return CheckResult.violated(
                f"job {a.id!r} (priority {a.priority:g}) outranks {b.id!r} (priority "
                f"{b.priority:g}), which it contends with, but is on level {lev[hi]} "
                f"below {lev[lo]}")
    return CheckResult.ok()


def evaluate(instance: PrioritiesInstance, solution: PrioritiesSolution) -> float:
    """The cut weight: total weight of the edges with ``level[high] > level[low]``.

    Examples
    --------
    >>> inst = PrioritiesInstance(2, [{"id": "a", "priority": 2, "intensity": 5},
    ...                               {"id": "b", "priority": 1, "intensity": 1}], [["a", "b"]])
    >>> evaluate(inst, PrioritiesSolution({"a": 1, "b": 0}))
    5.0
    """
    lev = _levels(instance, solution)
    return float(sum(w for hi, lo, w in instance.edges if lev[hi] > lev[lo]))



def generate(seed: int = 0, jobs: int = 20, levels: int = 4, links: int | None = None,
             links_per_job: int = 2) -> PrioritiesInstance:
    """Jobs spread over a cluster's links; those sharing a link contend.

    Each job uses ``links_per_job`` random links out of ``links`` (default
    ``max(2, jobs // 2)``); intensities are log-normal (GPU-seconds per second of
    bottleneck communication, spanning two orders of magnitude as in the Crux trace),
    and priorities are ``k * I`` with a log-normal correction ``k`` around 1.

    Examples
    --------
    Four jobs on the default two links, two links each: every pair contends.

    >>> inst = generate(seed=1, jobs=4, levels=2)
    >>> [job.id for job in inst.jobs], len(inst.contention)
    (['j0', 'j1', 'j2', 'j3'], 6)
    """
    n = as_int("jobs", jobs, minimum=1, maximum=MAX_GENERATED_COUNT)
    levels = as_int("levels", levels, minimum=1, maximum=MAX_LEVELS)
    n_links = max(2, n // 2) if links is None else as_int("links", links, minimum=1,
                                                              maximum=MAX_GENERATED_COUNT)
    per_job = as_int("links_per_job", links_per_job, minimum=1, maximum=n_links)
    rng = np.random.default_rng(seed)
    intensity = np.round(rng.lognormal(mean=math.log(20.0), sigma=1.0, size=n), 3)
    k = rng.lognormal(mean=0.0, sigma=0.3, size=n)
    priority = np.round(k * intensity, 3)
    width = len(str(n - 1))
    ids = [f"j{j:0{width}d}" for j in range(n)]
    uses = [set(rng.choice(n_links, size=per_job, replace=False).tolist()) for _ in range(n)]
    pairs = [[ids[a], ids[b]] for a in range(n) for b in range(a + 1, n) if uses[a] & uses[b]]
    return PrioritiesInstance(levels, [{"id": ids[j], "priority": float(priority[j]),
                                        "intensity": float(intensity[j])} for j in range(n)],
                              pairs)


KIND = register_kind(ProblemKind(
    name="priorities", sense="max",
    instance_type=PrioritiesInstance, solution_type=PrioritiesSolution,
    instance_from_dict=PrioritiesInstance.from_dict,
    solution_from_dict=PrioritiesSolution.from_dict,
    check=check, evaluate=evaluate, generate=generate,
    size=lambda inst: len(inst.jobs),
    doc="Crux priority compression into K levels (max cut weight)",
))
