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

References
----------
.. [1] J. Cao et al., "Crux: GPU-Efficient Communication Scheduling for Deep Learning
   Training", SIGCOMM 2024, §3.1 (model), §4.2 (Examples 1 and 2), Appendix A.
.. [2] D. Bertsekas and R. Gallager, "Data Networks", 2nd ed., §6.5.2 (max-min
   fairness by progressive filling).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from ._flowstate import flow_state

__all__ = ["SimJob", "SimResult", "simulate", "link_components", "utilization"]


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
    """

    gpus: int
    compute_s: float
    overlap: float
    level: int
    flows: tuple = ()


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


def simulate(link_gbps: Mapping[str, float], jobs: Sequence[SimJob], warmup_s: float,
             window_s: float, *, jitter: float = 0.0, seed: int = 0,
             trace: bool = False, backend: str | None = None) -> SimResult:
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
        Used by the correction-factor replay of notes/crux.md §2.4, never by ``evaluate``.
    seed : int
        Seed of the jitter (job ``j`` draws from its own stream ``(seed, j)``).
    trace : bool
        Also return every iteration end time.
    backend : {None, "list", "array"}
        Force a flow-state back end (:mod:`fabricopt.problems._flowstate`); None picks
        by component size. Both give the same rates.

    Returns
    -------
    SimResult

    Notes
    -----
    Cost is linear in the number of events (about 2 + flows per job iteration) times
    the cost of one max-min water-filling over the component's active flows.

    Examples
    --------
    Crux Example 1 (notes/crux.md §2.3): one 8 Gbps link, Job 1 computes 2 s and
    sends 2 s, Job 2 computes 1 s and sends 1 s, 10 GPUs each.

    >>> j1 = SimJob(10, 2.0, 1.0, 1, ((2e9, ("l",)),))
    >>> j2 = SimJob(10, 1.0, 1.0, 0, ((1e9, ("l",)),))
    >>> r = simulate({"l": 8.0}, [j1, j2], 120.0, 12.0)
    >>> round(utilization(r, [10, 10]), 4), r.compute_s.tolist()
    (0.375, [6.0, 3.0])
    """
    window_s = float(window_s)
    warmup_s = float(warmup_s)
    if not window_s > 0 or not warmup_s >= 0:
        raise ValueError(f"window_s = {window_s!r}, warmup_s = {warmup_s!r}: need window > 0 "
                         f"and warm-up >= 0")
    n = len(jobs)
    compute = np.zeros(n)
    sent = np.zeros(n)
    iterations = np.zeros(n, dtype=np.int64)
    ends: list[tuple] = [()] * n
    for group in link_components(jobs):
        part = _Component(link_gbps, [jobs[j] for j in group], group, warmup_s,
                          warmup_s + window_s, jitter, seed, trace, backend).run()
        # a sum of per-iteration pieces may overshoot the window by rounding
        compute[group] = np.minimum(part[0], window_s)
        sent[group], iterations[group] = part[1], part[2]
        for k, j in enumerate(group):
            ends[j] = part[3][k] if trace else ()
    return SimResult(window_s, compute, sent, iterations, tuple(ends) if trace else None)


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


class _Component:
    """The event loop for one group of jobs connected by shared links."""

    def __init__(self, link_gbps, jobs, job_ids, a, b, jitter, seed, trace, backend=None):
        self.a, self.b = a, b
        # Events closer than this are one event: times are sums of float durations.
        self.eps = 1e-12 * max(1.0, b)
        self.trace = trace
        fjob, fbits, paths = [], [], []
        for j, job in enumerate(jobs):
            for nbytes, links in job.flows:
                fjob.append(j)
                fbits.append(8.0 * float(nbytes))
                paths.append(links)
        cap, flinks, fcap = _shared_links(link_gbps, paths)
        self.flows = flow_state(cap, fbits, fjob, flinks, fcap, [int(job.level) for job in jobs],
                                backend=backend)
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

        def start(j: int, t: float) -> None:
            c = self._compute_time(j)
            comp_end[j] = t + c
            elig[j] = t + self.o[j] * c
            released[j] = False
            left[j] = self.nflows[j]
            compute_in[j] += max(0.0, min(t + c, b) - max(t, a))

        for j in range(J):
            start(j, 0.0)
        t = 0.0
        dirty = False
        inf = math.inf
        while True:
            # Settle what happens at time t, job by job (jobs interact only through the
            # flows' rates), and note each job's next timer: eligibility or compute end.
            timer = inf
            limit = t + eps
            for j in range(J):
                while True:
                    if not released[j]:
                        if elig[j] > limit:
                            timer = min(timer, elig[j])
                            break
                        released[j] = True
                        dirty = flows.release(j) or dirty
                    if left[j]:
                        break
                    if comp_end[j] > limit:
                        timer = min(timer, comp_end[j])
                        break
                    if a <= t < b:
                        done_iters[j] += 1
                    if ends is not None:
                        ends[j].append(t)
                    start(j, t)
            if dirty:
                flows.allocate()
                dirty = False
            t_next = min(timer, t + flows.time_to_finish())
            in_window = max(0.0, min(t_next, b) - max(t, a))
            if t_next >= b:
                flows.advance(0.0, in_window, eps)
                break
            for j in flows.advance(t_next - t, in_window, eps):
                left[j] -= 1
                dirty = True
            t = t_next
        return (np.array(compute_in), np.asarray(flows.sent_bits, dtype=float) / 8.0,
                np.array(done_iters, dtype=np.int64),
                [tuple(e) for e in ends] if ends is not None else None)
