"""Claims that other runs in the same database contradict.

``solve`` checks each run on its own: a solution is feasible, a bound lies on the right
side of the run's own objective. What one run cannot see is another run's answer on
the same instance: a method that says ``infeasible`` where another found a feasible
solution, an ``optimal`` claim that another feasible objective beats, a bound that
another feasible objective violates. Each of those claims is false, so the report
counts the run as an error and lists it under Failures.

Only checked answers are evidence: the objective of a run with status ``optimal`` or
``feasible`` (its solution passed ``problems.check`` and was scored by
``problems.evaluate``). Instances are matched by ``instance_hash`` across suites.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from fabricopt.problems.tolerances import CROSS_RTOL

__all__ = ["RTOL", "contradictions", "with_contradictions"]

#: Relative slack before an objective counts as beating a claim: two figures each
#: certified to the one tolerance (:data:`fabricopt.problems.tolerances.CROSS_RTOL`).
RTOL = CROSS_RTOL

_SOLVED = ("optimal", "feasible")


def _beats(sense: str, objective: float, claim: float) -> bool:
    """Is ``objective`` strictly better than ``claim`` beyond the tolerance?"""
    slack = RTOL * max(abs(objective), abs(claim))   # relative: the same at every scale
    return objective < claim - slack if sense == "min" else objective > claim + slack


def _evidence(rows: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per instance hash, the row with the best checked feasible objective."""
    best: dict[str, dict[str, Any]] = {}
    for row in rows:
        if row["status"] not in _SOLVED or row["objective"] is None:
            continue
        cur = best.get(row["instance_hash"])
        if cur is None or _beats(row["sense"], row["objective"], cur["objective"]):
            best[row["instance_hash"]] = row
    return best


def _claimed_optimal(row: dict[str, Any]) -> bool:
    """Did the method claim ``optimal``? Also true of a claim ``solve`` already refused
    (status ``feasible``, the reason in ``info["optimality"]``): the claim was still made."""
    info = row.get("info") or {}
    return row["status"] == "optimal" or (isinstance(info, dict) and "optimality" in info)


def contradictions(rows: Sequence[dict[str, Any]]) -> dict[str, str]:
    """``run_key -> why`` for every run whose claim another run's answer refutes.

    Examples
    --------
    >>> row = lambda key, method, status, objective=None, bound=None: {
    ...     "run_key": key, "instance_hash": "h", "sense": "min", "method": method,
    ...     "suite": "s", "status": status, "objective": objective, "bound": bound}
    >>> rows = [row("a", "liar", "infeasible"), row("b", "greedy", "feasible", 3.0),
    ...         row("c", "cocky", "optimal", 4.0, 4.0), row("d", "lb", "feasible", 5.0, 3.5)]
    >>> for key, why in contradictions(rows).items():
    ...     print(key, why)
    a claims infeasible, but greedy (s) found a feasible solution of objective 3
    c claims optimal at 4, but greedy (s) found objective 3
    d claims bound 3.5, but greedy (s) found objective 3 beyond it
    """
    best = _evidence(rows)
    out: dict[str, str] = {}
    for row in rows:
        proof = best.get(row["instance_hash"])
        if proof is None or proof["run_key"] == row["run_key"]:
            continue
        by = f"{proof['method']} ({proof['suite']})"
        found = proof["objective"]
        if row["status"] == "infeasible":
            out[row["run_key"]] = (f"claims infeasible, but {by} found a feasible solution "
                                   f"of objective {found:.6g}")
        elif _claimed_optimal(row) and row["objective"] is not None \
                and _beats(row["sense"], found, row["objective"]):
            out[row["run_key"]] = (f"claims optimal at {row['objective']:.6g}, but {by} "
                                   f"found objective {found:.6g}")
        elif row["status"] != "error" and row["bound"] is not None \
                and _beats(row["sense"], found, row["bound"]):
            out[row["run_key"]] = (f"claims bound {row['bound']:.6g}, but {by} found "
                                   f"objective {found:.6g} beyond it")
    return out


def with_contradictions(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows, each contradicted one turned into an ``error`` whose message says why
    (its objective kept: its solution, if any, was still checked feasible)."""
    false = contradictions(rows)
    return [{**row, "status": "error", "message": f"contradicted: {false[row['run_key']]}"}
            if row["run_key"] in false else row for row in rows]
