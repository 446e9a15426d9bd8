"""Sparse-matrix formulations against their PuLP originals: same optimum, both backends.

The originals live in ``pulp_oracles``; a converted model may order its columns and
rows differently, so the solvers may pick other optimal solutions, but the optimum,
the status and the feasibility of the decoded answer must agree.
"""

import numpy as np
import pytest

import fabricopt
from fabricopt.models import circuits, placement, priorities, topology, wavelengths
from fabricopt.milp import SparseModel, cbc_available, run_milp, to_pulp
from fabricopt.problems import check, evaluate

from milp_helpers import assert_start_satisfies_every_row

from . import pulp_oracles

BACKENDS = ["highs", pytest.param("cbc", marks=pytest.mark.skipif(
    not cbc_available(), reason="PuLP's CBC binary is not installed"))]

CASES = {
    "circuits": (circuits.build, pulp_oracles.circuits,
                 [dict(seed=s, gpus=g, switches=q) for s, g, q in
                  [(0, 6, 2), (1, 8, 3), (2, 10, 2), (3, 6, 4), (4, 12, 3)]]),
    "priorities": (priorities.build, pulp_oracles.priorities,
                   [dict(seed=s, jobs=j, levels=k) for s, j, k in
                    [(0, 8, 2), (1, 12, 3), (2, 20, 4), (3, 1, 2), (4, 15, 1)]]),
    "placement": (placement.build, pulp_oracles.placement,
                  [dict(seed=s, ops=o, gpus=g, max_peers=p) for s, o, g, p in
                   [(0, 6, 2, 1), (1, 7, 3, 1), (2, 8, 3, 2), (3, 6, 4, 1)]]),
    "topology": (topology.build, pulp_oracles.topology,
                 [dict(seed=s, servers=n, degree=d, groups=g) for s, n, d, g in
                  [(0, 4, 2, 1), (1, 5, 3, 2), (2, 6, 2, 1), (3, 3, 2, 0)]]),
    "wavelengths": (wavelengths.build, pulp_oracles.wavelengths,
                    [dict(seed=s, nodes=n, wavelengths=w, max_hops=h) for s, n, w, h in
                     [(0, 5, 2, 2), (1, 6, 2, 3), (2, 6, 3, 2), (3, 4, 1, 3)]]),
}


def _same_optimum(kind, new_build, old_build, params, backend):
    inst = fabricopt.generate(kind, **params)
    new_model, old_model = new_build(inst), old_build(inst)
    new, old = run_milp(new_model, backend=backend), run_milp(old_model, backend=backend)
    assert new.status == old.status == "optimal"
    # in the kind's units: a converted model may scale its objective (priorities: by the
    # largest weight)
    assert new_model.bound_from_raw(new.objective) == pytest.approx(
        old_model.bound_from_raw(old.objective), rel=1e-7, abs=1e-9)
    new_solution, old_solution = new_model.decode(new.values), old_model.decode(old.values)
    assert check(inst, new_solution), check(inst, new_solution).reason
    assert evaluate(inst, new_solution) == pytest.approx(evaluate(inst, old_solution), rel=1e-7)
    assert new_model.bound_from_raw(new.bound) == pytest.approx(
        old_model.bound_from_raw(old.bound), rel=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind, index", [(k, i) for k, (_, _, cases) in CASES.items()
                                         for i in range(len(cases))])
def test_sparse_model_keeps_the_pulp_optimum(kind, index, backend):
    new_build, old_build, cases = CASES[kind]
    _same_optimum(kind, new_build, old_build, cases[index], backend)


@pytest.mark.parametrize("kind", sorted(CASES))
def test_warm_start_is_a_feasible_column_vector(kind):
    new_build, _, cases = CASES[kind]
    inst = fabricopt.generate(kind, **cases[1])
    model = new_build(inst)
    best = run_milp(model)
    start = model.encode(model.decode(best.values))
    assert start.shape == (len(model.problem.arrays().names),)
    assert model.problem.arrays().objective_of(start) == pytest.approx(best.objective, rel=1e-9)
    assert_start_satisfies_every_row(model, start)
    warm = run_milp(model, warm_start=start)
    assert warm.status == "optimal" and warm.objective == pytest.approx(best.objective)


def test_to_pulp_is_the_same_model():
    m = SparseModel("demo", "min")
    x = m.variables("x", (2, 3), 0, [[1, 2, 3], [4, 5, 6]], integer=True)
    z = m.variables("z", (), -1.5, np.inf)
    m.objective(x.ids.ravel(), np.arange(6.0), offset=2.0)
    m.objective([z.start], [1.0])
    m.rows("sum", np.zeros(6), x.ids.ravel(), 1.0, lower=4.0, upper=4.0, count=1)
    m.rows("pair", [0, 0, 1, 1], [x[0, 0], z.start, x[1, 2], x[1, 2]], [1.0, -1.0, 1.0, 1.0],
           lower=[-np.inf, 1.0], upper=[2.0, np.inf])
    arrays = m.arrays()
    assert list(arrays.names) == ["x_0_0", "x_0_1", "x_0_2", "x_1_0", "x_1_1", "x_1_2", "z"]
    assert arrays.value.tolist().count(2.0) == 1          # duplicate entries summed
    highs = run_milp(m)
    lp = to_pulp(arrays)
    assert sorted(v.name for v in lp.variables()) == sorted(arrays.names)
    via_pulp = run_milp(lp, backend="highs")
    assert highs.status == via_pulp.status == "optimal"
    assert highs.objective == pytest.approx(via_pulp.objective)
    assert m.value(x, highs.values.col).shape == (2, 3)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("integer", [True, False])
def test_count_model_keeps_the_pulp_optimum(seed, integer, backend):
    inst = fabricopt.generate("wavelengths", seed=seed, nodes=7, wavelengths=3, max_hops=4)
    new = run_milp(wavelengths.build_count(inst, integer=integer), backend=backend)
    old = run_milp(pulp_oracles.wavelength_counts(inst, integer=integer), backend=backend)
    assert new.status == old.status == "optimal"
    assert new.objective == pytest.approx(old.objective, rel=1e-7)
    # the min-cost flow at that rate: same least segment use
    rate = new.values["t"] * (1 - 1e-7)
    lean_new = run_milp(wavelengths.build_count(inst, integer=integer, min_rate=rate),
                        backend=backend)
    lean_old = run_milp(pulp_oracles.wavelength_counts(inst, integer=integer, min_rate=rate),
                        backend=backend)
    assert lean_new.objective == pytest.approx(lean_old.objective, rel=1e-7)
    counts = wavelengths.build_count(inst, integer=integer).decode(new.values)
    assert set(counts) == set(pulp_oracles.wavelength_counts(inst).decode(old.values))
