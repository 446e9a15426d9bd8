"""``solve``'s seed and time limit: validated once, NumPy scalars and generators
accepted, honoured by options that multiply work."""

import numpy as np
import pytest

from fabricopt.algorithms import wavelengths as heuristics
from fabricopt.cli import main
from fabricopt.errors import InvalidOption
from fabricopt.io import dump
from fabricopt.methods import get_method, methods, solve
from fabricopt.models import wavelengths as formulation
from fabricopt.milp import run_milp
from fabricopt.problems import generate, kinds
from fabricopt.bench.hostile.mutations import BASE_SIZES


@pytest.mark.parametrize("kind", kinds())
def test_a_negative_seed_is_refused_by_every_method_before_it_runs(kind):
    inst = generate(kind, seed=1, **BASE_SIZES[kind])
    for method in methods(kind):
        with pytest.raises(InvalidOption, match=r"^seed = -1: must be an integer >= 0 or a "
                                                r"numpy.random.Generator$"):
            solve(inst, method, seed=-1)


def test_a_negative_seed_on_the_command_line_is_exit_2(tmp_path, capsys):
    path = tmp_path / "w.json"
    dump(generate("wavelengths", seed=1, **BASE_SIZES["wavelengths"]), path)
    assert main(["solve", str(path), "--method", "greedy", "--seed", "-1"]) == 2
    assert capsys.readouterr().err == ("fabricopt: error: seed = -1: must be an integer >= 0 "
                                       "or a numpy.random.Generator\n")


@pytest.mark.parametrize("bad", [1.5, "3", True, None])
def test_a_seed_that_is_not_an_integer_is_refused(bad):
    inst = generate("circuits", seed=1, gpus=4)
    with pytest.raises(InvalidOption, match=r"^seed = .*: must be an integer >= 0"):
        solve(inst, "greedy", seed=bad)
    with pytest.raises(InvalidOption, match=r"^seed = .*: must be an integer >= 0"):
        generate("circuits", seed=bad, gpus=4)


def test_numpy_scalars_are_accepted_as_their_python_values():
    inst = generate("topology", seed=np.int64(1), **BASE_SIZES["topology"])
    assert inst == generate("topology", seed=1, **BASE_SIZES["topology"])
    a = solve(inst, "random-regular", seed=np.int64(3), time_limit=np.float32(5))
    b = solve(inst, "random-regular", seed=3, time_limit=5.0)
    assert a.status == b.status == "feasible" and a.solution == b.solution


@pytest.mark.parametrize("bad", [0, -1.0, np.float64("nan"), np.inf, "5", True])
def test_a_bad_time_limit_is_refused(bad):
    inst = generate("circuits", seed=1, gpus=4)
    with pytest.raises(InvalidOption, match=r"^time_limit = .*: must be a number > 0$"):
        solve(inst, "greedy", time_limit=bad)


def test_a_generator_seed_draws_an_integer_seed_from_it():
    inst = generate("topology", seed=1, **BASE_SIZES["topology"])
    a = solve(inst, "random-regular", seed=np.random.default_rng(7))
    b = solve(inst, "random-regular", seed=np.random.default_rng(7))
    drawn = int(np.random.default_rng(7).integers(0, 2 ** 63))
    assert a.solution == b.solution == solve(inst, "random-regular", seed=drawn).solution
    assert generate("circuits", seed=np.random.default_rng(2), gpus=4) == \
        generate("circuits", seed=np.random.default_rng(2), gpus=4)


def test_mcf_starts_no_rounding_past_its_deadline():
    inst = generate("wavelengths", seed=1, **BASE_SIZES["wavelengths"])
    flows = formulation.build_count(inst, integer=False)
    values = run_milp(flows.problem).values
    calls = []
    real = heuristics._round

    def counted(*args):
        calls.append(1)
        return real(*args)

    heuristics._round = counted
    try:
        sol = heuristics.mcf_schedule(inst, flows.decode(values), rounds=10 ** 9, deadline=0.0)
    finally:
        heuristics._round = real
    assert sol is not None and len(calls) == 1  # the one rounding that gave a schedule


def test_mcf_honours_the_time_limit_with_a_billion_rounds():
    inst = generate("wavelengths", seed=1, **BASE_SIZES["wavelengths"])
    result = solve(inst, "mcf", time_limit=0.5, rounds=10 ** 9)
    # it returns: at most one rounding past the limit (none if the LP used it all)
    assert result.status in ("feasible", "no_solution")
    assert get_method("wavelengths", "mcf").honours_time_limit
