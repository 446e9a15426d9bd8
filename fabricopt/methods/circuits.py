"""Methods of the ``circuits`` kind: ``milp``, ``exact``, ``greedy``."""

from __future__ import annotations

from fabricopt.models import circuits as formulation
from fabricopt.algorithms import circuits as heuristics
from fabricopt.problems.circuits import CircuitsInstance
from fabricopt.methods.milp_method import MILP_OPTIONS, SYMMETRY_OPTION, milp_method
from fabricopt.methods.registry import register_method
from fabricopt.methods.result import SolverOutput


def exact(instance: CircuitsInstance, *, time_limit=None, seed=0) -> SolverOutput:
    """Ours: bisection on the max time + König decomposition; optimal, polynomial."""
    return SolverOutput(heuristics.exact(instance), "optimal")


def greedy(instance: CircuitsInstance, *, time_limit=None, seed=0) -> SolverOutput:
    """Baseline: each free circuit to the pair with the largest current transfer time."""
    return SolverOutput(heuristics.greedy(instance), "feasible")


milp = milp_method(formulation.build, warm_start_from=heuristics.greedy)

register_method("circuits", "milp", milp, exact=True, options=MILP_OPTIONS + (SYMMETRY_OPTION,),
                honours_time_limit=True,
                summary="SiP-ML App. A.2: a binary permutation per switch (sparse model + HiGHS)")
register_method("circuits", "exact", exact, exact=True, options=(),
                time_limit_note="polynomial (a bisection over transfer times, a König decomposition per step): its answer only exists once it ends")
register_method("circuits", "greedy", greedy, options=(),
                time_limit_note="one greedy pass over the ports")
