"""Lower bounds on the optimal makespan of a ``placement`` instance.

Every function here returns a value that no feasible placement (docs/formats.rst, placement) beats:
ops without compute may share a GPU's time, a dependency between ops on one GPU costs
no transfer, and only dependencies of bytes > 0 count towards ``max_peers``. They use
numpy and one pass over the DAG, so every heuristic can report them.
:func:`lower_bound` is the largest of them, :func:`bounds` lists each one.

The bounds build on *heads* and *tails*: ``head[k]`` is a lower bound on the start of
op ``k`` and ``tail[k]`` on the time from its end to the makespan, in every feasible
schedule. :func:`heads_and_tails` gives the compute-only
ones; :func:`fan_heads_and_tails` adds what the degree limit and the transfers force.

References
----------
.. [1] E. B. Fernández and B. Bussell, "Bounds on the number of processors and time for
   multiprocessor optimal schedules", IEEE Trans. Computers C-22(8), 1973.
.. [2] P. Lopez, J. Erschler and P. Esquirol, "Ordonnancement de tâches sous contraintes:
   une approche énergétique", RAIRO-APII 26(6), 1992.
.. [3] P. Baptiste, C. Le Pape and W. Nuijten, *Constraint-Based Scheduling*, Kluwer,
   2001, §3.3 (energetic reasoning).
.. [4] J. Carlier, "Scheduling jobs with release dates and tails on identical machines
   to minimize the makespan", EJOR 29(3), 1987 (release + work / machines).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from fabricopt.problems._kind import NamedBound
from fabricopt.problems.placement import PlacementInstance

__all__ = ["heads_and_tails", "fan_time", "diamond_time", "fan_heads_and_tails",
           "critical_path_bound", "load_bound",
           "fan_bound", "interval_load_bound", "energetic_bound", "bounds", "lower_bound"]

def heads_and_tails(instance: PlacementInstance) -> tuple[np.ndarray, np.ndarray]:
    """Longest compute-only paths ``(head, tail)``: every op starts no earlier than
    ``head[k]`` and is followed by at least ``tail[k]`` seconds of dependent compute,
    whatever the placement (transfers only add to both)."""
    n = instance.size
    c = instance.compute_list
    head = [0.0] * n
    tail = [0.0] * n
    order = instance.topological_order()
    for v in order:
        for u, _, _ in instance.parents[v]:
            head[v] = max(head[v], head[u] + c[u])
    for u in reversed(order):
        for v, _, _ in instance.children[u]:
            tail[u] = max(tail[u], tail[v] + c[v])
    return np.array(head, dtype=float), np.array(tail, dtype=float)


# Work of the interval-load and energetic tests is candidate-starts x candidate-ends x ops;
# the candidate sets are thinned (any subset of intervals gives a valid bound) to keep it
# near this many multiply-adds.
_INTERVAL_WORK = 4_000_000
# Where lower_bound keeps an instance's default bound (methods and solve both ask for it).
_CACHE = "_placement_lower_bound"
# Bisection steps of the energetic bound (each halves the bracket's width).
_ENERGETIC_STEPS = 18


def fan_time(count: int, work_s: float, min_compute_s: float, min_delay_s: float,
             machines: int) -> float:
    """Least time, from a common release, until ``count`` ops of total compute
    ``work_s`` have all run when each runs on a *home* GPU or on one of at most
    ``machines`` other GPUs, at the price of ``min_delay_s`` on those.

    The argument (the degree limit at work): the parents of an op ``v`` that send it
    bytes lie on ``v``'s GPU or on one of at most ``max_peers`` GPUs it receives from.
    Parents on one GPU run one at a time, and a remote GPU's last parent must also
    transfer before ``v`` starts; so if the home GPU holds work ``W_0`` and remote GPU
    ``j`` holds ``W_j``, ``v`` waits ``max(W_0, max_j W_j + delay)`` after the parents'
    common release. Children of an op sit the same way around its GPU. The least such
    wait over every split is at least the larger of

    - the fractional split: ``min(W, (W + m*delay)/(m + 1))`` (equalize ``W_0`` with
      every ``W_j + delay``; Carlier's release + work/machines (Carlier 1987) with a transfer);
    - the count split: ``min over q of max(q*c, delay + ceil((k - q)/m)*c)`` with ``q``
      ops at home, each op at least ``c = min_compute_s`` long.

    Parameters
    ----------
    count : int
        Ops in the set (``k``).
    work_s : float
        Their total compute (``W``).
    min_compute_s, min_delay_s : float
        The shortest compute and the shortest transfer among them.
    machines : int
        GPUs other than home they may use (``m``; 0 puts all of them at home).

    Returns
    -------
    float
        A lower bound on the wait, in seconds.

    Notes
    -----
    The count split and the transfer are ours; with no transfer the fractional split is
    Carlier's bound (Carlier 1987) for one release date.

    Examples
    --------
    >>> fan_time(32, 32.0, 1.0, 0.5, 7)      # 32 unit ops over home + 7 peers
    4.5
    >>> fan_time(4, 4.0, 1.0, 0.5, 7)        # one at home, three one hop away
    1.5
    >>> fan_time(4, 4.0, 1.0, 0.5, 0)        # no other GPU: all at home
    4.0
    """
    if count <= 0:
        return 0.0
    if machines <= 0:
        return work_s
    fractional = min(work_s, (work_s + machines * min_delay_s) / (machines + 1))
    c, best = min_compute_s, count * min_compute_s
    if c > 0:
        # with `rounds` ops on the busiest remote GPU, at least count - rounds*m stay home
        for rounds in range(1, -(-count // machines) + 1):
            home = max(0, count - rounds * machines) * c
            best = min(best, max(home, min_delay_s + rounds * c))
    else:
        best = 0.0
    return max(fractional, best)


def _split_two(total: int, c: float, d1: float, d2: float) -> float:
    """``min over q1 + q2 = total`` of ``max(q1*c + d2 if q1, d1 + q2*c if q2)``."""
    if total <= 0:
        return 0.0
    best = min(total * c + d2, d1 + total * c)          # all on one of the two
    middle = (total * c + d1 - d2) / (2 * c)            # where the two sides balance
    for q1 in {math.floor(middle), math.ceil(middle)}:
        if 0 < q1 < total:
            best = min(best, max(q1 * c + d2, d1 + (total - q1) * c))
    return best


def diamond_time(count: int, work_s: float, min_compute_s: float, first_delay_s: float,
                 second_delay_s: float, machines: int) -> float:
    """Least time from the end of an op ``u`` to the start of an op ``w`` when ``count``
    ops of total compute ``work_s`` each read from ``u`` and feed ``w`` (bytes > 0 both
    ways), ``first_delay_s`` and ``second_delay_s`` being their shortest transfers.

    The argument: the middle ops sit on ``u``'s GPU or one of at most ``machines`` it
    sends to, and on ``w``'s GPU or one of at most ``machines`` it receives from. If
    ``u`` and ``w`` share a GPU, ops there pay no transfer and the others pay both:
    :func:`fan_time` with the two delays summed. Otherwise ops on ``u``'s GPU pay the
    second transfer, ops on ``w``'s GPU the first and the others both; with ``q1`` and
    ``q2`` ops on those two GPUs the wait is at least ``max(q1*c + d2, d1 + q2*c,
    d1 + d2 + ceil(rest/m)*c)`` (``c = min_compute_s``), and at least
    ``min(d1, d2) + W/(m + 2)`` whatever the sizes. The bound is the smaller case.

    Parameters
    ----------
    count, work_s, min_compute_s, machines
        As in :func:`fan_time`.
    first_delay_s, second_delay_s : float
        The shortest transfer ``u -> middle`` and ``middle -> w``.

    Notes
    -----
    Ours: the degree-limit argument of :func:`fan_time` applied to both ends at once.

    Examples
    --------
    >>> diamond_time(8, 8.0, 1.0, 0.5, 0.5, 3)    # 1 -> 8 -> 1 ops over 3 peers
    3.0
    >>> diamond_time(8, 8.0, 1.0, 0.5, 0.5, 0)    # one GPU
    8.0
    """
    same = fan_time(count, work_s, min_compute_s, first_delay_s + second_delay_s, machines)
    if machines <= 0 or count <= 0:
        return same
    d1, d2, c = first_delay_s, second_delay_s, min_compute_s
    apart = min(d1, d2) + work_s / (machines + 2)
    if c > 0:
        # `rounds` ops at most on each other GPU leaves at least count - rounds*m to the
        # two home GPUs (more there only lengthens them)
        count_bound = _split_two(count, c, d1, d2)
        for rounds in range(1, -(-count // machines) + 1):
            homes = max(0, count - rounds * machines)
            count_bound = min(count_bound, max(d1 + d2 + rounds * c,
                                               _split_two(homes, c, d1, d2)))
        apart = max(apart, count_bound)
    else:
        apart = max(apart, min(d1, d2))
    return min(same, apart)


def _diamonds(carrying_near: list, carrying: list, out: list, compute: list,
              machines: int) -> float:
    """The best :func:`diamond_time` bound of an op over the ops ``far`` two carrying deps
    away through at least two middle ops (``out[far] + compute[far] + diamond``);
    ``carrying[x]`` lists ``(neighbour, delay)`` over the deps of ``x`` with bytes > 0."""
    middles: dict[int, list] = {}
    for x, d2 in carrying_near:
        for far, d1 in carrying[x]:
            items = middles.get(far)
            if items is None:
                middles[far] = [(x, d1, d2)]
            else:
                items.append((x, d1, d2))
    best = 0.0
    for far, items in middles.items():
        if len(items) < 2:
            continue
        work = math.fsum(compute[x] for x, _, _ in items)
        wait = diamond_time(len(items), work, min(compute[x] for x, _, _ in items),
                            min(d1 for _, d1, _ in items), min(d2 for _, _, d2 in items),
                            machines)
        best = max(best, out[far] + compute[far] + wait)
    return best


def _fan_pass(order: Sequence[int], neighbours: Sequence[tuple], compute: list,
              degree_machines: int, all_machines: int) -> list:
    """One pass of :func:`fan_heads_and_tails` (heads over parents, or tails over children)."""
    n = len(compute)
    out = [0.0] * n
    carrying = [[(u, d) for u, d, b in near if b] for near in neighbours]
    for v in order:
        near = neighbours[v]
        if not near:
            continue
        best = max(out[u] + compute[u] for u, _, _ in near)
        if len(near) > 1:
            mine = carrying[v]
            best = max(best, _diamonds(mine, carrying, out, compute, degree_machines))
            groups = [(list(mine), degree_machines)]
            if len(mine) < len(near):   # else the carrying set, on fewer GPUs, dominates
                groups.append(([(u, d if b else 0.0) for u, d, b in near], all_machines))
            for group, machines in groups:
                if len(group) < 2:
                    continue
                group.sort(key=lambda e: -out[e[0]])
                k, work, cmin, dmin = 0, 0.0, math.inf, math.inf
                for at, (u, d) in enumerate(group):  # ops whose key is >= out[u]: one release
                    k += 1
                    work += compute[u]
                    cmin = min(cmin, compute[u])
                    dmin = min(dmin, d)
                    if k > 1 and (at + 1 == len(group) or out[group[at + 1][0]] < out[u]):
                        best = max(best, out[u] + fan_time(k, work, cmin, dmin, machines))
        out[v] = best
    return out


def fan_heads_and_tails(instance) -> tuple[np.ndarray, np.ndarray]:
    """Heads and tails that also count the transfers the degree limit forces.

    ``head[v]`` is the largest of ``head[u] + compute[u]`` over its parents and of
    ``a + fan_time(S_a)`` over the sets ``S_a`` of parents whose head is at least ``a``
    (every parent, which may use all ``gpus - 1`` other GPUs, and those with bytes > 0,
    which may use only ``min(max_peers, gpus - 1)``); tails likewise over children.
    Both stay lower bounds in every feasible schedule, by induction along the DAG and
    the argument of :func:`fan_time`.

    Returns
    -------
    (head, tail) : arrays indexed like ``instance.ops``

    Examples
    --------
    >>> from fabricopt.problems.placement import PlacementInstance, SubOp, Dep
    >>> ops = [SubOp("a", 1.0)] + [SubOp(f"b{i}", 1.0) for i in range(4)]
    >>> deps = [Dep("a", f"b{i}", 1e9) for i in range(4)]    # 1 s transfers
    >>> head, tail = fan_heads_and_tails(PlacementInstance(4, 1, 8.0, ops, deps))
    >>> float(tail[0])     # 3 children at home, or 2 on the one peer after 1 s: 3 s
    3.0
    """
    compute = instance.compute_list
    machines = max(instance.gpus - 1, 0)
    degree = min(instance.max_peers, machines)
    order = instance.topological_order()
    head = _fan_pass(order, instance.parents, compute, degree, machines)
    tail = _fan_pass(order[::-1], instance.children, compute, degree, machines)
    return np.array(head), np.array(tail)


def critical_path_bound(instance) -> float:
    """The longest compute-only path: no schedule runs a chain of dependent ops faster.

    Examples
    --------
    >>> from fabricopt.problems.placement import PlacementInstance, SubOp, Dep
    >>> inst = PlacementInstance(2, 1, 8.0, [SubOp("a", 1.0), SubOp("b", 2.0)],
    ...                          [Dep("a", "b", 8.0)])
    >>> critical_path_bound(inst)
    3.0
    """
    if instance.size == 0:
        return 0.0
    head, _ = heads_and_tails(instance)
    return float((head + instance.compute).max())


def load_bound(instance) -> float:
    """Total compute spread evenly over all GPUs (each GPU runs one op at a time).

    Examples
    --------
    >>> from fabricopt.problems.placement import PlacementInstance, SubOp
    >>> load_bound(PlacementInstance(2, 1, 8.0, [SubOp("a", 1.0), SubOp("b", 2.0)]))
    1.5
    """
    return float(instance.compute.sum()) / instance.gpus


def fan_bound(instance, heads_tails=None) -> float:
    """``max_k head[k] + compute[k] + tail[k]`` over :func:`fan_heads_and_tails`:
    the critical path once the transfers that the degree limit forces are paid.

    Examples
    --------
    >>> from fabricopt.problems.placement import PlacementInstance, SubOp, Dep
    >>> ops = [SubOp("a", 1.0)] + [SubOp(f"b{i}", 1.0) for i in range(4)]
    >>> deps = [Dep("a", f"b{i}", 1e9) for i in range(4)]
    >>> fan_bound(PlacementInstance(4, 1, 8.0, ops, deps))
    4.0
    """
    if instance.size == 0:
        return 0.0
    head, tail = fan_heads_and_tails(instance) if heads_tails is None else heads_tails
    return float((head + instance.compute + tail).max())


def _thin(values: np.ndarray, keep: int) -> np.ndarray:
    values = np.unique(values)
    if len(values) <= keep:
        return values
    return values[np.linspace(0, len(values) - 1, keep).round().astype(int)]


def _candidates(instance, head, tail, horizon):
    """Interval ends: op releases and earliest ends as starts, latest starts and deadlines
    as ends, thinned so that starts x ends x ops stays near ``_INTERVAL_WORK``."""
    c = instance.compute
    deadline = horizon - tail
    keep = max(8, int(math.sqrt(_INTERVAL_WORK / max(instance.size, 1))))
    starts = _thin(np.concatenate([head, head + c]), keep)
    ends = _thin(np.concatenate([deadline, deadline - c]), keep)
    return starts, ends


def _max_excess(instance, head, tail, horizon, starts, ends) -> float:
    """``max over t1 < t2 of W(t1, t2)/gpus - (t2 - t1)``, where ``W`` is the work every
    schedule of makespan ``horizon`` must do inside [t1, t2] (-inf without an interval)."""
    c = instance.compute
    release, deadline = head, horizon - tail
    busy = c > 0
    c, release, deadline = c[busy], release[busy], deadline[busy]
    best = -math.inf
    if len(c) == 0:
        return best
    chunk = max(1, _INTERVAL_WORK // max(len(c) * len(ends), 1))
    for at in range(0, len(starts), chunk):
        t1 = starts[at:at + chunk, None, None]
        t2 = ends[None, :, None]
        length = t2 - t1
        # the least overlap of [s, s + c] with [t1, t2] over s in [release, deadline - c]
        forced = np.minimum(np.minimum(length, c),
                            np.minimum(release + c - t1, t2 - deadline + c))
        work = np.maximum(forced, 0.0).sum(axis=2)
        excess = np.where(length[:, :, 0] > 0, work / instance.gpus - length[:, :, 0], -math.inf)
        best = max(best, float(excess.max()))
    return best


def interval_load_bound(instance, heads_tails=None) -> float:
    """The Fernández–Bussell interval-load bound (1973) over the given heads and tails.

    With ``D = max head + compute + tail``, an op must run between ``head`` and
    ``D - tail`` in a schedule of length ``D``, so it does at least ``min(t2 - t1, c,
    head + c - t1, t2 - (D - tail) + c)`` of its work inside [t1, t2]. A makespan of
    ``D + x`` widens every interval by at most ``x`` and leaves that work forced, so
    ``x >= W(t1, t2)/gpus - (t2 - t1)`` for every interval.

    Parameters
    ----------
    instance : PlacementInstance
    heads_tails : (head, tail), optional
        Valid heads and tails (default: :func:`fan_heads_and_tails`).

    Examples
    --------
    >>> from fabricopt.problems.placement import PlacementInstance, SubOp, Dep
    >>> ops = [SubOp("a", 1.0), SubOp("b", 1.0), SubOp("c", 1.0), SubOp("d", 1.0)]
    >>> inst = PlacementInstance(2, 1, 8.0, ops, [Dep("a", "b", 0), Dep("c", "d", 0)])
    >>> interval_load_bound(inst)        # four unit ops on two GPUs, each chain of two
    2.0
    """
    if instance.size == 0:
        return 0.0
    head, tail = fan_heads_and_tails(instance) if heads_tails is None else heads_tails
    horizon = float((head + instance.compute + tail).max())
    starts, ends = _candidates(instance, head, tail, horizon)
    return horizon + max(0.0, _max_excess(instance, head, tail, horizon, starts, ends))


def energetic_bound(instance, heads_tails=None, *, start_s: float | None = None) -> float:
    """Energetic reasoning (Lopez et al. 1992; Baptiste et al. 2001): the least makespan
    ``C`` that passes the energy test.

    For a trial makespan ``C`` each op must run inside [head, C - tail]; if the work
    forced into some interval [t1, t2] exceeds ``gpus * (t2 - t1)``, no schedule of
    makespan ``C`` exists, nor of any smaller one (the forced work only grows). The
    bound bisects ``C`` upwards from ``start_s`` (default: the interval-load bound)
    and returns the largest ``C`` proven infeasible, or ``start_s``.

    Examples
    --------
    >>> from fabricopt.problems.placement import PlacementInstance, SubOp
    >>> energetic_bound(PlacementInstance(2, 1, 8.0, [SubOp(k, 1.0) for k in "abc"]))
    1.5
    """
    if instance.size == 0:
        return 0.0
    head, tail = fan_heads_and_tails(instance) if heads_tails is None else heads_tails
    low = interval_load_bound(instance, (head, tail)) if start_s is None else float(start_s)
    high = low + float(instance.compute.sum()) / instance.gpus + 1e-300

    def infeasible(horizon: float) -> bool:
        starts, ends = _candidates(instance, head, tail, horizon)
        return _max_excess(instance, head, tail, horizon, starts, ends) > 1e-12 * horizon

    if not infeasible(low):
        return low
    proven = low
    for _ in range(_ENERGETIC_STEPS):
        mid = 0.5 * (proven + high)
        if infeasible(mid):
            proven = mid
        else:
            high = mid
    return proven


def bounds(instance, *, energetic: bool | None = None) -> dict[str, float]:
    """Every bound of this module by name: ``critical-path``, ``load``, ``degree-fan``,
    ``interval-load`` and, if ``energetic`` (off by default: on every generated instance
    measured it equalled ``interval-load`` at several times the cost), ``energetic``.

    Examples
    --------
    >>> from fabricopt.problems.placement import PlacementInstance, SubOp
    >>> sorted(bounds(PlacementInstance(2, 1, 8.0, [SubOp("a", 1.0)]), energetic=True))
    ['critical-path', 'degree-fan', 'energetic', 'interval-load', 'load']
    """
    if energetic is None:
        energetic = False
    out = {"critical-path": critical_path_bound(instance), "load": load_bound(instance)}
    if instance.size == 0:
        out.update({"degree-fan": 0.0, "interval-load": 0.0})
        if energetic:
            out["energetic"] = 0.0
        return out
    fan = fan_heads_and_tails(instance)
    out["degree-fan"] = fan_bound(instance, fan)
    out["interval-load"] = interval_load_bound(instance, fan)
    if energetic:
        out["energetic"] = energetic_bound(instance, fan, start_s=max(out.values()))
    # Every op on one GPU is a schedule of makespan sum(compute), so no bound exceeds it;
    # sums taken in another order can round one step above it.
    serial = float(instance.compute.sum())
    return {name: min(value, serial) for name, value in out.items()}


def lower_bound(instance, *, energetic: bool | None = None) -> NamedBound:
    """The largest of :func:`bounds`, named by the bound that gave it.

    Examples
    --------
    >>> from fabricopt.problems.placement import PlacementInstance, SubOp
    >>> b = lower_bound(PlacementInstance(2, 1, 8.0, [SubOp("a", 1.0), SubOp("b", 3.0)]))
    >>> float(b), b.source
    (3.0, 'critical-path')
    """
    cacheable = energetic is None   # instances are frozen: their default bound never changes
    if cacheable and _CACHE in instance.__dict__:
        return instance.__dict__[_CACHE]
    out = NamedBound.best(bounds(instance, energetic=energetic), sense="min")
    if cacheable:
        instance.__dict__[_CACHE] = out
    return out
