"""Metrics over stored runs: primal gap to the best known objective, primal–dual gap,
shifted geometric mean runtime, solved counts.

Everything here is computed from the store's rows alone (objectives and bounds that
:func:`fabricopt.solve` scored); nothing is re-solved or re-scored.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from fabricopt.methods.result import relative_gap
from fabricopt.problems.tolerances import CERTIFY_RTOL
from fabricopt.bench.claims import with_contradictions

__all__ = ["mean", "median", "ratio", "relative_change", "loglog_slope", "SHIFT_S",
           "shifted_geometric_mean", "sgm_time_s", "BestKnown", "best_known", "primal_gap", "bound_gap", "with_primal_gaps",
           "MethodSummary", "summarize", "bound_sources"]

#: Shift of the shifted geometric mean runtime, in seconds (as in Mittelmann's benchmarks).
SHIFT_S = 10.0

_SOLVED = ("optimal", "feasible")


def mean(values: Iterable[float | None]) -> float | None:
    """The mean of the values that are not None (None if there are none).

    Examples
    --------
    >>> mean([1.0, None, 2.0])
    1.5
    >>> mean([None]) is None
    True
    """
    values = [v for v in values if v is not None]
    return math.fsum(values) / len(values) if values else None


def median(values: Iterable[float | None]) -> float | None:
    """The median of the values that are not None (None if there are none).

    Examples
    --------
    >>> median([3.0, None, 1.0, 2.0, 10.0])
    2.5
    """
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    """``numerator / denominator``; None when either is missing or the denominator is 0.

    The one ratio every report uses (speed-ups, fractions of an optimum).

    Examples
    --------
    >>> ratio(3.0, 2.0), ratio(1.0, 0.0), ratio(None, 2.0)
    (1.5, None, None)
    """
    if numerator is None or denominator is None or denominator == 0:
        return None
    return numerator / denominator


def relative_change(new: float | None, old: float | None) -> float | None:
    """``new / old - 1`` (+0.10 is 10 % more); None where :func:`ratio` is None.

    Examples
    --------
    >>> round(relative_change(1.1, 1.0), 12), relative_change(1.0, None)
    (0.1, None)
    """
    r = ratio(new, old)
    return None if r is None else r - 1.0


def loglog_slope(sizes: Sequence[float], values: Sequence[float | None]) -> float | None:
    """Least-squares slope of ``log(value)`` on ``log(size)`` over the positive pairs;
    None with fewer than two distinct sizes.

    Examples
    --------
    >>> round(loglog_slope([10, 100, 1000], [1.0, 100.0, 10000.0]), 6)
    2.0
    """
    pairs = [(math.log(s), math.log(v)) for s, v in zip(sizes, values)
             if v is not None and v > 0 and s > 0]
    if len({x for x, _ in pairs}) < 2:
        return None
    mx = math.fsum(x for x, _ in pairs) / len(pairs)
    my = math.fsum(y for _, y in pairs) / len(pairs)
    sxx = math.fsum((x - mx) ** 2 for x, _ in pairs)
    return math.fsum((x - mx) * (y - my) for x, y in pairs) / sxx


def shifted_geometric_mean(values: Iterable[float], shift: float = SHIFT_S) -> float | None:
    """``exp(mean(log(v + shift))) - shift``; None for no values.

    The shift keeps runs of a few milliseconds from dominating the mean.

    Examples
    --------
    >>> round(shifted_geometric_mean([0.0, 30.0]), 6)   # sqrt(10 * 40) - 10
    10.0
    >>> shifted_geometric_mean([]) is None
    True
    """
    values = list(values)
    if not values:
        return None
    return math.exp(math.fsum(math.log(v + shift) for v in values) / len(values)) - shift


def sgm_time_s(row: dict[str, Any]) -> float:
    """A run's time in the shifted geometric mean: its runtime, capped at the time limit,
    and the full time limit for a run that failed (``error``, including killed runs).

    Examples
    --------
    >>> sgm_time_s({"status": "feasible", "runtime_s": 12.5, "time_limit_s": 10.0})
    10.0
    >>> sgm_time_s({"status": "error", "runtime_s": 0.01, "time_limit_s": 10.0})
    10.0
    """
    limit = row["time_limit_s"]
    if row["status"] == "error" or row.get("runtime_s") is None:
        return limit
    return min(row["runtime_s"], limit)


@dataclass(frozen=True)
class BestKnown:
    """The best objective and the best bound any stored run found for one instance."""

    sense: str
    objective: float | None
    bound: float | None

    @property
    def proven(self) -> bool:
        """Is the best objective proven optimal by the best bound (to
        :data:`~fabricopt.problems.tolerances.CERTIFY_RTOL`, 1e-9 relative)?"""
        if self.objective is None or self.bound is None:
            return False
        gap = relative_gap(self.objective, self.bound)
        return gap is not None and gap <= CERTIFY_RTOL


def _better(sense: str, a: float | None, b: float | None, *, bound: bool = False):
    if a is None:
        return b
    if b is None:
        return a
    # The best objective is the lowest when minimizing; the best bound the highest.
    lower_is_better = (sense == "min") != bound
    return min(a, b) if lower_is_better else max(a, b)


def best_known(rows: Iterable[dict[str, Any]]) -> dict[str, BestKnown]:
    """Per instance hash: the best objective of any run with a solution, and the best
    bound of any run that is not an error, over every method and suite stored."""
    best: dict[str, BestKnown] = {}
    for row in rows:
        key = row["instance_hash"]
        cur = best.get(key, BestKnown(row["sense"], None, None))
        objective, bound = cur.objective, cur.bound
        if row["status"] in _SOLVED and row["objective"] is not None:
            objective = _better(row["sense"], objective, row["objective"])
        if row["status"] != "error" and row["bound"] is not None:
            bound = _better(row["sense"], bound, row["bound"], bound=True)
        best[key] = BestKnown(row["sense"], objective, bound)
    return best


def primal_gap(objective: float | None, best: float | None) -> float | None:
    """``|p - p*| / max(|p|, |p*|)``, 0 when both are 0; None without both.

    Examples
    --------
    >>> primal_gap(12.0, 10.0), primal_gap(0.0, 0.0), primal_gap(None, 1.0)
    (0.16666666666666666, 0.0, None)
    """
    return relative_gap(objective, best)


def bound_gap(optimum: float | None, bound: float | None) -> float | None:
    """How far a bound is from the optimum: ``|p* - b| / max(|p*|, |b|)`` (the
    primal–dual gap's formula with the optimum as the primal); None without both.

    Examples
    --------
    >>> bound_gap(10.0, 9.0), bound_gap(None, 1.0)
    (0.1, None)
    """
    return relative_gap(optimum, bound)


@dataclass(frozen=True)
class MethodSummary:
    """One line of a report table: a method on the instances of one kind in one suite.

    Attributes
    ----------
    suite, kind, method : str
    instances : int
        Runs (one per instance and seed).
    optimal : int
        Runs with status ``optimal`` (proven).
    feasible : int
        Runs with a feasible solution (``optimal`` or ``feasible``).
    errors : int
        Runs with status ``error`` (raised, infeasible answer, killed, crashed).
    mean_gap, max_gap : float or None
        Primal gap to the best known objective over the runs with a solution.
    mean_pd_gap : float or None
        Mean primal–dual gap of the runs whose envelope has one.
    sgm_runtime_s : float
        Shifted geometric mean of :func:`sgm_time_s`, shift :data:`SHIFT_S`.
    bound_sources : str
        The bounds behind those gaps (``Result.bound_source``) with their run counts,
        most frequent first, e.g. ``"degree-fan 5, milp-dual 2"``; runs that name none
        (stored before bounds were named) are left out.
    """

    suite: str
    kind: str
    method: str
    instances: int
    optimal: int
    feasible: int
    errors: int
    mean_gap: float | None
    max_gap: float | None
    mean_pd_gap: float | None
    sgm_runtime_s: float
    bound_sources: str = ""




def bound_sources(runs: Sequence[dict[str, Any]]) -> str:
    """Which bounds the runs with a primal–dual gap report, with counts, most used first.

    Examples
    --------
    >>> rows = [{"gap": 0.1, "status": "feasible", "info": {"bound_source": "load"}},
    ...         {"gap": 0.0, "status": "optimal", "info": {"bound_source": "optimal"}},
    ...         {"gap": 0.2, "status": "feasible", "info": {"bound_source": "load"}}]
    >>> bound_sources(rows)
    'load 2, optimal 1'
    """
    counts = Counter(source for r in runs
                     if r["gap"] is not None and r["status"] != "error"
                     and (source := (r.get("info") or {}).get("bound_source")))
    return ", ".join(f"{name} {n}" for name, n in
                     sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def with_primal_gaps(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows, each with ``best_objective``, ``best_bound`` and ``primal_gap`` added."""
    best = best_known(rows)
    out = []
    for row in rows:
        b = best[row["instance_hash"]]
        gap = primal_gap(row["objective"], b.objective) if row["status"] in _SOLVED else None
        out.append({**row, "best_objective": b.objective, "best_bound": b.bound,
                    "primal_gap": gap})
    return out


def summarize(rows: Sequence[dict[str, Any]]) -> list[MethodSummary]:
    """A :class:`MethodSummary` per (suite, kind, method), sorted by those three.

    ``rows`` are the store's latest rows; the best known objective of an instance comes
    from all of them, whatever suite they belong to. A run whose claim another run
    refutes (:mod:`fabricopt.bench.claims`) counts as an error.
    """
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for row in with_primal_gaps(with_contradictions(rows)):
        groups.setdefault((row["suite"], row["kind"], row["method"]), []).append(row)
    out = []
    for (suite, kind, method), runs in sorted(groups.items()):
        gaps = [r["primal_gap"] for r in runs if r["primal_gap"] is not None]
        pd = [r["gap"] for r in runs if r["gap"] is not None and r["status"] != "error"]
        out.append(MethodSummary(
            suite, kind, method, len(runs),
            sum(r["status"] == "optimal" for r in runs),
            sum(r["status"] in _SOLVED for r in runs),
            sum(r["status"] == "error" for r in runs),
            mean(gaps), max(gaps) if gaps else None, mean(pd),
            shifted_geometric_mean(sgm_time_s(r) for r in runs), bound_sources(runs)))
    return out
