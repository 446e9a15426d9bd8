"""SiP-Ring wavelength scheduling as integer programs: with continuity, and SiP-ML's counts.

Both models maximize the normalized rate ``t`` with ``n_ij >= t * T̂_ij`` for every
demanded pair (``T̂ = T / max T``), which is the same as minimizing the longest transfer
time ``8 * T_max / (t * wavelength_gbps * 1e9)``, and both require ``n_ij >= 1`` (every
demanded pair is served) and at most W lightpaths sourced and sunk per node.

- :func:`build` — the schedule: a binary per lightpath (pair, direction, wavelength)
  within reach; no two lightpaths on one (direction, segment, wavelength).
- :func:`build_count` — SiP-ML's own ILP (notes/sipml.md §2.2): an integer count per
  pair and direction, at most W per (direction, segment), no wavelength identities.
  Its LP relaxation (``integer=False``) is the flow problem of the ``mcf`` method.

References
----------
.. [1] M. Khani et al., "SiP-ML", SIGCOMM 2021, §3.3 and Appendix A.1; the authors'
   RostAM ``RingInterconnect::setup_ilp_solver`` (notes/sipml.md §2.2).
"""

from __future__ import annotations

import pulp

from ..problems.wavelengths import (DIRECTIONS, Lightpath, WavelengthsInstance,
                                    WavelengthsSolution, arc, require_feasible)
from ._model import MilpModel, new_problem

__all__ = ["build", "build_count"]


def _arcs(instance: WavelengthsInstance) -> list[tuple[int, int, str, tuple[int, ...]]]:
    """(src, dst, direction, segments) of every demanded pair's arcs within reach."""
    n = instance.nodes
    out = []
    for i, j in instance.demanded:
        for ccw, direction in enumerate(DIRECTIONS):
            first, hops = arc(n, i, j, bool(ccw))
            if hops <= instance.max_hops:
                out.append((i, j, direction, tuple((first + s) % n for s in range(hops))))
    return out


def _common(prob: pulp.LpProblem, instance: WavelengthsInstance, terms: dict, t) -> None:
    """Rate, service and transceiver rows on ``terms[(i, j)]`` = list of (variable, weight)."""
    w = instance.wavelengths
    t_max = float(instance.traffic.max())
    out: dict[int, list] = {}
    into: dict[int, list] = {}
    for (i, j), vars_ in terms.items():
        n_ij = pulp.lpSum(vars_)
        prob += n_ij >= 1, f"serve_{i}_{j}"
        prob += n_ij >= (instance.traffic[i, j] / t_max) * t, f"rate_{i}_{j}"
        out.setdefault(i, []).extend(vars_)
        into.setdefault(j, []).extend(vars_)
    for name, ends in (("tx", out), ("rx", into)):
        for node, vars_ in ends.items():
            prob += pulp.lpSum(vars_) <= w, f"{name}_{node}"


def _bound_from_raw(instance: WavelengthsInstance):
    t_max = float(instance.traffic.max())
    rate_bps = instance.wavelength_gbps * 1e9

    def bound_from_raw(raw_t: float) -> float:
        if t_max == 0:
            return 0.0
        return 8.0 * t_max / (raw_t * rate_bps) if raw_t > 0 else float("inf")
    return bound_from_raw


def build(instance: WavelengthsInstance, *, symmetry_breaking: bool = True) -> MilpModel:
    """The wavelength-scheduling MILP with wavelength continuity.

    Variables ``x[i,j,d,w]`` in {0,1} — a lightpath i -> j on fiber d and wavelength w —
    for every demanded pair and direction within ``max_hops``, and ``t >= 0``::

        maximize t  s.t.  sum of x over lightpaths using (d, s, w)  <= 1    every d, s, w
                          n_ij = sum_{d,w} x[i,j,d,w] >= max(1, t * T̂_ij)  T_ij > 0
                          sum_j n_ij <= W,  sum_i n_ij <= W                 every node

    Lightpaths of pairs without traffic are left out: they never lower the objective.

    Parameters
    ----------
    instance : WavelengthsInstance
    symmetry_breaking : bool
        The wavelengths of one fiber are interchangeable (ours, not SiP-ML's): order
        them by the segments they occupy, which cuts equivalent optima only.

    Returns
    -------
    MilpModel
        Objective ``t``; ``bound_from_raw`` maps a bound on ``t`` to a lower bound on the
        longest transfer time in seconds; ``encode`` turns a schedule into a MIP start.

    Raises
    ------
    InfeasibleInstance
        When :func:`~fabricopt.problems.wavelengths.require_feasible` finds a proof
        (e.g. a demanded pair beyond ``max_hops`` both ways).

    Examples
    --------
    >>> from fabricopt.problems.wavelengths import generate
    >>> model = build(generate(seed=1, nodes=6, wavelengths=2, max_hops=2))
    >>> model.problem.sense == pulp.LpMaximize
    True
    """
    require_feasible(instance)
    w = instance.wavelengths
    prob = new_problem("wavelengths", "max")
    arcs = _arcs(instance)
    keys = [(i, j, d, c) for i, j, d, _ in arcs for c in range(w)]
    x = prob.add_variable_dicts("x", keys, 0, 1, pulp.LpInteger)
    t = prob.add_variable("t", 0, w, pulp.LpContinuous)  # n_ij <= W bounds t where T̂ = 1
    prob += t
    on_segment: dict[tuple, list] = {}
    terms: dict[tuple, list] = {}
    usage: dict[tuple, list] = {}
    for i, j, d, segs in arcs:
        for c in range(w):
            var = x[i, j, d, c]
            terms.setdefault((i, j), []).append(var)
            usage.setdefault((d, c), []).append(len(segs) * var)
            for s in segs:
                on_segment.setdefault((d, s, c), []).append(var)
    for (d, s, c), vars_ in on_segment.items():
        if len(vars_) > 1:
            prob += pulp.lpSum(vars_) <= 1, f"seg_{d}_{s}_{c}"
    _common(prob, instance, terms, t)
    if symmetry_breaking:
        for d in DIRECTIONS:
            for c in range(w - 1):
                prob += (pulp.lpSum(usage.get((d, c), [])) >= pulp.lpSum(usage.get((d, c + 1), []))
                         ), f"order_{d}_{c}"
    t_max = float(instance.traffic.max())

    def decode(values) -> WavelengthsSolution:
        return WavelengthsSolution([Lightpath(i, j, d, c) for (i, j, d, c), var in x.items()
                                    if values[var.name] > 0.5])

    def encode(solution: WavelengthsSolution) -> dict[str, float]:
        # Relabel each fiber's wavelengths by occupied segments, as the ordering rows want.
        hops = {}
        for p in solution.lightpaths:
            h = arc(instance.nodes, p.src, p.dst, p.dir == "ccw")[1]
            hops[p.dir, p.wavelength] = hops.get((p.dir, p.wavelength), 0) + h
        relabel = {}
        for d in DIRECTIONS:
            ranked = sorted(range(w), key=lambda c: (-hops.get((d, c), 0), c))
            relabel.update({(d, c): new for new, c in enumerate(ranked)})
        start = {var.name: 0.0 for var in x.values()}
        counts: dict[tuple, int] = {}
        for p in solution.lightpaths:
            key = (p.src, p.dst, p.dir, relabel[p.dir, p.wavelength])
            if key in x:
                start[x[key].name] = 1.0
                counts[p.src, p.dst] = counts.get((p.src, p.dst), 0) + 1
        rates = [counts.get((i, j), 0) * t_max / instance.traffic[i, j]
                 for i, j in instance.demanded]
        start[t.name] = min(rates + [w])
        return start

    return MilpModel(prob, decode, _bound_from_raw(instance), encode)


def build_count(instance: WavelengthsInstance, *, integer: bool = True,
                min_rate: float | None = None) -> MilpModel:
    """SiP-ML's count ILP: lightpaths per pair and direction, no wavelength continuity.

    Variables ``y[i,j,d]`` in 0..W — lightpaths i -> j on fiber d — for every demanded
    pair and direction within ``max_hops``, and ``t >= 0``::

        maximize t  s.t.  sum of y over arcs using (d, s)  <= W             every d, s
                          n_ij = sum_d y[i,j,d] >= max(1, t * T̂_ij)         T_ij > 0
                          sum_j n_ij <= W,  sum_i n_ij <= W                 every node

    It is a relaxation, not a schedule: every schedule's counts satisfy it, but counts
    that fit every segment need not admit one wavelength per lightpath end to end. On
    a 3-node ring with W = 2, the cw arcs 0->2, 1->0 and 2->1 load every segment twice,
    yet each pair of them overlaps, so they need three wavelengths. Its optimum is
    therefore a lower bound on the longest transfer time, which is what the
    ``count-bound`` method reports. SiP-ML's code splits W over 5 parallel rings and
    omits ``max_hops`` and the transceiver rows; we keep the problem of docs/formats.rst, wavelengths.

    Parameters
    ----------
    instance : WavelengthsInstance
    integer : bool
        False gives the LP relaxation: the per-fiber flow problem (chords for demanded
        pairs, capacity W per segment) that the ``mcf`` method rounds.
    min_rate : float, optional
        Instead of maximizing ``t``, require ``t >= min_rate`` and minimize the
        segment-wavelengths used, ``sum of hops * y`` — a min-cost flow around each
        fiber. With ``min_rate`` the LP optimum of the first model, this gives every
        pair the counts the best rate needs and no more.

    Returns
    -------
    MilpModel
        ``decode`` gives ``{(src, dst, direction): lightpaths}`` (counts, not a
        solution); ``bound_from_raw`` maps a bound on ``t`` to seconds (meaningless
        with ``min_rate``).

    Raises
    ------
    InfeasibleInstance
        When :func:`~fabricopt.problems.wavelengths.require_feasible` finds a proof.
    """
    require_feasible(instance)
    w = instance.wavelengths
    prob = new_problem("wavelength_counts", "max")
    arcs = _arcs(instance)
    y = prob.add_variable_dicts("y", [(i, j, d) for i, j, d, _ in arcs], 0, w,
                                pulp.LpInteger if integer else pulp.LpContinuous)
    t = prob.add_variable("t", 0, w, pulp.LpContinuous)
    if min_rate is None:
        prob += t
    else:
        prob.sense = pulp.LpMinimize
        prob += pulp.lpSum(len(segs) * y[i, j, d] for i, j, d, segs in arcs)
        prob += t >= min_rate, "min_rate"
    on_segment: dict[tuple, list] = {}
    terms: dict[tuple, list] = {}
    for i, j, d, segs in arcs:
        terms.setdefault((i, j), []).append(y[i, j, d])
        for s in segs:
            on_segment.setdefault((d, s), []).append(y[i, j, d])
    for (d, s), vars_ in on_segment.items():
        prob += pulp.lpSum(vars_) <= w, f"seg_{d}_{s}"
    _common(prob, instance, terms, t)

    def decode(values) -> dict[tuple, float]:
        return {key: float(values[var.name]) for key, var in y.items()}

    return MilpModel(prob, decode, _bound_from_raw(instance))
