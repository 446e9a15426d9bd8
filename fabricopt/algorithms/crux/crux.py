"""Crux's scheduling pipeline: GPU intensity, path selection, corrected priorities,
the contention DAG, and its compression into K levels.

Crux (SIGCOMM 2024) ranks jobs by GPU intensity ``I_j = W_j / t_j`` (compute per
iteration over the job's bottleneck communication time), routes the most intensive
jobs first onto the least-congested paths (§4.1), corrects the ranking for iteration
length and overlap against a reference job (``P_j = k_j I_j``, §4.2), and compresses
the priorities into the K hardware levels (§4.3, :mod:`.compression`). Work is
measured in GPU-seconds, ``W_j = gpus_j * compute_s_j``, the unit of the ``crux``
kind's utilization.

References
----------
.. [1] J. Cao et al., "Crux: GPU-Efficient Communication Scheduling for Deep Learning
   Training", SIGCOMM 2024, §3.2 (Definition 2), §4.1-§4.3, Algorithm 1.
"""

from __future__ import annotations

from fabricopt.errors import InvalidOption

import math
import time
import zlib
from typing import Mapping, Sequence

import numpy as np

from fabricopt.problems.contention import SimJob, simulate
from fabricopt.problems.crux import WARMUP_ITERATIONS, CruxInstance, CruxSolution, contending_pairs
from fabricopt.problems.priorities import dag_edges
from fabricopt.algorithms.priorities.compression import (compress, compress_search, ranking,
                                                         sincronia_levels, varys_levels)
from fabricopt.algorithms.priorities.compression_exact import exact_compress

__all__ = ["fastest_paths", "link_bytes", "bottleneck_time", "gpu_intensity", "select_paths",
           "reference_job", "correction_factor", "correction_factors", "contention_dag",
           "crux_plan", "crux", "crux_search", "ranked_plan", "ranked_search", "ecmp",
           "compress", "K_MAX", "COMPRESSIONS"]

#: The correction factor of a job that should always precede the reference
#: (fabricopt docs, *Departures*, crux-2.2).
K_MAX = 1e6

# The replay window, in standalone periods of the slower job: 60 is a multiple of every
# steady-state period p/q of that period with q | 60 (the paper's examples are such).
REPLAY_WINDOW_ITERATIONS = 60

# A link-time gain below this fraction of the replay window is a tie (float noise).
_GAIN_RTOL = 1e-9

_LOAD_RULES = ("time", "utilization", "jobs", "intensity")

#: The compression steps :func:`crux` can use: the paper's DP over random BFS orders,
#: or the exact LP (:mod:`.compression_exact`).
COMPRESSIONS = ("dp", "exact")


def fastest_paths(instance: CruxInstance) -> dict[str, tuple[int, ...]]:
    """Each flow on its candidate path with the largest bottleneck capacity (first on ties)."""
    out = {}
    for job in instance.jobs:
        out[job.id] = tuple(
            max(range(len(f.paths)), key=lambda p: (min(instance.links[e] for e in f.paths[p]), -p))
            for f in job.flows)
    return out


def link_bytes(instance: CruxInstance, path: Mapping[str, Sequence[int]]) -> list[dict[str, float]]:
    """``M[j][e]``: bytes job j puts on link e per iteration under ``path``."""
    out = []
    for job in instance.jobs:
        m: dict[str, float] = {}
        for flow, i in zip(job.flows, path[job.id]):
            for e in flow.paths[i]:
                m[e] = m.get(e, 0.0) + flow.bytes
        out.append(m)
    return out


def bottleneck_time(instance: CruxInstance, path: Mapping[str, Sequence[int]] | None = None
                    ) -> np.ndarray:
    """``t_j = max_e 8 M[j][e] / B_e``: seconds of the job's traffic on its most loaded
    link, alone (0 for a job without flows). ``path`` defaults to :func:`fastest_paths`."""
    path = fastest_paths(instance) if path is None else path
    return np.array([max((8.0 * b / (instance.links[e] * 1e9) for e, b in m.items()), default=0.0)
                     for m in link_bytes(instance, path)])


def gpu_intensity(instance: CruxInstance, path: Mapping[str, Sequence[int]] | None = None
                  ) -> np.ndarray:
    """GPU intensity ``I_j = W_j / t_j`` in GPU-seconds of compute per second of
    bottleneck communication (Definition 2); ``inf`` for a job without flows.

    Examples
    --------
    Crux Example 1: both jobs have intensity 10 GPUs x 2 s / 2 s = 10 x 1 s / 1 s = 10.

    >>> inst = CruxInstance(2, {"l": 8.0}, [
    ...     {"id": "j1", "gpus": 10, "compute_s": 2.0, "overlap": 1.0,
    ...      "flows": [{"bytes": 2e9, "paths": [["l"]]}]},
    ...     {"id": "j2", "gpus": 10, "compute_s": 1.0, "overlap": 1.0,
    ...      "flows": [{"bytes": 1e9, "paths": [["l"]]}]}])
    >>> gpu_intensity(inst).tolist()
    [10.0, 10.0]
    """
    t = bottleneck_time(instance, path)
    work = np.array([job.gpus * job.compute_s for job in instance.jobs])
    with np.errstate(divide="ignore"):
        return np.where(t > 0, work / np.where(t > 0, t, 1.0), np.inf)


def _by_intensity(instance: CruxInstance, intensity: Sequence[float]) -> list[int]:
    """Job indices in descending intensity, ties by id."""
    return sorted(range(len(instance.jobs)), key=lambda j: (-intensity[j], instance.jobs[j].id))


def select_paths(instance: CruxInstance, *, load: str = "utilization"
                 ) -> dict[str, tuple[int, ...]]:
    """Crux §4.1: jobs in descending intensity each take their least-congested paths.

    Jobs are ranked by intensity on their fastest paths (tie: id). Each flow of a job
    in turn takes the candidate path minimizing, lexicographically, the resulting
    bottleneck load on the path, then its total load, then the path index (fabricopt
    docs, *Departures*, crux-1), and the chosen path's load grows.

    Parameters
    ----------
    instance : CruxInstance
    load : {"utilization", "time", "jobs", "intensity"}
        What a link's load counts. ``"utilization"`` (the default, ours): the fraction
        of time the flows keep it busy, each flow's link time over its job's standalone
        iteration. ``"time"``: link seconds per iteration, the literal reading of §4.1; it
        adds up seconds of jobs with different iteration lengths, so a short-iteration
        job looks light although it holds the link as often. ``"jobs"``: the jobs
        already on it. ``"intensity"``: link time weighted by intensity (crux_repro).

    Returns
    -------
    dict
        Job id -> one candidate-path index per flow.

    Examples
    --------
    The single-host job (no flows) ranks first; the BERT job's two cross-ToR hops then
    avoid aggregation switch 0, which the VGG job took.

    >>> from fabricopt.problems.crux import generate
    >>> select_paths(generate(seed=1, jobs=3, tors=2))
    {'j2-gpt350m': (), 'j1-vgg16': (0, 0, 0, 0), 'j0-bert': (1, 1)}
    """
    if load not in _LOAD_RULES:
        raise InvalidOption(f"load = {load!r}: must be one of {', '.join(_LOAD_RULES)}")
    intensity = gpu_intensity(instance)
    order = _by_intensity(instance, intensity)
    used: dict[str, float] = {}
    chosen: dict[str, tuple[int, ...]] = {}
    for j in order:
        job = instance.jobs[j]
        weight = intensity[j] if math.isfinite(intensity[j]) else 0.0
        period = instance.standalone_iteration_s[j]
        mine: set[str] = set()
        picks = []
        for flow in job.flows:
            best = None
            for p, links in enumerate(flow.paths):
                add = {}
                for e in links:
                    if load == "jobs":
                        add[e] = 0.0 if e in mine else 1.0
                    else:
                        add[e] = 8.0 * flow.bytes / (instance.links[e] * 1e9)
                        if load == "intensity":
                            add[e] *= weight
                        elif load == "utilization":
                            add[e] /= period
                after = [used.get(e, 0.0) + add[e] for e in links]
                score = (max(after), sum(after), p)
                if best is None or score < best[0]:
                    best = (score, p, add)
            _, p, add = best
            picks.append(p)
            for e, x in add.items():
                used[e] = used.get(e, 0.0) + x
            mine.update(flow.paths[p])
        chosen[job.id] = tuple(picks)
    return chosen


def reference_job(instance: CruxInstance, path: Mapping[str, Sequence[int]]) -> int | None:
    """The reference job of §4.2: most bytes per iteration summed over links, then the
    longest bottleneck time, then the smallest id (fabricopt docs, *Departures*,
    crux-2.1); None without traffic."""
    volume = [sum(m.values()) for m in link_bytes(instance, path)]
    t = bottleneck_time(instance, path)
    candidates = [j for j in range(len(instance.jobs)) if volume[j] > 0]
    if not candidates:
        return None
    return min(candidates, key=lambda j: (-volume[j], -t[j], instance.jobs[j].id))


def _replay_job(instance: CruxInstance, j: int, t_j: float, level: int) -> SimJob:
    job = instance.jobs[j]
    # One 8 Gbps link: t_j seconds of exclusive link time are t_j * 1e9 bytes.
    return SimJob(job.gpus, job.compute_s, job.overlap, level, ((t_j * 1e9, ("link",)),))


def correction_factor(instance: CruxInstance, job: int, reference: int,
                      t: Sequence[float], *, jitter: float = 0.0, replays: int = 20,
                      window_iterations: int = REPLAY_WINDOW_ITERATIONS) -> float:
    """``k_j = dS_j / dS_r``: replay ``job`` against ``reference`` on one link in both orders.

    Each job needs ``t[j]`` seconds of exclusive link time per iteration. ``dS_j`` is the
    link time job j gains by going first, measured after a warm-up of 10 and over a
    window of ``window_iterations`` standalone periods of the slower job (fabricopt docs,
    *Departures*, crux-2.2: 60 makes the window a whole number of hyperperiods whenever
    the steady-state periods are simple fractions of that period, as in Example 1).
    Link time is read off the compute each job does (``t_j`` per ``compute_s_j``), i.e.
    k_j in work units.

    Parameters
    ----------
    instance : CruxInstance
    job, reference : int
        Job indices.
    t : sequence of float
        Bottleneck times (:func:`bottleneck_time` under the chosen paths).
    jitter : float
        Per-iteration compute jitter of the replay (crux-2.4 uses 0.1 to expose the
        phase effects of Example 2; 0 keeps it deterministic and cheap).
    replays : int
        Seeds averaged when ``jitter > 0``.
    window_iterations : int

    Returns
    -------
    float
        ``k_j`` in ``[0, K_MAX]``; ``K_MAX`` if only j gains from going first, 1 if
        neither gains (either order is as good).

    Examples
    --------
    Crux Example 1: k_2 = 1.5 with Job 1 as the reference.

    >>> inst = CruxInstance(2, {"l": 8.0}, [
    ...     {"id": "j1", "gpus": 10, "compute_s": 2.0, "overlap": 1.0,
    ...      "flows": [{"bytes": 2e9, "paths": [["l"]]}]},
    ...     {"id": "j2", "gpus": 10, "compute_s": 1.0, "overlap": 1.0,
    ...      "flows": [{"bytes": 1e9, "paths": [["l"]]}]}])
    >>> correction_factor(inst, 1, 0, [2.0, 1.0])
    1.5
    """
    jobs = instance.jobs
    period = max(max(jobs[x].compute_s, jobs[x].overlap * jobs[x].compute_s + t[x])
                 for x in (job, reference))
    warmup, window = WARMUP_ITERATIONS * period, window_iterations * period
    gain_ref = gain_job = 0.0
    seeds = range(replays) if jitter > 0 else range(1)
    for seed in seeds:
        runs = []
        for ref_level in (1, 0):  # reference first, then the job first
            pair = [_replay_job(instance, reference, t[reference], ref_level),
                    _replay_job(instance, job, t[job], 1 - ref_level)]
            runs.append(simulate({"link": 8.0}, pair, warmup, window, jitter=jitter,
                                 seed=seed).compute_s)
        ref_first, job_first = runs
        gain_ref += (ref_first[0] - job_first[0]) * t[reference] / jobs[reference].compute_s
        gain_job += (job_first[1] - ref_first[1]) * t[job] / jobs[job].compute_s
    tol = _GAIN_RTOL * window * len(seeds)
    gain_ref = 0.0 if abs(gain_ref) <= tol else gain_ref
    gain_job = 0.0 if abs(gain_job) <= tol else gain_job
    if gain_ref <= 0:
        return K_MAX if gain_job > 0 else 1.0
    return float(min(K_MAX, max(0.0, gain_job / gain_ref)))


def correction_factors(instance: CruxInstance, path: Mapping[str, Sequence[int]], *,
                       jitter: float = 0.0, replays: int = 20) -> np.ndarray:
    """``k_j`` for every job against the reference job (``k_r = 1``; 1 without traffic)."""
    return _correction_factors(instance, path, jitter=jitter, replays=replays)[0]


def _correction_factors(instance: CruxInstance, path, *, jitter: float, replays: int,
                        deadline: float | None = None) -> tuple[np.ndarray, int, int]:
    """``(k, replayed, to_replay)``. The jobs are replayed in descending intensity, and
    none once ``deadline`` (a ``time.perf_counter`` instant) has passed: those left keep
    ``k_j = 1``, ranked by intensity alone (each ``k_j`` is independent of the others,
    so an uncut run is the same in any order)."""
    t = bottleneck_time(instance, path)
    ref = reference_job(instance, path)
    k = np.ones(len(instance.jobs))
    if ref is None:
        return k, 0, 0
    todo = [j for j in _by_intensity(instance, gpu_intensity(instance, path))
            if j != ref and t[j] > 0]
    done = 0
    for j in todo:
        if deadline is not None and time.perf_counter() >= deadline:
            break
        k[j] = correction_factor(instance, j, ref, t, jitter=jitter, replays=replays)
        done += 1
    return k, done, len(todo)


def contention_dag(instance: CruxInstance, path: Mapping[str, Sequence[int]],
                   priority: Sequence[float], intensity: Sequence[float]
                   ) -> tuple[tuple[int, int, float], ...]:
    """The contention DAG under ``path``: an edge per pair of jobs sharing a link, from
    the higher priority to the lower, weighted by the higher job's intensity."""
    return dag_edges(instance.ids, priority, intensity, contending_pairs(instance, path))


def crux_plan(instance: CruxInstance, *, load: str = "utilization", jitter: float = 0.0,
              replays: int = 20) -> tuple[dict, np.ndarray, np.ndarray]:
    """Crux's paths and priorities: ``(path, priority P_j = k_j I_j, intensity I_j)``.

    Intensities are recomputed on the chosen paths (fabricopt docs, *Departures*, crux-1).
    A job without flows contends with nobody; it gets priority and intensity 0.
    """
    return _plan(instance, load=load, jitter=jitter, replays=replays)[:3]


def _plan(instance: CruxInstance, *, load: str, jitter: float, replays: int,
          deadline: float | None = None):
    """:func:`crux_plan` and ``(replayed, to_replay)`` of :func:`_correction_factors`."""
    path = select_paths(instance, load=load)
    intensity = gpu_intensity(instance, path)
    k, replayed, to_replay = _correction_factors(instance, path, jitter=jitter,
                                                 replays=replays, deadline=deadline)
    finite = np.isfinite(intensity)
    intensity = np.where(finite, intensity, 0.0)
    return path, np.where(finite, k * intensity, 0.0), intensity, replayed, to_replay


def _solution(instance: CruxInstance, path, priority, level) -> CruxSolution:
    ids = instance.ids
    return CruxSolution({j: list(path[j]) for j in ids},
                        {j: float(priority[x]) for x, j in enumerate(ids)},
                        {j: int(level[x]) for x, j in enumerate(ids)})


def crux(instance: CruxInstance, *, seed: int = 0, orders: int = 10, load: str = "utilization",
         jitter: float = 0.0, replays: int = 20, compression: str = "dp",
         time_limit: float | None = None) -> CruxSolution:
    """The Crux pipeline: intensity -> paths -> k_j-corrected priorities -> compression.

    Parameters
    ----------
    instance : CruxInstance
    seed : int
        Seed of the random topological orders of the compression.
    orders : int
        m, the orders the compression tries (10 in the paper).
    load : str
        Path-selection load rule (:func:`select_paths`).
    jitter, replays
        Correction-factor replay (:func:`correction_factor`).
    compression : {"dp", "exact"}
        ``"dp"``: the paper's Algorithm 1 (best split of ``orders`` random BFS orders);
        ``"exact"`` (ours): the maximum-weight valid K-cut of the contention DAG
        (:func:`~fabricopt.algorithms.priorities.compression_exact.exact_compress`). The cut is
        the paper's proxy for utilization, so the exact cut need not simulate better.
    time_limit : float, optional
        Wall-clock seconds; see :func:`crux_search` for what it cuts (a cut makes the
        answer machine-dependent).

    Raises
    ------
    ValueError
        For an unknown ``compression`` (or ``load``).

    Examples
    --------
    >>> from fabricopt.problems.crux import check, evaluate, generate
    >>> inst = generate(seed=1, jobs=3, tors=2)
    >>> solution = crux(inst)
    >>> bool(check(inst, solution)), round(evaluate(inst, solution), 4)
    (True, 0.7133)
    >>> round(evaluate(inst, ecmp(inst)), 4)  # hashed paths, one level
    0.6592
    >>> round(evaluate(inst, crux(inst, compression="exact")), 4)
    0.7133
    """
    return crux_search(instance, seed=seed, orders=orders, load=load, jitter=jitter,
                       replays=replays, compression=compression, time_limit=time_limit)[0]


def crux_search(instance: CruxInstance, *, seed: int = 0, orders: int = 10,
                load: str = "utilization", jitter: float = 0.0, replays: int = 20,
                compression: str = "dp", time_limit: float | None = None
                ) -> tuple[CruxSolution, dict]:
    """:func:`crux` and what it did within ``time_limit``: ``(solution, info)``.

    Parameters are those of :func:`crux`. Once ``time_limit`` seconds have passed since
    the call began, two steps stop early, and every step still completes one pass, so
    the answer is always a whole plan: the k_j replays (the costly part, one pair
    simulation per job) stop, and the jobs not yet replayed keep ``k_j = 1``, i.e. are
    ranked by intensity alone (replays go in descending intensity, so the most
    intensive jobs are corrected first); and the DP compression draws no further BFS
    order (at least one is split). Paths (one greedy pass) and the ``"exact"``
    compression always finish. A limit that cuts work makes the answer depend on the
    machine's speed; without a cut it is the same as without a limit.

    Returns
    -------
    solution : CruxSolution
    info : dict
        ``corrections`` (jobs whose k_j was replayed) of ``corrections_total``,
        ``orders_tried`` of ``orders`` (DP only) and, when the limit cut either step,
        ``time_limit_exceeded`` saying what was cut.

    Examples
    --------
    >>> from fabricopt.problems.crux import generate
    >>> inst = generate(seed=1, jobs=3, tors=2)
    >>> solution, info = crux_search(inst)
    >>> solution == crux(inst), info["orders_tried"], "time_limit_exceeded" in info
    (True, 10, False)
    >>> _, info = crux_search(inst, time_limit=1e-9)
    >>> info["corrections"], info["orders_tried"]
    (0, 1)
    """
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    if compression not in COMPRESSIONS:
        raise InvalidOption(f"compression = {compression!r}: must be one of "
                         f"{', '.join(COMPRESSIONS)}")
    path, priority, intensity, info, cut = _plan_by(instance, deadline, load=load,
                                                    jitter=jitter, replays=replays)
    edges = contention_dag(instance, path, priority, intensity)
    if compression == "exact":
        _, level, _ = exact_compress(len(instance.jobs), edges, instance.levels)
    else:
        _, level, tried = compress_search(len(instance.jobs), edges, instance.levels,
                                          orders=orders, seed=seed, deadline=deadline)
        info["orders_tried"] = tried
        if tried < max(1, int(orders)):
            cut.append(f"{tried} of {orders} BFS orders split")
    return _solution(instance, path, priority, level), _say_cut(info, cut, time_limit)


def _plan_by(instance: CruxInstance, deadline: float | None, **plan):
    """:func:`_plan` by ``deadline``: ``(path, priority, intensity, info, cut)``, with
    ``info`` counting the k_j replays and ``cut`` listing what the deadline cut."""
    path, priority, intensity, replayed, to_replay = _plan(instance, deadline=deadline,
                                                           **plan)
    cut = []
    if replayed < to_replay:
        cut.append(f"k_j replayed for {replayed} of {to_replay} jobs (the rest keep k_j = 1)")
    return (path, priority, intensity,
            {"corrections": replayed, "corrections_total": to_replay}, cut)


def _say_cut(info: dict, cut: list, time_limit: float | None) -> dict:
    if cut:
        info["time_limit_exceeded"] = (f"the time limit of {time_limit:g} s ran out: "
                                       + "; ".join(cut))
    return info


def ranked_plan(instance: CruxInstance, rule: str, *, load: str = "utilization",
                time_limit: float | None = None) -> CruxSolution:
    """Crux's paths and priorities compressed by a ranking rule, ``"sincronia"``
    (top K-1 alone, the rest share the lowest level) or ``"varys"`` (K equal blocks).
    ``time_limit`` cuts the k_j replays as in :func:`crux_search` (see
    :func:`ranked_search`)."""
    return ranked_search(instance, rule, load=load, time_limit=time_limit)[0]


def ranked_search(instance: CruxInstance, rule: str, *, load: str = "utilization",
                  time_limit: float | None = None) -> tuple[CruxSolution, dict]:
    """:func:`ranked_plan` and ``info`` as in :func:`crux_search` (no orders: the rule
    is one pass). A cut makes the answer machine-dependent.

    Examples
    --------
    >>> from fabricopt.problems.crux import generate
    >>> inst = generate(seed=1, jobs=3, tors=2)
    >>> ranked_search(inst, "varys", time_limit=1e-9)[1]["corrections"]
    0
    """
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    rules = {"sincronia": sincronia_levels, "varys": varys_levels}
    if rule not in rules:
        raise InvalidOption(f"rule = {rule!r}: must be one of {', '.join(rules)}")
    path, priority, _, info, cut = _plan_by(instance, deadline, load=load, jitter=0.0,
                                            replays=20)
    level = rules[rule](ranking(instance.ids, priority), instance.levels)
    return _solution(instance, path, priority, level), _say_cut(info, cut, time_limit)


def ecmp(instance: CruxInstance, *, seed: int = 0) -> CruxSolution:
    """The ECMP baseline: a hashed candidate path per flow, every job on one level.

    The hash is CRC-32 of ``"{seed}/{job id}/{flow index}"`` (stable across runs and
    platforms, unlike Python's salted ``hash``); priorities are all 0, so the single
    level is trivially a valid compression.

    Examples
    --------
    >>> from fabricopt.problems.crux import generate
    >>> solution = ecmp(generate(seed=1, jobs=3, tors=2))
    >>> dict(solution.path), set(solution.level.values())
    ({'j0-bert': (0, 0), 'j1-vgg16': (0, 0, 0, 0), 'j2-gpt350m': ()}, {0})
    """
    path = {job.id: [zlib.crc32(f"{seed}/{job.id}/{f}".encode()) % len(flow.paths)
                     for f, flow in enumerate(job.flows)] for job in instance.jobs}
    return CruxSolution(path, {job.id: 0.0 for job in instance.jobs},
                        {job.id: 0 for job in instance.jobs})
