"""``crux`` — Crux end to end: paths, priorities, levels (docs/formats.rst, crux).

Training jobs share a cluster's links. A solution picks one candidate path per flow,
a priority per job and a hardware level per job (0..K-1, higher served first); the
objective, maximized, is the GPU utilization that the fluid contention simulator
(:mod:`fabricopt.problems.contention`) measures over a window after a warm-up.

A solution is feasible when its levels are a valid compression of its priorities:
for every two jobs whose chosen paths share a link and whose priorities differ, the
higher-priority job is not on a lower level (Crux §4.3; fabricopt docs, *Departures*,
crux-3.1). Jobs of *equal* priority may sit on any levels: the simulator reads only
paths and levels, and a tie orders nothing (docs/formats.rst, crux). Any level
assignment is feasible with ``priority = level``.

References
----------
.. [1] J. Cao et al., "Crux: GPU-Efficient Communication Scheduling for Deep Learning
   Training", SIGCOMM 2024, §3 (model, Definition 1), §4 (path selection, priority
   assignment, compression).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType
from typing import Any, Mapping

from fabricopt.errors import InvalidSolution
from fabricopt.problems._kind import CheckResult, ProblemKind, register_kind
from fabricopt.problems.limits import (MAX_INDEX, MAX_JOB_GPUS, MAX_LEVELS, check_magnitude,
                                       check_rate, check_transfer)
from fabricopt.problems._validate import (as_float, as_id, as_int, as_list, as_object, fail,
                                          reject_unknown_keys, require, shown)
from fabricopt.problems.contention import SimJob, simulate, utilization
from fabricopt.problems.crux_clos import clos_case
from fabricopt.problems.priorities import as_level_map, check_level_map, dag_edges

__all__ = ["CruxFlow", "CruxJob", "CruxInstance", "CruxSolution", "check", "evaluate",
           "contending_pairs", "sim_jobs", "generate",
           "WARMUP_ITERATIONS", "WINDOW_ITERATIONS", "MAX_SIMULATED_ITERATIONS",
           "check_simulation_span"]

#: Default warm-up and window, in longest standalone iterations (docs/formats.rst, crux).
WARMUP_ITERATIONS = 10
WINDOW_ITERATIONS = 50

_INSTANCE_KEYS = ("problem", "levels", "links", "jobs", "warmup_s", "window_s")
_JOB_KEYS = ("id", "gpus", "compute_s", "overlap", "flows")
_FLOW_KEYS = ("bytes", "paths")


@dataclass(frozen=True)
class CruxFlow:
    """Bytes a job moves per iteration between two endpoints, and its candidate paths
    (each a tuple of link names)."""

    bytes: float
    paths: tuple

    def to_dict(self) -> dict[str, Any]:
        return {"bytes": self.bytes, "paths": [list(p) for p in self.paths]}


@dataclass(frozen=True)
class CruxJob:
    """A training job: ``gpus``, ``compute_s`` per iteration, ``overlap`` (fraction of
    the compute done before its flows may start) and its ``flows``."""

    id: str
    gpus: int
    compute_s: float
    overlap: float
    flows: tuple

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "gpus": self.gpus, "compute_s": self.compute_s,
                "overlap": self.overlap, "flows": [f.to_dict() for f in self.flows]}


def _flow(where: str, data: Any, links: Mapping[str, float]) -> CruxFlow:
    data = as_object(where, data, _FLOW_KEYS)
    nbytes = as_float(f"{where}.bytes", require(data, "bytes", where=where), positive=True)
    paths = as_list(f"{where}.paths", require(data, "paths", where=where))
    if not paths:
        fail(f"{where}.paths", paths, "must list at least one candidate path")
    out = []
    for p, path in enumerate(paths):
        path = as_list(f"{where}.paths[{p}]", path)
        if not path:
            fail(f"{where}.paths[{p}]", path, "a path must name at least one link")
        seen = set()
        for e, link in enumerate(path):
            name = f"{where}.paths[{p}][{e}]"
            as_id(name, link)
            if link not in links:
                fail(name, link, "unknown link")
            if link in seen:
                fail(name, link, "the path uses this link twice")
            seen.add(link)
        out.append(tuple(path))
    return CruxFlow(nbytes, tuple(out))


def _job(where: str, data: Any, links: Mapping[str, float]) -> CruxJob:
    data = as_object(where, data, _JOB_KEYS)
    flows = as_list(f"{where}.flows", require(data, "flows", where=where))
    return CruxJob(
        as_id(f"{where}.id", require(data, "id", where=where)),
        as_int(f"{where}.gpus", require(data, "gpus", where=where), minimum=1,
               maximum=MAX_JOB_GPUS),
        as_float(f"{where}.compute_s", require(data, "compute_s", where=where), positive=True),
        as_float(f"{where}.overlap", require(data, "overlap", where=where),
                 minimum=0.0, maximum=1.0),
        tuple(_flow(f"{where}.flows[{f}]", flow, links) for f, flow in enumerate(flows)))


@dataclass(frozen=True)
class CruxInstance:
    """A shared cluster: link capacities, jobs with candidate paths, K levels.

    Parameters
    ----------
    levels : int
        K, the hardware priority levels, 1 to ``MAX_LEVELS`` (1,024, see
        :mod:`fabricopt.problems.limits`).
    links : mapping of str to float
        Link name -> capacity in Gbps (> 0). A full-duplex cable is two links.
    jobs : sequence of CruxJob or mapping
        Unique ids; ``gpus`` >= 1, ``compute_s`` > 0, ``overlap`` in [0, 1]; each flow
        has ``bytes`` > 0 and at least one non-empty path of known, distinct links.
    warmup_s, window_s : float or None
        The measured window ``[warmup_s, warmup_s + window_s)``; None (the default)
        means 10 and 50 times the longest standalone iteration
        (:attr:`standalone_iteration_s`).

    Examples
    --------
    >>> inst = CruxInstance(2, {"l": 8.0}, [
    ...     {"id": "j1", "gpus": 10, "compute_s": 2.0, "overlap": 1.0,
    ...      "flows": [{"bytes": 2e9, "paths": [["l"]]}]}])
    >>> inst.standalone_iteration_s, inst.warmup, inst.window
    ((4.0,), 40.0, 200.0)
    """

    levels: int
    links: Mapping[str, float]
    jobs: tuple
    warmup_s: float | None = None
    window_s: float | None = None

    def __post_init__(self):
        set_ = object.__setattr__
        set_(self, "levels", as_int("levels", self.levels, minimum=1, maximum=MAX_LEVELS))
        if not isinstance(self.links, Mapping):
            fail("links", self.links, "must be an object mapping link names to Gbps")
        links = {}
        for name, gbps in self.links.items():
            as_id("links key", name)
            links[name] = as_float(f"links[{name!r}]", gbps, positive=True)
        set_(self, "links", MappingProxyType(links))
        raw_jobs = as_list("jobs", self.jobs)
        if not raw_jobs:
            fail("jobs", self.jobs, "must list at least one job")
        jobs = tuple(_job(f"jobs[{k}]", job, links) for k, job in enumerate(raw_jobs))
        seen: dict[str, int] = {}
        for k, job in enumerate(jobs):
            if job.id in seen:
                fail(f"jobs[{k}].id", job.id, f"repeats jobs[{seen[job.id]}].id")
            seen[job.id] = k
        set_(self, "jobs", jobs)
        if self.warmup_s is not None:
            set_(self, "warmup_s", as_float("warmup_s", self.warmup_s, minimum=0.0))
        if self.window_s is not None:
            set_(self, "window_s", as_float("window_s", self.window_s, positive=True))
        self._check_magnitudes()
        check_simulation_span(self)

    def _check_magnitudes(self) -> None:
        """Every time stays finite: link rates, each flow's transfer alone, and the
        GPU-seconds of the measured window (``sum gpus * (warmup + window)``)."""
        for name, gbps in self.links.items():
            check_rate(f"links[{name!r}]", gbps)
        for k, job in enumerate(self.jobs):
            for f, flow in enumerate(job.flows):
                best = max(flow.paths, key=lambda path: min(self.links[e] for e in path))
                link = min(best, key=self.links.__getitem__)
                check_transfer(f"jobs[{k}].flows[{f}].bytes", flow.bytes, flow.bytes,
                               f"links[{link!r}]", self.links[link])
        span = self.warmup + self.window
        gpus = sum(job.gpus for job in self.jobs)
        if self.window_s is not None or self.warmup_s is not None:
            field = "window_s" if (self.window_s or 0.0) >= (self.warmup_s or 0.0) else "warmup_s"
            value = getattr(self, field)
        else:  # the defaults follow the longest standalone iteration
            k = max(range(len(self.jobs)), key=self.standalone_iteration_s.__getitem__)
            field, value = f"jobs[{k}].compute_s", self.jobs[k].compute_s
            longest = max((f for f in range(len(self.jobs[k].flows))),
                          key=lambda f: self.fastest_transfer_s(self.jobs[k].flows[f]),
                          default=None)
            if longest is not None and self.standalone_iteration_s[k] > value:
                field = f"jobs[{k}].flows[{longest}].bytes"
                value = self.jobs[k].flows[longest].bytes
        check_magnitude(field, value, "the GPU-seconds of warmup + window", span * gpus)

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(job.id for job in self.jobs)

    @cached_property
    def standalone_iteration_s(self) -> tuple[float, ...]:
        """Per job, ``max(compute_s, overlap*compute_s + t)`` with ``t`` the longest of
        its flows' transfer times alone on their fastest candidate path.

        It depends on the instance only (not on a solution), so every solution is
        measured over the same window; it is also a lower bound on every iteration.
        """
        out = []
        for job in self.jobs:
            t = max((self.fastest_transfer_s(f) for f in job.flows), default=0.0)
            out.append(max(job.compute_s, job.overlap * job.compute_s + t))
        return tuple(out)

    def fastest_transfer_s(self, flow: CruxFlow) -> float:
        """Seconds ``flow`` needs alone on its fastest candidate path."""
        best = max(min(self.links[e] for e in path) for path in flow.paths)
        return 8.0 * flow.bytes / (best * 1e9)

    @property
    def warmup(self) -> float:
        """The warm-up in seconds (``warmup_s`` or its default)."""
        if self.warmup_s is not None:
            return self.warmup_s
        return WARMUP_ITERATIONS * max(self.standalone_iteration_s, default=0.0)

    @property
    def window(self) -> float:
        """The measured window in seconds (``window_s`` or its default)."""
        if self.window_s is not None:
            return self.window_s
        return WINDOW_ITERATIONS * max(self.standalone_iteration_s, default=1.0)

    def to_dict(self) -> dict[str, Any]:
        return {"problem": "crux", "levels": self.levels, "links": dict(self.links),
                "jobs": [job.to_dict() for job in self.jobs],
                "warmup_s": self.warmup_s, "window_s": self.window_s}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "CruxInstance":
        reject_unknown_keys(data, _INSTANCE_KEYS)
        return cls(require(data, "levels"), require(data, "links"), require(data, "jobs"),
                   data.get("warmup_s"), data.get("window_s"))


@dataclass(frozen=True)
class CruxSolution:
    """Per job: ``path`` (one candidate index per flow), ``priority``, ``level``."""

    path: Mapping[str, tuple]
    priority: Mapping[str, float]
    level: Mapping[str, int]

    def __post_init__(self):
        set_ = object.__setattr__
        for name in ("path", "priority"):
            if not isinstance(getattr(self, name), Mapping):
                fail(name, getattr(self, name), "must be an object keyed by job id",
                     InvalidSolution)
        paths = {}
        for job, idx in self.path.items():
            as_id("path key", job, InvalidSolution)
            idx = as_list(f"path[{job!r}]", idx, error=InvalidSolution)
            paths[job] = tuple(as_int(f"path[{job!r}][{f}]", i, minimum=0, maximum=MAX_INDEX,
                   error=InvalidSolution)
                               for f, i in enumerate(idx))
        set_(self, "path", MappingProxyType(paths))
        prio = {}
        for job, p in self.priority.items():
            as_id("priority key", job, InvalidSolution)
            prio[job] = as_float(f"priority[{job!r}]", p, error=InvalidSolution)
        set_(self, "priority", MappingProxyType(prio))
        set_(self, "level", as_level_map("level", self.level))

    def to_dict(self) -> dict[str, Any]:
        return {"path": {j: list(p) for j, p in self.path.items()},
                "priority": dict(self.priority), "level": dict(self.level)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "CruxSolution":
        reject_unknown_keys(data, ("path", "priority", "level"), error=InvalidSolution)
        return cls(require(data, "path", InvalidSolution),
                   require(data, "priority", InvalidSolution),
                   require(data, "level", InvalidSolution))


#: Most standalone iterations of one job that the simulated span (warm-up plus window)
#: may hold: the fluid simulation's work grows with it. The default
#: span is 60 of the longest job's iterations, so this lets the shortest job be ~166x
#: shorter than the longest; real mixes (generate) stay below 25x.
MAX_SIMULATED_ITERATIONS = 10_000


def check_simulation_span(instance: CruxInstance) -> None:
    """Reject an instance whose simulation would run more than
    :data:`MAX_SIMULATED_ITERATIONS` iterations of some job, naming that job's
    ``compute_s`` and the ratio ``(warmup + window) / standalone iteration``.

    Raises
    ------
    InvalidInstance

    Examples
    --------
    >>> job = lambda name, c: {"id": name, "gpus": 1, "compute_s": c, "overlap": 1.0,
    ...                        "flows": [{"bytes": 1e6, "paths": [["l"]]}]}
    >>> CruxInstance(1, {"l": 100.0}, [job("big", 10.0), job("tiny", 1e-4)])
    Traceback (most recent call last):
    ...
    fabricopt.errors.InvalidInstance: jobs[1].compute_s = 0.0001: the ratio (warmup + window) / standalone iteration = 600 s / 0.00018 s = 3.33e+06 exceeds 10,000 iterations to simulate; shorten window_s and warmup_s or make the jobs' iterations closer
    """
    span = instance.warmup + instance.window
    for k, (job, t) in enumerate(zip(instance.jobs, instance.standalone_iteration_s)):
        ratio = span / t if t > 0 else math.inf
        if ratio > MAX_SIMULATED_ITERATIONS:
            fail(f"jobs[{k}].compute_s", job.compute_s,
                 f"the ratio (warmup + window) / standalone iteration = {span:.3g} s / "
                 f"{t:.3g} s = {ratio:.3g} exceeds {MAX_SIMULATED_ITERATIONS:,} iterations "
                 f"to simulate; shorten window_s and warmup_s or make the jobs' iterations "
                 f"closer")


def _validate_shape(instance: CruxInstance, solution: CruxSolution) -> None:
    ids = instance.ids
    known = set(ids)
    for name, mapping in (("path", solution.path), ("priority", solution.priority)):
        for job in mapping:
            if job not in known:
                fail(f"{name}[{job!r}]", mapping[job], "unknown job", InvalidSolution)
        for job in ids:
            if job not in mapping:
                raise InvalidSolution(f"{name}: job {shown(job)} is missing")
    check_level_map(ids, instance.levels, solution.level)
    for job in instance.jobs:
        chosen = solution.path[job.id]
        if len(chosen) != len(job.flows):
            raise InvalidSolution(f"path[{job.id!r}]: has {len(chosen)} entries, the job has "
                                  f"{len(job.flows)} flows")
        for f, (i, flow) in enumerate(zip(chosen, job.flows)):
            if i >= len(flow.paths):
                fail(f"path[{job.id!r}][{f}]", i,
                     f"no such candidate path (the flow has {len(flow.paths)})", InvalidSolution)


def _chosen_links(instance: CruxInstance, path: Mapping[str, tuple]) -> list[set[str]]:
    return [{e for f, i in zip(job.flows, path[job.id]) for e in f.paths[i]}
            for job in instance.jobs]


def contending_pairs(instance: CruxInstance, path: Mapping[str, tuple]
                     ) -> dict[tuple[int, int], str]:
    """Pairs ``(a, b)``, ``a < b`` job indices, whose chosen paths share a link, mapped
    to the first shared link (in sorted order)."""
    owners: dict[str, list[int]] = {}
    for j, links in enumerate(_chosen_links(instance, path)):
        for e in links:
            owners.setdefault(e, []).append(j)
    pairs: dict[tuple[int, int], str] = {}
    for e in sorted(owners):
        users = owners[e]
        for x in range(len(users)):
            for y in range(x + 1, len(users)):
                pairs.setdefault((users[x], users[y]), e)
    return pairs


def check(instance: CruxInstance, solution: CruxSolution) -> CheckResult:
    """Feasible iff on every link the chosen paths share, the job of strictly higher
    priority is on a level at least as high as the other's (equal priorities: any
    levels).

    Raises
    ------
    InvalidSolution
        If a job is missing or unknown, a path index does not exist, or a level is
        outside 0..K-1.

    Examples
    --------
    Crux Example 1: both jobs cross link ``l``, so the higher-priority one may not sit
    on the lower level.

    >>> inst = CruxInstance(2, {"l": 8.0}, [
    ...     {"id": "j1", "gpus": 10, "compute_s": 2.0, "overlap": 1.0,
    ...      "flows": [{"bytes": 2e9, "paths": [["l"]]}]},
    ...     {"id": "j2", "gpus": 10, "compute_s": 1.0, "overlap": 1.0,
    ...      "flows": [{"bytes": 1e9, "paths": [["l"]]}]}])
    >>> path, priority = {"j1": [0], "j2": [0]}, {"j1": 5.0, "j2": 7.5}
    >>> check(inst, CruxSolution(path, priority, {"j1": 0, "j2": 1}))
    CheckResult(feasible=True, reason=None)
    >>> print(check(inst, CruxSolution(path, priority, {"j1": 1, "j2": 0})).reason)
    jobs 'j2' (priority 7.5) and 'j1' (priority 5) share link 'l', but 'j2' is on level 0 below 1

    Equal priorities constrain nothing:

    >>> check(inst, CruxSolution(path, {"j1": 5.0, "j2": 5.0}, {"j1": 0, "j2": 1}))
    CheckResult(feasible=True, reason=None)
    """
    _validate_shape(instance, solution)
    pairs = contending_pairs(instance, solution.path)
    ids = instance.ids
    prio = [solution.priority[j] for j in ids]
    edges = dag_edges(ids, prio, [0.0] * len(ids), pairs)
    for hi, lo, _ in edges:
        a, b = ids[hi], ids[lo]
        if prio[hi] > prio[lo] and solution.level[a] < solution.level[b]:
            link = pairs[min(hi, lo), max(hi, lo)]
            return CheckResult.violated(
                f"jobs {a!r} (priority {prio[hi]:g}) and {b!r} (priority {prio[lo]:g}) "
                f"share link {link!r}, but {a!r} is on level {solution.level[a]} below "
                f"{solution.level[b]}")
    return CheckResult.ok()


def sim_jobs(instance: CruxInstance, path: Mapping[str, tuple],
             level: Mapping[str, int]) -> list[SimJob]:
    """The simulator's view of ``instance`` under the chosen paths and levels."""
    return [SimJob(job.gpus, job.compute_s, job.overlap, int(level[job.id]),
                   tuple((f.bytes, f.paths[i]) for f, i in zip(job.flows, path[job.id])))
            for job in instance.jobs]


def evaluate(instance: CruxInstance, solution: CruxSolution) -> float:
    """GPU utilization in [0, 1] measured by the fluid simulator (docs/formats.rst, crux).

    Examples
    --------
    Crux Example 1 with Job 2 on the higher level: 41.67 %.

    >>> inst = CruxInstance(2, {"l": 8.0}, [
    ...     {"id": "j1", "gpus": 10, "compute_s": 2.0, "overlap": 1.0,
    ...      "flows": [{"bytes": 2e9, "paths": [["l"]]}]},
    ...     {"id": "j2", "gpus": 10, "compute_s": 1.0, "overlap": 1.0,
    ...      "flows": [{"bytes": 1e9, "paths": [["l"]]}]}], warmup_s=120, window_s=60)
    >>> sol = CruxSolution({"j1": [0], "j2": [0]}, {"j1": 5.0, "j2": 7.5}, {"j1": 0, "j2": 1})
    >>> round(evaluate(inst, sol), 4)
    0.4167
    """
    _validate_shape(instance, solution)
    jobs = sim_jobs(instance, solution.path, solution.level)
    result = simulate(instance.links, jobs, instance.warmup, instance.window,
                      names=instance.ids)
    return utilization(result, [job.gpus for job in instance.jobs])



def generate(seed: int = 0, jobs: int = 5, tors: int | None = None, aggs: int = 2,
             hosts_per_tor: int = 5, levels: int = 3, host_gbps: float = 100.0,
             uplink_gbps: float = 100.0, placement: str = "random") -> CruxInstance:
    """The Crux §4.4 microbenchmark: a two-layer Clos shared by data-parallel jobs.

    ``tors`` ToR switches (None: drawn from 2..4 like the paper) with ``hosts_per_tor``
    hosts of 8 GPUs each, ``aggs`` aggregation switches; ``jobs`` jobs of realistic
    models (compute times and gradient sizes of GPT, BERT, VGG and ResNet training)
    placed ``"random"`` (fragmented) or ``"packed"`` (locality first), each running a ring
    AllReduce whose cross-ToR hops may take any aggregation switch. See
    :func:`fabricopt.problems.crux_clos.clos_case`.

    Examples
    --------
    >>> inst = generate(seed=1, jobs=3, tors=2)
    >>> [job.id for job in inst.jobs]
    ['j0-bert', 'j1-vgg16', 'j2-gpt350m']
    >>> len(inst.links)  # host links 2 x 2 x 5 and ToR-aggregation links 2 x 2 x 2
    28
    """
    return CruxInstance.from_dict(clos_case(seed, jobs=jobs, tors=tors, aggs=aggs,
                                            hosts_per_tor=hosts_per_tor, levels=levels,
                                            host_gbps=host_gbps, uplink_gbps=uplink_gbps,
                                            placement=placement))


KIND = register_kind(ProblemKind(
    name="crux", sense="max",
    instance_type=CruxInstance, solution_type=CruxSolution,
    instance_from_dict=CruxInstance.from_dict, solution_from_dict=CruxSolution.from_dict,
    check=check, evaluate=evaluate, generate=generate,
    size=lambda inst: len(inst.jobs),
    doc="Crux end to end: paths, priorities, levels (max GPU utilization)",
))
