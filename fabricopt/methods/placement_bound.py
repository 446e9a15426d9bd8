"""Bounds on the placement optimum that need the MILP backend: the LP relaxation of the
placement MILP and its dual bound under a time limit.

They complement the fast bounds of :mod:`fabricopt.bounds.placement` where the
model is small enough to build (the disjunctive model has ``O(ops^2 * gpus)`` rows), and
:func:`heuristic_bound` combines all of them beside a heuristic's answer.
"""

from __future__ import annotations

from fabricopt.errors import InvalidOption

import math
import time

from fabricopt.models import placement as formulation
from fabricopt.problems import NamedBound
from fabricopt.problems.placement import PlacementInstance, PlacementSolution, evaluate
from fabricopt.problems.tolerances import CERTIFY_RTOL
from fabricopt.bounds.placement import lower_bound
from fabricopt.methods.milp_method import run_milp

__all__ = ["lp_relaxation_bound", "milp_dual_bound", "heuristic_bound", "MAX_MODEL_OPS",
           "MAX_MODEL_GPUS"]

#: Largest instance (ops) whose MILP the heuristics build for a bound by default.
MAX_MODEL_OPS = 16
#: ... and on at most this many GPUs: the model grows with the square of the GPU count
#: (a pair variable per GPU pair and transfer), so 5 ops on 4,096 GPUs would not fit.
MAX_MODEL_GPUS = 16

# Auto MILP bound: this many branch-and-bound nodes (a budget that gives the same bound
# on a loaded machine; 500 prove the 12-op quick rows, in 1.5-3.5 s on the 2-core
# machine), and as a safety net at most this many seconds and this share of a method's
# time limit (a quarter of the suites' 10 s cut small/2 short at a load of 2).
_AUTO_NODES = 500
_AUTO_MILP_S = 10.0
_AUTO_SHARE = 0.5
# A model's bound must beat the fast one by more than the certificate's tolerance to be
# named the source: bounds that agree to it are the same figure.
_SAME_RTOL = CERTIFY_RTOL


def lp_relaxation_bound(instance: PlacementInstance, *, upper_bound_s: float | None = None,
                        time_limit: float | None = None) -> float | None:
    """The optimum of the placement MILP with every integer variable made continuous.

    A relaxation of an exact model of every feasible placement of makespan at most
    ``upper_bound_s`` (default: all ops on one GPU), so its optimum is a lower bound on
    the optimal makespan [1]_. None if HiGHS stops before proving the LP optimum.

    References
    ----------
    .. [1] G. L. Nemhauser and L. A. Wolsey, *Integer and Combinatorial Optimization*,
       Wiley, 1988, §I.1.1 (relaxations give bounds).

    Examples
    --------
    >>> from fabricopt.problems.placement import SubOp
    >>> inst = PlacementInstance(2, 1, 8.0, [SubOp("a", 1.0), SubOp("b", 1.0)])
    >>> lp_relaxation_bound(inst)
    1.0
    """
    model = formulation.build(instance, upper_bound_s=upper_bound_s)
    model.problem.relax()
    run = run_milp(model.problem, time_limit=time_limit)
    if run.status != "optimal" or run.bound is None:
        return None
    return model.bound_from_raw(run.bound)


def milp_dual_bound(instance: PlacementInstance, *, time_limit: float,
                    incumbent: PlacementSolution | None = None,
                    max_nodes: int | None = None) -> float | None:
    """HiGHS's dual bound on the placement MILP after at most ``time_limit`` seconds
    (and ``max_nodes`` branch-and-bound nodes, if given).

    Warm-started from ``incumbent`` (whose makespan also caps every start time: an
    optimum is never later), so the branch and bound prunes from the first node. The
    dual bound is proven for every feasible placement whatever the time limit; a
    proof of optimality makes it the optimum. None if HiGHS reports no finite bound.

    Examples
    --------
    >>> from fabricopt.problems.placement import SubOp, Dep
    >>> inst = PlacementInstance(2, 1, 8.0, [SubOp("a", 1.0), SubOp("b", 1.0)],
    ...                          [Dep("a", "b", 8e9)])
    >>> milp_dual_bound(inst, time_limit=5.0)
    2.0
    """
    upper = evaluate(instance, incumbent) if incumbent is not None else None
    model = formulation.build(instance, upper_bound_s=upper)
    start = model.encode(incumbent) if incumbent is not None else None
    run = run_milp(model.problem, time_limit=time_limit, warm_start=start, max_nodes=max_nodes)
    if run.bound is None or not math.isfinite(run.bound):
        return None
    return model.bound_from_raw(run.bound)


def heuristic_bound(instance: PlacementInstance, solution: PlacementSolution | None, *,
                    milp_s: float | None = None, time_limit: float | None = None
                    ) -> NamedBound:
    """The best bound to report beside a heuristic's answer, named by its source.

    The fast bounds of :func:`fabricopt.bounds.placement.bounds` always; for
    instances of at most :data:`MAX_MODEL_OPS` ops on at most :data:`MAX_MODEL_GPUS`
    GPUs also the LP relaxation and the
    MILP's dual bound (``lp-relaxation``, ``milp-dual``) after ``milp_s`` seconds.
    By default (``milp_s`` None) the MILP gets 500 branch-and-bound nodes instead, so
    the bound does not depend on the machine's load, with 10 s (at most half of
    ``time_limit``) as a safety net; 0 skips both.

    Raises
    ------
    InvalidOption
        If ``milp_s`` is not a number >= 0.

    Examples
    --------
    >>> from fabricopt.bounds.placement import lower_bound
    >>> from fabricopt.problems.placement import generate
    >>> inst = generate(seed=1, ops=8, gpus=3, max_peers=1)
    >>> fast, best = lower_bound(inst), heuristic_bound(inst, None, milp_s=30.0)
    >>> (fast.source, best.source, best > fast)
    ('degree-fan', 'milp-dual', True)
    """
    if milp_s is not None and (isinstance(milp_s, bool) or not isinstance(milp_s, (int, float))
                               or not milp_s >= 0 or math.isinf(milp_s)):
        raise InvalidOption(f"bound_milp_s = {milp_s!r}: must be a number >= 0")
    fast = lower_bound(instance)
    found = {fast.source: float(fast)}
    max_nodes = None
    if milp_s is None:
        small = instance.size <= MAX_MODEL_OPS and instance.gpus <= MAX_MODEL_GPUS
        milp_s = _AUTO_MILP_S if small else 0.0
        max_nodes = _AUTO_NODES
        if time_limit is not None:
            milp_s = min(milp_s, _AUTO_SHARE * time_limit)
    upper = evaluate(instance, solution) if solution is not None else None
    if upper is not None and float(fast) >= upper:
        milp_s = 0.0      # the answer is proven optimal already
    if milp_s > 0 and instance.size > 0:
        began = time.perf_counter()
        lp = lp_relaxation_bound(instance, upper_bound_s=upper, time_limit=milp_s)
        if lp is not None:
            found["lp-relaxation"] = lp
        left = milp_s - (time.perf_counter() - began)
        if left > 0:
            dual = milp_dual_bound(instance, time_limit=left, incumbent=solution,
                                   max_nodes=max_nodes)
            if dual is not None:
                found["milp-dual"] = dual
    # a model bound no better than the fast one (to rounding) adds nothing: it keeps the name
    found = {k: v for k, v in found.items()
             if k == fast.source or v > float(fast) * (1 + _SAME_RTOL)}
    return NamedBound.best(found, sense="min")
