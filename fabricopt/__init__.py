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

import inspect
import logging
from typing import Any

from .errors import (FabricError, InfeasibleInstance, InvalidInstance, InvalidOption,
                     InvalidSolution, SolverFailure, SolverUnavailable)
from .problems import (CheckResult, check, evaluate, get_kind, instance_from_dict, kinds,
                       read_json, solution_from_dict, write_json)
from .solvers import Option, Result, SolverOutput, methods, register_method, solve

__version__ = "0.1.0"

# Diagnostics go through the ``fabricopt`` loggers; the application decides where
# (``fabricopt -v`` sends them to stderr).
logging.getLogger(__name__).addHandler(logging.NullHandler())

__all__ = ["solve", "load", "load_solution", "dump", "check", "evaluate", "methods",
           "register_method", "Option", "generate", "kinds", "Result", "SolverOutput",
           "CheckResult", "FabricError", "InvalidInstance", "InvalidOption", "InvalidSolution",
           "InfeasibleInstance",
           "SolverUnavailable", "SolverFailure", "__version__"]


def load(source) -> Any:
    """Read an instance — or a whole result envelope — from a JSON file.

    Parameters
    ----------
    source : str, path or file
        A path, ``"-"`` for standard input, or an open text file.

    Returns
    -------
    instance or Result
        The instance its ``"problem"`` field names, or a :class:`Result` when the file
        is a ``fabricopt solve --json`` envelope.

    Examples
    --------
    >>> import os, tempfile
    >>> inst = generate("circuits", seed=1, gpus=4, switches=2)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = dump(inst, os.path.join(tmp, "i.json"))
    ...     _ = dump(solve(inst, "exact"), os.path.join(tmp, "r.json"))
    ...     load(os.path.join(tmp, "i.json")) == inst, load(os.path.join(tmp, "r.json")).status
    (True, 'optimal')
    """
    data = read_json(source)
    if Result.is_envelope(data):
        return Result.from_dict(data)
    return instance_from_dict(data)


def load_solution(source, kind: str) -> Any:
    """Read a bare solution of problem ``kind`` (or the solution inside an envelope).

    Examples
    --------
    >>> import os, tempfile
    >>> inst = generate("circuits", seed=1, gpus=4, switches=2)
    >>> result = solve(inst, "greedy")
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = dump(result, os.path.join(tmp, "r.json"))
    ...     _ = dump(result.solution, os.path.join(tmp, "s.json"))
    ...     [load_solution(os.path.join(tmp, name), "circuits") == result.solution
    ...      for name in ("r.json", "s.json")]
    [True, True]
    """
    data = read_json(source)
    if Result.is_envelope(data):
        result = Result.from_dict(data)
        if result.solution is None:
            raise InvalidSolution(f"the result envelope ({result.status}) holds no solution")
        return result.solution
    return solution_from_dict(kind, data)


def dump(obj: Any, target=None) -> str:
    """Write an instance, solution or result as JSON to ``target`` (a path, ``"-"``, a
    file, or None to only return the text).

    Examples
    --------
    >>> from fabricopt.problems.circuits import CircuitsInstance
    >>> print(dump(CircuitsInstance(1, 8.0, [[0, 1e9], [0, 0]])), end="")
    {"problem": "circuits", "switches": 1, "circuit_gbps": 8.0, "traffic_bytes": [[0.0, 1000000000.0], [0.0, 0.0]]}
    """
    return write_json(obj.to_dict(), target)


def generate(kind: str, seed: int = 0, **sizes) -> Any:
    """A seeded, realistic instance of ``kind`` (see each kind's ``generate``).

    Examples
    --------
    >>> generate("circuits", seed=1, gpus=4, switches=2).gpus
    4
    """
    problem = get_kind(kind)
    if problem.generate is None:
        raise InvalidInstance(f"problem = {kind!r}: has no instance generator")
    params = inspect.signature(problem.generate).parameters
    for name in sizes:
        if name not in params or name == "seed":
            options = ", ".join(n for n in params if n != "seed")
            raise InvalidOption(f"{name}: not a size option of the {kind} generator "
                             f"(options: {options})")
    return problem.generate(seed=seed, **sizes)
