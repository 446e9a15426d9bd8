"""The command's faults: ``solve --out`` targets, names with control characters."""

import json
import re

import pytest

import fabricopt.cli.solve
from fabricopt.cli import main
from fabricopt.errors import FabricError, InvalidInstance, printable
from fabricopt.io import dump, load
from fabricopt.problems import generate

EVIL = "op0/0\nfeasible: objective (min) 0\x1b[2K\r\u202e\0"
RAW = ("\n", "\r", "\x1b", "\0", "\u202e")


@pytest.fixture
def instance_file(tmp_path):
    path = tmp_path / "i.json"
    dump(generate("circuits", seed=1, gpus=4, switches=2), path)
    return path


def _never_solve(*args, **kwargs):
    raise AssertionError("solved before checking --out")


@pytest.mark.parametrize("out, rule", [
    ("missing/r.json", r"the folder \S*missing does not exist"),
    ("", r"it is a folder; name a file"),
])
def test_solve_out_is_checked_before_solving(instance_file, tmp_path, monkeypatch, capsys,
                                             out, rule):
    monkeypatch.setattr(fabricopt.cli.solve, "solve", _never_solve)
    assert main(["solve", str(instance_file), "--method", "greedy",
                 "--out", str(tmp_path / out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and re.search(rf"cannot write \({rule}\)", err), err


def test_solve_out_that_fails_after_solving_prints_the_envelope(instance_file, tmp_path,
                                                                monkeypatch, capsys):
    def full(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("fabricopt.io.os.replace", full)
    out = tmp_path / "r.json"
    assert main(["solve", str(instance_file), "--method", "greedy", "--out", str(out)]) == 2
    printed = capsys.readouterr()
    assert printed.err == (f"fabricopt: error: --out {out}: cannot write (No space left on "
                           f"device); the result envelope is on standard output instead\n")
    envelope = json.loads(printed.out.splitlines()[-1])
    assert envelope["status"] == "feasible" and envelope["solution"] is not None
    assert not out.exists() and [p.name for p in tmp_path.iterdir()] == ["i.json"]


def test_solve_out_writes_the_envelope(instance_file, tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["solve", str(instance_file), "--method", "greedy", "--out", str(out),
                 "--json"]) == 0
    assert load(out).to_dict() == json.loads(capsys.readouterr().out)


# -- control characters in names ------------------------------------------------------

def test_printable_escapes_what_a_terminal_acts_on():
    assert printable(EVIL) == ("op0/0\\nfeasible: objective (min) 0\\x1b[2K\\r\\u202e\\x00")
    assert printable("GPU é ü 中 ok") == "GPU é ü 中 ok"
    assert printable("\u2028\u200b\x7f\x85") == "\\u2028\\u200b\\x7f\\x85"


def test_every_fabric_error_message_is_one_printable_line():
    message = str(InvalidInstance(f"deps: contain the cycle {EVIL} -> b -> {EVIL}"))
    assert not any(ch in message for ch in RAW) and message.count("\\n") == 2
    assert str(FabricError("plain")) == "plain"


def _placement_with(tmp_path, name):
    inst = generate("placement", seed=1, ops=3, gpus=2).to_dict()
    text = json.dumps(inst).replace('"op0/0"', json.dumps(name))
    path = tmp_path / "p.json"
    path.write_text(text)
    return path, inst


def test_a_cycle_of_hostile_op_ids_is_one_escaped_line(tmp_path, capsys):
    inst = generate("placement", seed=1, ops=3, gpus=2).to_dict()
    first, second = inst["ops"][0]["id"], inst["ops"][-1]["id"]
    inst["deps"].append({"src": second, "dst": first, "bytes": 1.0})
    path = tmp_path / "cycle.json"
    path.write_text(json.dumps(inst).replace(json.dumps(first), json.dumps(EVIL)))
    assert main(["solve", str(path), "--method", "round-robin"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cycle" in err and not any(ch in err[:-1] for ch in RAW)


def test_a_hostile_op_id_never_prints_a_fake_line(tmp_path, capsys):
    path, _ = _placement_with(tmp_path, EVIL)
    assert main(["solve", str(path), "--method", "round-robin", "--out",
                 str(tmp_path / "r.json")]) == 0
    capsys.readouterr()
    envelope = json.loads((tmp_path / "r.json").read_text())
    envelope["solution"]["start_s"][EVIL] = -1.0
    (tmp_path / "bad.json").write_text(json.dumps(envelope))
    assert main(["check", str(path), str(tmp_path / "bad.json")]) == 1
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and out.startswith("infeasible: ") \
        and not any(ch in out[:-1] for ch in RAW), out


def test_argparse_errors_are_escaped(capsys):
    with pytest.raises(SystemExit) as info:
        main(["solve", "i.json", "--method", "greedy", "x\nfeasible"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err == "fabricopt: error: unrecognized arguments: x\\nfeasible\n", err


def test_generate_out_is_checked_before_generating(tmp_path, capsys):
    assert main(["generate", "circuits", "--out", str(tmp_path / "no" / "i.json")]) == 2
    assert "cannot write (the folder" in capsys.readouterr().err
    assert main(["generate", "circuits", "--gpus", "4", "--out", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["problem"] == "circuits"
