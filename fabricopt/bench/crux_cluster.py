"""A shared cluster with arrivals and departures, rescheduled at every change (Crux §6.3).

Jobs arrive over a horizon, take free hosts (scattered, as a fragmented production
cluster gives them), train a fixed number of iterations and leave. Whenever a job
arrives or finishes, the scheduler under test plans the jobs then present, as Crux
re-runs at every arrival and completion (§4.1), and the fluid simulator runs the plan
until the next change. Between changes the set of jobs is fixed, so one epoch is one
simulation from a common start; an iteration cut by a change is lost and restarted,
the same for every scheduler.

Scored per scheduler: the GPU utilization of the run (busy GPU-seconds over allocated
GPU-seconds, summed over epochs) and every job's completion time.

Simplifications (ours): the paper simulates a two-layer Clos of 173 ToRs and 16
aggregation switches driven by its production trace (§6.3); here the Clos is smaller
(see the experiment), arrivals are Poisson, sizes follow the paper's statement that
over 10 % of jobs use 128 GPUs or more and the largest uses 512 (§2.2), capped at the
cluster's size, and durations are minutes rather than hours so that a run fits on a
laptop.

References
----------
.. [1] J. Cao et al., "Crux", SIGCOMM 2024, §2.2 (job sizes in the trace), §4.1
   (rescheduling at every arrival and completion), §6.3 (trace simulation).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from fabricopt.bench.crux_testbed import job_flows, nic_clos_links
from fabricopt.errors import InvalidArgument
from fabricopt.problems.contention import simulate
from fabricopt.problems.crux import CruxInstance, sim_jobs

__all__ = ["ClusterJob", "SIZES_GPUS", "SIZE_WEIGHTS", "draw_jobs", "run_cluster", "SCHEDULERS"]

#: Job sizes in GPUs and their weights (assumption): 13 % of jobs at 128 GPUs or more
#: and the largest at 512, as Crux §2.2 states of its trace; the split below 128 is ours.
SIZES_GPUS = (8, 16, 32, 64, 128, 256, 512)
SIZE_WEIGHTS = (0.30, 0.22, 0.20, 0.15, 0.08, 0.03, 0.02)


@dataclass
class ClusterJob:
    """A job of the trace: model, size, arrival, iterations to train; filled in as it
    runs: its hosts, start, finish, iterations done."""

    id: str
    model: str
    gpus: int
    arrival_s: float
    iterations: int
    hosts: list = field(default_factory=list)
    start_s: float | None = None
    finish_s: float | None = None
    done: int = 0


def draw_jobs(seed: int, jobs: int, cluster_gpus: int, horizon_s: float,
              compute_s: Mapping[str, float], alone_s: tuple = (60.0, 240.0)
              ) -> list[ClusterJob]:
    """``jobs`` Poisson arrivals over ``horizon_s``, sizes from :data:`SIZES_GPUS` (those
    that fit ``cluster_gpus``), a uniform model of ``compute_s`` (model -> compute
    seconds per iteration), and iterations for ``alone_s`` seconds of compute (uniform
    in the range).

    Examples
    --------
    >>> [(j.gpus, j.iterations) for j in draw_jobs(0, 3, 64, 100.0, {"bert": 0.35})]
    [(8, 589), (64, 483), (32, 451)]
    """
    if jobs < 1 or cluster_gpus < SIZES_GPUS[0]:
        raise InvalidArgument(f"jobs = {jobs}, cluster_gpus = {cluster_gpus}: need a job "
                              f"and room for {SIZES_GPUS[0]} GPUs")
    rng = np.random.default_rng(seed)
    sizes = [s for s in SIZES_GPUS if s <= cluster_gpus]
    weights = np.array(SIZE_WEIGHTS[:len(sizes)])
    arrivals = np.sort(rng.uniform(0.0, horizon_s, size=jobs))
    names = sorted(compute_s)
    out = []
    for k, t in enumerate(arrivals):
        size = int(rng.choice(sizes, p=weights / weights.sum()))
        model = names[int(rng.integers(len(names)))]
        compute = float(compute_s[model])
        seconds = float(rng.uniform(*alone_s))
        out.append(ClusterJob(f"j{k}-{model}{size}", model, size, float(t),
                              max(1, int(seconds / compute))))
    return out


def _instance(running: Sequence[ClusterJob], testbed: Mapping[str, Any], shape: Mapping,
              compute_s: Mapping[str, float], links: Mapping[str, float]) -> CruxInstance:
    jobs = []
    for job in running:
        model = testbed["models"][job.model]
        gradient = model["params"] * model["gradient_bytes_per_param"] * testbed["bytes_scale"]
        placement = [[h, 0, 8] for h in job.hosts]
        jobs.append({"id": job.id, "gpus": job.gpus, "compute_s": compute_s[job.model],
                     "overlap": float(model["overlap"]),
                     "flows": job_flows(placement, shape["hosts_per_tor"], shape["aggs"],
                                        int(testbed["gpus_per_nic_link"]), gradient)})
    return CruxInstance(int(testbed["levels"]), links, jobs)


def run_cluster(jobs: Sequence[ClusterJob], schedule: Callable, testbed: Mapping[str, Any],
                shape: Mapping[str, Any], compute_s: Mapping[str, float], *, seed: int = 0,
                jitter: float = 0.0, max_epoch_s: float = 120.0) -> dict[str, Any]:
    """Run ``jobs`` to completion under ``schedule(instance) -> (solution, caps or
    None)``; returns ``utilization``, ``makespan_s``, ``epochs`` and per job ``jct_s``
    and ``start_s``.

    ``shape`` holds ``tors``, ``hosts_per_tor``, ``aggs`` and ``uplink_gbps``; hosts are
    whole (8 GPUs) and drawn at random among the free ones, first come first served.
    An epoch lasts until the next arrival or completion, at most ``max_epoch_s``.
    """
    tors, per_tor = int(shape["tors"]), int(shape["hosts_per_tor"])
    links = nic_clos_links(tors, per_tor, int(testbed["nic_links_per_host"]), int(shape["aggs"]),
                           float(testbed["nic_gbps"]), float(shape["uplink_gbps"]))
    rng = np.random.default_rng(seed)
    for job in jobs:
        if job.gpus % 8 or not 8 <= job.gpus <= 8 * tors * per_tor:
            raise InvalidArgument(f"job {job.id!r}: gpus = {job.gpus}: whole 8-GPU hosts, at "
                                  f"most the cluster's {8 * tors * per_tor}")
    jobs = [ClusterJob(j.id, j.model, j.gpus, j.arrival_s, j.iterations) for j in jobs]
    waiting = sorted(jobs, key=lambda j: j.arrival_s)
    free = set(range(tors * per_tor))
    running: list[ClusterJob] = []
    t, busy, allocated, epoch = 0.0, 0.0, 0.0, 0
    while waiting or running:
        while waiting and waiting[0].arrival_s <= t + 1e-9 and waiting[0].gpus // 8 <= len(free):
            job = waiting.pop(0)
            job.hosts = sorted(rng.choice(sorted(free), size=job.gpus // 8, replace=False).tolist())
            free.difference_update(job.hosts)
            job.start_s = t
            running.append(job)
        next_arrival = waiting[0].arrival_s if waiting and waiting[0].arrival_s > t else None
        if not running:
            t = waiting[0].arrival_s
            continue
        inst = _instance(running, testbed, shape, compute_s, links)
        solution, caps = schedule(inst)
        span = max_epoch_s if next_arrival is None else min(max_epoch_s, next_arrival - t)
        sim = sim_jobs(inst, solution.path, solution.level) if caps is None else None
        if caps is not None:
            from fabricopt.algorithms.crux.baselines import capped_sim_jobs
            sim = capped_sim_jobs(inst, solution, caps)
        result = simulate(inst.links, sim, 0.0, span, jitter=jitter, seed=seed * 100_003 + epoch,
                          trace=True)
        # the first job to finish ends the epoch early
        cut = span
        for job, ends in zip(running, result.iteration_ends):
            left = job.iterations - job.done
            if len(ends) >= left:
                cut = min(cut, ends[left - 1])
        ends_all = result.iteration_ends
        if cut < span:
            # the same draws replayed up to the cut: its compute; the iterations ending
            # at the cut itself are read from the longer run, whose trace holds them
            result = simulate(inst.links, sim, 0.0, cut, jitter=jitter,
                              seed=seed * 100_003 + epoch)
        for job, ends, compute in zip(running, ends_all, result.compute_s):
            job.done += sum(1 for e in ends if e <= cut * (1 + 1e-12))
            busy += job.gpus * float(compute)
            allocated += job.gpus * cut
        t += cut
        epoch += 1
        for job in [j for j in running if j.done >= j.iterations]:
            job.finish_s = t
            free.update(job.hosts)
            running.remove(job)
    return {"utilization": busy / allocated if allocated > 0 else 0.0, "makespan_s": t,
            "epochs": epoch,
            "jct_s": {j.id: j.finish_s - j.arrival_s for j in jobs},
            "start_s": {j.id: j.start_s for j in jobs}}


def _crux(inst):
    from fabricopt.methods import solve

    return solve(inst, "crux").solution, None


def _ecmp(inst):
    from fabricopt.algorithms.crux.crux import ecmp

    return ecmp(inst), None


def _sincronia(inst):
    from fabricopt.algorithms.crux.baselines import sincronia_schedule

    return sincronia_schedule(inst), None


def _varys(inst):
    from fabricopt.algorithms.crux.baselines import varys_schedule

    return varys_schedule(inst)


def _crux_pa(inst):
    from fabricopt.algorithms.crux.baselines import crux_ablation

    return crux_ablation(inst, path_selection=False)[1], None


def _crux_ps_pa(inst):
    from fabricopt.algorithms.crux.baselines import crux_ablation

    return crux_ablation(inst, path_selection=True)[1], None


#: name -> schedule(instance) -> (solution, per-flow caps or None): the baselines, the
#: paper's split of Crux (priority assignment alone on ECMP paths; path selection and
#: priority assignment, no compression) and the whole of Crux (8 levels).
SCHEDULERS = {"ecmp": _ecmp, "sincronia": _sincronia, "varys": _varys, "crux-pa": _crux_pa,
              "crux-ps+pa": _crux_ps_pa, "crux": _crux}
