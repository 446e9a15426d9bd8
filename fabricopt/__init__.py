"""fabricopt — optimization problems of GPU training fabrics.

Exact MILPs beside the SiP-ML, TopoOpt and Crux heuristics for the same problems,
one JSON format per problem kind, and one scorer (``check`` / ``evaluate``) for all.

Examples
--------
>>> import fabricopt
>>> inst = fabricopt.generate("circuits", seed=3, gpus=8, switches=2)
>>> result = fabricopt.solve(inst, method="exact")
>>> result.status, fabricopt.check(inst, result.solution).feasible
('optimal', True)
"""

from __future__ import annotations

import logging

from fabricopt._version import __version__
from fabricopt.errors import (FabricError, InfeasibleInstance, InvalidInstance, InvalidOption,
                              InvalidSolution, SolverFailure, SolverUnavailable)
from fabricopt.problems import CheckResult, check, evaluate, generate, kinds
from fabricopt import bounds  # noqa: F401  (registers each kind's bound)
# ``fabricopt.methods`` stays the package, which is callable as the function ``methods``
from fabricopt import methods  # noqa: F401
from fabricopt.methods import Option, Result, SolverOutput, register_method, solve
from fabricopt.io import dump, load, load_solution


# Diagnostics go through the ``fabricopt`` loggers; the application decides where
# (``fabricopt -v`` sends them to stderr).
logging.getLogger(__name__).addHandler(logging.NullHandler())

__all__ = ["solve", "load", "load_solution", "dump", "check", "evaluate", "methods",
           "register_method", "Option", "generate", "kinds", "Result", "SolverOutput",
           "CheckResult", "FabricError", "InvalidInstance", "InvalidOption", "InvalidSolution",
           "InfeasibleInstance",
           "SolverUnavailable", "SolverFailure", "__version__"]
