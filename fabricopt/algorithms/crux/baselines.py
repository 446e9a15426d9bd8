"""Whole coflow schedulers as baselines for Crux: Sincronia and Varys.

Crux (SIGCOMM 2024, §6.3) compares against whole schedulers. Each iteration of a
training job is one coflow: the flows of its AllReduce. Neither scheduler routes, so
both take the hashed ECMP paths (:func:`fabricopt.algorithms.crux.crux.ecmp`), and both
see a coflow as the link time it needs per iteration, ``d[j][e] = 8 M[j][e] / B_e``.

- **Sincronia** (Agarwal et al., SIGCOMM 2018, Algorithm 1, BSSI): repeatedly take the
  most loaded port ``b`` among the coflows not yet ordered, put *last* the coflow with
  the least weight per unit of load on ``b``, and charge the others' weights for it.
  The order becomes strict priorities. Simplifications (ours): ports are the fabric's
  links rather than the ingress/egress ports of one big switch; weights are equal (the
  paper's unweighted case); the order is computed once for the set of jobs present,
  as Sincronia recomputes it whenever coflows arrive or leave.
- **Varys** (Chowdhury et al., SIGCOMM 2014, §5): SEBF orders coflows by their
  effective bottleneck ``Gamma_j = max_e d[j][e]`` (smallest first), and MADD gives
  every flow of a coflow the rate that makes all of them finish together,
  ``bytes_f / Gamma_j``. Simplifications (ours): ``Gamma_j`` and the MADD rates are
  computed for each coflow on an empty fabric, once per set of jobs, and set as
  per-flow rate caps in the simulator (:class:`~fabricopt.problems.contention.SimJob`
  ``flow_cap_gbps``); Varys's backfilling of leftover bandwidth beyond the caps and
  its deadline admission control are left out.

Both orders are mapped onto the K hardware levels as Sincronia's implementation maps
its order onto DSCP classes: the first K-1 coflows get their own levels, the rest
share the lowest (:func:`~fabricopt.algorithms.priorities.compression.sincronia_levels`).
A job without network flows is no coflow: neither scheduler sees it, so it ranks after
every coflow and takes none of their levels (ranked first, such jobs would fill the
scarce levels above the coflows and leave every coflow on one level, as ECMP does).

References
----------
.. [1] S. Agarwal, S. Rajakrishnan, A. Narayan, R. Agarwal, D. Shmoys and A. Vahdat,
   "Sincronia: Near-Optimal Network Design for Coflows", SIGCOMM 2018, Algorithm 1.
.. [2] M. Chowdhury, Y. Zhong and I. Stoica, "Efficient Coflow Scheduling with Varys",
   SIGCOMM 2014, §5.1 (SEBF) and §5.2 (MADD).
"""

from __future__ import annotations

from typing import Mapping, Sequence

from fabricopt.algorithms.crux.crux import ecmp, link_bytes
from fabricopt.algorithms.priorities.compression import sincronia_levels
from fabricopt.problems.contention import SimJob
from fabricopt.problems.crux import CruxInstance, CruxSolution

__all__ = ["link_seconds", "bssi_order", "sebf_order", "madd_caps_gbps",
           "sincronia_schedule", "varys_schedule", "levels_from_order", "capped_sim_jobs"]


def link_seconds(instance: CruxInstance, path: Mapping[str, Sequence[int]]
                 ) -> list[dict[str, float]]:
    """``d[j][e]``: seconds of link ``e`` that one iteration of job j needs alone."""
    return [{e: 8.0 * b / (instance.links[e] * 1e9) for e, b in m.items()}
            for m in link_bytes(instance, path)]


def bssi_order(load: Sequence[Mapping[str, float]],
               weights: Sequence[float] | None = None) -> list[int]:
    """Sincronia's Bottleneck-Select-Scale-Iterate order, first (highest priority) first.

    Parameters
    ----------
    load : sequence of mapping
        Per coflow, its load on each port (any unit, the same for all).
    weights : sequence of float, optional
        Coflow weights (default 1 each).

    Examples
    --------
    One port: BSSI is smallest-first (Smith's rule with equal weights).

    >>> bssi_order([{"p": 3.0}, {"p": 1.0}, {"p": 2.0}])
    [1, 2, 0]

    Port ``a`` is the bottleneck first: coflow 1, the largest there, goes last. Then
    port ``b`` is: coflow 0, alone on it with 5 units, goes before coflow 1.

    >>> bssi_order([{"a": 1.0, "b": 5.0}, {"a": 4.0}, {"a": 2.0}])
    [2, 0, 1]
    """
    w = [1.0] * len(load) if weights is None else [float(x) for x in weights]
    left = set(range(len(load)))
    last_first: list[int] = []
    while left:
        totals: dict[str, float] = {}
        for c in left:
            for port, d in load[c].items():
                totals[port] = totals.get(port, 0.0) + d
        if not totals or max(totals.values()) <= 0:
            # no load left: the rest contend with nobody, first by index
            last_first.extend(sorted(left, reverse=True))
            break
        port = max(sorted(totals), key=totals.__getitem__)
        on_port = [c for c in left if load[c].get(port, 0.0) > 0]
        # the coflow of least weight per load on the bottleneck goes last (tie: larger index)
        victim = min(on_port, key=lambda c: (w[c] / load[c][port], -c))
        for c in on_port:
            if c != victim:
                w[c] -= w[victim] * load[c][port] / load[victim][port]
        left.remove(victim)
        last_first.append(victim)
    return last_first[::-1]


def sebf_order(load: Sequence[Mapping[str, float]]) -> list[int]:
    """Varys's Smallest-Effective-Bottleneck-First order (ties by index).

    Examples
    --------
    >>> sebf_order([{"a": 1.0, "b": 5.0}, {"a": 4.0}, {"a": 2.0}])
    [2, 1, 0]
    """
    return sorted(range(len(load)), key=lambda c: (max(load[c].values(), default=0.0), c))


def madd_caps_gbps(instance: CruxInstance, path: Mapping[str, Sequence[int]]
                   ) -> dict[str, tuple[float, ...]]:
    """Per job, each flow's MADD rate on an empty fabric, ``8 bytes_f / Gamma_j`` in
    Gbps, with ``Gamma_j`` the job's bottleneck link time alone; a job without flows
    has none."""
    gamma = [max(d.values(), default=0.0) for d in link_seconds(instance, path)]
    return {job.id: tuple(8.0 * f.bytes / g / 1e9 for f in job.flows) if g > 0 else ()
            for job, g in zip(instance.jobs, gamma)}


def levels_from_order(order: Sequence[int], levels: int) -> list[int]:
    """Levels of jobs in ``order`` (first highest): the first K-1 alone, the rest at 0.

    Examples
    --------
    >>> levels_from_order([2, 0, 1, 3], 3)
    [1, 0, 2, 0]
    """
    return sincronia_levels(list(order), levels).tolist()


def _coflows_first(instance: CruxInstance, order: Sequence[int],
                   load: Sequence[Mapping[str, float]]) -> list[int]:
    """``order``'s coflows (jobs with link load), then the jobs without flows."""
    idle = [j for j in range(len(instance.jobs)) if not load[j]]
    return [j for j in order if load[j]] + idle


def _ordered_solution(instance: CruxInstance, path, order: Sequence[int]) -> CruxSolution:
    level = levels_from_order(order, instance.levels)
    rank = {j: r for r, j in enumerate(order)}
    ids = instance.ids
    return CruxSolution({j: list(path[j]) for j in ids},
                        {j: float(len(ids) - rank[x]) for x, j in enumerate(ids)},
                        {j: int(level[x]) for x, j in enumerate(ids)})


def sincronia_schedule(instance: CruxInstance, *, seed: int = 0) -> CruxSolution:
    """Sincronia on hashed ECMP paths: BSSI order over the jobs' per-iteration
    coflows, mapped onto the levels.

    Examples
    --------
    >>> from fabricopt.problems.crux import check, generate
    >>> inst = generate(seed=1, jobs=3, tors=2)
    >>> solution = sincronia_schedule(inst)
    >>> bool(check(inst, solution)), sorted(solution.level.values())
    (True, [0, 1, 2])
    """
    path = ecmp(instance, seed=seed).path
    load = link_seconds(instance, path)
    order = _coflows_first(instance, bssi_order(load), load)
    return _ordered_solution(instance, path, order)


def varys_schedule(instance: CruxInstance, *, seed: int = 0
                   ) -> tuple[CruxSolution, dict[str, tuple[float, ...]]]:
    """Varys on hashed ECMP paths: SEBF order mapped onto the levels, and the MADD
    per-flow rate caps (Gbps) to replay it with (:func:`capped_sim_jobs`)."""
    path = ecmp(instance, seed=seed).path
    load = link_seconds(instance, path)
    order = _coflows_first(instance, sebf_order(load), load)
    return _ordered_solution(instance, path, order), madd_caps_gbps(instance, path)


def capped_sim_jobs(instance: CruxInstance, solution: CruxSolution,
                    caps_gbps: Mapping[str, tuple[float, ...]]) -> list[SimJob]:
    """The simulator's jobs of ``solution`` with per-flow rate caps."""
    return [SimJob(job.gpus, job.compute_s, job.overlap, int(solution.level[job.id]),
                   tuple((f.bytes, f.paths[i]) for f, i in zip(job.flows, solution.path[job.id])),
                   tuple(caps_gbps.get(job.id, ())))
            for job in instance.jobs]


def crux_ablation(instance: CruxInstance, *, path_selection: bool, seed: int = 0
                  ) -> tuple[CruxInstance, CruxSolution]:
    """Crux without compression, as the paper splits its gain (§6.3, Fig. 24): Crux's
    corrected priorities ``P_j = k_j I_j`` on hashed ECMP paths (``Crux-PA``,
    ``path_selection=False``) or on Crux's paths (``Crux-PS+PA``), every distinct
    priority on its own level.

    Returns the instance with as many levels as jobs (the solution is one of it; its
    paths and flows are those of ``instance``) and the solution.

    Examples
    --------
    >>> from fabricopt.problems.crux import check, generate
    >>> inst = generate(seed=1, jobs=3, tors=2, levels=1)
    >>> wide, solution = crux_ablation(inst, path_selection=True)
    >>> wide.levels, bool(check(wide, solution)), len(set(solution.level.values()))
    (3, True, 3)
    """
    from fabricopt.algorithms.crux.crux import (correction_factors, gpu_intensity,
                                                select_paths)

    wide = CruxInstance(max(instance.levels, len(instance.jobs)), instance.links,
                        instance.jobs, instance.warmup_s, instance.window_s)
    path = select_paths(wide) if path_selection else ecmp(wide, seed=seed).path
    intensity = gpu_intensity(wide, path)
    k = correction_factors(wide, path)
    priority = [float(k[j] * intensity[j]) if intensity[j] < float("inf") else 0.0
                for j in range(len(wide.jobs))]
    # highest priority first; a job without flows contends with nobody
    order = sorted(range(len(wide.jobs)), key=lambda j: (-priority[j], wide.jobs[j].id))
    ids = wide.ids
    rank_level = {j: len(order) - 1 - r for r, j in enumerate(order)}
    solution = CruxSolution({j: list(path[j]) for j in ids},
                            {j: priority[x] for x, j in enumerate(ids)},
                            {j: rank_level[x] for x, j in enumerate(ids)})
    return wide, solution
