"""Exact optimum of a small ``crux`` case by exhaustive search (the paper's yardstick).

Crux §4.4 judges each mechanism against "the enumerated optimum". This module
enumerates every path choice and every level assignment and scores each with the
kind's own fluid simulator, with three reductions that keep the answer exact:

- Jobs that share no link never affect each other and the utilization is a sum over
  such groups, so each connected group (component) is optimized on its own.
- Within a component only the order of levels on each shared link matters (strict
  priority between levels, max-min fairness within one): level assignments are
  enumerated as weak orders of the component's jobs with at most K blocks and
  de-duplicated by the relative order of every pair that shares a link.
- A component's result depends on its jobs and on which of their flows share a link
  of which capacity, not on link names, so components that are the same up to
  renaming links (e.g. the two aggregation switches of a Clos swapped) are
  simulated once.

Cases too large to enumerate are refused with :class:`~fabricopt.SolverUnavailable`
(the method is not available for that case) before any simulation runs.

References
----------
.. [1] J. Cao et al., "Crux", SIGCOMM 2024, §4.4 (microbenchmark against the
   enumerated optimum).
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass
from typing import Iterator

from fabricopt.errors import SolverUnavailable
from fabricopt.problems.contention import SimJob, link_components, simulate
from fabricopt.problems.crux import CruxInstance, CruxSolution, sim_jobs

__all__ = ["enumerate_optimum", "weak_orders", "EnumerationPlan", "plan",
           "MAX_PATH_CHOICES", "MAX_SIMULATIONS", "MAX_LABELINGS"]

#: Path combinations above which the search is refused.
MAX_PATH_CHOICES = 65536
#: Distinct component simulations above which the search is refused (at the microbenchmark
#: scale, one simulation takes about 20 ms).
MAX_SIMULATIONS = 2000
#: Level labelings (``min(K, c)^c`` for a component of c jobs) above which it is refused.
MAX_LABELINGS = 200_000


def weak_orders(n: int, levels: int) -> Iterator[tuple[int, ...]]:
    """Every ranking of ``n`` jobs into at most ``levels`` tied groups, as dense ranks
    (0 = the highest group), each exactly once.

    Examples
    --------
    >>> list(weak_orders(2, 2))
    [(0, 0), (0, 1), (1, 0)]
    """
    blocks = min(n, levels)
    for ranks in itertools.product(range(blocks), repeat=n):
        used = set(ranks)
        if len(used) == max(ranks) + 1:           # dense: uses 0..b-1 without gaps
            yield ranks


@dataclass
class _Group:
    """One component of one path choice: its jobs and its sharing structure."""

    jobs: tuple[int, ...]        # instance job indices, sorted
    pairs: tuple[tuple[int, int], ...]   # positions in ``jobs`` that share a link
    path: dict                   # job id -> chosen path indices, for simulating
    orders: dict                 # level signature -> one weak order (ranks) realizing it


@dataclass
class EnumerationPlan:
    """What an exhaustive search of ``instance`` would simulate.

    Attributes
    ----------
    path_choices : int
        Path combinations (product of the flows' candidate counts).
    simulations : int
        Distinct component simulations (after the reductions of the module notes).
    choices : list of (dict, list of tuple)
        Per path combination: the paths and the canonical keys of its components.
    groups : dict
        Canonical key -> :class:`_Group` to simulate, with its level signatures.
    """

    path_choices: int
    simulations: int
    choices: list
    groups: dict


def _component_key(instance: CruxInstance, jobs: tuple[int, ...], path: dict):
    """A key equal for components that differ only by the names of their links."""
    users: dict[str, list] = {}
    for j in jobs:
        job = instance.jobs[j]
        for f, (flow, i) in enumerate(zip(job.flows, path[job.id])):
            for e in flow.paths[i]:
                users.setdefault(e, []).append((j, f))
    shared = sorted((instance.links[e], tuple(u)) for e, u in users.items() if len(u) > 1)
    own = {}
    for e, u in users.items():
        if len(u) == 1:
            own[u[0]] = min(own.get(u[0], math.inf), instance.links[e])
    return jobs, tuple(shared), tuple(sorted(own.items()))


def _sharing_pairs(instance: CruxInstance, jobs: tuple[int, ...], path: dict):
    pos = {j: p for p, j in enumerate(jobs)}
    owners: dict[str, set] = {}
    for j in jobs:
        job = instance.jobs[j]
        for flow, i in zip(job.flows, path[job.id]):
            for e in flow.paths[i]:
                owners.setdefault(e, set()).add(pos[j])
    pairs = set()
    for users in owners.values():
        for a, b in itertools.combinations(sorted(users), 2):
            pairs.add((a, b))
    return tuple(sorted(pairs))


def _signatures(n: int, pairs, levels: int) -> dict:
    """Weak orders de-duplicated by the relative order of each sharing pair."""
    out = {}
    for ranks in weak_orders(n, levels):
        sig = tuple((ranks[a] > ranks[b]) - (ranks[a] < ranks[b]) for a, b in pairs)
        out.setdefault(sig, ranks)
    return out


def plan(instance: CruxInstance, *, max_path_choices: int = MAX_PATH_CHOICES,
         max_simulations: int = MAX_SIMULATIONS,
         max_labelings: int = MAX_LABELINGS) -> EnumerationPlan:
    """Count (and prepare) the work of an exhaustive search, refusing oversized cases.

    Raises
    ------
    SolverUnavailable
        If the path combinations, the level labelings of a component or the distinct
        simulations exceed their limits; the message names the figure and the limit.
    """
    counts = [len(f.paths) for job in instance.jobs for f in job.flows]
    total = math.prod(counts)
    if total > max_path_choices:
        raise SolverUnavailable(
            f"enumerate: {total} path combinations exceed max_path_choices = "
            f"{max_path_choices}; this case is too large to enumerate")
    flows = [(job.id, f) for job in instance.jobs for f in range(len(job.flows))]
    choices, groups = [], {}
    simulations = 0
    for combo in itertools.product(*(range(c) for c in counts)):
        path = {job.id: [] for job in instance.jobs}
        for (jid, _), i in zip(flows, combo):
            path[jid].append(i)
        jobs = sim_jobs(instance, path, {job.id: 0 for job in instance.jobs})
        keys = []
        for comp in link_components(jobs):
            comp = tuple(comp)
            key = _component_key(instance, comp, path)
            if key not in groups:
                c = len(comp)
                if min(c, instance.levels) ** c > max_labelings:
                    raise SolverUnavailable(
                        f"enumerate: a component of {c} jobs has {min(c, instance.levels)}^{c}"
                        f" level labelings, over max_labelings = {max_labelings}; this "
                        f"case is too large to enumerate")
                pairs = _sharing_pairs(instance, comp, path)
                group = _Group(comp, pairs, {k: tuple(v) for k, v in path.items()},
                               _signatures(c, pairs, instance.levels))
                groups[key] = group
                simulations += len(group.orders)
                if simulations > max_simulations:
                    raise SolverUnavailable(
                        f"enumerate: more than max_simulations = {max_simulations} distinct "
                        f"simulations ({len(choices) + 1} of {total} path combinations "
                        f"counted); this case is too large to enumerate")
            keys.append(key)
        choices.append((path, keys))
    return EnumerationPlan(total, simulations, choices, groups)


def _group_best(instance: CruxInstance, group: _Group) -> tuple[float, tuple[int, ...]]:
    """The best (GPU-seconds computed in the window, ranks) over a group's level orders."""
    members = [instance.jobs[j] for j in group.jobs]
    best = (-math.inf, None)
    for ranks in group.orders.values():
        jobs = [SimJob(job.gpus, job.compute_s, job.overlap, instance.levels - 1 - r,
                       tuple((f.bytes, f.paths[i]) for f, i in zip(job.flows, group.path[job.id])))
                for job, r in zip(members, ranks)]
        result = simulate(instance.links, jobs, instance.warmup, instance.window)
        work = sum(job.gpus * c for job, c in zip(members, result.compute_s.tolist()))
        if work > best[0]:
            best = (work, ranks)
    return best


def enumerate_optimum(instance: CruxInstance, *, time_limit: float | None = None,
                      max_path_choices: int = MAX_PATH_CHOICES,
                      max_simulations: int = MAX_SIMULATIONS,
                      max_labelings: int = MAX_LABELINGS) -> tuple[CruxSolution, bool]:
    """The best paths and levels of ``instance`` by exhaustive search.

    Parameters
    ----------
    instance : CruxInstance
    time_limit : float, optional
        Seconds; when they run out the best solution so far is returned.
    max_path_choices, max_simulations, max_labelings : int
        Size limits (see :func:`plan`).

    Returns
    -------
    solution : CruxSolution
        Priorities equal levels, so the levels are trivially a valid compression.
    complete : bool
        False if the time limit stopped the search early.

    Raises
    ------
    SolverUnavailable
        If the case is too large to enumerate (checked before any simulation).
    """
    started = time.perf_counter()
    work = plan(instance, max_path_choices=max_path_choices, max_simulations=max_simulations,
                max_labelings=max_labelings)
    best_of: dict = {}
    best = (-math.inf, None)
    complete = True
    for path, keys in work.choices:
        if time_limit is not None and best[1] is not None \
                and time.perf_counter() - started > time_limit:
            complete = False
            break
        total = 0.0
        for key in keys:
            if key not in best_of:
                best_of[key] = _group_best(instance, work.groups[key])
            total += best_of[key][0]
        if total > best[0]:
            best = (total, (path, keys))
    path, keys = best[1]
    level = {}
    for key in keys:
        ranks = best_of[key][1]
        for j, r in zip(work.groups[key].jobs, ranks):
            level[instance.jobs[j].id] = instance.levels - 1 - r
    solution = CruxSolution({j: list(p) for j, p in path.items()},
                            {j: float(v) for j, v in level.items()}, level)
    return solution, complete
