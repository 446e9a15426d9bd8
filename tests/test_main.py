"""``python -m fabricopt`` (fabricopt/__main__.py) exits with the code ``cli.main`` returns."""

import json
import sys
from pathlib import Path

import pytest

from fabricopt.cli import main

from cli_helpers import run


def run_module(args, monkeypatch):
    """Run fabricopt.__main__ in this process as ``python -m`` would; its exit code."""
    monkeypatch.setattr(sys, "argv", ["fabricopt", *args])
    # The file's code, run as the package's __main__: when fabricopt is installed with
    # its pytest11 plug-in, pytest's assertion-rewriting import hook is the package's
    # loader, and runpy.run_module cannot take code from it.
    import fabricopt

    path = Path(fabricopt.__file__).with_name("__main__.py")
    code = compile(path.read_text(), str(path), "exec")
    with pytest.raises(SystemExit) as exit_:
        exec(code, {"__name__": "__main__", "__package__": "fabricopt", "__file__": str(path)})
    return exit_.value.code


@pytest.fixture
def files(tmp_path):
    """An instance, an infeasible solution of it and a malformed instance."""
    inst = tmp_path / "i.json"
    assert main(["generate", "circuits", "--seed", "1", "--gpus", "4", "--switches", "2",
                 "--out", str(inst)]) == 0
    unused = tmp_path / "unused.json"
    unused.write_text(json.dumps({"configs": [[None] * 4] * 2}))
    bad = tmp_path / "bad.json"
    bad.write_text('{"problem": "circuits", "switches": 0, "circuit_gbps": 1, '
                   '"traffic_bytes": [[0]]}')
    return {"inst": str(inst), "unused": str(unused), "bad": str(bad)}


# (arguments, the exit code main() returns for them): 0 success, 1 infeasible, 2 bad input.
CASES = [
    (["methods", "circuits"], 0),
    (["check", "{inst}", "{unused}"], 1),
    (["solve", "{bad}", "--method", "exact"], 2),
    (["methods", "no-such-kind"], 2),
]


def fill(args, files):
    return [a.format(**files) for a in args]


@pytest.mark.parametrize("args, code", CASES)
def test_module_exits_with_mains_return_value(args, code, files, monkeypatch, capsys):
    args = fill(args, files)
    assert main(args) == code  # the truth, in process
    capsys.readouterr()
    assert run_module(args, monkeypatch) == code


def test_python_dash_m_exits_with_mains_code(files):
    # A real interpreter: __main__ passes main()'s code to sys.exit, stdout carries
    # main's output only, a bad instance is one line on stderr.
    for args, code in CASES[1:3]:
        returncode, out, err = run(*fill(args, files))
        assert returncode == code, err
    assert out == "" and err == "fabricopt: error: switches = 0: must be >= 1\n"


def test_usage_errors_exit_2_without_a_traceback(monkeypatch, capsys):
    # argparse's own exit (no subcommand, unknown option) goes through _Parser.error.
    for args in ([], ["solve"], ["methods", "--nope"]):
        assert run_module(args, monkeypatch) == 2
        err = capsys.readouterr().err
        assert err.startswith("fabricopt: error: ") and "Traceback" not in err
