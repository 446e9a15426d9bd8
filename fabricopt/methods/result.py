"""The result envelope of a solve (docs/envelope.rst) and what a method hands back.

A method returns either a bare solution or a :class:`SolverOutput` (solution, status,
bound, info). :func:`fabricopt.solve` turns that into a :class:`Result`, whose
objective is always recomputed by ``problems.evaluate`` after ``problems.check``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

from fabricopt.errors import InvalidArgument, InvalidSolution

__all__ = ["STATUSES", "LIMITS", "SolverOutput", "Result", "relative_gap"]

#: The statuses of docs/envelope.rst.
STATUSES = ("optimal", "feasible", "infeasible", "no_solution", "error")
#: Why a run stopped (``Result.limit``): it ran to its end (``"none"``), a time limit
#: stopped it or it ran past one (``"time"``), or a budget of work (branch-and-bound
#: nodes, iterations, evaluations) ran out (``"work"``).
LIMITS = ("none", "time", "work")


@dataclass(frozen=True)
class SolverOutput:
    """What a method returns when it has more to say than a solution.

    Parameters
    ----------
    solution : solution object or None
        The method's answer, or None when it has none.
    status : str
        ``"optimal"`` only when the method proves optimality; ``"feasible"`` for a
        heuristic answer; ``"infeasible"`` when it proves no solution exists;
        ``"no_solution"`` when it stopped (time limit) without one.
    bound : float or None
        A proven bound on the optimum: lower when minimizing, upper when maximizing.
    info : dict
        JSON-serializable details (nodes, rounds, solver version, ...).
    limit : str or None
        Why the method stopped, one of :data:`LIMITS`; None lets ``solve`` infer it (a
        run past ``time_limit`` is ``"time"``, anything else ``"none"``).
    """

    solution: Any = None
    status: str = "feasible"
    bound: float | None = None
    info: dict = field(default_factory=dict)
    limit: str | None = None

    def __post_init__(self):
        if self.status not in STATUSES:
            raise InvalidArgument(f"status = {self.status!r}: must be one of {', '.join(STATUSES)}")
        if self.limit is not None and self.limit not in LIMITS:
            raise InvalidArgument(f"limit = {self.limit!r}: must be one of {', '.join(LIMITS)}")


def relative_gap(objective: float | None, bound: float | None) -> float | None:
    """``|objective - bound| / max(|objective|, |bound|)``; 0 when both are 0; None without both.

    Examples
    --------
    >>> relative_gap(10.0, 8.0)
    0.2
    >>> relative_gap(0.0, 0.0)
    0.0
    >>> relative_gap(1.0, None) is None
    True
    """
    if objective is None or bound is None:
        return None
    if math.isinf(bound) or math.isinf(objective):
        return 1.0 if bound != objective else 0.0
    scale = max(abs(objective), abs(bound))
    return 0.0 if scale == 0 else abs(objective - bound) / scale


@dataclass(frozen=True)
class Result:
    """The scored outcome of ``solve``: docs/envelope.rst's envelope.

    Attributes
    ----------
    problem, method : str
        The problem kind and the method that ran.
    status : str
        One of :data:`STATUSES`.
    sense : {"min", "max"}
    objective : float or None
        ``problems.evaluate`` of the solution; None without a feasible solution.
    bound : float or None
        Best proven bound on the optimum.
    gap : float or None
        :func:`relative_gap` of objective and bound.
    runtime_s : float
        Wall-clock seconds the method ran (scoring excluded).
    solution : solution object or None
    info : dict
        Details; ``info["message"]`` explains an ``error`` or ``infeasible`` status.
    verified : bool
        True when ``solve`` scored this result (or :meth:`verify` re-checked it); False
        for one read from an envelope (:meth:`from_dict`), whose objective nobody has
        re-scored yet. Not part of the envelope.
    limit : str
        Why the run stopped, one of :data:`LIMITS`: ``"none"`` (it ran to its end),
        ``"time"`` (the time limit stopped it, or it ran past the limit) or ``"work"``
        (a budget of nodes, iterations or evaluations ran out). A result stopped by a
        limit may hold a worse answer, or a weaker bound, than the method can give.
    bound_source : str or None
        Which argument gave ``bound``: a bound's name (``"port-load"``,
        ``"critical-path"``, ``"milp-dual"`` …), ``"optimal"`` when the bound is the
        certified optimum, None without a bound.
    """

    problem: str
    method: str
    status: str
    sense: str
    objective: float | None
    bound: float | None
    gap: float | None
    runtime_s: float
    solution: Any = None
    info: dict = field(default_factory=dict)
    limit: str = "none"
    bound_source: str | None = None

    @property
    def verified(self) -> bool:
        """See the class docstring: False only for an envelope read by :meth:`from_dict`
        and not yet re-checked by :meth:`verify`."""
        return self.__dict__.get("_verified", True)

    @property
    def message(self) -> str:
        """A one-line human summary (``info["message"]`` when there is one)."""
        return self.info.get("message") or f"{self.method}: {self.status}"

    @property
    def success(self) -> bool:
        """True when the result holds a feasible solution."""
        return self.status in ("optimal", "feasible")

    def to_dict(self) -> dict[str, Any]:
        return {
            "problem": self.problem, "method": self.method, "status": self.status,
            "sense": self.sense, "objective": self.objective, "bound": self.bound,
            "gap": self.gap, "runtime_s": self.runtime_s,
            "limit": self.limit, "bound_source": self.bound_source,
            "solution": None if self.solution is None else self.solution.to_dict(),
            "info": self.info,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Result":
        """Rebuild a result from its envelope (the solution is parsed by its kind).

        The envelope is validated like an instance: a missing field, a status outside
        :data:`STATUSES`, a sense other than the kind's, a non-finite or non-numeric
        ``objective`` / ``bound`` / ``gap`` / ``runtime_s`` or an ``info`` that is not
        an object raises ``InvalidSolution`` naming the field. Unknown fields are
        ignored, so that envelopes of later versions still load.

        Examples
        --------
        >>> Result.from_dict({"problem": "circuits", "method": "greedy", "status": "feasible",
        ...                   "sense": "min", "runtime_s": "x"})
        Traceback (most recent call last):
        ...
        fabricopt.errors.InvalidSolution: runtime_s = 'x': must be a number
        """
        loaded = cls(**_envelope_fields(data))
        object.__setattr__(loaded, "_verified", False)  # not a field: not in the envelope
        return loaded

    def verify(self, instance: Any) -> "Result":
        """This result re-checked against ``instance``: its solution passes ``check``
        and ``evaluate`` gives its objective (to the certificate tolerance,
        :data:`~fabricopt.problems.tolerances.CERTIFY_RTOL`). Returns the result marked ``verified``.

        Raises
        ------
        InvalidSolution
            If the envelope is not this instance's or its figures are not its solution's.

        Examples
        --------
        >>> from fabricopt import generate, solve
        >>> inst = generate("circuits", seed=1, gpus=4, switches=2)
        >>> forged = Result.from_dict(dict(solve(inst, "greedy").to_dict(), objective=5e-4,
        ...                                bound=5e-4, gap=0.0))
        >>> forged.verified
        False
        >>> forged.verify(inst)
        Traceback (most recent call last):
        ...
        fabricopt.errors.InvalidSolution: objective = 0.0005: the solution evaluates to 0.000572172
        """
        from dataclasses import replace

        from fabricopt.problems import check, evaluate, kind_of
        from fabricopt.problems.tolerances import agree

        kind = kind_of(instance)
        if kind.name != self.problem:
            raise InvalidSolution(f"problem = {self.problem!r}: the instance is {kind.name}")
        if self.solution is not None:
            verdict = check(instance, self.solution)
            if not verdict.feasible and self.success:
                raise InvalidSolution(f"status = {self.status!r}: the solution is infeasible "
                                      f"({verdict.reason})")
            if verdict.feasible:
                score = evaluate(instance, self.solution)
                if self.objective is None or not agree(score, self.objective):
                    raise InvalidSolution(f"objective = {self.objective!r}: the solution "
                                          f"evaluates to {score:.6g}")
        return replace(self)

    @staticmethod
    def is_envelope(data: Any) -> bool:
        """Does a JSON object look like a result envelope rather than an instance?"""
        return isinstance(data, Mapping) and "method" in data and "status" in data


def _envelope_fields(data: Any) -> dict[str, Any]:
    """The validated constructor arguments of :meth:`Result.from_dict`."""
    from fabricopt.problems import get_kind
    from fabricopt.problems._validate import as_float, as_id, fail, require

    if not isinstance(data, Mapping):
        raise InvalidSolution(f"result envelope: expected a JSON object, got "
                              f"{type(data).__name__}")
    for key in ("problem", "method", "status", "sense", "runtime_s"):
        if key not in data:
            raise InvalidSolution(f"{key}: missing from the result envelope")
    kind = get_kind(data["problem"])
    out = {"problem": kind.name,
           "method": as_id("method", data["method"], InvalidSolution)}
    if not isinstance(data["status"], str) or data["status"] not in STATUSES:
        fail("status", data["status"], f"must be one of {', '.join(STATUSES)}", InvalidSolution)
    out["status"] = data["status"]
    if data["sense"] != kind.sense:
        fail("sense", data["sense"], f"must be {kind.sense!r} for {kind.name}", InvalidSolution)
    out["sense"] = kind.sense
    for key in ("objective", "bound", "gap"):
        value = data.get(key)
        out[key] = None if value is None else as_float(key, value, error=InvalidSolution)
    out["runtime_s"] = as_float("runtime_s", require(data, "runtime_s", InvalidSolution),
                                minimum=0.0, error=InvalidSolution)
    limit = data.get("limit", "none")   # optional: "none" when left out
    if limit not in LIMITS:
        fail("limit", limit, f"must be one of {', '.join(LIMITS)}", InvalidSolution)
    out["limit"] = limit
    source = data.get("bound_source")
    if source is not None and not isinstance(source, str):
        fail("bound_source", source, "must be a string or null", InvalidSolution)
    out["bound_source"] = source
    for key in ("solution", "info"):
        if data.get(key) is not None and not isinstance(data[key], Mapping):
            fail(key, data[key], "must be an object or null", InvalidSolution)
    sol = data.get("solution")
    out["solution"] = None if sol is None else kind.solution_from_dict(sol)
    out["info"] = dict(data.get("info") or {})
    _consistent(out, kind.sense)
    return out


def _consistent(fields: dict[str, Any], sense: str) -> None:
    """What an envelope says of itself must hold together: a solved status has a
    solution and an objective, ``infeasible`` and ``no_solution`` have none, the gap is
    that of the objective and the bound, the bound lies on the right side of the
    objective and ``optimal`` closes the gap (to ``solve``'s certificate tolerance)."""
    from fabricopt.problems._validate import fail
    from fabricopt.problems.tolerances import CERTIFY_RTOL, overshoot

    status, objective, bound = fields["status"], fields["objective"], fields["bound"]
    if status in ("optimal", "feasible") and (fields["solution"] is None or objective is None):
        fail("status", status, "needs a solution and an objective", InvalidSolution)
    if status in ("infeasible", "no_solution") and objective is not None:
        fail("objective", objective, f"must be null when the status is {status!r}",
             InvalidSolution)
    gap = relative_gap(objective, bound)
    if fields["gap"] is not None and (gap is None or not math.isclose(
            fields["gap"], gap, rel_tol=CERTIFY_RTOL, abs_tol=1e-15)):
        fail("gap", fields["gap"], f"must be {gap!r}, the gap of its objective and bound",
             InvalidSolution)
    if objective is not None and bound is not None:
        if overshoot(sense, bound, objective):
            fail("bound", bound, f"lies on the wrong side of objective {objective!r}",
                 InvalidSolution)
        if status == "optimal" and gap > CERTIFY_RTOL:
            fail("status", status, f"claims optimal with a gap of {gap:.3g}", InvalidSolution)
