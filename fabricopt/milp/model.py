"""The hand-over between a formulation and the MILP backend."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

import pulp

from fabricopt.milp.deadline import check_deadline

__all__ = ["MilpModel", "new_problem"]

_CHUNK = 2048  # variables created between two deadline checks


class _Problem(pulp.LpProblem):
    """A PuLP problem whose building stops at the build deadline (see ``deadline``)."""

    def addConstraint(self, constraint, name=None):
        check_deadline()
        return super().addConstraint(constraint, name)

    def add_variable_dicts(self, name, indices=None, lowBound=None, upBound=None,
                           cat=pulp.LpContinuous, indexStart=None):
        if indexStart or indices is None:
            return super().add_variable_dicts(name, indices, lowBound, upBound, cat,
                                              indexStart)
        indices = list(indices)
        out = {}
        for k in range(0, len(indices), _CHUNK):  # same names as one call would give
            check_deadline()
            out.update(super().add_variable_dicts(name, indices[k:k + _CHUNK], lowBound,
                                                  upBound, cat))
        return out


def new_problem(name: str, sense: str) -> pulp.LpProblem:
    """A PuLP problem; ``sense`` is ``"min"`` or ``"max"``.

    Adding variables (``add_variable_dicts``) and rows checks the build deadline of
    :mod:`fabricopt.milp.deadline`, so a time limit also bounds model building.
    """
    return _Problem(name, pulp.LpMinimize if sense == "min" else pulp.LpMaximize)


@dataclass
class MilpModel:
    """A PuLP model plus the maps between its variables and a problem's solution.

    Attributes
    ----------
    problem : pulp.LpProblem or SparseModel
        Built with ``add_variable`` / ``add_variable_dicts`` (PuLP 3.3 and 4 share them),
        or as blocks over sparse matrices (:class:`~fabricopt.milp.SparseModel`).
    decode : callable
        ``decode(values) -> solution`` where ``values`` maps variable names to values
        (a :class:`~fabricopt.milp.ColumnValues`: its ``col`` is the column vector, which
        sparse models read by block).
    bound_from_raw : callable
        Maps the model's objective bound to a bound on the problem's objective
        (identity when the model's objective *is* the problem's).
    encode : callable or None
        ``encode(solution) -> {variable name: value}`` or a full column vector, a MIP
        start (a complete one where possible; HiGHS completes a partial start by
        solving the remainder).
    """

    problem: pulp.LpProblem
    decode: Callable[[Mapping[str, float]], Any]
    bound_from_raw: Callable[[float], float] = lambda raw: raw
    encode: Callable[[Any], Mapping[str, float]] | None = None
