"""Methods of the ``priorities`` kind: ``milp``, ``exact``, ``crux``, ``sincronia``, ``varys``."""

from __future__ import annotations

from fabricopt.models import priorities as formulation
from fabricopt.algorithms.priorities import compression, compression_exact
from fabricopt.problems.priorities import PrioritiesInstance, evaluate
from fabricopt.methods.milp_method import MILP_OPTIONS, milp_method
from fabricopt.methods.options import Option, at_least
from fabricopt.methods.registry import register_method
from fabricopt.methods.result import SolverOutput


def crux(instance: PrioritiesInstance, *, time_limit=None, seed=0, orders: int = 10,
         split: str = "monotone") -> SolverOutput:
    """Crux Algorithm 1: the best K-split of m random BFS topological orders (DP).

    ``time_limit``: no further order once it has passed (one always; a cut makes the
    answer machine-dependent); ``info["orders_tried"]`` says how many were split.
    """
    solution, info = compression.compress_instance_search(
        instance, orders=orders, seed=seed, split=split, time_limit=time_limit)
    return SolverOutput(solution, "feasible", info=info)


def exact(instance: PrioritiesInstance, *, time_limit=None, seed=0) -> SolverOutput:
    """Ours: the LP is totally unimodular, so its optimum is integral: polynomial, proven.

    The answer is ``optimal`` when its cut, scored by ``evaluate``, attains the LP bound
    (:mod:`fabricopt.algorithms.priorities.compression_exact` has the proof).
    """
    solution, bound = compression_exact.exact_instance(instance)
    proved = compression_exact.proves_optimal(evaluate(instance, solution), bound)
    return SolverOutput(solution, "optimal" if proved else "feasible", bound)


def sincronia(instance: PrioritiesInstance, *, time_limit=None, seed=0) -> SolverOutput:
    """Baseline: the top K-1 jobs get their own levels, the rest share the lowest."""
    return SolverOutput(compression.rank_instance(instance, "sincronia"), "feasible")


def varys(instance: PrioritiesInstance, *, time_limit=None, seed=0) -> SolverOutput:
    """Baseline: K contiguous blocks of near-equal size of the priority ranking."""
    return SolverOutput(compression.rank_instance(instance, "varys"), "feasible")


milp = milp_method(formulation.build, warm_start_from=compression.compress_instance)

ORDERS = Option("orders", int, 10, "random BFS topological orders to split", check=at_least(1))

register_method("priorities", "milp", milp, exact=True, options=MILP_OPTIONS,
                honours_time_limit=True,
                summary="integer levels + a cut binary per DAG edge (sparse model + HiGHS)")
register_method("priorities", "exact", exact, exact=True, options=(),
                time_limit_note="an exact algorithm whose levels only exist once it ends (polynomial in the jobs)")
register_method("priorities", "crux", crux, honours_time_limit=True, options=(
    ORDERS, Option("split", str, "monotone", "DP over split points: monotone (Monge) or dense",
                   choices=("monotone", "dense"))))
register_method("priorities", "sincronia", sincronia, options=(),
                time_limit_note="one ordering and one compression pass")
register_method("priorities", "varys", varys, options=(),
                time_limit_note="one ordering and one compression pass")
