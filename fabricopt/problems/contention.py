"""The fluid contention simulator that scores the ``crux`` kind (docs/formats.rst, crux).

Jobs share links. Every job repeats iterations: it computes ``compute_s`` on its own
GPUs (never slowed by the network); its flows become eligible after
``overlap * compute_s`` of that compute; the iteration ends when the compute and all
its flows are done, and the next one starts at once. Links are shared fluidly: strict
priority between levels (a higher level is served first), max-min fair among the flows
of one level across all links (progressive filling of the capacity the higher levels
leave).

The simulation is event-driven: between two events (a flow becomes eligible, a flow
finishes, a compute phase ends) every rate is constant, so time jumps from event to
event and rates are recomputed only when the set of active flows changes. Jobs that
share no link, directly or through other jobs, never affect one another: they are
simulated as separate components (smaller, faster), which also makes a component's
numbers independent of the rest of the cluster.

Each component runs in a compiled event loop (:mod:`fabricopt.problems._simkernel`);
the Python loop below (``backend="python"``) is its oracle: both do the same float
operations in the same order and give the same numbers, bit for bit.

References
----------
.. [1] J. Cao et al., "Crux: GPU-Efficient Communication Scheduling for Deep Learning
   Training", SIGCOMM 2024, §3.1 (model), §4.2 (Examples 1 and 2), Appendix A.
.. [2] D. Bertsekas and R. Gallager, "Data Networks", 2nd ed., §6.5.2 (max-min
   fairness by progressive filling).
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from fabricopt.errors import InvalidArgument, InvalidInstance, InvalidOption
from fabricopt.problems._flowstate import FlowState

__all__ = ["SimJob", "SimResult", "simulate", "link_components", "utilization",
           "MAX_EVENTS", "require_bounded_work"]

# Event times within this fraction of the simulated span are one event.
_EVENT_RTOL = 1e-12

#: Most events one simulation may take (our limit, about half a minute on one core):
#: instances that would need more are rejected before any work, never run unbounded.
MAX_EVENTS = 2_000_000

# Event loops `simulate` runs (its ``backend``).
_BACKENDS = (None, "compiled", "python", "list", "array")


@dataclass(frozen=True)
class SimJob:
    """One job as the simulator sees it: a fixed path per flow and a priority level.

    Parameters
    ----------
    gpus : int
        GPUs the job holds; they idle whenever the job waits for the network.
    compute_s : float
        Compute seconds per iteration (> 0).
    overlap : float
        Fraction of the compute done before the flows become eligible, in [0, 1].
    level : int
        Priority level; higher is served first.
    flows : tuple of (bytes, tuple of link names)
        Bytes each flow moves per iteration, and the links of its path.
    flow_cap_gbps : tuple of float
        Empty (the default: no limit), or one rate limit per flow in 10^9 bit/s (> 0;
        ``inf`` for none): a sender-side cap, as a coflow scheduler's rate allocation
        sets (Varys's MADD).
    """

    gpus: int
    compute_s: float
    overlap: float
    level: int
    flows: tuple = ()
    flow_cap_gbps: tuple = ()


@dataclass(frozen=True)
class SimResult:
    """What happened inside the measurement window ``[warmup_s, warmup_s + window_s)``.

    Attributes
    ----------
    window_s : float
    compute_s : numpy.ndarray
        Seconds each job spent computing inside the window.
    sent_bytes : numpy.ndarray
        Bytes each job's flows moved inside the window (summed over its flows).
    iterations : numpy.ndarray
        Iterations each job finished inside the window.
    iteration_ends : tuple of tuple of float, or None
        Every iteration end time of every job (from t = 0), when ``trace=True``.
    """

    window_s: float
    compute_s: np.ndarray
    sent_bytes: np.ndarray
    iterations: np.ndarray
    iteration_ends: tuple | None = field(default=None, compare=False)


def utilization(result: SimResult, gpus: Sequence[int]) -> float:
    """GPU utilization: ``sum_j gpus_j * compute_j / (sum_j gpus_j * window)``."""
    g = np.asarray(gpus, dtype=float)
    total = float(g.sum()) * result.window_s
    return min(1.0, float(g @ result.compute_s) / total) if total > 0 else 0.0


def link_components(jobs: Sequence[SimJob]) -> list[list[int]]:
    """Groups of job indices that are connected by shared links (union-find).

    Each group is sorted, and groups are ordered by their first job.

    Examples
    --------
    >>> a = SimJob(1, 1.0, 1.0, 0, ((1e9, ("x",)),))
    >>> b = SimJob(1, 1.0, 1.0, 0, ((1e9, ("x", "y")),))
    >>> c = SimJob(1, 1.0, 1.0, 0, ((1e9, ("z",)),))
    >>> link_components([a, b, c])
    [[0, 1], [2]]
    """
    parent = list(range(len(jobs)))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    owner: dict[str, int] = {}
    for j, job in enumerate(jobs):
        for _, links in job.flows:
            for link in links:
                if link in owner:
                    ra, rb = find(owner[link]), find(j)
                    if ra != rb:
                        parent[max(ra, rb)] = min(ra, rb)
                else:
                    owner[link] = j
    groups: dict[int, list[int]] = {}
    for j in range(len(jobs)):
        groups.setdefault(find(j), []).append(j)
    return sorted(groups.values(), key=lambda g: g[0])


def require_bounded_work(horizon_s: float, iteration_s: Sequence[float],
                         flows: Sequence[int], names: Sequence[str]) -> None:
    """Raise ``InvalidInstance`` if simulating ``[0, horizon_s)`` could exceed :data:`MAX_EVENTS`.

    Job j starts at most ``horizon_s / iteration_s[j] + 1`` iterations, each at most
    ``2 + flows[j]`` events (eligibility, compute end, one per flow finish), for any
    paths, levels and contention, as long as ``iteration_s[j]`` is a lower bound on
    every iteration of j.

    Parameters
    ----------
    horizon_s : float
        Warm-up plus window.
    iteration_s : sequence of float
        A lower bound on each job's iteration (> 0).
    flows : sequence of int
        Flows per job.
    names : sequence of str
        How the message names each job.

    Raises
    ------
    InvalidInstance
        Naming the ratio ``(warmup_s + window_s) / iteration`` of the job that weighs most.

    Examples
    --------
    >>> require_bounded_work(60.0, [1.0, 2.0], [1, 3], ["a", "b"])
    >>> require_bounded_work(1e9, [1.0, 2.0], [1, 3], ["a", "b"])
    Traceback (most recent call last):
    ...
    fabricopt.errors.InvalidInstance: (warmup_s + window_s) / iteration of job 'a' = 1e+09: simulating it takes up to 5.5e+09 events, over the limit of 2e+06 (shorten the window or lengthen the fastest iterations)
    """
    with np.errstate(over="ignore", divide="ignore"):
        ratio = np.float64(horizon_s) / np.asarray(iteration_s, dtype=float)
        events = (ratio + 1) * (2 + np.asarray(flows, dtype=float))
    total = float(events.sum()) if len(events) else 0.0
    if not total <= MAX_EVENTS:
        worst = int(np.nanargmax(events)) if np.isfinite(events).any() else 0
        raise InvalidInstance(
            f"(warmup_s + window_s) / iteration of job {names[worst]!r} = "
            f"{float(ratio[worst]):.3g}: simulating it takes up to {total:.2g} events, over "
            f"the limit of {MAX_EVENTS:.0e} (shorten the window or lengthen the fastest "
            f"iterations)")


def simulate(link_gbps: Mapping[str, float], jobs: Sequence[SimJob], warmup_s: float,
             window_s: float, *, jitter: float = 0.0, seed: int = 0,
             trace: bool = False, backend: str | None = None,
             names: Sequence[str] | None = None) -> SimResult:
    """Run the fluid simulation from a simultaneous start at t = 0.

    Parameters
    ----------
    link_gbps : mapping of str to float
        Capacity of every link the flows name, in 10^9 bit/s (> 0).
    jobs : sequence of SimJob
    warmup_s, window_s : float
        The window ``[warmup_s, warmup_s + window_s)`` is measured; ``window_s > 0``.
    jitter : float
        Each iteration's compute time is ``compute_s * (1 + u)``, ``u`` uniform in
        ``[-jitter, jitter]`` (0, the default, is the deterministic model of §5.6).
        Used by the correction-factor replay (fabricopt docs, *Departures*, crux-2.4),
        never by ``evaluate``.
    seed : int
        Seed of the jitter (job ``j`` draws from its own stream ``(seed, j)``).
    trace : bool
        Also return every iteration end time.
    names : sequence of str, optional
        How an error names each job (default ``#0``, ``#1``, ...).
    backend : {None, "compiled", "python", "list", "array"}
        The event loop: None or ``"compiled"`` runs the compiled kernel
        (:mod:`fabricopt.problems._simkernel`); ``"python"`` the Python loop, its oracle,
        whose fill kernel (:mod:`fabricopt.problems._flowstate`) is picked by the size of
        each cluster of active flows, or forced by ``"list"`` or ``"array"``. All give
        the same numbers, bit for bit.

    Returns
    -------
    SimResult

    Raises
    ------
    InvalidInstance
        If the span could take more than :data:`MAX_EVENTS` events
        (:func:`require_bounded_work`): the work is bounded before it starts.

    Notes
    -----
    Cost is linear in the number of events (about 2 + flows per job iteration) times
    the cost of refilling the clusters of active flows an event touches (a cache hit
    when the cluster was seen before).

    Examples
    --------
    Crux Example 1 (Fig. 11; fabricopt docs, *Departures*, crux-2.3): one 8 Gbps link,
    Job 1 computes 2 s and sends 2 s, Job 2 computes 1 s and sends 1 s, 10 GPUs each.

    >>> j1 = SimJob(10, 2.0, 1.0, 1, ((2e9, ("l",)),))
    >>> j2 = SimJob(10, 1.0, 1.0, 0, ((1e9, ("l",)),))
    >>> r = simulate({"l": 8.0}, [j1, j2], 120.0, 12.0)
    >>> round(utilization(r, [10, 10]), 4), r.compute_s.tolist()
    (0.375, [6.0, 3.0])
    """
    window_s = float(window_s)
    warmup_s = float(warmup_s)
    if not window_s > 0 or not warmup_s >= 0:
        raise InvalidArgument(f"window_s = {window_s!r}, warmup_s = {warmup_s!r}: need window > 0 "
                         f"and warm-up >= 0")
    if backend not in _BACKENDS:
        raise InvalidOption(f"backend = {backend!r}: must be one of "
                            f"{', '.join(map(repr, _BACKENDS))}")
    fastest_s = [_fastest_iteration_s(link_gbps, job, jitter) for job in jobs]
    require_bounded_work(warmup_s + window_s, fastest_s, [len(job.flows) for job in jobs],
                         names or [f"#{j}" for j in range(len(jobs))])
    for j, job in enumerate(jobs):
        if job.flow_cap_gbps and (len(job.flow_cap_gbps) != len(job.flows) or not all(
                float(c) > 0 for c in job.flow_cap_gbps)):
            raise InvalidArgument(f"jobs[{j}].flow_cap_gbps = {job.flow_cap_gbps!r}: one "
                                  f"limit > 0 per flow ({len(job.flows)})")
    n = len(jobs)
    compute = np.zeros(n)
    sent = np.zeros(n)
    iterations = np.zeros(n, dtype=np.int64)
    ends: list[tuple] = [()] * n
    for group in link_components(jobs):
        members = [jobs[j] for j in group]
        if backend in (None, "compiled"):
            part = _run_compiled(link_gbps, members, group, warmup_s, warmup_s + window_s,
                                 jitter, seed, trace, [fastest_s[j] for j in group])
        else:
            part = _Component(link_gbps, members, group, warmup_s, warmup_s + window_s,
                              jitter, seed, trace, None if backend == "python" else backend
                              ).run()
        # a sum of per-iteration pieces may overshoot the window by rounding
        compute[group] = np.minimum(part[0], window_s)
        sent[group], iterations[group] = part[1], part[2]
        for k, j in enumerate(group):
            ends[j] = part[3][k] if trace else ()
    return SimResult(window_s, compute, sent, iterations, tuple(ends) if trace else None)


def _fastest_iteration_s(link_gbps, job: SimJob, jitter: float) -> float:
    """A lower bound on every iteration of ``job``: its compute, or the overlap plus its
    slowest flow alone on its path, with the shortest compute the jitter allows."""
    compute = float(job.compute_s) * max(0.0, 1.0 - abs(float(jitter)))
    alone = max((8.0 * float(nbytes) / (min(float(link_gbps[e]) for e in links) * 1e9)
                 for nbytes, links in job.flows if links), default=0.0)
    return max(compute, float(job.overlap) * compute + alone)


def _shared_links(link_gbps, paths):
    """Number the links that two or more flows use; fold the others into a per-flow cap.

    Returns ``(capacities in bit/s, per-flow tuples of link numbers, per-flow caps)``.
    A link only one flow uses limits that flow alone, so its smallest such capacity is
    the flow's cap (``inf`` if it has none): the same rates, fewer links to fill.
    """
    users: dict[str, int] = {}
    for path in paths:
        for e in path:
            users[e] = users.get(e, 0) + 1
    names: dict[str, int] = {}
    cap: list[float] = []
    flinks, fcap = [], []
    for path in paths:
        nums = []
        own = math.inf
        for e in path:
            if users[e] == 1:
                own = min(own, float(link_gbps[e]) * 1e9)
                continue
            if e not in names:
                names[e] = len(cap)
                cap.append(float(link_gbps[e]) * 1e9)
            nums.append(names[e])
        flinks.append(tuple(nums))
        fcap.append(own)
    return cap, flinks, fcap


def _component_flows(link_gbps, jobs):
    """The flows of a group of jobs, numbered job by job.

    Returns ``(shared link capacities in bit/s, bits per flow, job of each flow,
    per-flow tuples of shared link numbers, per-flow caps in bit/s)``.
    """
    fjob, fbits, paths = [], [], []
    for j, job in enumerate(jobs):
        for nbytes, links in job.flows:
            fjob.append(j)
            fbits.append(8.0 * float(nbytes))
            paths.append(links)
    cap, flinks, fcap = _shared_links(link_gbps, paths)
    limits = [limit for job in jobs
              for limit in (job.flow_cap_gbps or (math.inf,) * len(job.flows))]
    fcap = [min(own, float(limit) * 1e9) for own, limit in zip(fcap, limits)]
    return cap, fbits, fjob, flinks, fcap


def _event_eps(b: float) -> float:
    # Events closer than this are one event: times are sums of float durations, whose
    # rounding grows with the span simulated; relative, so the simulation is the same
    # at every time scale (b > 0: the window is positive)
    return _EVENT_RTOL * b


def _draws_per_job(b: float, fastest_s) -> list[int]:
    """Jitter draws to give each job: it starts at most once per iteration ending before
    ``b``, plus the first (:func:`require_bounded_work`'s bound). The kernel says so if a
    job needs more, and gets twice as many."""
    return [int(min(b / s, MAX_EVENTS)) + 2 if s > 0 else 2 for s in fastest_s]


def _run_compiled(link_gbps, jobs, job_ids, a, b, jitter, seed, trace, fastest_s):
    """:class:`_Component`'s ``run`` by the compiled kernel (:mod:`._simkernel`): the
    same operations in the same order, so the same numbers."""
    from fabricopt.problems._simkernel import RAN_OUT_OF_DRAWS, run_component

    cap, fbits, fjob, flinks, fcap = _component_flows(link_gbps, jobs)
    path_ptr = np.zeros(len(flinks) + 1, dtype=np.int64)
    np.cumsum([len(p) for p in flinks], out=path_ptr[1:])
    path_links = np.fromiter((e for p in flinks for e in p), dtype=np.int64,
                             count=int(path_ptr[-1]))
    job_ptr = np.zeros(len(jobs) + 1, dtype=np.int64)
    np.cumsum([len(job.flows) for job in jobs], out=job_ptr[1:])
    arrays = (np.array(cap, dtype=float), path_ptr, path_links, np.array(fbits, dtype=float),
              np.array(fjob, dtype=np.int64), np.array(fcap, dtype=float),
              np.array([int(jobs[j].level) for j in fjob], dtype=np.int64), job_ptr,
              np.array([float(job.compute_s) for job in jobs]),
              np.array([float(job.overlap) for job in jobs]))
    jitter = float(jitter)
    starts = _draws_per_job(b, fastest_s)
    while True:
        if jitter > 0:
            # job j's k-th draw of its own stream (seed, j), as _Component draws them
            draws = np.concatenate([np.random.default_rng([int(seed) % 2**32, j]).uniform(
                -jitter, jitter, size=k) for j, k in zip(job_ids, starts)])
            draw_ptr = np.zeros(len(jobs) + 1, dtype=np.int64)
            np.cumsum(starts, out=draw_ptr[1:])
        else:
            draws, draw_ptr = np.zeros(0), np.zeros(len(jobs) + 1, dtype=np.int64)
        compute_in, sent_bits, done, end_job, end_t, status = run_component(
            *arrays, draws, draw_ptr, jitter > 0, float(a), float(b), _event_eps(b),
            bool(trace))
        if status != RAN_OUT_OF_DRAWS:
            break
        starts = [2 * k for k in starts]
    ends = None
    if trace:
        ends = [[] for _ in jobs]
        for j, t in zip(end_job.tolist(), end_t.tolist()):
            ends[j].append(t)
        ends = [tuple(e) for e in ends]
    return compute_in, sent_bits / 8.0, done, ends


class _Component:
    """The event loop for one group of jobs connected by shared links, in Python (the
    oracle of the compiled kernel)."""

    def __init__(self, link_gbps, jobs, job_ids, a, b, jitter, seed, trace, backend=None):
        self.a, self.b = a, b
        self.eps = _event_eps(b)
        self.trace = trace
        cap, fbits, fjob, flinks, fcap = _component_flows(link_gbps, jobs)
        self.flows = FlowState(cap, fbits, fjob, flinks, fcap, [int(job.level) for job in jobs],
                               (a, b), backend)
        self.C = [float(job.compute_s) for job in jobs]
        self.o = [float(job.overlap) for job in jobs]
        self.nflows = [len(job.flows) for job in jobs]
        self.jitter = float(jitter)
        self.rngs = ([np.random.default_rng([int(seed) % 2**32, j]) for j in job_ids]
                     if self.jitter > 0 else None)

    def _compute_time(self, j: int) -> float:
        if self.rngs is None:
            return self.C[j]
        return self.C[j] * (1.0 + float(self.rngs[j].uniform(-self.jitter, self.jitter)))

    def run(self):
        J = len(self.C)
        eps, a, b = self.eps, self.a, self.b
        flows = self.flows
        compute_in = [0.0] * J
        done_iters = [0] * J
        ends = [[] for _ in range(J)] if self.trace else None
        comp_end = [0.0] * J
        elig = [0.0] * J
        released = [False] * J
        left = [0] * J
        # Each job waits on one timer (eligibility or compute end) or on its flows.
        timers: list[tuple[float, int]] = []
        dirty = False

        def start(j: int, t: float) -> None:
            c = self._compute_time(j)
            comp_end[j] = t + c
            elig[j] = t + self.o[j] * c
            released[j] = False
            left[j] = self.nflows[j]
            compute_in[j] += max(0.0, min(t + c, b) - max(t, a))

        def settle(j: int, t: float) -> None:
            """Whatever job j does at time t, up to its next timer or its flows."""
            nonlocal dirty
            limit = t + eps
            while True:
                if not released[j]:
                    if elig[j] > limit:
                        heapq.heappush(timers, (elig[j], j))
                        return
                    released[j] = True
                    dirty = flows.release(j, t) or dirty
                if left[j]:
                    return
                if comp_end[j] > limit:
                    heapq.heappush(timers, (comp_end[j], j))
                    return
                if a <= t < b:
                    done_iters[j] += 1
                if ends is not None:
                    ends[j].append(t)
                start(j, t)

        for j in range(J):
            start(j, 0.0)
        due = set(range(J))
        t = 0.0
        inf = math.inf
        while True:
            for j in sorted(due):
                settle(j, t)
            if dirty:
                flows.allocate(t)
                dirty = False
            t_next = min(timers[0][0] if timers else inf, flows.next_finish())
            if t_next >= b:
                flows.close()
                break
            due = set()
            for j in flows.advance(t_next, eps):
                left[j] -= 1
                dirty = True
                if not left[j]:
                    due.add(j)
            while timers and timers[0][0] <= t_next + eps:
                due.add(heapq.heappop(timers)[1])
            t = t_next
        return (np.array(compute_in), np.asarray(flows.sent_bits, dtype=float) / 8.0,
                np.array(done_iters, dtype=np.int64),
                [tuple(e) for e in ends] if ends is not None else None)
