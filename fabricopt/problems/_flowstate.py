"""Flow state and rate allocation of the fluid contention simulator.

Rates follow strict priority between levels and max-min fairness within one level:
progressive filling (Bertsekas & Gallager, "Data Networks", §6.5.2) of the capacity
the higher levels leave. Two interchangeable back ends hold the active flows:
:class:`ListFlows` (plain Python, fastest for the few flows of a microbenchmark
component, where numpy's per-call overhead dominates) and :class:`ArrayFlows`
(numpy, for large components). Both do the same float operations in the same order,
so they give the same rates; :func:`flow_state` picks one by size.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["ListFlows", "ArrayFlows", "flow_state", "LIST_MAX_FLOWS"]

#: Components with at most this many flows use :class:`ListFlows`.
LIST_MAX_FLOWS = 64

# Links whose fair share is within this relative distance of the minimum saturate
# together: shares are quotients of float sums.
_SAT_RTOL = 1e-12


class ListFlows:
    """Active flows in Python lists.

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
    """

    def __init__(self, cap_bps, bits, flow_job, flow_links, flow_cap_bps, job_level):
        self.cap = list(cap_bps)
        self.fcap = [float(c) for c in flow_cap_bps]
        self.bits = list(bits)
        self.fjob = list(flow_job)
        self.links = [tuple(p) for p in flow_links]
        self.level = [job_level[j] for j in self.fjob]
        n_jobs = len(job_level)
        self.job_flows = [[] for _ in range(n_jobs)]
        for f, j in enumerate(self.fjob):
            self.job_flows[j].append(f)
        self.rem = [0.0] * len(self.bits)
        self.active: list[int] = []
        self.sent_bits = [0.0] * n_jobs
        self._moving: list[tuple[float, int, float]] = []   # (time to finish, flow, rate)
        # Rates depend on the active set alone, and periodic jobs revisit a few sets.
        self._cache: dict[tuple, list[tuple[int, float]]] = {}

    def release(self, job: int) -> bool:
        """Make the job's flows active with all their bits; False if it has none."""
        flows = self.job_flows[job]
        for f in flows:
            self.rem[f] = self.bits[f]
        self.active.extend(flows)
        self.active.sort()
        return bool(flows)

    def allocate(self) -> None:
        """Recompute every active flow's rate."""
        key = tuple(self.active)
        moving = self._cache.get(key)
        if moving is None:
            moving = self._cache[key] = self._fill()
        rem = self.rem
        self._moving = [(rem[f] / r, f, r) for f, r in moving]

    def _fill(self) -> list[tuple[int, float]]:
        """Progressive filling; returns ``(flow, rate)`` of the active flows with rate > 0."""
        links, level, fcap = self.links, self.level, self.fcap
        rate: dict[int, float] = {}
        residual = list(self.cap)
        n_links = len(residual)
        for lev in sorted({level[f] for f in self.active}, reverse=True):
            unfrozen = [f for f in self.active if level[f] == lev]
            while unfrozen:
                count = [0] * n_links
                for f in unfrozen:
                    for e in links[f]:
                        count[e] += 1
                s = min(min((residual[e] / c for e, c in enumerate(count) if c),
                            default=math.inf), min(fcap[f] for f in unfrozen))
                limit = s * (1.0 + _SAT_RTOL)
                saturated = [c > 0 and residual[e] / c <= limit for e, c in enumerate(count)]
                keep = []
                taken = [0] * n_links
                for f in unfrozen:
                    path = links[f]
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
        return [(f, rate[f]) for f in self.active if rate[f] > 0]

    def time_to_finish(self) -> float:
        """Seconds until the next active flow finishes at the current rates (inf if none)."""
        return min((m[0] for m in self._moving), default=math.inf)

    def advance(self, dt: float, dt_in_window: float, eps: float) -> list[int]:
        """Move ``dt`` seconds on; return the job of every flow that finished."""
        rem, fjob = self.rem, self.fjob
        if dt_in_window > 0:
            for _, f, r in self._moving:
                self.sent_bits[fjob[f]] += r * dt_in_window
        finished = []
        still = []
        for ttf, f, r in self._moving:
            rem[f] -= r * dt
            if ttf <= dt + eps:
                rem[f] = 0.0
                finished.append(f)
            else:
                still.append((rem[f] / r, f, r))
        if finished:
            done = set(finished)
            self.active = [f for f in self.active if f not in done]
        self._moving = still
        return [fjob[f] for f in finished]


class ArrayFlows:
    """Active flows in numpy arrays; same interface and arithmetic as :class:`ListFlows`."""

    def __init__(self, cap_bps, bits, flow_job, flow_links, flow_cap_bps, job_level):
        self.cap = np.asarray(cap_bps, dtype=float)
        self.fcap = np.asarray(flow_cap_bps, dtype=float)
        self.bits = np.asarray(bits, dtype=float)
        self.fjob = np.asarray(flow_job, dtype=np.int64)
        F, n_jobs = len(self.bits), len(job_level)
        self.pflow = np.array([f for f, p in enumerate(flow_links) for _ in p], dtype=np.int64)
        self.plink = np.array([e for p in flow_links for e in p], dtype=np.int64)
        level = np.asarray(job_level, dtype=np.int64)[self.fjob] if F else np.zeros(0, np.int64)
        self.level_masks = [level == lev for lev in np.unique(level)[::-1]]
        starts = np.concatenate([[0], np.cumsum(np.bincount(self.fjob, minlength=n_jobs))])
        self.job_slice = [slice(int(starts[j]), int(starts[j + 1])) for j in range(n_jobs)]
        self.rem = np.zeros(F)
        self.rate = np.zeros(F)
        self.active = np.zeros(F, dtype=bool)
        self.sent_bits = np.zeros(n_jobs)
        self._idx = np.zeros(0, dtype=np.int64)
        self._ttf = np.zeros(0)
        self._cache: dict[bytes, np.ndarray] = {}

    def release(self, job: int) -> bool:
        sl = self.job_slice[job]
        self.rem[sl] = self.bits[sl]
        self.active[sl] = True
        return sl.stop > sl.start

    def allocate(self) -> None:
        key = self.active.tobytes()
        rate = self._cache.get(key)
        if rate is None:
            rate = self._cache[key] = self._fill()
        self.rate = rate
        self._idx = np.flatnonzero(self.active & (rate > 0))
        self._ttf = self.rem[self._idx] / rate[self._idx]

    def _fill(self) -> np.ndarray:
        rate = np.zeros(len(self.bits))
        residual = self.cap.copy()
        pflow, plink, L = self.pflow, self.plink, len(self.cap)
        for at_level in self.level_masks:  # highest level first
            unfrozen = self.active & at_level
            while unfrozen.any():
                on = unfrozen[pflow]
                count = np.bincount(plink[on], minlength=L)
                with np.errstate(divide="ignore", invalid="ignore"):
                    share = np.where(count > 0, residual / count, np.inf)
                s = min(float(share.min()) if L else math.inf,
                        float(self.fcap[unfrozen].min()))
                limit = s * (1.0 + _SAT_RTOL)
                saturated = share <= limit
                freeze = unfrozen & (self.fcap <= limit)
                freeze[pflow[on & saturated[plink]]] = True
                rate[freeze] = s
                residual = np.maximum(0.0, residual - np.bincount(plink[freeze[pflow]],
                                                                  minlength=L) * s)
                residual[saturated] = 0.0
                unfrozen &= ~freeze
        return rate

    def time_to_finish(self) -> float:
        return float(self._ttf.min()) if len(self._ttf) else math.inf

    def advance(self, dt: float, dt_in_window: float, eps: float) -> list[int]:
        idx, rate = self._idx, self.rate
        if not len(idx):
            return []
        if dt_in_window > 0:
            self.sent_bits += np.bincount(self.fjob[idx], weights=rate[idx],
                                          minlength=len(self.sent_bits)) * dt_in_window
        self.rem[idx] -= rate[idx] * dt
        done = self._ttf <= dt + eps
        finished = idx[done]
        self.rem[finished] = 0.0
        self.active[finished] = False
        self._idx = idx[~done]
        self._ttf = self.rem[self._idx] / rate[self._idx]
        return self.fjob[finished].tolist()


def flow_state(cap_bps, bits, flow_job, flow_links, flow_cap_bps, job_level, *, backend=None):
    """The back end for a component of this size (see :data:`LIST_MAX_FLOWS`), or the
    one named by ``backend`` (``"list"`` or ``"array"``)."""
    if backend is None:
        backend = "list" if len(bits) <= LIST_MAX_FLOWS else "array"
    cls = {"list": ListFlows, "array": ArrayFlows}[backend]
    return cls(cap_bps, bits, flow_job, flow_links, flow_cap_bps, job_level)
