"""Methods of the ``placement`` kind: ``milp``, ``sipml``, ``sipml-ls``, ``unconstrained``,
``round-robin``.

Every heuristic reports the lower bound of :func:`fabricopt.problems.placement.lower_bound`
(critical path, total compute / gpus), so its result has a gap even where the MILP
cannot finish. The MILP is warm-started from the best heuristic answer and never
returns anything worse.
"""

from __future__ import annotations

import time
from functools import partial

from ..formulations import placement as formulation
from ..heuristics import placement as ours
from ..heuristics import sipml as paper
from ..problems.placement import PlacementInstance, evaluate, lower_bound
from .milp import MILP_OPTIONS, milp_method
from .options import Option, at_least
from .registry import register_method
from .result import SolverOutput

__all__ = ["sipml", "sipml_ls", "unconstrained", "round_robin", "milp"]


def _heuristic(solution, instance: PlacementInstance, info: dict | None = None) -> SolverOutput:
    return SolverOutput(solution, "feasible", lower_bound(instance), dict(info or {}))


def sipml(instance: PlacementInstance, *, time_limit=None, seed=0) -> SolverOutput:
    """SiP-ML Algorithm 1: forward window, earliest available GPU, backward relocation."""
    solution, info = paper.sipml(instance)
    return _heuristic(solution, instance, info)


def sipml_ls(instance: PlacementInstance, *, time_limit=None, seed=0, max_evals=None,
             restarts: int = 20) -> SolverOutput:
    """Ours: sipml, then iterated local search (moves and swaps under the true degree limit).

    ``time_limit`` caps the search's wall clock (results then depend on the machine);
    ``max_evals`` and ``restarts`` bound it reproducibly (see ``local_search``).
    """
    solution, info = ours.sipml_ls(instance, seed=seed, time_limit=time_limit,
                                   max_evals=max_evals, restarts=restarts)
    return _heuristic(solution, instance, info)


def unconstrained(instance: PlacementInstance, *, time_limit=None, seed=0) -> SolverOutput:
    """Baseline: Algorithm 1 without the window (electrical) on the GPUs that can all talk."""
    return _heuristic(paper.unconstrained(instance), instance,
                      {"gpus_used": paper.degree_safe_gpus(instance)})


def round_robin(instance: PlacementInstance, *, time_limit=None, seed=0) -> SolverOutput:
    """Baseline: ops in topological order dealt in turn to the GPUs that can all talk."""
    return _heuristic(ours.round_robin(instance), instance,
                      {"gpus_used": paper.degree_safe_gpus(instance)})


def milp(instance: PlacementInstance, *, time_limit=None, seed=0, backend: str = "highs",
         rel_gap: float = 0.0, warm_start: bool = True,
         symmetry_breaking: bool | str = "weak") -> SolverOutput:
    """Exact MILP (sparse model + HiGHS): disjunctive order, pair-usage degree, symmetry breaking.

    With ``warm_start`` (default) the best heuristic answer seeds the solver and its
    makespan tightens every bound; a time-limited run then never returns worse.
    """
    began = time.perf_counter()
    start = name = None
    if warm_start:
        # the warm start may use a tenth of the time limit; the MILP gets the rest
        name, start = ours.best_start(instance, seed=seed,
                                      time_limit=None if time_limit is None else 0.1 * time_limit)
    upper = evaluate(instance, start) if start is not None else None
    method = milp_method(partial(formulation.build, upper_bound_s=upper,
                                 symmetry_breaking=symmetry_breaking),
                         warm_start_from=lambda _: start)
    # what the warm start left; at or below zero the MILP returns the start at once
    remaining = None if time_limit is None else time_limit - (time.perf_counter() - began)
    out = method(instance, time_limit=remaining, seed=seed, backend=backend, rel_gap=rel_gap,
                 warm_start=warm_start)
    info = dict(out.info)
    if start is not None:
        info["warm_start"] = {"method": name, "makespan_s": upper}
        if out.solution is None or evaluate(instance, out.solution) > upper:
            # the solver lost or never took the start: the heuristic answer stands
            status = "feasible" if out.status in ("feasible", "no_solution") else out.status
            return SolverOutput(start, status, out.bound, info)
    return SolverOutput(out.solution, out.status, out.bound, info)


register_method("placement", "milp", milp, exact=True, honours_time_limit=True,
                options=MILP_OPTIONS + (Option(
                    "symmetry_breaking", None, "weak",
                    "order rows among identical GPUs: true (all), weak (cheap ones), false",
                    choices=(True, False, "weak")),))
register_method("placement", "sipml", sipml, options=())
register_method("placement", "sipml-ls", sipml_ls, honours_time_limit=True, options=(
    Option("max_evals", int, None, "schedule evaluations per restart (none: by size)",
           check=at_least(1)),
    Option("restarts", int, 20, "perturbation restarts of the local search",
           check=at_least(0))))
register_method("placement", "unconstrained", unconstrained, options=())
register_method("placement", "round-robin", round_robin, options=())
