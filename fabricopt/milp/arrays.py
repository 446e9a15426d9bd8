"""A PuLP model as the column/row arrays a solver reads (CSR rows, bounds, costs)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pulp

from fabricopt.milp.deadline import check_deadline

__all__ = ["LinearArrays", "from_pulp", "row_bounds"]


@dataclass(frozen=True)
class LinearArrays:
    """``min/max cost·x + offset`` s.t. ``row_lower <= A x <= row_upper``, column bounds.

    ``A`` is in CSR form (``starts``, ``index``, ``value``); infinite bounds are
    ``±inf``; ``integer`` lists the integer columns; ``names[k]`` is column k's name.
    """

    names: tuple[str, ...]
    cost: np.ndarray
    offset: float
    maximize: bool
    col_lower: np.ndarray
    col_upper: np.ndarray
    integer: np.ndarray
    row_lower: np.ndarray
    row_upper: np.ndarray
    starts: np.ndarray
    index: np.ndarray
    value: np.ndarray

    def objective_of(self, col: np.ndarray) -> float:
        """The objective of column values ``col`` (what a solver should report)."""
        return float(np.dot(self.cost, col) + self.offset)


def row_bounds(constraint) -> tuple[float, float]:
    """Row bounds of a PuLP constraint ``expr (<=|=|>=) -constant``."""
    rhs = -constraint.constant
    if constraint.sense == pulp.LpConstraintLE:
        return -math.inf, rhs
    if constraint.sense == pulp.LpConstraintGE:
        return rhs, math.inf
    return rhs, rhs


def from_pulp(problem: pulp.LpProblem) -> LinearArrays:
    """Copy a PuLP model into arrays (PuLP 3.3 and 4 share every call used here)."""
    variables = problem.variables()
    index = {v.name: k for k, v in enumerate(variables)}
    n = len(variables)
    cost = np.zeros(n)
    if problem.objective is not None:
        for var, coef in problem.objective.items():
            cost[index[var.name]] = coef
    lower = np.array([-math.inf if v.lowBound is None else v.lowBound for v in variables], float)
    upper = np.array([math.inf if v.upBound is None else v.upBound for v in variables], float)
    integer = np.array([k for k, v in enumerate(variables) if v.cat == pulp.LpInteger], np.int32)
    starts, cols, vals, row_lo, row_hi = [], [], [], [], []
    for r, constraint in enumerate(problem.constraints.values()):
        if r % 256 == 0:
            check_deadline()
        starts.append(len(cols))
        for var, coef in constraint.items():
            if coef != 0:
                cols.append(index[var.name])
                vals.append(coef)
        lo, hi = row_bounds(constraint)
        row_lo.append(lo)
        row_hi.append(hi)
    offset = problem.objective.constant if problem.objective is not None else 0.0
    return LinearArrays(tuple(v.name for v in variables), cost, float(offset or 0.0),
                        problem.sense == pulp.LpMaximize, lower, upper, integer,
                        np.array(row_lo, float), np.array(row_hi, float),
                        np.array(starts, np.int32), np.array(cols, np.int32),
                        np.array(vals, float))
