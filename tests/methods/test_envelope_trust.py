"""Envelopes read from files are checked for consistency and marked unverified until
re-checked against their instance; ``check`` takes the dicts ``solve`` takes."""

import pytest

from fabricopt.errors import InvalidSolution
from fabricopt.io import load
from fabricopt.methods import Result, solve
from fabricopt.problems import check, evaluate, generate


@pytest.fixture
def solved():
    inst = generate("circuits", seed=1, gpus=4, switches=2)
    return inst, solve(inst, "greedy")


def test_check_and_evaluate_take_the_dicts_solve_takes(solved):
    inst, result = solved
    as_dicts = (inst.to_dict(), result.solution.to_dict())
    assert check(*as_dicts) == check(inst, result.solution)
    assert evaluate(*as_dicts) == evaluate(inst, result.solution) == result.objective
    assert check(inst, as_dicts[1]).feasible and check(as_dicts[0], result.solution).feasible


def test_a_solved_result_is_verified_a_loaded_one_is_not_until_rechecked(solved):
    inst, result = solved
    loaded = load(result.to_dict())
    assert result.verified and not loaded.verified and loaded == result
    assert loaded.verify(inst).verified and loaded.verify(inst) == result


@pytest.mark.parametrize("forgery, match", [
    ({"gap": 0.5}, r"^gap = 0.5: must be 0.0, the gap of its objective and bound$"),
    ({"objective": 1e-9, "gap": None}, r"^bound = .*: lies on the wrong side of objective 1e-09$"),
    ({"status": "optimal", "bound": 1e-9, "gap": None},
     r"^status = 'optimal': claims optimal with a gap of"),
    ({"solution": None}, r"^status = 'feasible': needs a solution and an objective$"),
    ({"status": "no_solution"}, r"^objective = .*: must be null when the status is "
                                r"'no_solution'$"),
])
def test_an_inconsistent_envelope_is_refused(solved, forgery, match):
    _, result = solved
    with pytest.raises(InvalidSolution, match=match):
        Result.from_dict({**result.to_dict(), **forgery})


def test_a_consistent_forgery_fails_verification(solved):
    inst, result = solved
    half = result.objective / 2
    forged = Result.from_dict({**result.to_dict(), "objective": half, "bound": half,
                               "gap": 0.0, "status": "optimal"})
    assert not forged.verified
    with pytest.raises(InvalidSolution, match=rf"^objective = {half!r}: the solution "
                                              r"evaluates to"):
        forged.verify(inst)
    other = generate("topology", seed=1, servers=4, degree=2)
    with pytest.raises(InvalidSolution, match=r"^problem = 'circuits': the instance is "
                                              r"topology$"):
        result.verify(other)
