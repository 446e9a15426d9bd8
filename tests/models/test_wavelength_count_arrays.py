"""The count model (``build_count``, ``CountRelaxation``) is the model of the plain
Python oracle (tests/models/_count_model_reference.py) array for array, so HiGHS
gives the ``mcf`` method the same LP solutions."""

import pathlib
import sys

import numpy as np
from hypothesis import given, settings, strategies as st

from fabricopt.models.wavelengths import CountRelaxation, build_count
from fabricopt.milp import run_milp
from fabricopt.problems.wavelengths import generate

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import _count_model_reference as reference  # noqa: E402


def _assert_same_arrays(model, oracle):
    got, want = model.arrays(), oracle.arrays()
    assert list(got.names) == list(want.names)
    assert (got.offset, got.maximize) == (want.offset, want.maximize)
    for field in ("cost", "col_lower", "col_upper", "integer", "row_lower", "row_upper",
                  "starts", "index", "value"):
        a, b = getattr(got, field), getattr(want, field)
        assert a.dtype == b.dtype and np.array_equal(a, b), field


instances = st.builds(
    lambda seed, nodes, wavelengths, hops, family: generate(
        seed=seed, nodes=nodes, wavelengths=wavelengths, max_hops=min(hops, nodes - 1),
        family=family),
    st.integers(0, 10**6), st.integers(3, 30), st.integers(1, 9), st.integers(1, 12),
    st.sampled_from(["hybrid", "long-reach"]))


@settings(max_examples=40, deadline=None)
@given(instances, st.booleans(), st.floats(0.01, 20.0))
def test_count_models_match_the_reference(instance, integer, rate):
    _assert_same_arrays(build_count(instance, integer=integer).problem,
                        reference.count_model(instance, integer=integer))
    _assert_same_arrays(build_count(instance, integer=integer, min_rate=rate).problem,
                        reference.count_model(instance, integer=integer, min_rate=rate))


@settings(max_examples=20, deadline=None)
@given(instances)
def test_count_relaxation_builds_both_lps_of_mcf(instance):
    relaxed = CountRelaxation(instance)
    _assert_same_arrays(relaxed.model.problem, reference.count_model(instance, integer=False))
    run = run_milp(relaxed.model.problem)
    assert relaxed.rate(run.values) == run.values["t"]
    rate = relaxed.rate(run.values) * (1 - 1e-7)
    lean = relaxed.lean(rate)
    _assert_same_arrays(lean.problem,
                        reference.count_model(instance, integer=False, min_rate=rate))
    assert lean.decode(run.values) == build_count(instance, integer=False,
                                                  min_rate=rate).decode(run.values)
