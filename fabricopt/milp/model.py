"""The hand-over between a formulation and the MILP backend."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

import pulp

__all__ = ["MilpModel", "new_problem"]


def new_problem(name: str, sense: str) -> pulp.LpProblem:
    """A PuLP problem; ``sense`` is ``"min"`` or ``"max"``."""
    return pulp.LpProblem(name, pulp.LpMinimize if sense == "min" else pulp.LpMaximize)


@dataclass
class MilpModel:
    """A PuLP model plus the maps between its variables and a problem's solution.

    Attributes
    ----------
    problem : pulp.LpProblem
        Built with ``add_variable`` / ``add_variable_dicts`` (PuLP 3.3 and 4 share them).
    decode : callable
        ``decode(values) -> solution`` where ``values`` maps variable names to values.
    bound_from_raw : callable
        Maps the model's objective bound to a bound on the problem's objective
        (identity when the model's objective *is* the problem's).
    encode : callable or None
        ``encode(solution) -> {variable name: value}``, a MIP start (a complete one
        where possible; HiGHS completes a partial start by solving the remainder).
    """

    problem: pulp.LpProblem
    decode: Callable[[Mapping[str, float]], Any]
    bound_from_raw: Callable[[float], float] = lambda raw: raw
    encode: Callable[[Any], Mapping[str, float]] | None = None
