"""Crux's testbed cases as ``crux`` instances, and their honest scoring.

The scenarios ``crux/testbed``, ``crux/fig19``, ``crux/fig20`` and ``crux/pair22``
(:mod:`fabricopt.bench.scenario`) hold the paper's setups with the source of every
number. This module turns a case into a :class:`~fabricopt.problems.crux.CruxInstance`
and replays a schedule in the fluid simulator under compute jitter.

The network (Crux §6.1): every host has ``nic_links_per_host`` links to its ToR, GPU
``g`` of a host uses NIC link ``g // gpus_per_nic_link``, and every ToR has one link
to every aggregation switch, so a hop between ToRs has one candidate path per
aggregation switch (the ECMP choices) and a hop inside a ToR has one.

A job's traffic (ours, the usual multi-rail data-parallel AllReduce): the gradients are
reduced inside each host over NVLink, then split over the job's *channels*, one per
NIC link it holds on its emptiest host; channel ``c`` runs a ring AllReduce over the
job's hosts (in ToR order, so the ring leaves each ToR once) on the ``c``-th of the
job's NIC links of each host. Each ring hop carries ``2 (H - 1) / H`` of its
channel's share of the gradient bytes (Patarasuk and Yuan 2009), times the
calibrated ``bytes_scale``. A job on one host has no network traffic.

Bytes calibration (:func:`calibrate_bytes_scale`): ``bytes_scale`` is fitted once so
that in the §2.2 pair (64-GPU GPT beside a 16-GPU BERT under two ToRs) GPT's mean
iteration under hashed ECMP is 11.0 % longer than GPT's alone under hashed ECMP,
the paper's 1.53 s -> 1.70 s. The scale stands for everything that makes a real
AllReduce slower than its bytes at line rate (protocol and NCCL overheads, wider
gradients); the pair's utilization and BERT-throughput changes are checks.

References
----------
.. [1] J. Cao et al., "Crux: GPU-Efficient Communication Scheduling for Deep Learning
   Training", SIGCOMM 2024, §2.2 (the GPT-BERT pair, Fig. 7), §6.1 (testbed), §6.2
   (Figs. 19 and 20).
.. [2] P. Patarasuk and X. Yuan, "Bandwidth optimal all-reduce algorithms for
   clusters of workstations", JPDC 2009.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from fabricopt.algorithms.crux.baselines import capped_sim_jobs
from fabricopt.algorithms.crux.crux import ecmp, select_paths
from fabricopt.bench.scenario import load_scenario
from fabricopt.errors import InvalidArgument
from fabricopt.problems.contention import SimJob, simulate
from fabricopt.problems.crux import CruxInstance, CruxSolution, sim_jobs

__all__ = ["Case", "model_compute_s", "nic_clos_links", "job_flows", "load_case", "case_count", "build_instance",
           "replay", "replay_alone", "calibrate_bytes_scale", "pair_changes", "ecmp_iteration"]


@dataclass(frozen=True)
class Case:
    """One co-location: its label, the instance, and the paper's numbers for it."""

    label: str
    instance: CruxInstance
    models: tuple
    paper: Mapping[str, Any]


def nic_clos_links(tors: int, hosts_per_tor: int, nics: int, aggs: int, nic_gbps: float,
                  uplink_gbps: float) -> dict[str, float]:
    """Directed links ``h{h}n{k}>tor{t}``, ``tor{t}>h{h}n{k}``, ``tor{t}>agg{a}`` and
    ``agg{a}>tor{t}`` (hosts numbered across ToRs, host ``h`` under ToR
    ``h // hosts_per_tor``).

    Examples
    --------
    >>> len(nic_clos_links(6, 2, 4, 8, 200.0, 200.0))  # 2 x 12 x 4 + 2 x 6 x 8
    192
    """
    links: dict[str, float] = {}
    for h in range(tors * hosts_per_tor):
        t = h // hosts_per_tor
        for k in range(nics):
            links[f"h{h}n{k}>tor{t}"] = float(nic_gbps)
            links[f"tor{t}>h{h}n{k}"] = float(nic_gbps)
    for t in range(tors):
        for a in range(aggs):
            links[f"tor{t}>agg{a}"] = float(uplink_gbps)
            links[f"agg{a}>tor{t}"] = float(uplink_gbps)
    return links


def job_flows(placement: Sequence[Sequence[int]], hosts_per_tor: int, aggs: int,
              gpus_per_nic: int, gradient_bytes: float) -> list[dict[str, Any]]:
    """The ring hops of a multi-rail AllReduce over ``placement`` (rows ``[host,
    first GPU, GPUs]``), each ``{"bytes", "paths"}`` as a ``crux`` flow.

    Examples
    --------
    A BERT-8 on GPUs 0-3 of hosts 1 (ToR 0) and 3 (ToR 1): two channels (NIC links 0
    and 1), each a 2-host ring whose hops may take any of 2 aggregation switches.

    >>> flows = job_flows([[1, 0, 4], [3, 0, 4]], 2, 2, 2, 4e9)
    >>> [(f["bytes"], len(f["paths"])) for f in flows]
    [(2000000000.0, 2), (2000000000.0, 2), (2000000000.0, 2), (2000000000.0, 2)]
    >>> flows[0]["paths"][1]
    ['h1n0>tor0', 'tor0>agg1', 'agg1>tor1', 'tor1>h3n0']
    """
    nics: dict[int, set[int]] = {}
    for host, first, count in placement:
        nics.setdefault(int(host), set()).update(
            g // gpus_per_nic for g in range(int(first), int(first) + int(count)))
    hosts = sorted(nics, key=lambda h: (h // hosts_per_tor, h))
    if len(hosts) < 2:
        return []
    channels = min(len(n) for n in nics.values())
    per_hop = 2.0 * (len(hosts) - 1) / len(hosts) * gradient_bytes / channels
    flows = []
    for c in range(channels):
        for i, src in enumerate(hosts):
            dst = hosts[(i + 1) % len(hosts)]
            ks, kd = sorted(nics[src])[c], sorted(nics[dst])[c]
            ts, td = src // hosts_per_tor, dst // hosts_per_tor
            first_hop, last_hop = f"h{src}n{ks}>tor{ts}", f"tor{td}>h{dst}n{kd}"
            if ts == td:
                paths = [[first_hop, last_hop]]
            else:
                paths = [[first_hop, f"tor{ts}>agg{a}", f"agg{a}>tor{td}", last_hop]
                         for a in range(aggs)]
            flows.append({"bytes": float(per_hop), "paths": paths})
    return flows


def _check_placement(where: str, placement, hosts: int, gpus_per_host: int) -> None:
    used: set[tuple[int, int]] = set()
    for row in placement:
        if len(row) != 3:
            raise InvalidArgument(f"{where} = {row!r}: a row is [host, first GPU, GPUs]")
        host, first, count = (int(x) for x in row)
        if not 0 <= host < hosts:
            raise InvalidArgument(f"{where}: host = {host}: the testbed has hosts 0..{hosts - 1}")
        if count < 1 or first < 0 or first + count > gpus_per_host:
            raise InvalidArgument(f"{where} = {row!r}: GPUs {first}..{first + count - 1} are "
                                  f"not on a {gpus_per_host}-GPU host")
        for g in range(first, first + count):
            if (host, g) in used:
                raise InvalidArgument(f"{where}: GPU {g} of host {host} is placed twice")
            used.add((host, g))


def build_instance(testbed: Mapping[str, Any], jobs: Sequence[Mapping[str, Any]], *,
                   tors: int | None = None, hosts_per_tor: int | None = None,
                   bytes_scale: float | None = None, uplink_gbps: float | None = None
                   ) -> tuple[CruxInstance, tuple]:
    """A ``crux`` instance of ``jobs`` (``{"id", "model", "placement"}``) on the
    testbed ``testbed`` (the plain values of ``crux/testbed``); ``tors``,
    ``hosts_per_tor``, ``bytes_scale`` and ``uplink_gbps`` override the testbed's.

    GPT's compute per iteration is its measured standalone iteration (§2.2) minus its
    ring hop's transfer time alone at NIC speed in the §2.2 pair (64 GPUs on 8 hosts,
    4 channels), so the model's GPT alone takes 1.53 s there. The window is
    ``warmup_iterations`` and ``window_iterations`` of that iteration.

    Returns
    -------
    (CruxInstance, tuple of str)
        The instance and each job's model name.
    """
    tb = testbed
    tors = int(tb["tors"] if tors is None else tors)
    hosts_per_tor = int(tb["hosts"] // tb["tors"] if hosts_per_tor is None else hosts_per_tor)
    scale = float(tb["bytes_scale"] if bytes_scale is None else bytes_scale)
    if not scale > 0:
        raise InvalidArgument(f"bytes_scale = {scale!r}: must be > 0")
    uplink = float(tb["uplink_gbps"] if uplink_gbps is None else uplink_gbps)
    if not uplink > 0:
        raise InvalidArgument(f"uplink_gbps = {uplink!r}: must be > 0")
    models = tb["models"]
    out, names = [], []
    for k, job in enumerate(jobs):
        where = f"jobs[{k}]"
        if job["model"] not in models:
            raise InvalidArgument(f"{where}.model = {job['model']!r}: the testbed models are "
                                  f"{', '.join(models)}")
        _check_placement(f"{where}.placement", job["placement"], tors * hosts_per_tor,
                         int(tb["gpus_per_host"]))
        model = models[job["model"]]
        gradient = model["params"] * model["gradient_bytes_per_param"] * scale
        flows = job_flows(job["placement"], hosts_per_tor, int(tb["aggs"]),
                          int(tb["gpus_per_nic_link"]), gradient)
        out.append({"id": job["id"], "gpus": sum(int(r[2]) for r in job["placement"]),
                    "compute_s": _compute_s(tb, job["model"], scale),
                    "overlap": float(model["overlap"]), "flows": flows})
        names.append(job["model"])
    period = float(models["gpt"]["iteration_alone_s"])
    instance = CruxInstance(
        int(tb["levels"]),
        nic_clos_links(tors, hosts_per_tor, int(tb["nic_links_per_host"]), int(tb["aggs"]),
                      float(tb["nic_gbps"]), uplink),
        out, warmup_s=tb["warmup_iterations"] * period,
        window_s=tb["window_iterations"] * period)
    return instance, tuple(names)


def model_compute_s(testbed: Mapping[str, Any], bytes_scale: float | None = None
                    ) -> dict[str, float]:
    """Compute seconds per iteration of every testbed model (GPT's from its measured
    standalone iteration, see :func:`build_instance`).

    Examples
    --------
    >>> from fabricopt.bench.scenario import load_scenario
    >>> sorted(model_compute_s(load_scenario("crux", "testbed").values))
    ['bert', 'gpt', 'resnet']
    """
    scale = float(testbed["bytes_scale"] if bytes_scale is None else bytes_scale)
    return {model: _compute_s(testbed, model, scale) for model in testbed["models"]}


def _compute_s(tb: Mapping[str, Any], model: str, scale: float) -> float:
    spec = tb["models"][model]
    if "compute_s" in spec:
        return float(spec["compute_s"])
    # the §2.2 GPT: 8 hosts, 4 channels; one hop carries 2 * 7/8 of a quarter of the bytes
    hop_bytes = 2.0 * 7 / 8 * spec["params"] * spec["gradient_bytes_per_param"] * scale / 4
    transfer_s = 8.0 * hop_bytes / (tb["nic_gbps"] * 1e9)
    compute = float(spec["iteration_alone_s"]) - transfer_s
    if not compute > 0:
        raise InvalidArgument(f"bytes_scale = {scale!r}: GPT's transfer alone ({transfer_s:.3g} s) "
                              f"leaves no compute in its {spec['iteration_alone_s']} s iteration")
    return compute


def case_count(figure: str) -> int:
    """Cases of scenario ``crux/<figure>``."""
    return len(load_scenario("crux", figure)["cases"])


def load_case(figure: str, index: int, **overrides) -> Case:
    """Case ``index`` of ``crux/<figure>`` (``fig19``, ``fig20``, ``pair22``) on the
    testbed, with :func:`build_instance`'s ``overrides``."""
    scenario = load_scenario("crux", figure)
    cases = scenario["cases"]
    if not 0 <= int(index) < len(cases):
        raise InvalidArgument(f"case = {index!r}: crux/{figure} has cases 0..{len(cases) - 1}")
    case = cases[int(index)]
    testbed = load_scenario("crux", "testbed").values
    for key in ("tors", "hosts_per_tor"):
        if key in case:
            overrides.setdefault(key, case[key])
    instance, models = build_instance(testbed, case["jobs"], **overrides)
    return Case(case["label"], instance, models, case.get("paper") or {})


def replay(instance: CruxInstance, solution: CruxSolution, *, jitter: float, seed: int,
           caps_gbps: Mapping[str, tuple] | None = None) -> tuple[float, list[float]]:
    """Utilization and each job's busy fraction (compute seconds over the window) of
    ``solution`` under ``jitter`` drawn from ``seed``; ``caps_gbps`` (job id -> one
    rate cap per flow) replays a rate-allocating scheduler such as Varys.

    A job's throughput is its busy fraction over its mean compute per iteration, so its
    JCT for a fixed number of iterations is inversely proportional to the busy fraction:
    the JCT change between two schedules is the ratio of busy fractions, counted from
    the work done rather than from whole iterations finished in the window.
    """
    jobs = (sim_jobs(instance, solution.path, solution.level) if caps_gbps is None
            else capped_sim_jobs(instance, solution, caps_gbps))
    result = simulate(instance.links, jobs, instance.warmup, instance.window, jitter=jitter,
                      seed=seed, names=instance.ids)
    busy = (result.compute_s / result.window_s).tolist()
    gpus = np.array([job.gpus for job in instance.jobs], dtype=float)
    return float(gpus @ np.asarray(busy) / gpus.sum()), busy


def replay_alone(instance: CruxInstance, *, jitter: float, seed: int
                 ) -> tuple[float, list[float]]:
    """The ideal: every job alone on the fabric, its flows spread over the least-loaded
    paths (Crux's path selection on the job alone, so its own channels do not
    collide), under jitter; ``(utilization, busy fractions)``."""
    busy = []
    for j, job in enumerate(instance.jobs):
        own = CruxInstance(1, instance.links, [job], instance.warmup_s, instance.window_s)
        path = select_paths(own)[job.id]
        alone = SimJob(job.gpus, job.compute_s, job.overlap, 0,
                       tuple((f.bytes, f.paths[i]) for f, i in zip(job.flows, path)))
        # the simulator seeds job j's stream by its index inside a linked group: alone it
        # is index 0, so draw from a seed that is distinct per job and per seed
        result = simulate(instance.links, [alone], instance.warmup, instance.window,
                          jitter=jitter, seed=_alone_seed(seed, j))
        busy.append(float(result.compute_s[0] / result.window_s))
    gpus = np.array([job.gpus for job in instance.jobs], dtype=float)
    return float(gpus @ np.asarray(busy) / gpus.sum()), busy


def _alone_seed(seed: int, job: int) -> int:
    return int(seed) * 1009 + int(job) + 1


def ecmp_iteration(instance: CruxInstance, job_ids: Sequence[str], hashes: Sequence[int], *,
                   jitter: float, seeds: Sequence[int]) -> dict[str, float]:
    """Mean iteration time (compute over busy fraction) of each job of ``job_ids``
    under hashed ECMP, over ``hashes`` x ``seeds``, with only those jobs present."""
    sub = CruxInstance(instance.levels, instance.links,
                       [job for job in instance.jobs if job.id in set(job_ids)],
                       instance.warmup_s, instance.window_s)
    total = {job.id: 0.0 for job in sub.jobs}
    for h in hashes:
        solution = ecmp(sub, seed=h)
        for s in seeds:
            _, busy = replay(sub, solution, jitter=jitter, seed=s)
            for job, b in zip(sub.jobs, busy):
                total[job.id] += job.compute_s / b
    n = len(hashes) * len(seeds)
    return {k: v / n for k, v in total.items()}


def pair_changes(bytes_scale: float | None = None, *, hashes: Sequence[int] = range(8),
                 seeds: Sequence[int] = range(2), jitter: float | None = None
                 ) -> dict[str, float]:
    """The §2.2 pair under hashed ECMP against each job alone (also hashed):
    ``gpt_iteration_change``, ``gpt_throughput_change``, ``bert_throughput_change`` and
    ``utilization_change``, averaged over ``hashes`` x ``seeds``."""
    testbed = load_scenario("crux", "testbed").values
    jitter = float(testbed["jitter"] if jitter is None else jitter)
    case = load_case("pair22", 0, bytes_scale=bytes_scale)
    inst = case.instance
    together = ecmp_iteration(inst, inst.ids, hashes, jitter=jitter, seeds=seeds)
    alone = {}
    for job in inst.jobs:
        alone.update(ecmp_iteration(inst, [job.id], hashes, jitter=jitter, seeds=seeds))
    gpus = {job.id: job.gpus for job in inst.jobs}
    compute = {job.id: job.compute_s for job in inst.jobs}
    # utilization of the pair: sum of gpus * compute / iteration over all gpus
    u_together = sum(gpus[j] * compute[j] / together[j] for j in gpus)
    u_alone = sum(gpus[j] * compute[j] / alone[j] for j in gpus)
    return {"gpt_iteration_change": together["gpt"] / alone["gpt"] - 1.0,
            "gpt_throughput_change": alone["gpt"] / together["gpt"] - 1.0,
            "bert_throughput_change": alone["bert"] / together["bert"] - 1.0,
            "utilization_change": u_together / u_alone - 1.0}


def calibrate_bytes_scale(target: float | None = None, *, low: float = 1.0, high: float = 400.0,
                          steps: int = 24, **kwargs) -> float:
    """The ``bytes_scale`` at which the §2.2 pair's GPT iteration change equals
    ``target`` (default: the paper's +11.0 %, from ``crux/pair22``), by bisection on a
    log scale; ``kwargs`` go to :func:`pair_changes`. The change grows with the scale
    (more bytes, more collision time), which the bisection assumes.
    """
    if target is None:
        target = load_scenario("crux", "pair22")["cases"][0]["paper"]["gpt_iteration_change"]
    lo, hi = float(low), float(high)
    for _ in range(int(steps)):
        mid = (lo * hi) ** 0.5
        if pair_changes(mid, **kwargs)["gpt_iteration_change"] < target:
            lo = mid
        else:
            hi = mid
    return (lo * hi) ** 0.5
