"""The command's conventions: --version, generate KIND --help, -v logging, schema."""

import inspect
import io
import json
import sys

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
    trying = [i for i, line in enumerate(lines)
              if line.startswith("  elect-flat @ 100 Gbps: trying k=1 l=8 (1/1")]
    assert trying and lines[trying[-1] + 1].startswith("elect-flat @ 100 Gbps: ")
    assert "Columns: Gbps/GPU = " in out and "iteration ms = max(MP ms + AllReduce ms" in out
    md = prefix.with_suffix(".md").read_text()
    assert md.startswith(first) and "Columns: " in md


def _compare_json(capsys, tmp_path, monkeypatch, *args):
    monkeypatch.chdir(tmp_path)
    assert main(["compare", *args, "--json", "--quiet"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert list(tmp_path.iterdir()) == []  # --json writes files only with --out
    return rows


@pytest.mark.parametrize("args, title", [
    (["resnet50", "--gpus", "8", "--k", "1", "--bandwidths", "100,400",
      "--fabrics", "elect-flat,sip-ocs"], "op-graph row"),
    (["simai-micro", "--gpus", "8", "--fabrics", "elect-cluster,elect-flat"], "traffic row"),
])
def test_compare_json_validates_against_its_schema(capsys, tmp_path, monkeypatch, args, title):
    jsonschema = pytest.importorskip("jsonschema")
    from fabricopt.schemas import compare_schema

    rows = _compare_json(capsys, tmp_path, monkeypatch, *args)
    schema = compare_schema()
    jsonschema.Draft202012Validator(schema).validate(rows)
    assert len(rows) >= 2 and all(r["iteration_s"] > 0 for r in rows)
    # each row is exactly one of the two kinds of row
    kind = next(s for s in schema["items"]["oneOf"] if s["title"] == title)
    for row in rows:
        jsonschema.validate(row, kind)


def test_compare_json_schema_rejects_a_row_of_neither_kind():
    jsonschema = pytest.importorskip("jsonschema")
    from fabricopt.schemas import compare_schema

    row = {"workload": "w", "gpus": 8, "fabric": "f", "gbps": 100.0, "per_node_gbps": 100.0,
           "iteration_s": 1.0, "compute_s": 0.5, "cost_usd": 10.0, "note": ""}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate([row], compare_schema())
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate([row | {"k": 1, "l": 8, "mp_s": 0.1, "allreduce_s": 0.1,
                                    "fabric_s": 0.1, "mode": "serial"}], compare_schema())


def test_schema_compare_prints_the_compare_schema(capsys):
    assert main(["schema", "compare"]) == 0
    assert json.loads(capsys.readouterr().out)["title"] == "compare"
    assert main(["schema", "compare", "--result"]) == 2
    assert "--result: `schema compare` has no result schema" in capsys.readouterr().err


class _Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("args", [
    ["resnet50", "--k", "1", "--bandwidths", "100,400", "--fabrics", "elect-flat"],
    ["simai-micro", "--bandwidths", "100,400", "--fabrics", "elect-flat"],
])
def test_compare_progress_on_a_terminal_is_one_bar_with_an_eta(tmp_path, monkeypatch, capsys,
                                                               args):
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["compare", *args, "--gpus", "8", "--out", str(tmp_path / "c")]) == 0
    text = terminal.getvalue()
    frames = text.split("\r")
    assert "1/2 runs" in text and "2/2 runs" in frames[-1] and "ETA 0:00" in frames[-1]
    assert all("ETA" in f for f in frames[1:])
    assert "@ 400 Gbps:" in frames[-1]


def test_compare_progress_is_silent_with_quiet_on_a_terminal(tmp_path, monkeypatch):
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["compare", "resnet50", "--gpus", "8", "--k", "1", "--bandwidths", "100",
                 "--fabrics", "elect-flat", "--out", str(tmp_path / "c"), "--quiet"]) == 0
    assert "runs" not in terminal.getvalue()
