"""The ``fabricopt`` command: pipes, exit codes, one-line errors."""

import json

import pytest

from fabricopt.cli import main

from cli_helpers import run


def test_generate_pipe_solve_json_prints_envelope_only():
    code, inst, _ = run("generate", "circuits", "--seed", "3")
    assert code == 0
    code, out, err = run("solve", "-", "--method", "exact", "--json", stdin=inst)
    assert code == 0, err
    envelope = json.loads(out)  # nothing but the envelope on stdout
    assert envelope["status"] == "optimal" and envelope["problem"] == "circuits"


def test_solve_without_the_bound():
    code, inst, _ = run("generate", "circuits", "--seed", "3")
    code, out, err = run("solve", "-", "--method", "exact", "--no-bound", "--json", stdin=inst)
    assert code == 0, err
    envelope = json.loads(out)
    assert envelope["status"] == "feasible" and envelope["objective"] > 0
    assert (envelope["bound"], envelope["gap"], envelope["bound_source"]) == (None, None, None)
    assert envelope["info"]["bound"] == "not computed: solve(..., bound=False)"


def test_milp_json_stdout_has_no_highs_banner(tmp_path):
    path = tmp_path / "i.json"
    assert main(["generate", "circuits", "--seed", "1", "--gpus", "6", "--out", str(path)]) == 0
    code, out, err = run("solve", str(path), "--method", "milp", "--json")
    assert code == 0, err
    assert json.loads(out)["status"] == "optimal"


def test_check_accepts_envelope_and_bare_solution(tmp_path, capsys):
    inst = tmp_path / "i.json"
    res = tmp_path / "r.json"
    main(["generate", "circuits", "--seed", "2", "--gpus", "6", "--switches", "2", "--out", str(inst)])
    assert main(["solve", str(inst), "--method", "greedy", "--out", str(res)]) == 0
    capsys.readouterr()
    assert main(["check", str(inst), str(res), "--json"]) == 0
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["feasible"] and verdict["reason"] is None and verdict["objective"] > 0
    bare = tmp_path / "s.json"
    bare.write_text(json.dumps(json.loads(res.read_text())["solution"]))
    assert main(["check", str(inst), str(bare)]) == 0
    assert capsys.readouterr().out.startswith("feasible: objective (min)")
    empty = tmp_path / "e.json"
    n = len(json.loads(inst.read_text())["traffic_bytes"])
    empty.write_text(json.dumps({"configs": [[None] * n] * 2}))
    assert main(["check", str(inst), str(empty), "--json"]) == 1
    assert "has no circuit" in json.loads(capsys.readouterr().out)["reason"]


@pytest.mark.parametrize("content, message", [
    ('{"problem": "circuits", "switches": 2, "circuit_gbps": 1, "traffic_bytes": [[0, -5], [0, 0]]}',
     "traffic_bytes[0][1] = -5.0: must be >= 0"),
    ('{"problem": "circuits", "switches": 0, "circuit_gbps": 1, "traffic_bytes": [[0]]}',
     "switches = 0: must be >= 1"),
    ('{"problem": "nope"}', "problem = 'nope': unknown problem kind"),
    ("[1, 2", "not valid JSON"),
])
def test_bad_input_exits_2_with_one_line(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    code, out, err = run("solve", str(path), "--method", "exact")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_bad_solution_exits_2(tmp_path):
    inst = tmp_path / "i.json"
    main(["generate", "circuits", "--seed", "2", "--gpus", "4", "--switches", "2", "--out", str(inst)])
    sol = tmp_path / "s.json"
    sol.write_text('{"configs": [[9, null, null, null], [null, null, null, null]]}')
    code, _, err = run("check", str(inst), str(sol))
    assert code == 2 and "configs[0][0] = 9: unknown GPU" in err


@pytest.mark.parametrize("args, message", [
    (["solve", "x.json", "--method", "exact"], "x.json: cannot read"),
    (["generate", "circuits", "--colour", "3"], "--colour: not a size option of circuits"),
    (["generate", "circuits", "--gpus", "many"], "--gpus = 'many': must be a int"),
    (["methods", "nope"], "problem = 'nope': unknown problem kind"),
])
def test_usage_errors(args, message, capsys):
    assert main(args) == 2
    assert message in capsys.readouterr().err


def test_methods_lists_circuits(capsys):
    assert main(["methods", "circuits"]) == 0
    out = capsys.readouterr().out
    assert "exact" in out and "milp" in out and "greedy" in out


@pytest.mark.parametrize("method, option, expected", [
    ("topoopt", "mp_degree=3", "fabricopt: error: mp_degree = 3: must be <= 2 (degree = 4)"),
    ("milp", "foo=1", "fabricopt: error: foo = '1': not an option of method topology/milp "
                      "(options: backend, rel_gap, warm_start, max_ring_orders)"),
    ("topoopt", "paths=many", "fabricopt: error: paths = 'many': must be an integer"),
    ("milp", "warm-start=maybe", "fabricopt: error: warm_start = 'maybe': must be true or false"),
])
def test_bad_options_exit_2_with_one_line(tmp_path, capsys, method, option, expected):
    path = tmp_path / "t.json"
    assert main(["generate", "topology", "--seed", "0", "--servers", "8", "--degree", "4",
                 "--out", str(path)]) == 0
    capsys.readouterr()
    assert main(["solve", str(path), "--method", method, "--option", option]) == 2
    err = capsys.readouterr().err
    assert err == expected + "\n"


def test_options_are_parsed_by_their_declared_type(tmp_path, capsys):
    path = tmp_path / "t.json"
    assert main(["generate", "topology", "--seed", "0", "--servers", "8", "--degree", "4",
                 "--out", str(path)]) == 0
    assert main(["solve", str(path), "--method", "topoopt", "--option", "mp_degree=none",
                 "--option", "paths=2", "--json"]) == 0


def test_methods_lists_each_methods_options(capsys):
    assert main(["methods", "placement"]) == 0
    out = capsys.readouterr().out
    assert "--option symmetry_breaking=weak  (one of true, false, weak)" in out
    assert "--option restarts=20  (int) perturbation restarts of the local search" in out
    assert "[exact, honours time limit]" in out


def test_unknown_generator_size_is_an_input_error():
    import fabricopt

    with pytest.raises(fabricopt.InvalidOption, match="bogus: not a size option"):
        fabricopt.generate("circuits", bogus=3)


def test_a_reader_that_goes_away_ends_the_command_quietly():
    # ``fabricopt schema KIND | head -1`` after head exited: every write fails with EPIPE.
    import os
    import subprocess
    import sys

    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run([sys.executable, "-m", "fabricopt", "schema", "circuits"],
                              stdout=write_end, stderr=subprocess.PIPE, timeout=120)
    finally:
        os.close(write_end)
    assert proc.returncode == 141, proc.stderr.decode()
    assert proc.stderr == b""
