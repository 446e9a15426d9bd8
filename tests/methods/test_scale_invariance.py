"""Scale invariance of every method of every kind, and no certificate that another
answer contradicts.

Multiplying every time-like input by ``s`` (tests/scaling.py) multiplies the optimum by
``s`` (a crux utilization stays the same). For each drawn instance every method runs at
scale 1 and at scale ``s``; in the instance's own units every answer found at either
scale is feasible for both, so

- a proven optimum at one scale is an optimum at the other (1e-9 relative),
- no bound, at either scale, passes any objective found by any method at either scale,
- and, for ``priorities``, every claim is checked against brute force.

Small instances, a few examples per kind: the work is bounded by the instance sizes.
"""

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import fabricopt
from crux_helpers import brute_force_priorities
from fabricopt.methods.milp_method import cbc_available
from fabricopt.problems import get_kind, instance_from_dict
from fabricopt.problems.tolerances import CERTIFY_RTOL
from fabricopt.testing import instances
from scaling import OBJECTIVE_POWER, scale_times

SCALES = [1e-12, 1e-6, 1e6, 1e12]
MAX_SIZE = {"circuits": 4, "crux": 2, "placement": 5, "priorities": 6, "topology": 4,
            "wavelengths": 4}
# Objectives found along the way agree to rounding, which grows with a few operations.
RTOL = 4 * CERTIFY_RTOL


def _runs(kind: str) -> list[tuple[str, dict]]:
    """Every method of the kind; MILPs on both backends where CBC is installed."""
    runs = []
    for method in fabricopt.methods(kind):
        runs.append((method, {}))
        if method == "milp" and cbc_available():
            runs.append((method, {"backend": "cbc"}))
    return runs


def _better(sense: str, a: float, b: float) -> bool:
    """Is ``a`` better than ``b`` by more than the tolerance?"""
    slack = RTOL * max(abs(a), abs(b))
    return a < b - slack if sense == "min" else a > b + slack


@pytest.mark.parametrize("kind", sorted(MAX_SIZE))
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.data_too_large])
@given(data=st.data(), scale=st.sampled_from(SCALES))
def test_every_method_follows_the_time_scale_and_no_certificate_is_contradicted(
        kind, data, scale):
    sense = get_kind(kind).sense
    base = data.draw(instances(kind, max_size=MAX_SIZE[kind]), label="instance")
    scaled = instance_from_dict(scale_times(base.to_dict(), scale))
    unit = scale ** OBJECTIVE_POWER[kind]     # objective at scale s = unit * objective at 1
    answers = []                              # (label, status, objective, bound) in base units
    for method, options in _runs(kind):
        for inst, factor in ((base, 1.0), (scaled, unit)):
            r = fabricopt.solve(inst, method, **options)
            label = f"{method}{options or ''} at scale {factor:g}"
            assert r.status != "error", f"{label}: {r.info.get('message')}"
            assert "optimality" not in r.info, f"{label}: {r.info['optimality']}"
            answers.append((label, r.status,
                            None if r.objective is None else r.objective / factor,
                            None if r.bound is None else r.bound / factor))
    found = [obj for _, _, obj, _ in answers if obj is not None]
    best = (min if sense == "min" else max)(found) if found else None
    if kind == "priorities":
        truth = brute_force_priorities(base)
        assert best is None or not _better(sense, best, truth)
        best = truth
    for label, status, objective, bound in answers:
        if best is None:
            continue
        if bound is not None:   # a bound on the optimum: no answer passes it
            assert not _better(sense, best, bound), f"{label}: bound {bound} vs {best}"
        if status == "optimal":
            assert not _better(sense, best, objective), f"{label}: optimal {objective} vs {best}"
