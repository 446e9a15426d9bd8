"""fabricopt export: the MILP written as MPS / LP by HiGHS, read back, solved, mapped back."""

import json
import subprocess

import highspy
import pulp
import pytest

import fabricopt
from fabricopt import InvalidSolution, SolverUnavailable
from fabricopt.cli import main
from fabricopt.models.export import (EXPORTABLE, build_model, decode_values, model_arrays,
                                     portable_name, write_model)
from fabricopt.methods.milp_method import cbc_available, run_milp

from cli_helpers import run

SMALL = {"circuits": {"gpus": 5, "switches": 2},
         "priorities": {"jobs": 6, "levels": 2},
         "wavelengths": {"nodes": 4, "wavelengths": 2, "max_hops": 2},
         "topology": {"servers": 4, "degree": 2},
         "placement": {"ops": 5, "gpus": 2}}


def test_every_exportable_kind_has_a_small_case():
    assert {kind for kind, _ in EXPORTABLE} == set(SMALL)


def _solve_file(path):
    """HiGHS reads the file as a user's solver would and proves its optimum."""
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("mip_rel_gap", 0.0)
    h.setOptionValue("mip_abs_gap", 0.0)
    assert h.readModel(str(path)) == highspy.HighsStatus.kOk
    h.run()
    assert h.modelStatusToString(h.getModelStatus()) == "Optimal"
    return h


@pytest.mark.parametrize("suffix", [".mps", ".lp"])
@pytest.mark.parametrize("kind", sorted(SMALL))
@pytest.mark.parametrize("seed", [1, 2])
def test_the_file_has_the_models_optimum_and_decodes_to_an_optimal_solution(
        kind, seed, suffix, tmp_path):
    inst = fabricopt.generate(kind, seed=seed, **SMALL[kind])
    model = build_model(inst, "milp")
    in_process = run_milp(model.problem)
    assert in_process.status == "optimal"
    h = _solve_file(write_model(inst, tmp_path / f"model{suffix}"))
    arrays, rows = model_arrays(model.problem)
    assert h.getNumCol() == len(arrays.names)
    assert h.getNumRow() == len(rows)
    # minimization form: a maximized objective is written negated
    sign = -1.0 if arrays.maximize else 1.0
    assert h.getInfo().objective_function_value == pytest.approx(sign * in_process.objective,
                                                                 rel=1e-7, abs=1e-9)
    # the column names are the portable names of the formulation's variables (an LP
    # file lists them in order of appearance)
    assert sorted(h.getLp().col_names_) == sorted(portable_name(n) for n in arrays.names)
    h.writeSolution(str(tmp_path / "answer.sol"), 0)
    solution = decode_values(inst, tmp_path / "answer.sol")
    assert fabricopt.check(inst, solution).feasible
    truth = fabricopt.solve(inst, "milp")
    assert truth.status == "optimal"
    assert fabricopt.evaluate(inst, solution) == pytest.approx(truth.objective, rel=1e-6)


@pytest.mark.skipif(not cbc_available(), reason="PuLP's CBC binary is not installed")
@pytest.mark.parametrize("suffix", [".mps", ".lp"])
@pytest.mark.parametrize("kind", sorted(SMALL))
def test_cbc_solves_the_file_to_the_optimum_and_its_solution_decodes(kind, suffix, tmp_path):
    # CBC ignores OBJSENSE and reads only long LP section names: the file must not need them
    inst = fabricopt.generate(kind, seed=1, **SMALL[kind])
    path = write_model(inst, tmp_path / f"model{suffix}")
    answer = tmp_path / "cbc.sol"
    done = subprocess.run([pulp.PULP_CBC_CMD().path, str(path), "solve", "solu", str(answer)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert answer.read_text().startswith("Optimal")
    solution = decode_values(inst, answer)
    assert fabricopt.check(inst, solution).feasible
    truth = fabricopt.solve(inst, "milp")
    assert fabricopt.evaluate(inst, solution) == pytest.approx(truth.objective, rel=1e-6)


def test_portable_names_are_what_the_docs_say():
    assert portable_name("x_(0,_1,_2)") == "x_0_1_2"
    assert portable_name("x_(3,_0,_'ccw',_1)") == "x_3_0_ccw_1"
    assert portable_name("o_1_2") == "o_1_2"


def test_value_files_of_other_solvers_are_read(tmp_path):
    inst = fabricopt.generate("circuits", seed=1, **SMALL["circuits"])
    h = _solve_file(write_model(inst, tmp_path / "m.mps"))
    names = list(h.getLp().col_names_)
    col = list(h.getSolution().col_value)
    expected = decode_values(inst, dict(zip(names, col)))
    gurobi = "# Objective value = 2\n" + "".join(f"{n} {v:g}\n" for n, v in zip(names, col))
    scip = ("solution status: optimal solution found\nobjective value: 2\n"
            + "".join(f"{n}  {v:g} \t(obj:0)\n" for n, v in zip(names, col) if v > 0.5))
    cplex = ('<?xml version="1.0"?><CPLEXSolution><variables>'
             + "".join(f'<variable name="{n}" index="{k}" value="{v:g}"/>'
                       for k, (n, v) in enumerate(zip(names, col))) + "</variables>")
    for name, text in (("g.sol", gurobi), ("s.sol", scip), ("c.sol", cplex),
                       ("v.json", json.dumps(dict(zip(names, col))))):
        (tmp_path / name).write_text(text)
        assert decode_values(inst, tmp_path / name) == expected, name


def test_bad_values_and_methods_are_one_line_errors(tmp_path):
    inst = fabricopt.generate("circuits", seed=1, **SMALL["circuits"])
    with pytest.raises(InvalidSolution, match=r"^bogus: not a column of the circuits/milp"):
        decode_values(inst, {"bogus": 1.0})
    (tmp_path / "empty.sol").write_text("# nothing\n")
    with pytest.raises(InvalidSolution, match=r"holds no column values"):
        decode_values(inst, tmp_path / "empty.sol")
    with pytest.raises(SolverUnavailable, match=r"^method = 'greedy': circuits has no "
                                                r"exportable MILP"):
        write_model(inst, tmp_path / "m.lp", "greedy")
    with pytest.raises(ValueError, match=r"suffix must be \.mps or \.lp"):
        write_model(inst, tmp_path / "m.txt")
    with pytest.raises(ValueError, match=r"^circuits/milp: .*'bogus'"):
        write_model(inst, tmp_path / "m.lp", bogus=1)


def test_options_reach_the_formulation(tmp_path):
    inst = fabricopt.generate("circuits", seed=1, **SMALL["circuits"])
    plain = _solve_file(write_model(inst, tmp_path / "a.lp", symmetry_breaking=False))
    broken = _solve_file(write_model(inst, tmp_path / "b.lp"))
    assert plain.getNumRow() == broken.getNumRow() - (inst.switches - 1)
    assert plain.getInfo().objective_function_value == pytest.approx(
        broken.getInfo().objective_function_value)


def test_command_round_trip(tmp_path):
    inst = tmp_path / "i.json"
    assert main(["generate", "wavelengths", "--seed", "3", "--nodes", "4", "--wavelengths",
                 "2", "--max-hops", "2", "--out", str(inst)]) == 0
    code, out, err = run("export", str(inst), "--method", "milp", "--out",
                         str(tmp_path / "m.mps"))
    assert code == 0 and out == "" and "wrote" in err
    _solve_file(tmp_path / "m.mps").writeSolution(str(tmp_path / "a.sol"), 0)
    code, solution, err = run("export", str(inst), "--decode", str(tmp_path / "a.sol"))
    assert code == 0, err
    code, verdict, _ = run("check", str(inst), "-", "--json", stdin=solution)
    assert code == 0 and json.loads(verdict)["feasible"]
    code, _, err = run("export", str(inst), "--method", "mcf", "--out", str(tmp_path / "x.lp"))
    assert code == 2 and err.startswith("fabricopt: error: method = 'mcf'")
