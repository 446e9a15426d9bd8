"""SiP-Ring wavelength scheduling as integer programs: with continuity, and SiP-ML's counts.

Both models maximize the normalized rate ``t`` with ``n_ij >= t * T̂_ij`` for every
demanded pair (``T̂ = T / max T``), which is the same as minimizing the longest transfer
time ``8 * T_max / (t * wavelength_gbps * 1e9)``, and both require ``n_ij >= 1`` (every
demanded pair is served) and at most W lightpaths sourced and sunk per node.

- :func:`build` — the schedule: a binary per lightpath (pair, direction, wavelength)
  within reach; no two lightpaths on one (direction, segment, wavelength).
- :func:`build_count` — SiP-ML's own ILP (fabricopt docs, *Departures*, sipml-2.2):
  an integer count per pair and direction, at most W per (direction, segment), no
  wavelength identities. Its LP relaxation (``integer=False``) is the flow problem of
  the ``mcf`` method.

Both are assembled as sparse matrices (:class:`~fabricopt.milp.SparseModel`).

References
----------
.. [1] M. Khani et al., "SiP-ML", SIGCOMM 2021, §3.3 and Appendix A.1; the authors'
   RostAM ``RingInterconnect::setup_ilp_solver`` (fabricopt docs, *Departures*,
   sipml-2.2).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from fabricopt.milp import MilpModel, SparseModel
from fabricopt.problems.wavelengths import (DIRECTIONS, Lightpath, WavelengthsInstance,
                                            WavelengthsSolution, arc, require_feasible)

__all__ = ["build", "build_count", "CountRelaxation", "ArcFlows"]


class _Arcs:
    """Every demanded pair's arcs within reach, as arrays.

    ``src``, ``dst``, ``direction`` (index into DIRECTIONS), ``pair`` (index into
    ``instance.demanded``) and ``hops`` per arc, pair by pair, cw before ccw;
    ``seg_arc``/``seg_key`` list the (arc, direction * n + segment) incidences, arc by
    arc, each arc's segments in :func:`~fabricopt.problems.wavelengths.arc`'s order.
    """

    def __init__(self, instance: WavelengthsInstance):
        n = instance.nodes
        src, dst, _, cw_hops, ccw_hops = instance.pairs
        # Both directions of every pair, interleaved (cw, ccw): arc()'s ranges.
        first = np.stack([src, (dst + 1) % n], axis=1).ravel().astype(np.int64)
        hops = np.stack([cw_hops, ccw_hops], axis=1).ravel().astype(np.int64)
        within = hops <= instance.max_hops
        self.src = np.repeat(src, 2)[within].astype(np.int64)
        self.dst = np.repeat(dst, 2)[within].astype(np.int64)
        self.direction = np.tile(np.arange(2, dtype=np.int64), len(src))[within]
        self.pair = np.repeat(np.arange(len(src), dtype=np.int64), 2)[within]
        self.hops = hops[within]
        first = first[within]
        self.count = len(self.hops)
        self.seg_arc = np.repeat(np.arange(self.count, dtype=np.int64), self.hops)
        offset = np.arange(len(self.seg_arc)) - np.repeat(np.cumsum(self.hops) - self.hops,
                                                          self.hops)
        self.seg_key = self.direction[self.seg_arc] * n + (first[self.seg_arc] + offset) % n


def _common(m: SparseModel, instance: WavelengthsInstance, arcs: _Arcs, cols: np.ndarray,
            t: int) -> None:
    """Service, rate and transceiver rows; ``cols[a]`` are arc a's columns (one per
    wavelength, or its count)."""
    w = instance.wavelengths
    t_max = float(instance.traffic.max())
    per_arc = cols.shape[1]
    owner = np.repeat(np.arange(arcs.count), per_arc)
    flat = cols.ravel()
    size = instance.pairs[2]
    pairs = len(size)
    m.rows("serve", arcs.pair[owner], flat, 1.0, lower=1.0, count=pairs)
    t_hat = size / t_max
    m.rows("rate", np.concatenate([arcs.pair[owner], np.arange(pairs)]),
           np.concatenate([flat, np.full(pairs, t)]),
           np.concatenate([np.ones(len(flat)), -t_hat]), lower=0.0, count=pairs)
    for name, ends in (("tx", arcs.src), ("rx", arcs.dst)):
        nodes, row = np.unique(ends, return_inverse=True)   # nodes with arcs only
        m.rows(name, row[owner], flat, 1.0, upper=float(w), count=len(nodes))


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
    >>> model.problem.maximize
    True
    """
    require_feasible(instance)
    w, n = instance.wavelengths, instance.nodes
    arcs = _Arcs(instance)
    m = SparseModel("wavelengths", "max")
    x = m.variables("x", (arcs.count, w), 0, 1, integer=True)
    t = m.variables("t", (), 0, w)  # n_ij <= W bounds t where T̂ = 1
    m.objective([t.start], [1.0])
    # one row per (direction, segment, wavelength) that two or more arcs share
    used = np.bincount(arcs.seg_key, minlength=2 * n)
    shared = used[arcs.seg_key] > 1
    keys, row = np.unique(arcs.seg_key[shared], return_inverse=True)
    on = arcs.seg_arc[shared]
    m.rows("seg", (row[:, None] * w + np.arange(w)).ravel(), x[on].ravel(), 1.0, upper=1.0,
           count=len(keys) * w)
    _common(m, instance, arcs, x.ids, t.start)
    if symmetry_breaking and w > 1:
        # per direction d and c < W-1: sum_a hops_a x[a, c] >= sum_a hops_a x[a, c+1]
        r = (arcs.direction[:, None] * (w - 1) + np.arange(w - 1)).ravel()
        here = x[:, :-1].ravel()
        there = x[:, 1:].ravel()
        h = np.repeat(arcs.hops, w - 1).astype(float)
        m.rows("order", np.concatenate([r, r]), np.concatenate([here, there]),
               np.concatenate([h, -h]), lower=0.0, count=len(DIRECTIONS) * (w - 1))
    t_max = float(instance.traffic.max())

    def decode(values) -> WavelengthsSolution:
        a, c = np.nonzero(m.value(x, values.col) > 0.5)
        return WavelengthsSolution([Lightpath(int(arcs.src[k]), int(arcs.dst[k]),
                                              DIRECTIONS[arcs.direction[k]], int(colour))
                                    for k, colour in zip(a, c)])

    def encode(solution: WavelengthsSolution) -> np.ndarray:
        # Relabel each fiber's wavelengths by occupied segments, as the ordering rows want.
        hops = {}
        for p in solution.lightpaths:
            h = arc(instance.nodes, p.src, p.dst, p.dir == "ccw")[1]
            hops[p.dir, p.wavelength] = hops.get((p.dir, p.wavelength), 0) + h
        relabel = {}
        for d in DIRECTIONS:
            ranked = sorted(range(w), key=lambda c: (-hops.get((d, c), 0), c))
            relabel.update({(d, c): new for new, c in enumerate(ranked)})
        index = {(int(i), int(j), DIRECTIONS[d]): a for a, (i, j, d) in
                 enumerate(zip(arcs.src, arcs.dst, arcs.direction))}
        start = m.start()
        counts: dict[tuple, int] = {}
        for p in solution.lightpaths:
            a = index.get((p.src, p.dst, p.dir))
            if a is not None:
                start[x[a, relabel[p.dir, p.wavelength]]] = 1.0
                counts[p.src, p.dst] = counts.get((p.src, p.dst), 0) + 1
        rates = [counts.get((i, j), 0) * t_max / instance.traffic[i, j]
                 for i, j in instance.demanded]
        start[t.start] = min(rates + [w])
        return start

    return MilpModel(m, decode, _bound_from_raw(instance), encode)


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
    return _count_model(instance, _Arcs(instance), integer, min_rate)


def _count_model(instance: WavelengthsInstance, arcs: _Arcs, integer: bool,
                 min_rate: float | None) -> MilpModel:
    """:func:`build_count` over ``arcs``; column ``arcs.count`` is ``t``."""
    w = instance.wavelengths
    m = SparseModel("wavelength_counts", "max" if min_rate is None else "min")
    y = m.variables("y", (arcs.count,), 0, w, integer=integer)
    t = m.variables("t", (), 0, w)
    if min_rate is None:
        m.objective([t.start], [1.0])
    else:
        m.objective(y.ids, arcs.hops.astype(float))
        m.rows("min_rate", [0], [t.start], [1.0], lower=float(min_rate), count=1)
    keys, row = np.unique(arcs.seg_key, return_inverse=True)
    m.rows("seg", row, y[arcs.seg_arc], 1.0, upper=float(w), count=len(keys))
    _common(m, instance, arcs, y.ids[:, None], t.start)

    def decode(values) -> ArcFlows:
        return ArcFlows(arcs.src, arcs.dst, arcs.direction == 1,
                        np.asarray(m.value(y, values.col), np.float64))

    return MilpModel(m, decode, _bound_from_raw(instance))


class ArcFlows(Mapping):
    """Lightpaths per arc of a count model's solution: ``{(src, dst, direction): count}``
    read-only, and the same as arrays for code that reads every arc.

    Parameters
    ----------
    src, dst : int64 arrays
        The ends of each arc.
    ccw : bool array
        Whether each arc runs on the ccw fiber.
    values : float64 array
        Its lightpaths (fractional in the LP relaxation).

    Examples
    --------
    >>> flows = ArcFlows(np.array([0, 0]), np.array([1, 1]), np.array([False, True]),
    ...                  np.array([1.5, 0.0]))
    >>> dict(flows)
    {(0, 1, 'cw'): 1.5, (0, 1, 'ccw'): 0.0}
    """

    def __init__(self, src: np.ndarray, dst: np.ndarray, ccw: np.ndarray, values: np.ndarray):
        self.src, self.dst, self.ccw, self.values = src, dst, ccw, values
        self._made: dict | None = None   # the dict, when first read as a mapping

    def _dict(self) -> dict:
        if self._made is None:
            direction = [DIRECTIONS[d] for d in self.ccw.astype(np.int64).tolist()]
            self._made = dict(zip(zip(self.src.tolist(), self.dst.tolist(), direction),
                                  self.values.tolist()))
        return self._made

    def __getitem__(self, key):
        return self._dict()[key]

    def __iter__(self):
        return iter(self._dict())

    def __len__(self) -> int:
        return len(self.src)

    def __repr__(self) -> str:
        return f"ArcFlows({self._dict()!r})"


class CountRelaxation:
    """The LP relaxation of :func:`build_count` and its min-cost follow-up
    (``min_rate``), built over one list of arcs: the two LPs of the ``mcf`` method.

    Parameters
    ----------
    instance : WavelengthsInstance

    Attributes
    ----------
    model : MilpModel
        ``build_count(instance, integer=False)``, the same model.

    Raises
    ------
    InfeasibleInstance
        When :func:`~fabricopt.problems.wavelengths.require_feasible` finds a proof.

    Examples
    --------
    >>> from fabricopt.milp import run_milp
    >>> from fabricopt.problems.wavelengths import generate
    >>> relaxed = CountRelaxation(generate(seed=1, nodes=6, wavelengths=2, max_hops=2))
    >>> run = run_milp(relaxed.model.problem)
    >>> lean = relaxed.lean(relaxed.rate(run.values))
    >>> lean.problem.maximize
    False
    """

    def __init__(self, instance: WavelengthsInstance):
        require_feasible(instance)
        self.instance = instance
        self._arcs = _Arcs(instance)
        self.model = _count_model(instance, self._arcs, False, None)

    def rate(self, values) -> float:
        """The value of ``t`` in a solution ``values`` of either model."""
        return float(values.col[self._arcs.count])

    def lean(self, min_rate: float) -> MilpModel:
        """``build_count(instance, integer=False, min_rate=min_rate)``."""
        return _count_model(self.instance, self._arcs, False, min_rate)
