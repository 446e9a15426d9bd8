"""Methods of the ``wavelengths`` kind: ``milp``, ``mcf``, ``greedy``, ``count-bound``.

The bound of every result is SiP-ML's count relaxation: ``solve`` applies the kind's
bound, :func:`fabricopt.problems.wavelengths.count_bound`, which computes it by
bisection in milliseconds — exactly whenever no demanded pair can go both ways round,
and in every instance measured otherwise (BENCHMARKS.md) — so no method needs to solve
the count ILP to report it. ``count-bound`` solves that ILP itself (a certificate, and
the value where the fast bound falls short); ``milp`` adds its dual bound and ``mcf``
the bound of its LP.
"""

from __future__ import annotations

import time

from fabricopt.errors import InvalidOption

from fabricopt.models import wavelengths as formulation
from fabricopt.algorithms import wavelengths as heuristics
from fabricopt.problems.wavelengths import WavelengthsInstance, WavelengthsSolution, evaluate
from fabricopt.milp import run_milp
from fabricopt.methods.milp_method import (BACKEND_OPTION, MILP_OPTIONS, SYMMETRY_OPTION,
                                           milp_method)
from fabricopt.methods.options import Option, at_least
from fabricopt.methods.registry import register_method
from fabricopt.methods.result import SolverOutput

_UNSERVED = ("found no schedule that serves every demanded pair (the instance may still "
             "be feasible: the milp method decides)")


def count_bound(instance: WavelengthsInstance, *, time_limit=None, seed=0,
                backend: str = "highs") -> SolverOutput:
    """SiP-ML's count ILP (no wavelength continuity): a lower bound only, never a schedule."""
    model = formulation.build_count(instance)
    run = run_milp(model.problem, backend=backend, time_limit=time_limit, seed=seed)
    info = {"solver": run.solver, "nodes": run.nodes, **run.info}
    if run.status == "infeasible":
        info["message"] = "the count relaxation is infeasible, so the instance is"
        return SolverOutput(None, "infeasible", None, info)
    bound = model.bound_from_raw(run.bound) if run.bound is not None else None
    return SolverOutput(None, "no_solution", bound, info)


def _fractional_counts(instance: WavelengthsInstance, time_limit, seed, backend):
    """The LP relaxation of the count model, then the least segment use at its best rate.

    Returns (flows, bound, run) — flows None without an LP solution. A vertex of the
    first LP hands spare capacity to arbitrary pairs (which rounding then locks in);
    the second gives each pair what the best rate needs, leaving the rest to the
    fill-up step.
    """
    relaxed = formulation.CountRelaxation(instance)
    model = relaxed.model
    run = run_milp(model.problem, backend=backend, time_limit=time_limit, seed=seed)
    if run.values is None:
        return None, None, run
    bound = model.bound_from_raw(run.bound) if run.bound is not None else None
    # A hair below the optimum, so that solver tolerances cannot make it infeasible.
    lean = relaxed.lean(relaxed.rate(run.values) * (1 - 1e-7))
    lean_run = run_milp(lean.problem, backend=backend, time_limit=time_limit, seed=seed)
    flows = lean.decode((lean_run if lean_run.values is not None else run).values)
    return flows, bound, run


def mcf(instance: WavelengthsInstance, *, time_limit=None, seed=0, backend: str = "highs",
        rounds: int = 8, fill: bool = True) -> SolverOutput:
    """SiP-ML's fast scheduler: LP of lightpath counts, randomized rounding, repair, first-fit.

    ``rounds`` roundings are tried and ``fill`` hands out leftover wavelengths, as in
    :func:`fabricopt.algorithms.wavelengths.mcf_schedule`; with a ``time_limit`` no
    rounding starts past it once one has given a schedule.

    Notes
    -----
    The flow problem is the one of the authors' min-cost flow (fabricopt docs,
    *Departures*, sipml-2.3) — chords for demanded pairs around each fiber, at most W
    per segment — over both fibers at once, with the transceiver rows that
    couple them. Its objective departs from the authors' code:
    [R] minimizes ``sum -f_ij / T̂_ij``, which pays most for the *smallest* transfers
    and can leave the largest one a single lightpath; we maximize the normalized
    rate ``t`` (the LP relaxation of SiP-ML's own ILP, the paper's objective) and then
    solve the min-cost flow (cost = hops) that keeps that rate, so no pair holds
    capacity it does not need before rounding.
    """
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise InvalidOption(f"rounds = {rounds!r}: must be an integer >= 1")
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    flows, bound, run = _fractional_counts(instance, time_limit, seed, backend)
    info = {"solver": run.solver, "lp_status": run.status}
    if run.status == "infeasible":
        info["message"] = "the relaxed count model is infeasible, so the instance is"
        return SolverOutput(None, "infeasible", None, info)
    # the relaxation has passed require_feasible: the rounding need not prove it again
    solution = None if flows is None else heuristics._mcf_rounds(
        instance, flows, seed=seed, fill=bool(fill), rounds=rounds, deadline=deadline)
    if solution is None:
        info["message"] = f"mcf {_UNSERVED}"
        return SolverOutput(None, "no_solution", bound, info)
    return SolverOutput(solution, "feasible", bound, info)


def greedy(instance: WavelengthsInstance, *, time_limit=None, seed=0) -> SolverOutput:
    """Baseline: one more lightpath to the slowest pair, lowest free wavelength."""
    solution = heuristics.greedy(instance, seed=seed)
    if solution is None:
        return SolverOutput(None, "no_solution", None, {"message": f"greedy {_UNSERVED}"})
    return SolverOutput(solution, "feasible")


def _warm_start(instance: WavelengthsInstance) -> WavelengthsSolution | None:
    """The better of ``greedy`` and ``mcf`` (either may find none): the MIP start."""
    found = [heuristics.greedy(instance)]
    flows, _, _ = _fractional_counts(instance, None, 0, "highs")
    if flows is not None:
        found.append(heuristics.mcf_schedule(instance, flows))
    found = [s for s in found if s is not None]
    return min(found, key=lambda s: evaluate(instance, s), default=None)


milp = milp_method(formulation.build, warm_start_from=_warm_start)

register_method("wavelengths", "milp", milp, exact=True,
                options=MILP_OPTIONS + (SYMMETRY_OPTION,),
                honours_time_limit=True,
                summary="binary lightpaths with wavelength continuity (sparse model + HiGHS)")
register_method("wavelengths", "mcf", mcf, honours_time_limit=True, options=(
    BACKEND_OPTION,
    Option("rounds", int, 8, "randomized roundings to try", check=at_least(1)),
    Option("fill", bool, True, "hand out leftover wavelengths")))
register_method("wavelengths", "greedy", greedy, options=(),
                time_limit_note="one greedy pass over the demands")
register_method("wavelengths", "count-bound", count_bound, bound_only=True,
                honours_time_limit=True, options=(BACKEND_OPTION,))
