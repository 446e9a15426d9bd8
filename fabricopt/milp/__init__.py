"""The MILP backend: a model in, a :class:`MilpRun` (status, objective, bound, nodes, times) out.

This package sits below both ``formulations`` and ``heuristics`` and above ``problems``
in the import order of the docs (api.rst)::

    cli → benchmarks → fabrics → solvers → formulations | heuristics → milp → problems

so that exact formulations *and* hybrid heuristics (the LP half of ``mcf``, an LP
rounding) can solve models without importing each other. It knows nothing about
problem kinds, methods or results: :mod:`fabricopt.methods.milp_method` turns a
formulation into a registered method.

- :class:`MilpModel` / :func:`new_problem` — the hand-over from a formulation;
- :class:`SparseModel` — a model assembled as named variable blocks over sparse
  matrices, read by HiGHS directly and by CBC through :func:`to_pulp`;
- :func:`run_milp` — the one entry point: solve a model with HiGHS (in process,
  through highspy) or CBC (PuLP's bundled binary), inside a wall-clock budget;
- :class:`MilpRun` — what it reports, cross-checked (a HiGHS "Optimal" whose
  columns do not have HiGHS's objective is never passed on as a proof).
"""

from fabricopt.milp.deadline import BuildTimeLimit, build_deadline, check_deadline
from fabricopt.milp.model import MilpModel, new_problem
from fabricopt.milp.run import (BACKENDS, MilpRun, cbc_available, highs_version, run_milp,
                                unavailable_backends)
from fabricopt.milp.sparse import ColumnValues, SparseModel, to_pulp

__all__ = ["MilpModel", "new_problem", "MilpRun", "run_milp", "BACKENDS", "unavailable_backends",
           "cbc_available",
           "highs_version", "BuildTimeLimit", "build_deadline", "check_deadline",
           "SparseModel", "ColumnValues", "to_pulp"]
