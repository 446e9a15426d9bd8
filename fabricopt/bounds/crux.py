"""Bounds on the optimum of a ``crux`` instance (GPU utilization, maximized)."""

from __future__ import annotations

import math

from fabricopt.problems.crux import CruxInstance

__all__ = ["utilization_bound", "capacity_bound"]


def utilization_bound(instance: CruxInstance) -> float:
    """An upper bound on any solution's utilization.

    Every iteration of job j lasts at least its standalone iteration ``T_j``
    (:attr:`CruxInstance.standalone_iteration_s`), so at most ``ceil((w + C_j)/T_j)``
    of its compute phases meet a window of length ``w``.
    """
    w = instance.window
    num = den = 0.0
    for job, T in zip(instance.jobs, instance.standalone_iteration_s):
        busy = min(w, job.compute_s * math.ceil((w + job.compute_s) / T * (1 + 1e-12)))
        num += job.gpus * busy
        den += job.gpus * w
    return num / den if den > 0 else 0.0




def capacity_bound(instance: CruxInstance) -> float:
    """The long-run utilization no routing or priority order can beat: an LP.

    Job j runs ``r_j`` iterations per second, at most ``1 / T_j`` (its standalone
    iteration, :attr:`CruxInstance.standalone_iteration_s`); each flow may split its
    ``r_j`` iterations' bytes over its candidate paths (fractional routing relaxes the
    one-path choice); every link carries at most its capacity. The bound maximizes
    ``sum_j gpus_j compute_s_j r_j / sum_j gpus_j``. It is a bound on steady-state
    rates: a finite window may hold one iteration's compute more per job
    (:func:`utilization_bound` counts that edge).

    Examples
    --------
    Crux Example 1: 2 s + 1 s of link time per 4 s and 2 s standalone iterations
    overload the link by half; the LP fills it with the job of more compute per link
    second (a tie here) and the bound is 3/8 + 1/8 = 0.5.

    >>> inst = CruxInstance(2, {"l": 8.0}, [
    ...     {"id": "j1", "gpus": 10, "compute_s": 2.0, "overlap": 1.0,
    ...      "flows": [{"bytes": 2e9, "paths": [["l"]]}]},
    ...     {"id": "j2", "gpus": 10, "compute_s": 1.0, "overlap": 1.0,
    ...      "flows": [{"bytes": 1e9, "paths": [["l"]]}]}])
    >>> round(capacity_bound(inst), 6)
    0.5
    """
    import numpy as np
    from scipy.optimize import linprog
    from scipy.sparse import coo_matrix

    jobs = instance.jobs
    links = {name: k for k, name in enumerate(instance.links)}
    n_jobs = len(jobs)
    # variables: r_0..r_{J-1}, then one y per (job, flow, path)
    cols = n_jobs
    eq_rows, eq_cols, eq_vals = [], [], []
    ub_rows, ub_cols, ub_vals = [], [], []
    n_eq = 0
    for j, job in enumerate(jobs):
        for flow in job.flows:
            eq_rows.append(n_eq), eq_cols.append(j), eq_vals.append(-1.0)
            for path in flow.paths:
                eq_rows.append(n_eq), eq_cols.append(cols), eq_vals.append(1.0)
                for e in path:
                    ub_rows.append(links[e]), ub_cols.append(cols)
                    ub_vals.append(8.0 * flow.bytes / (instance.links[e] * 1e9))
                cols += 1
            n_eq += 1
    gpus = np.array([job.gpus for job in jobs], dtype=float)
    c = np.zeros(cols)
    c[:n_jobs] = -gpus * np.array([job.compute_s for job in jobs]) / gpus.sum()
    bounds = [(0.0, 1.0 / t) for t in instance.standalone_iteration_s] + \
        [(0.0, None)] * (cols - n_jobs)
    a_ub = coo_matrix((ub_vals, (ub_rows, ub_cols)), shape=(len(links), cols)).tocsr()
    a_eq = (coo_matrix((eq_vals, (eq_rows, eq_cols)), shape=(n_eq, cols)).tocsr()
            if n_eq else None)
    res = linprog(c, A_ub=a_ub, b_ub=np.ones(len(links)), A_eq=a_eq,
                  b_eq=np.zeros(n_eq) if n_eq else None, bounds=bounds, method="highs")
    if res.status != 0:
        return utilization_bound(instance)
    return float(min(-res.fun, 1.0))
