"""The command's conventions: --version, generate KIND --help, -v logging, schema."""

import inspect
import json

import pytest

import fabricopt
from fabricopt.cli import main
from fabricopt.problems import get_kind, kinds
from fabricopt.schemas import schema

from cli_helpers import run


def test_version_is_the_package_version():
    code, out, _ = run("--version")
    assert code == 0 and out.strip() == f"fabricopt {fabricopt.__version__}"


@pytest.mark.parametrize("kind", kinds())
def test_generate_kind_help_lists_every_size_option(kind, capsys):
    assert main(["generate", kind, "--help"]) == 0
    out = capsys.readouterr().out
    params = [p for p in inspect.signature(get_kind(kind).generate).parameters.values()
              if p.name != "seed"]
    assert params
    for p in params:
        assert f"--{p.name.replace('_', '-')} " in out, p.name
        if p.default is not None:
            assert f"(default {p.default!r})" in out
    assert "--seed N" in out and "--out FILE" in out


def test_generate_help_without_a_kind_names_each_kinds_options(capsys):
    assert main(["generate", "--help"]) == 0
    out = capsys.readouterr().out
    assert "circuits: --gpus, --switches" in out and "topology: --servers, --degree" in out


def test_generate_without_a_kind_is_a_one_line_error(capsys):
    assert main(["generate"]) == 2
    assert capsys.readouterr().err.startswith("fabricopt: error: generate: a problem kind")


def test_verbose_logs_on_stderr_and_keeps_json_stdout_clean(tmp_path):
    path = tmp_path / "i.json"
    assert main(["generate", "circuits", "--gpus", "6", "--out", str(path)]) == 0
    for argv in (["-v", "solve", str(path), "--method", "exact", "--json"],
                 ["solve", str(path), "--method", "exact", "--json", "--verbose"]):
        code, out, err = run(*argv)
        assert code == 0, err
        assert json.loads(out)["status"] == "optimal"
        assert "INFO: fabricopt.methods.solve: solving a circuits instance with exact" in err
        assert "DEBUG" not in err
    code, out, err = run("solve", str(path), "--method", "exact", "--json")
    assert code == 0 and err == ""


def test_double_verbose_shows_debug_records(tmp_path):
    (tmp_path / "s.toml").write_text('[[rows]]\nkind = "circuits"\nname = "t"\n'
                                     'sizes = {gpus = 4}\nseeds = [0]\nmethods = ["greedy"]\n')
    code, _, err = run("-vv", "bench", "--suite", str(tmp_path / "s.toml"), "--out",
                       str(tmp_path / "out"), "--no-plots", "--no-progress", "--workers", "1")
    assert code == 0, err
    assert "DEBUG: fabricopt.bench.runner: run circuits/t/0 greedy: feasible" in err


@pytest.mark.parametrize("which", ["instance", "solution", "result"])
def test_schema_prints_the_shipped_schema(which, capsys):
    flags = [] if which == "instance" else [f"--{which}"]
    assert main(["schema", "topology", *flags]) == 0
    assert json.loads(capsys.readouterr().out) == schema("topology", which)


def test_schema_of_an_unknown_kind_is_a_one_line_error(capsys):
    assert main(["schema", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fabricopt: error: problem = 'nope': unknown problem kind")
    assert len(err.splitlines()) == 1


def test_compare_prints_its_parameters_explains_columns_and_reports_progress(tmp_path):
    prefix = tmp_path / "cmp"
    code, out, err = run("compare", "resnet50", "--gpus", "8", "--bandwidths", "100,400",
                         "--fabrics", "elect-flat", "--k", "1", "--out", str(prefix))
    assert code == 0, err
    first = err.splitlines()[0]
    assert first.startswith("parameters: fabricopt compare resnet50 --gpus 8 ")
    for given in ("--bandwidths 100,400", "--fabrics elect-flat", "--k 1"):
        assert f" {given} " in first
    assert "--switches 16" in first and "--seed 0" in first  # defaults are shown too
    assert "--nic-GBps" not in first  # an option only SimAI workloads read
    # progress inside a point comes before the point's result line
    lines = err.splitlines()
    trying = lines.index("  elect-flat @ 100 Gbps: trying k=1 l=8 (1/1)")
    assert lines[trying + 1].startswith("elect-flat @ 100 Gbps: ")
    assert "Columns: Gbps/GPU = " in out and "iteration ms = max(MP ms + AllReduce ms" in out
    md = prefix.with_suffix(".md").read_text()
    assert md.startswith(first) and "Columns: " in md
