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


def assert_start_satisfies_every_row(model, start, tol=1e-9):
    """A sparse model's MIP start (a column vector) meets every bound and every row."""
    import numpy as np
    from scipy.sparse import csr_matrix

    arrays = model.problem.arrays()
    A = csr_matrix((arrays.value, arrays.index, np.append(arrays.starts, len(arrays.index))),
                   shape=(len(arrays.row_lower), len(arrays.names)))
    activity = A @ start
    assert np.all(start >= arrays.col_lower - tol) and np.all(start <= arrays.col_upper + tol)
    low = np.flatnonzero(activity < arrays.row_lower - tol)
    high = np.flatnonzero(activity > arrays.row_upper + tol)
    assert not len(low) and not len(high), f"rows violated: {low[:5]} {high[:5]}"
