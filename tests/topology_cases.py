"""A brute-force optimum of tiny ``topology`` instances, to check the MILP's proofs against.

Independent of fabricopt's model: every maximal multigraph within the degree is
enumerated (adding a link never raises the busiest link's time, so a maximal one is
optimal), and on each the best ring shares and routing come from a linear program of
its own — minimize the busiest link's time, with the ring orders' shares and each
source's arc flows as variables — solved by ``scipy.optimize.linprog``. A fractional
multi-commodity flow splits into simple paths without raising any link's load, so the
LP's optimum is the instance's on that multigraph (docs/formats.rst, topology).
"""

import itertools

import numpy as np
from scipy.optimize import linprog
from scipy.sparse import coo_matrix

# bytes are divided by the largest demand, so the LP's absolute tolerances are relative
_LP_OPTIONS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}


def maximal_multigraphs(servers, degree):
    """Every ``{(i, j): count}`` (i < j) using at most ``degree`` interfaces per server
    to which no link can be added (no two servers both have a free interface)."""
    pairs = list(itertools.combinations(range(servers), 2))

    def extend(k, free, links):
        if k == len(pairs):
            spare = [v for v in range(servers) if free[v] > 0]
            if len(spare) <= 1:
                yield dict(links)
            return
        i, j = pairs[k]
        for count in range(min(free[i], free[j]), -1, -1):
            free[i] -= count
            free[j] -= count
            if count:
                links[i, j] = count
            yield from extend(k + 1, free, links)
            links.pop((i, j), None)
            free[i] += count
            free[j] += count

    yield from extend(0, [degree] * servers, {})


def _ring_orders(members):
    """Every directed Hamiltonian cycle of ``members``, once (starting at the first)."""
    first, *rest = members
    return [(first,) + tail for tail in itertools.permutations(rest)]


def best_time_on(instance, links):
    """The least busiest-link time (s) over ring shares and routings on multigraph
    ``links`` (``{(i, j): count}``), or ``inf`` where some demand cannot be routed."""
    n = instance.servers
    traffic = np.array(instance.traffic, dtype=float)   # the n x n bytes, as given
    groups = [(list(g.members), 2.0 * (len(g.members) - 1) / len(g.members) * g.bytes)
              for g in instance.allreduce]
    unit = max([float(traffic.max())] + [c for _, c in groups])
    if unit <= 0:
        return 0.0
    traffic = traffic / unit
    sources = sorted({s for s in range(n) if traffic[s].any()}
                     | {v for members, c in groups if c > 0 for v in members})
    arcs = [(i, j) for (a, b) in links for (i, j) in ((a, b), (b, a))]
    capacity = [links[min(a), max(a)] for a in arcs]
    rings = [(k, order) for k, (members, _) in enumerate(groups)
             for order in _ring_orders(members)]
    # columns: [time, ring shares..., flows (source q, arc a)...]
    n_cols = 1 + len(rings) + len(sources) * len(arcs)

    def flow_col(q, a):
        return 1 + len(rings) + q * len(arcs) + a

    eq_rows, eq_cols, eq_vals, eq_rhs = [], [], [], []
    row = 0
    for q, s in enumerate(sources):
        for v in range(n):
            if v == s:
                continue
            for a, (i, j) in enumerate(arcs):
                if j == v:
                    eq_rows.append(row), eq_cols.append(flow_col(q, a)), eq_vals.append(1.0)
                if i == v:
                    eq_rows.append(row), eq_cols.append(flow_col(q, a)), eq_vals.append(-1.0)
            for r, (k, order) in enumerate(rings):
                c = groups[k][1] / unit
                if c > 0 and any(x == s and y == v for x, y in zip(order, order[1:] + order[:1])):
                    eq_rows.append(row), eq_cols.append(1 + r), eq_vals.append(-c)
            eq_rhs.append(traffic[s, v])
            row += 1
    for k in range(len(groups)):
        for r, (group, _) in enumerate(rings):
            if group == k:
                eq_rows.append(row), eq_cols.append(1 + r), eq_vals.append(1.0)
        eq_rhs.append(1.0)
        row += 1
    ub_rows, ub_cols, ub_vals = [], [], []
    for a in range(len(arcs)):
        for q in range(len(sources)):
            ub_rows.append(a), ub_cols.append(flow_col(q, a)), ub_vals.append(1.0)
        ub_rows.append(a), ub_cols.append(0), ub_vals.append(-float(capacity[a]))
    cost = np.zeros(n_cols)
    cost[0] = 1.0
    res = linprog(
        cost,
        A_ub=coo_matrix((ub_vals, (ub_rows, ub_cols)), shape=(len(arcs), n_cols)) if arcs else None,
        b_ub=np.zeros(len(arcs)) if arcs else None,
        A_eq=coo_matrix((eq_vals, (eq_rows, eq_cols)), shape=(row, n_cols)),
        b_eq=np.array(eq_rhs), bounds=(0, None), method="highs", options=_LP_OPTIONS)
    if res.status == 2:
        return np.inf
    assert res.status == 0, res.message
    return float(res.x[0]) * unit / (instance.link_gbps * 1e9 / 8.0)


def brute_force_topology(instance):
    """The optimal busiest-link time of a tiny instance (``inf``: no feasible topology)."""
    return min((best_time_on(instance, links)
                for links in maximal_multigraphs(instance.servers, instance.degree)),
               default=np.inf)
