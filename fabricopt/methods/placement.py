"""Methods of the ``placement`` kind: ``milp``, ``sipml``, ``sipml-ls``, ``unconstrained``,
``round-robin``.

Every heuristic reports the bound of :func:`.placement_bounds.heuristic_bound` (the
largest of the fast bounds of :mod:`fabricopt.bounds.placement` and, on small
instances, the MILP's LP relaxation and dual bound), named in ``Result.bound_source``,
so its result has a gap even where the MILP cannot finish; ``solve(..., bound=False)``
tells them to skip it. The MILP is warm-started from the best heuristic answer and never
returns anything worse.
"""

from __future__ import annotations

import time
from functools import partial

from fabricopt.models import placement as formulation
from fabricopt.algorithms.placement import local_search as ours
from fabricopt.algorithms.placement import sipml as paper
from fabricopt.problems.placement import PlacementInstance, evaluate
from fabricopt.methods.milp_method import MILP_OPTIONS, milp_method
from fabricopt.methods.options import Option, at_least
from fabricopt.methods.placement_bound import heuristic_bound
from fabricopt.methods.registry import register_method
from fabricopt.methods.result import SolverOutput

__all__ = ["sipml", "sipml_ls", "unconstrained", "round_robin", "milp"]


def _heuristic(solution, instance: PlacementInstance, info: dict | None = None, *,
               bound_milp_s: float | None = None, time_limit=None,
               bound: bool = True) -> SolverOutput:
    """The heuristic's answer with :func:`heuristic_bound` (named by its source), or
    without a bound when ``solve(..., bound=False)`` passes ``bound=False``."""
    best = heuristic_bound(instance, solution, milp_s=bound_milp_s, time_limit=time_limit) \
        if bound else None
    return SolverOutput(solution, "feasible", best, dict(info or {}))


def sipml(instance: PlacementInstance, *, time_limit=None, seed=0,
          bound_milp_s=None, rings: str = "search", bound: bool = True) -> SolverOutput:
    """SiP-ML Algorithm 1: forward window, earliest available GPU, backward relocation.

    ``rings="full"`` places on the ring of all GPUs (the paper); ``"search"`` (default)
    also tries the ring of ``max_peers + 1`` GPUs and one GPU and keeps the best (see
    ``heuristics.sipml.sipml``). ``bound_milp_s``: seconds the MILP may spend on a bound
    beside the answer (see ``heuristic_bound``; default: 500 branch-and-bound nodes,
    at most 10 s, on instances of at most 16 ops, else none); ``bound=False``
    (``solve(..., bound=False)``) skips the bound.
    """
    solution, info = paper.sipml(instance, rings=rings)
    return _heuristic(solution, instance, info, bound_milp_s=bound_milp_s,
                      time_limit=time_limit, bound=bound)


def sipml_ls(instance: PlacementInstance, *, time_limit=None, seed=0, max_evals=None,
             restarts: int = 20, bound_milp_s=None, rings: str = "search",
             circulant: bool = True, bound: bool = True) -> SolverOutput:
    """Ours: best of sipml and a circulant-topology list schedule, then local search.

    The start is the better of Algorithm 1 and (``circulant``, default) a list
    schedule on a fixed circulant peer topology; iterated local search then moves and
    swaps ops under the true degree limit. ``time_limit`` caps the wall clock of all three (results then depend on the
    machine); ``max_evals`` and ``restarts`` bound the search reproducibly (see
    ``local_search``; the circulant search has a fixed budget of work, see
    ``heuristics.circulant.circulant_search``: 3-4 CPU s at 2,000 sub-ops and at most
    about 10 s at any size on the 2-core machine of BENCHMARKS.md, so pass a time limit
    or ``circulant=false`` where that is too long); ``bound_milp_s``, ``rings`` and
    ``bound`` as in ``sipml``.
    """
    solution, info = ours.sipml_ls(instance, seed=seed, time_limit=time_limit,
                                   max_evals=max_evals, restarts=restarts, rings=rings,
                                   circulant=circulant)
    return _heuristic(solution, instance, info, bound_milp_s=bound_milp_s,
                      time_limit=time_limit, bound=bound)


_RINGS = Option("rings", str, "search",
                "search: best of all GPUs, max_peers + 1 GPUs and one GPU; full: all GPUs "
                "(the paper)", choices=paper.RINGS)


def unconstrained(instance: PlacementInstance, *, time_limit=None, seed=0,
                  bound_milp_s=None, bound: bool = True) -> SolverOutput:
    """Baseline: Algorithm 1 without the window (electrical) on the GPUs that can all talk."""
    solution = paper.unconstrained(instance)
    return _heuristic(solution, instance, {"gpus_used": paper.degree_safe_gpus(instance)},
                      bound_milp_s=bound_milp_s, time_limit=time_limit, bound=bound)


def round_robin(instance: PlacementInstance, *, time_limit=None, seed=0,
                bound_milp_s=None, bound: bool = True) -> SolverOutput:
    """Baseline: ops in topological order dealt in turn to the GPUs that can all talk."""
    solution = ours.round_robin(instance)
    return _heuristic(solution, instance, {"gpus_used": paper.degree_safe_gpus(instance)},
                      bound_milp_s=bound_milp_s, time_limit=time_limit, bound=bound)


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
BOUND_MILP_S = Option("bound_milp_s", float, None,
                      "seconds of MILP for the bound (none: 500 nodes, at most 10 s, up to 16 "
                      "ops; else 0)",
                      check=at_least(0))
register_method("placement", "sipml", sipml, options=(BOUND_MILP_S, _RINGS),
                time_limit_note="Algorithm 1 is one pass (forward window, then relocation) with no partial placement to return; sipml-ls honours the limit")
register_method("placement", "sipml-ls", sipml_ls, honours_time_limit=True, options=(
    Option("max_evals", int, None, "schedule evaluations per restart (none: by size)",
           check=at_least(1)),
    Option("restarts", int, 20, "perturbation restarts of the local search",
           check=at_least(0)), BOUND_MILP_S, _RINGS,
    Option("circulant", bool, True, "also start from the best list schedule on a circulant "
           "peer topology (false: Algorithm 1 alone)")))
register_method("placement", "unconstrained", unconstrained, options=(BOUND_MILP_S,),
                time_limit_note="one list schedule")
register_method("placement", "round-robin", round_robin, options=(BOUND_MILP_S,),
                time_limit_note="one list schedule")
