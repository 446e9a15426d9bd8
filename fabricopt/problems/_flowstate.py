"""Flow state and rate allocation of the fluid contention simulator.

Rates follow strict priority between levels and max-min fairness within one level:
progressive filling (Bertsekas & Gallager, "Data Networks", §6.5.2) of the capacity
the higher levels leave.

Max-min rates of flows that share no link, directly or through other *active* flows,
are independent, so when flows start or finish only the active clusters they touch are
refilled (:class:`FlowState`); the others keep their rates and their finish times. A
cluster's rates depend on its set of flows alone, and periodic jobs revisit a few sets,
so fills are cached. Remaining bits are brought up to date only when a flow's rate
changes, and finish times wait in a heap, so an event costs the size of the clusters it
touches, not of the component.

Two interchangeable fill kernels do the same float operations in the same order, so
they give the same rates: :func:`fill_list` (plain Python, fastest for small clusters,
where numpy's per-call overhead dominates) and :func:`fill_array` (numpy).
:data:`LIST_MAX_FLOWS` picks one by cluster size (measured by
``scripts/speed_baseline.py --fill``).
"""

from __future__ import annotations

from fabricopt.errors import InvalidOption

import heapq
import math

import numpy as np

__all__ = ["FlowState", "fill_list", "fill_array", "LIST_MAX_FLOWS"]

#: Clusters with at most this many flows are filled by :func:`fill_list`.
LIST_MAX_FLOWS = 64

# Links whose fair share is within this relative distance of the minimum saturate
# together: shares are quotients of float sums.
_SAT_RTOL = 1e-12

# Fills remembered per component; past it the cache starts over (bounded memory).
_CACHE_MAX = 200_000


def fill_list(cap, paths, fcap, level) -> list[float]:
    """Progressive filling in plain Python.

    Parameters
    ----------
    cap : list of float
        Capacity of each link 0..L-1 (bit/s).
    paths : list of tuple of int
        The links of each flow.
    fcap : list of float
        Each flow's own rate limit (``inf`` if none).
    level : list of int
        Each flow's priority level; higher is served first.

    Returns
    -------
    list of float
        The rate of every flow.

    Examples
    --------
    Bertsekas & Gallager's shape: f0 on links 0 and 1, f1 on 0, f2 on 1.

    >>> fill_list([1.0, 2.0], [(0, 1), (0,), (1,)], [math.inf] * 3, [0, 0, 0])
    [0.5, 0.5, 1.5]
    """
    n_links = len(cap)
    rate = [0.0] * len(paths)
    residual = list(cap)
    flows = range(len(paths))
    for lev in sorted(set(level), reverse=True):
        unfrozen = [f for f in flows if level[f] == lev]
        while unfrozen:
            count = [0] * n_links
            for f in unfrozen:
                for e in paths[f]:
                    count[e] += 1
            s = min(min((residual[e] / c for e, c in enumerate(count) if c),
                        default=math.inf), min(fcap[f] for f in unfrozen))
            limit = s * (1.0 + _SAT_RTOL)
            saturated = [c > 0 and residual[e] / c <= limit for e, c in enumerate(count)]
            keep = []
            taken = [0] * n_links
            for f in unfrozen:
                path = paths[f]
                if fcap[f] <= limit or any(saturated[e] for e in path):
                    rate[f] = s
                    for e in path:
                        taken[e] += 1
                else:
                    keep.append(f)
            for e, k in enumerate(taken):
                if k:
                    residual[e] = 0.0 if saturated[e] else max(0.0, residual[e] - k * s)
            unfrozen = keep
    return rate


def fill_array(cap, paths, fcap, level) -> list[float]:
    """:func:`fill_list` with numpy arrays: the same operations, so the same rates.

    Examples
    --------
    >>> fill_array([1.0, 2.0], [(0, 1), (0,), (1,)], [math.inf] * 3, [0, 0, 0])
    [0.5, 0.5, 1.5]
    """
    n_links = len(cap)
    pflow = np.array([f for f, p in enumerate(paths) for _ in p], dtype=np.int64)
    plink = np.array([e for p in paths for e in p], dtype=np.int64)
    fcap = np.asarray(fcap, dtype=float)
    level = np.asarray(level, dtype=np.int64)
    rate = np.zeros(len(paths))
    residual = np.array(cap, dtype=float)
    for lev in np.unique(level)[::-1]:  # highest level first
        unfrozen = level == lev
        while unfrozen.any():
            on = unfrozen[pflow]
            count = np.bincount(plink[on], minlength=n_links)
            with np.errstate(divide="ignore", invalid="ignore"):
                share = np.where(count > 0, residual / count, np.inf)
            s = min(float(share.min()) if n_links else math.inf, float(fcap[unfrozen].min()))
            limit = s * (1.0 + _SAT_RTOL)
            saturated = share <= limit
            freeze = unfrozen & (fcap <= limit)
            freeze[pflow[on & saturated[plink]]] = True
            rate[freeze] = s
            residual = np.maximum(0.0, residual - np.bincount(plink[freeze[pflow]],
                                                              minlength=n_links) * s)
            residual[saturated] = 0.0
            unfrozen &= ~freeze
    return rate.tolist()


class FlowState:
    """The active flows of one component of the simulation, in absolute time.

    Parameters
    ----------
    cap_bps : list of float
        Link capacities in bit/s (links are numbered 0..L-1).
    bits : list of float
        Bits each flow moves per iteration.
    flow_job : list of int
        The job of each flow; a job's flows are contiguous.
    flow_links : list of tuple of int
        The shared links of each flow's path.
    flow_cap_bps : list of float
        Each flow's own rate limit: the smallest capacity among the links of its path
        that no other flow uses (``inf`` if none). Such a link is a constraint of one
        flow, so it is cheaper as a cap than as a link to fill.
    job_level : list of int
        Priority level of each job; higher is served first.
    window : (float, float)
        ``[a, b)``, where :attr:`sent_bits` is counted.
    kernel : {None, "list", "array"}
        Force a fill kernel; None picks by cluster size (:data:`LIST_MAX_FLOWS`).
    """

    def __init__(self, cap_bps, bits, flow_job, flow_links, flow_cap_bps, job_level,
                 window, kernel=None):
        if kernel not in (None, "list", "array"):
            raise InvalidOption(f"backend = {kernel!r}: must be None, 'list' or 'array'")
        self.kernel = kernel
        self.cap = [float(c) for c in cap_bps]
        self.fcap = [float(c) for c in flow_cap_bps]
        self.bits = [float(x) for x in bits]
        self.fjob = list(flow_job)
        self.paths = [tuple(p) for p in flow_links]
        self.level = [job_level[j] for j in self.fjob]
        self.a, self.b = window
        n_jobs, F = len(job_level), len(self.bits)
        self.job_flows = [[] for _ in range(n_jobs)]
        for f, j in enumerate(self.fjob):
            self.job_flows[j].append(f)
        self.on_link: list[set[int]] = [set() for _ in self.cap]   # active flows per link
        self.active = [False] * F
        self.rem = [0.0] * F        # bits left at time t0
        self.t0 = [0.0] * F
        self.rate = [0.0] * F
        self.version = [0] * F      # invalidates stale heap entries
        self.heap: list[tuple[float, int, int]] = []   # (finish time, version, flow)
        self.sent_bits = [0.0] * n_jobs
        self.touched: set[int] = set()
        self._cache: dict[tuple, list[float]] = {}

    def release(self, job: int, t: float) -> bool:
        """Make the job's flows active with all their bits at time ``t``; False if none."""
        flows = self.job_flows[job]
        for f in flows:
            self.active[f] = True
            self.rem[f], self.t0[f], self.rate[f] = self.bits[f], t, 0.0
            for e in self.paths[f]:
                self.on_link[e].add(f)
        self.touched.update(flows)
        return bool(flows)

    def _cluster(self) -> list[int]:
        """The active flows connected (through shared links) to a touched flow."""
        seen_links: set[int] = set()
        members: set[int] = set()
        stack = list(self.touched)
        self.touched = set()
        while stack:
            f = stack.pop()
            if self.active[f]:
                members.add(f)
            for e in self.paths[f]:
                if e not in seen_links:
                    seen_links.add(e)
                    stack.extend(g for g in self.on_link[e] if g not in members)
        return sorted(members)

    def _fill(self, members: list[int]) -> list[float]:
        key = tuple(members)
        rates = self._cache.get(key)
        if rates is None:
            local: dict[int, int] = {}
            paths = [tuple(local.setdefault(e, len(local)) for e in self.paths[f])
                     for f in members]
            cap = [0.0] * len(local)
            for e, k in local.items():
                cap[k] = self.cap[e]
            kernel = self.kernel or ("list" if len(members) <= LIST_MAX_FLOWS else "array")
            fill = fill_list if kernel == "list" else fill_array
            rates = fill(cap, paths, [self.fcap[f] for f in members],
                         [self.level[f] for f in members])
            if len(self._cache) >= _CACHE_MAX:
                self._cache.clear()
            self._cache[key] = rates
        return rates

    def _settle(self, f: int, t: float) -> None:
        """Bring flow f's remaining and sent bits up to time t at its current rate."""
        r = self.rate[f]
        if r > 0:
            dt = t - self.t0[f]
            self.rem[f] -= r * dt
            inside = min(t, self.b) - max(self.t0[f], self.a)
            if inside > 0:
                self.sent_bits[self.fjob[f]] += r * inside
        self.t0[f] = t

    def allocate(self, t: float) -> None:
        """Refill the clusters of the flows released or finished since the last call."""
        members = self._cluster()
        if not members:
            return
        for f, r in zip(members, self._fill(members)):
            if r == self.rate[f]:
                continue      # same rate: same trajectory, keep its finish time
            self._settle(f, t)
            self.rate[f] = r
            self.version[f] += 1
            if r > 0:
                heapq.heappush(self.heap, (t + self.rem[f] / r, self.version[f], f))

    def next_finish(self) -> float:
        """Absolute time of the next flow finish at the current rates (inf if none)."""
        heap = self.heap
        while heap and heap[0][1] != self.version[heap[0][2]]:
            heapq.heappop(heap)
        return heap[0][0] if heap else math.inf

    def advance(self, t: float, eps: float) -> list[int]:
        """Finish every flow due by ``t`` (within ``eps``); return the job of each."""
        heap, finished = self.heap, []
        while heap and heap[0][0] <= t + eps:
            _, version, f = heapq.heappop(heap)
            if version != self.version[f]:
                continue
            self._settle(f, t)
            self.rem[f], self.rate[f], self.active[f] = 0.0, 0.0, False
            self.version[f] += 1
            for e in self.paths[f]:
                self.on_link[e].discard(f)
            self.touched.add(f)
            finished.append(self.fjob[f])
        return finished

    def close(self) -> None:
        """Count the bits the still-moving flows send until the window ends."""
        for f, active in enumerate(self.active):
            if active:
                self._settle(f, self.b)
