"""Methods of the ``topology`` kind: ``milp``, ``topoopt``, ``ring``, ``random-regular``,
``ocs-reconfig``.

Every method reports the bytes-weighted mean hop count of its answer (TopoOpt's
bandwidth tax) as ``info["mean_hops"]``. The heuristics report the bound of
:func:`.topology_bounds.heuristic_bound` (port load or volume and, up to
``MAX_RELAXATION_SERVERS`` servers or with ``flow_relaxation=True``, the LP relaxation),
named in ``Result.bound_source``.
"""

from __future__ import annotations

from fabricopt.models import topology as formulation
from fabricopt.algorithms.topology import topoopt as finder
from fabricopt.algorithms.topology import baselines
from fabricopt.problems.topology import TopologyInstance, mean_hops
from fabricopt.methods.milp_method import MILP_OPTIONS, milp_method
from fabricopt.methods.options import Option, at_least
from fabricopt.methods.registry import register_method
from fabricopt.methods.result import SolverOutput
from fabricopt.bounds.topology import heuristic_bound


def _output(instance: TopologyInstance, solution, status: str = "feasible", bound=None,
            info=None) -> SolverOutput:
    info = dict(info or {})
    if solution is not None:
        info["mean_hops"] = mean_hops(instance, solution)
    return SolverOutput(solution, status, bound, info)


def _heuristic(instance: TopologyInstance, solution, flow_relaxation, info=None
               ) -> SolverOutput:
    bound = heuristic_bound(instance, relaxation=flow_relaxation)
    return _output(instance, solution, bound=bound, info=dict(info or {}))  # bound names its source


def topoopt(instance: TopologyInstance, *, time_limit=None, seed=0, mp_degree=None,
            paths=4, candidates=True, flow_relaxation=None, matching="blossom"
            ) -> SolverOutput:
    """TopoOpt's TopologyFinder, best of a few scored ring allocations (never worse than ring).

    TotientPerms rings, MP matchings, CoinChangeMod routes; ``candidates=False`` builds
    the paper's allocation only. ``time_limit``: no further candidate once it has passed
    (the paper's allocation is always built; a cut makes the answer machine-dependent);
    ``info`` reports ``candidates_scored`` of ``candidates_total``. ``flow_relaxation``:
    also solve the LP relaxation for the bound (default: up to ``MAX_RELAXATION_SERVERS``
    servers). ``matching``: the MP matching, maximum-weight (TopoOpt's blossom) or
    ``greedy`` (heaviest pair first: at least half the weight, in O(pairs log pairs)).
    """
    solution, info = finder.topoopt_search(instance, seed=seed, mp_degree=mp_degree,
                                           paths=paths, candidates=candidates,
                                           time_limit=time_limit, matching=matching)
    return _heuristic(instance, solution, flow_relaxation, info)


def ring(instance: TopologyInstance, *, time_limit=None, seed=0, paths=4,
         flow_relaxation=None) -> SolverOutput:
    """Baseline: degree/2 parallel bidirectional rings 0, 1, ..., n-1."""
    return _heuristic(instance, baselines.ring(instance, seed=seed, paths=paths),
                      flow_relaxation)


def random_regular(instance: TopologyInstance, *, time_limit=None, seed=0,
                   paths=4, flow_relaxation=None) -> SolverOutput:
    """Baseline: a random connected degree-regular multigraph, shortest-path routes."""
    return _heuristic(instance, baselines.random_regular(instance, seed=seed, paths=paths),
                      flow_relaxation)


def ocs_reconfig(instance: TopologyInstance, *, time_limit=None, seed=0,
                 paths=4, flow_relaxation=None) -> SolverOutput:
    """Baseline: TopoOpt's OCS-reconfig demand greedy with halving utility."""
    return _heuristic(instance, baselines.ocs_reconfig(instance, seed=seed, paths=paths),
                      flow_relaxation)


_milp = milp_method(formulation.build, warm_start_from=finder.topoopt,
                    warm_start_timed=True)


def milp(instance: TopologyInstance, *, time_limit=None, seed=0, backend="highs",
         rel_gap=0.0, warm_start=True,
         max_ring_orders=formulation.MAX_RING_ORDERS) -> SolverOutput:
    """Ours: integer links, ring shares, max concurrent flow (sparse model + HiGHS).

    Exact while every group's (g-1)! ring orders fit in ``max_ring_orders``; beyond,
    only TotientPerms rings are offered, and the answer is reported ``feasible`` without
    the model's bound (a restriction proves nothing).
    """
    out = _milp(instance, time_limit=time_limit, seed=seed, backend=backend,
                rel_gap=rel_gap, warm_start=warm_start, max_ring_orders=max_ring_orders)
    status, bound, info = out.status, out.bound, dict(out.info)
    if not formulation.is_exact(instance, max_ring_orders):
        info["restricted"] = "ring orders limited to TotientPerms rings: no optimality proof"
        status = "feasible" if status == "optimal" else status
        bound = None
    return _output(instance, out.solution, status, bound, info)


def _mp_degree_fits(value, instance) -> str | None:
    """``mp_degree`` must leave an even number >= 2 of interfaces for the rings."""
    if value < 0:
        return "must be >= 0"
    if instance is None or instance.degree == 1:
        return None
    try:
        finder.degree_split(instance.degree, 1.0, 1.0, value)
    except ValueError as exc:
        return str(exc).split(": ", 1)[-1] + f" (degree = {instance.degree})"
    return None


PATHS = Option("paths", int, 4, "equal-length shortest paths each demand is split over",
               check=at_least(1))
FLOW_RELAXATION = Option("flow_relaxation", bool, None,
                         "solve the LP relaxation for the bound (none: up to 12 servers)")

register_method("topology", "milp", milp, exact=True, honours_time_limit=True,
                options=MILP_OPTIONS + (Option(
                    "max_ring_orders", int, formulation.MAX_RING_ORDERS,
                    "ring orders per group offered before the model is restricted",
                    check=at_least(1)),),
                summary="ours: integer links, ring shares, max concurrent flow (sparse model + HiGHS)")
register_method("topology", "topoopt", topoopt, honours_time_limit=True, options=(
    Option("mp_degree", int, None, "interfaces for MP matching (none: by bytes, TopoOpt §4.2)",
           check=_mp_degree_fits), PATHS, FLOW_RELAXATION,
    Option("candidates", bool, True,
           "score a few ring allocations and the plain ring, keep the best (false: the paper's)"),
    Option("matching", str, "blossom",
           "MP matching: maximum-weight (TopoOpt's) or heaviest pair first",
           choices=tuple(finder.MATCHINGS))))
register_method("topology", "ring", ring, options=(PATHS, FLOW_RELAXATION),
                time_limit_note="one construction and one routing pass")
register_method("topology", "random-regular", random_regular, options=(PATHS, FLOW_RELAXATION),
                time_limit_note="one construction and one routing pass")
register_method("topology", "ocs-reconfig", ocs_reconfig, options=(PATHS, FLOW_RELAXATION),
                time_limit_note="one construction and one routing pass")
