"""Shared assertions about time-limited MILP results (minimization kinds)."""

import fabricopt


def assert_time_limited_milp_keeps_warm_start(instance, heuristic: str, time_limit: float):
    """A time-limited ``milp``, warm-started from ``heuristic``, is never worse than it
    and reports a valid lower bound."""
    warm = fabricopt.solve(instance, heuristic)
    milp = fabricopt.solve(instance, "milp", time_limit=time_limit)
    assert milp.status in ("optimal", "feasible")
    assert milp.objective <= warm.objective * (1 + 1e-9)
    assert milp.bound is not None and milp.bound <= milp.objective * (1 + 1e-9)
    return milp
