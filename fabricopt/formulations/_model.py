"""The hand-over between a formulation and the MILP backend (now :mod:`fabricopt.milp`)."""

from ..milp.model import MilpModel, new_problem

__all__ = ["MilpModel", "new_problem"]
