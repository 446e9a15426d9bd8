"""Cases for the ``crux`` kind: data-parallel jobs on a two-layer Clos (Crux §4.4).

The Crux microbenchmark places 5 jobs on a two-layer Clos with 2-4 ToR switches and
2 aggregation switches (at most 20 hosts of 8 GPUs) and compares each mechanism with
the enumerated optimum. :func:`clos_case` builds such a case as the JSON object of a
``crux`` instance: every job trains a model drawn from :data:`MODELS` on random hosts
and runs a ring AllReduce over them; a ring hop between two ToRs may take any
aggregation switch (one candidate path each), a hop inside a ToR has one path.

References
----------
.. [1] J. Cao et al., "Crux", SIGCOMM 2024, §4.4 (microbenchmark) and §6.1 (models).
.. [2] P. Patarasuk and X. Yuan, "Bandwidth optimal all-reduce algorithms for
   clusters of workstations", JPDC 2009 (ring AllReduce: each hop carries
   ``2(n-1)/n`` of the data).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fabricopt.problems._validate import as_float, as_int, fail

__all__ = ["MODELS", "GPUS_PER_HOST", "clos_links", "ring_flows", "clos_case"]

GPUS_PER_HOST = 8

#: name -> (parameters, bytes per gradient value, compute seconds per iteration).
#: Representative A100 data-parallel training at common per-GPU batch sizes (ours:
#: the paper names GPT, BERT and ResNet but gives no times); gradient bytes are
#: parameters x bytes per value.
MODELS = {
    "gpt1.3b": (1.3e9, 2, 0.90),
    "gpt350m": (3.5e8, 2, 0.45),
    "bert": (3.4e8, 4, 0.35),
    "vgg16": (1.38e8, 4, 0.12),
    "resnet50": (2.56e7, 4, 0.08),
}

# Job sizes in hosts (8, 16, 32 GPUs): most multi-host jobs are small.
_SIZES = (1, 2, 3, 4)
_SIZE_WEIGHTS = (0.15, 0.4, 0.2, 0.25)


def clos_links(tors: int, aggs: int, hosts_per_tor: int, host_gbps: float,
               uplink_gbps: float) -> dict[str, float]:
    """Directed links of a two-layer Clos: ``h{i}-tor{t}``, ``tor{t}-h{i}``,
    ``tor{t}-agg{a}``, ``agg{a}-tor{t}`` (hosts numbered across ToRs)."""
    links = {}
    for t in range(tors):
        for i in range(t * hosts_per_tor, (t + 1) * hosts_per_tor):
            links[f"h{i}-tor{t}"] = host_gbps
            links[f"tor{t}-h{i}"] = host_gbps
    for t in range(tors):
        for a in range(aggs):
            links[f"tor{t}-agg{a}"] = uplink_gbps
            links[f"agg{a}-tor{t}"] = uplink_gbps
    return links


def ring_flows(hosts: list[int], hosts_per_tor: int, aggs: int, gradient_bytes: float
               ) -> list[dict[str, Any]]:
    """The hops of a ring AllReduce over ``hosts`` (visited in ToR order, so that the
    ring leaves each ToR once), each with its candidate paths.

    Examples
    --------
    >>> [f["paths"] for f in ring_flows([0, 5], 5, 2, 1e9)][0]
    [['h0-tor0', 'tor0-agg0', 'agg0-tor1', 'tor1-h5'], ['h0-tor0', 'tor0-agg1', 'agg1-tor1', 'tor1-h5']]
    """
    ring = sorted(hosts)
    n = len(ring)
    if n < 2:
        return []
    per_hop = 2.0 * (n - 1) / n * gradient_bytes
    flows = []
    for k, src in enumerate(ring):
        dst = ring[(k + 1) % n]
        ts, td = src // hosts_per_tor, dst // hosts_per_tor
        if ts == td:
            paths = [[f"h{src}-tor{ts}", f"tor{ts}-h{dst}"]]
        else:
            paths = [[f"h{src}-tor{ts}", f"tor{ts}-agg{a}", f"agg{a}-tor{td}", f"tor{td}-h{dst}"]
                     for a in range(aggs)]
        flows.append({"bytes": float(round(per_hop)), "paths": paths})
    return flows


def _allocate(rng: np.random.Generator, sizes: list[int], tors: int, hosts_per_tor: int,
              placement: str) -> list[list[int]]:
    """Hosts for each job: ``"packed"`` fills a random ToR's free hosts first and
    spills into the next ToRs (a locality-aware scheduler on a fragmented cluster);
    ``"random"`` takes free hosts uniformly at random."""
    n_hosts = tors * hosts_per_tor
    if placement == "random":
        free = rng.permutation(n_hosts).tolist()
        out = []
        for size in sizes:
            out.append(free[:size])
            free = free[size:]
        return out
    free = set(range(n_hosts))
    out = []
    for size in sizes:
        t0 = int(rng.integers(tors))
        hosts: list[int] = []
        for dt in range(tors):
            t = (t0 + dt) % tors
            here = sorted(h for h in free if h // hosts_per_tor == t)
            hosts.extend(here[: size - len(hosts)])
            if len(hosts) == size:
                break
        free.difference_update(hosts)
        out.append(hosts)
    return out


def clos_case(seed: int = 0, *, jobs: int = 5, tors: int | None = None, aggs: int = 2,
              hosts_per_tor: int = 5, levels: int = 3, host_gbps: float = 100.0,
              uplink_gbps: float = 100.0, placement: str = "random") -> dict[str, Any]:
    """A seeded microbenchmark case as the JSON object of a ``crux`` instance.

    Parameters
    ----------
    seed : int
    jobs : int
        Jobs to place (>= 1; at most the number of hosts).
    tors : int or None
        ToR switches; None draws 2..4 from the seed, as the paper's cases vary.
    aggs, hosts_per_tor, levels : int
    host_gbps, uplink_gbps : float
        Host NIC and ToR-aggregation link speeds (each direction).
    placement : {"packed", "random"}
        How hosts are allocated (see Notes).

    Returns
    -------
    dict
        ``{"problem": "crux", ...}`` with ``warmup_s`` and ``window_s`` left at their
        defaults.

    Notes
    -----
    Job sizes are 1-4 hosts (8-32 GPUs; 1-host jobs talk over NVLink only and have no
    network flows), shrunk if the cluster runs out of hosts. ``"random"`` placement
    (the default) scatters jobs over free hosts, the fragmentation behind the ECMP
    collisions Crux measured in production; ``"packed"`` gives each job the free hosts
    of a random ToR and spills into the next ToRs, as a locality-aware scheduler does
    (few cross-ToR hops, little contention). Each job draws a model from
    :data:`MODELS`, scales its compute time by U(0.7, 1.3) (batch size) and overlaps
    its AllReduce with the backward pass (``overlap = 0.5``) or not (``1.0``) with
    equal odds.
    """
    rng = np.random.default_rng(seed)
    tors = int(rng.integers(2, 5)) if tors is None else as_int("tors", tors, minimum=1)
    aggs = as_int("aggs", aggs, minimum=1)
    hosts_per_tor = as_int("hosts_per_tor", hosts_per_tor, minimum=1)
    n_hosts = tors * hosts_per_tor
    n_jobs = as_int("jobs", jobs, minimum=1)
    if n_jobs > n_hosts:
        fail("jobs", n_jobs, f"exceeds the {n_hosts} hosts (tors x hosts_per_tor)")
    levels = as_int("levels", levels, minimum=1)
    host_gbps = as_float("host_gbps", host_gbps, positive=True)
    uplink_gbps = as_float("uplink_gbps", uplink_gbps, positive=True)
    if placement not in ("packed", "random"):
        fail("placement", placement, "must be 'packed' or 'random'")

    sizes = rng.choice(_SIZES, size=n_jobs, p=_SIZE_WEIGHTS).tolist()
    while sum(sizes) > n_hosts:  # shrink the largest job until everyone fits
        sizes[int(np.argmax(sizes))] -= 1
    allocation = _allocate(rng, sizes, tors, hosts_per_tor, placement)
    names = list(MODELS)
    out_jobs = []
    for j, (size, hosts) in enumerate(zip(sizes, allocation)):
        model = names[int(rng.integers(len(names)))]
        params, width, compute = MODELS[model]
        out_jobs.append({
            "id": f"j{j}-{model}",
            "gpus": size * GPUS_PER_HOST,
            "compute_s": round(compute * float(rng.uniform(0.7, 1.3)), 4),
            "overlap": float(rng.choice([0.5, 1.0])),
            "flows": ring_flows(hosts, hosts_per_tor, aggs, params * width),
        })
    return {"problem": "crux", "levels": levels,
            "links": clos_links(tors, aggs, hosts_per_tor, host_gbps, uplink_gbps),
            "jobs": out_jobs, "warmup_s": None, "window_s": None}
