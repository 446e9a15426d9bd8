"""Mutation tests of ``check_method``: for every kind, deliberately broken methods fail it.

Each kind gets four broken methods — one that ignores a constraint of the kind on
some instances, one that claims ``optimal`` for a worse answer, one that claims
``infeasible`` on a feasible instance, one that reports a bound on the wrong side of
the optimum — and ``check_method`` with its default examples and time limits must
fail on each, while it passes a correct wrapper of the kind's exact method. Only
hypothesis's shrinking is switched off: it would re-run the MILP references many
times to make a counterexample smaller, and changes nothing about detection.
"""

from __future__ import annotations

import pytest
from hypothesis import Phase, settings

import fabricopt
from fabricopt import SolverOutput
from fabricopt.problems import get_kind
from fabricopt.problems.placement import schedule
from fabricopt.testing import MethodCheckError, check_method

pytest_plugins = ["fabricopt.testing.pytest_plugin"]

NO_SHRINK = settings(phases=[Phase.explicit, Phase.reuse, Phase.generate])

# kind -> the exact reference a correct wrapper wraps
KINDS = {"placement": "milp", "circuits": "exact", "wavelengths": "milp", "topology": "milp",
         "priorities": "milp", "crux": "enumerate"}


def _solution(instance, method):
    return fabricopt.solve(instance, method).solution


def _rebuilt(instance, data):
    return get_kind(get_kind_name(instance)).solution_from_dict(data)


def get_kind_name(instance):
    return fabricopt.problems.kind_of(instance).name


# --- one constraint ignored, per kind -------------------------------------------------

def _placement_ignores_degree(instance):
    # list scheduling dealt over *all* GPUs: the degree limit is what it ignores
    order = instance.topological_order()
    gpu = [0] * instance.size
    for position, op in enumerate(order):
        gpu[op] = position % instance.gpus
    return schedule(instance, gpu, order)


def _circuits_drops_a_pair(instance):
    data = _solution(instance, "exact").to_dict()
    demanded = [(i, j) for i, row in enumerate(instance.traffic_bytes)
                for j, b in enumerate(row) if b > 0]
    if demanded:
        i, j = demanded[0]
        data["configs"] = [[None if (k == i and t == j) else t for k, t in enumerate(row)]
                           for row in data["configs"]]
    return _rebuilt(instance, data)


def _wavelengths_drops_a_pair(instance):
    solution = _solution(instance, "greedy") or _solution(instance, "milp")
    data = solution.to_dict()
    if data["lightpaths"]:
        first = data["lightpaths"][0]
        data["lightpaths"] = [p for p in data["lightpaths"]
                              if (p["src"], p["dst"]) != (first["src"], first["dst"])]
    return _rebuilt(instance, data)


def _topology_exceeds_degree(instance):
    data = _solution(instance, "topoopt").to_dict()
    if data["links"]:
        data["links"][0][2] += 1  # one more link than the degree allows at both ends
    return _rebuilt(instance, data)


def _priorities_reverses_levels(instance):
    data = _solution(instance, "crux").to_dict()
    top = instance.levels - 1
    data["level"] = {job: top - level for job, level in data["level"].items()}
    return _rebuilt(instance, data)


def _crux_inverts_a_pair(instance):
    # two contending jobs: the higher-priority one on the lower level
    from fabricopt.problems.crux import contending_pairs

    data = _solution(instance, "crux").to_dict()
    pairs = sorted(contending_pairs(instance, data["path"]))
    data["priority"] = {job: 0.0 for job in data["priority"]}
    data["level"] = {job: 0 for job in data["level"]}
    if pairs and instance.levels > 1:
        high, low = (instance.ids[k] for k in pairs[0])
        data["priority"][high], data["priority"][low] = 2.0, 1.0
        data["level"][low] = 1
    return _rebuilt(instance, data)


IGNORES_A_CONSTRAINT = {
    "placement": _placement_ignores_degree, "circuits": _circuits_drops_a_pair,
    "wavelengths": _wavelengths_drops_a_pair, "topology": _topology_exceeds_degree,
    "priorities": _priorities_reverses_levels, "crux": _crux_inverts_a_pair,
}


# --- a feasible answer worse than the optimum on some instances, per kind -------------

def _one_circuit_per_pair(instance):
    data = _solution(instance, "exact").to_dict()
    seen = set()
    for row in data["configs"]:
        for i, j in enumerate(row):
            if j is not None and (i, j) in seen:
                row[i] = None
            seen.add((i, j))
    return _rebuilt(instance, data)


def _one_lightpath_per_pair(instance):
    data = (_solution(instance, "greedy") or _solution(instance, "milp")).to_dict()
    seen, kept = set(), []
    for path in data["lightpaths"]:
        if (path["src"], path["dst"]) not in seen:
            seen.add((path["src"], path["dst"]))
            kept.append(path)
    data["lightpaths"] = kept
    return _rebuilt(instance, data)


WORSE = {
    "placement": lambda instance: _solution(instance, "round-robin"),
    "circuits": _one_circuit_per_pair, "wavelengths": _one_lightpath_per_pair,
    "topology": lambda instance: _solution(instance, "ring"),
    "priorities": lambda instance: _solution(instance, "varys"),
    "crux": lambda instance: _solution(instance, "ecmp"),
}


# --- the same lies for every kind -----------------------------------------------------

def _claims_optimal(kind):
    return lambda instance: SolverOutput(WORSE[kind](instance), "optimal")


def _claims_infeasible(kind):
    return lambda instance: SolverOutput(None, "infeasible")


def _bound_beyond_the_optimum(kind):
    def method(instance):
        solution = WORSE[kind](instance)
        # its own objective as a "proven" bound: beyond the optimum when it is worse
        return SolverOutput(solution, "feasible", bound=fabricopt.evaluate(instance, solution))
    return method


def _correct_wrapper(kind):
    exact = KINDS[kind]

    def method(instance, *, time_limit=None, seed=0):
        r = fabricopt.solve(instance, exact, time_limit=time_limit, seed=seed)
        return SolverOutput(r.solution, r.status, r.bound)
    return method


BROKEN = {
    "ignores a constraint": (lambda kind: IGNORES_A_CONSTRAINT[kind], False,
                             r"solution is infeasible|returned an infeasible solution"),
    "claims optimal": (_claims_optimal, True, r"claimed optimal with objective .* proved"),
    "claims infeasible": (_claims_infeasible, False, r"reported infeasible .* found a solution"),
    "bound beyond the optimum": (_bound_beyond_the_optimum, False,
                                 r"bound .* is (above|below) the optimum"),
}


@pytest.mark.parametrize("how", sorted(BROKEN))
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_check_method_catches_a_broken_method(temporary_method, kind, how):
    make, exact, rule = BROKEN[how]
    temporary_method(kind, "broken", make(kind), exact=exact)
    with pytest.raises(MethodCheckError, match=rf"^{kind}/broken: .*({rule})"):
        check_method(kind, "broken", settings=NO_SHRINK)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_check_method_passes_a_correct_wrapper_of_the_exact_method(temporary_method, kind):
    temporary_method(kind, "wrapped", _correct_wrapper(kind), exact=True,
                     honours_time_limit=True)
    check_method(kind, "wrapped", settings=NO_SHRINK)
