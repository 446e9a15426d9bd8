"""Known hostile inputs: each hostile input ends in one line and exit 2 (or a
finite checked answer), never a traceback."""

import json
import math
import re

import pytest

import fabricopt
import fabricopt.io
from fabricopt.cli import main
from fabricopt.errors import InvalidInstance, InvalidSolution
from fabricopt.problems import kinds, limits
from fabricopt.problems.limits import LIMITS
from fabricopt.bench.hostile.mutations import FAST_METHODS, base

from cli_helpers import run

pytest_plugins = ["fabricopt.testing.pytest_plugin"]


def _one_line_exit_2(argv, capsys, match=""):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and match in err, err
    return err


# -- 1. files ----------------------------------------------------------------------------

def _instance_text(kind):
    return json.dumps(base(kind)[0])


HOSTILE_FILES = {
    "deep nesting": lambda kind: b"[" * 100_000 + b"]" * 100_000,
    "deep inside a field": lambda kind: _instance_text(kind).replace(
        '"problem"', '"x": ' + "[" * 100_000 + "]" * 100_000 + ', "problem"', 1).encode(),
    "utf-16": lambda kind: _instance_text(kind).encode("utf-16"),
    "latin-1 byte": lambda kind: _instance_text(kind).replace('"problem"', '"pr\u00e9blem"')
    .encode("latin-1"),
    "5000-digit integer": lambda kind: _instance_text(kind).replace(
        '"problem"', '"x": ' + "9" * 5000 + ', "problem"', 1).encode(),
}


@pytest.mark.parametrize("kind", kinds())
@pytest.mark.parametrize("what", HOSTILE_FILES)
def test_hostile_files_are_invalid_instances_in_one_line(kind, what, tmp_path, capsys):
    path = tmp_path / "bad.json"
    path.write_bytes(HOSTILE_FILES[what](kind))
    with pytest.raises(InvalidInstance) as info:
        fabricopt.load(path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)
    _one_line_exit_2(["solve", str(path), "--method", "x"], capsys, str(path))


def test_hostile_files_through_a_real_interpreter(tmp_path):
    for what in ("deep nesting", "utf-16", "5000-digit integer"):
        path = tmp_path / "bad.json"
        path.write_bytes(HOSTILE_FILES[what]("circuits"))
        code, out, err = run("check", str(path), str(path))
        assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    code, _, err = run("solve", "-", "--method", "greedy", stdin=None)
    assert code == 2 and "<stdin>" in err


def test_a_utf8_byte_order_mark_is_accepted(tmp_path):
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + _instance_text("circuits").encode())
    assert fabricopt.load(path).gpus == 4


def test_an_integer_of_300_digits_is_still_json(tmp_path):
    path = tmp_path / "big.json"
    path.write_text("[" + "9" * 300 + "]")
    assert fabricopt.io.read_json(path) == [10 ** 300 - 1]


# -- 6. short messages -------------------------------------------------------------------

def test_a_huge_value_is_echoed_cut_to_60_characters_with_its_length(tmp_path, capsys):
    data = base("circuits")[0]
    data["circuit_gbps"] = "y" * 5_000_000
    path = tmp_path / "big.json"
    path.write_text(json.dumps(data))
    err = _one_line_exit_2(["solve", str(path), "--method", "greedy"], capsys)
    assert len(err) < 200 and "… (5000000 characters)" in err and "circuit_gbps = 'yyy" in err


@pytest.mark.parametrize("make, shown", [
    (lambda: list(range(10 ** 5)), "...] (100000 entries)"),
    (lambda: 10 ** 5000, "<an integer of ~5001 digits>"),
    (lambda: {"k" * 500: 1}, "…"),
], ids=["list", "int", "dict"])
def test_containers_and_huge_integers_are_cut_too(make, shown):
    data = base("priorities")[0]
    data["jobs"][0]["intensity"] = make()
    with pytest.raises(InvalidInstance) as info:
        fabricopt.problems.instance_from_dict(data)
    assert shown in str(info.value) and len(str(info.value)) < 200


def test_an_unknown_field_named_by_a_huge_key_is_cut():
    data = base("circuits")[0]
    data["z" * 100_000] = 1
    with pytest.raises(InvalidInstance, match="unknown field") as info:
        fabricopt.problems.instance_from_dict(data)
    assert len(str(info.value)) < 300


# -- 3. sizes ----------------------------------------------------------------------------

def _set(data, field, value):
    node, keys = data, field.replace("[0]", ".0").split(".")
    for key in keys[:-1]:
        node = node[int(key) if key.isdigit() else key]
    node[keys[-1]] = value
    return data


@pytest.mark.parametrize("kind, field", list(LIMITS))
def test_every_count_has_a_documented_maximum(kind, field, capsys, tmp_path):
    most = LIMITS[kind, field]
    assert f"{most:,}" in limits.__doc__ or "2**24" in limits.__doc__
    for value in (most + 1, 2 ** 70, 1e9):
        data = _set(base(kind)[0], field, value)
        with pytest.raises(InvalidInstance, match=rf"^{re.escape(field)} = .*must be <= {most}"):
            fabricopt.problems.instance_from_dict(data)
    path = tmp_path / "i.json"
    path.write_text(json.dumps(_set(base(kind)[0], field, 2 ** 70)))
    _one_line_exit_2(["solve", str(path), "--method", FAST_METHODS[kind]], capsys, field)


@pytest.mark.parametrize("kind, field", list(LIMITS))
def test_at_the_maximum_the_fast_method_still_answers(kind, field):
    data = _set(base(kind)[0], field, LIMITS[kind, field])
    result = fabricopt.solve(data, FAST_METHODS[kind])
    assert result.success and math.isfinite(result.objective)


# -- 2. magnitudes -----------------------------------------------------------------------

MAGNITUDES = [  # (kind, field to set, value, field the message must name)
    ("circuits", "circuit_gbps", 5e-324, "circuit_gbps"),
    ("circuits", "circuit_gbps", 1e300, "circuit_gbps"),
    ("circuits", "traffic_bytes.0.1", 1e308, "traffic_bytes[0][1]"),
    ("wavelengths", "traffic_bytes.0.1", 1e308, "traffic_bytes[0][1]"),
    ("wavelengths", "wavelength_gbps", 5e-324, "wavelength_gbps"),
    ("topology", "allreduce.0.bytes", 1e308, "allreduce[0].bytes"),
    ("topology", "link_gbps", 5e-324, "link_gbps"),
    ("placement", "deps.0.bytes", 1e308, "deps[0].bytes"),
    ("placement", "ops.0.compute_s", 1e308, "ops[0].compute_s"),
    ("placement", "link_gbps", 5e-324, "link_gbps"),
    ("priorities", "jobs.0.intensity", 1e308, "jobs[0].intensity"),
    ("crux", "jobs.0.compute_s", 1e308, "jobs[0].compute_s"),
    ("crux", "jobs.0.flows.0.bytes", 1e308, "jobs[0].flows[0].bytes"),
    ("crux", "window_s", 1e308, "window_s"),
    ("crux", "warmup_s", 1e308, "warmup_s"),
]


def _set_path(data, path, value):
    keys = [int(k) if k.isdigit() else k for k in path.split(".")]
    node = data
    for key in keys[:-1]:
        node = node[key]
    node[keys[-1]] = value
    return data


@pytest.mark.parametrize("kind, path, value, field", MAGNITUDES)
def test_a_value_whose_derived_times_overflow_is_rejected_naming_it(kind, path, value, field,
                                                                    tmp_path, capsys):
    data = _set_path(base(kind)[0], path, value)
    with pytest.raises(InvalidInstance, match=rf"^{re.escape(field)} = "):
        fabricopt.problems.instance_from_dict(data)
    file = tmp_path / "i.json"
    file.write_text(json.dumps(data))
    _one_line_exit_2(["solve", str(file), "--method", FAST_METHODS[kind]], capsys, field)


@pytest.mark.parametrize("kind, path, value", [
    ("circuits", "traffic_bytes.0.1", 1e290), ("wavelengths", "traffic_bytes.0.1", 1e290),
    ("topology", "allreduce.0.bytes", 1e280), ("placement", "deps.0.bytes", 1e290),
    ("priorities", "jobs.0.intensity", 1e290), ("circuits", "circuit_gbps", 1e-200),
])
def test_large_but_representable_values_solve_to_finite_answers(kind, path, value):
    inst = fabricopt.problems.instance_from_dict(_set_path(base(kind)[0], path, value))
    result = fabricopt.solve(inst, FAST_METHODS[kind])
    assert result.success and math.isfinite(result.objective)
    assert result.bound is None or math.isfinite(result.bound)
    assert fabricopt.check(inst, result.solution).feasible
    json.dumps(result.to_dict(), allow_nan=False)  # the CLI can print it


def test_crux_simulation_span_is_capped_naming_the_ratio():
    from fabricopt.problems.crux import MAX_SIMULATED_ITERATIONS

    data = base("crux")[0]
    data["jobs"][0]["compute_s"] *= 1e4  # a 22-second case
    with pytest.raises(InvalidInstance, match=r"^jobs\[1\]\.compute_s = .*ratio .*exceeds "
                                              + f"{MAX_SIMULATED_ITERATIONS:,}"):
        fabricopt.problems.instance_from_dict(data)
    data = base("crux")[0]
    data["jobs"][0]["compute_s"] = 2 ** 70
    with pytest.raises(InvalidInstance, match=r"^jobs\[1\]\.compute_s = .*ratio"):
        fabricopt.problems.instance_from_dict(data)


# -- 4. solutions ------------------------------------------------------------------------

SOLUTION_INTS = [  # (kind, path in the solution, field the message names)
    ("topology", "links.0.2", "links[0][2]"),
    ("topology", "links.0.0", "links[0][0]"),
    ("placement", "gpu.op0/0", None),
    ("wavelengths", "lightpaths.0.src", "lightpaths[0].src"),
    ("wavelengths", "lightpaths.0.dst", "lightpaths[0].dst"),
    ("wavelengths", "lightpaths.0.wavelength", "lightpaths[0].wavelength"),
    ("circuits", "configs.0.0", "configs[0][0]"),
    ("priorities", "level.j0", "level['j0']"),
]


def _solution_set(kind, path, value):
    solution = base(kind)[1]
    keys = [int(k) if k.isdigit() else k for k in path.split(".")]
    node = solution
    for key in keys[:-1]:
        node = node[key]
    if keys[-1] not in node and isinstance(node, dict):  # an op id: take the first key
        keys[-1] = next(iter(node))
    node[keys[-1]] = value
    return solution


@pytest.mark.parametrize("kind, path, field", SOLUTION_INTS)
@pytest.mark.parametrize("value", [2 ** 63, 2 ** 64 + 1, 10 ** 30, 2 ** 31])
def test_huge_integers_in_solutions_are_invalid_solutions_exit_2(kind, path, field, value,
                                                                 tmp_path, capsys):
    inst, sol = tmp_path / "i.json", tmp_path / "s.json"
    inst.write_text(json.dumps(base(kind)[0]))
    sol.write_text(json.dumps(_solution_set(kind, path, value)))
    with pytest.raises(InvalidSolution) as info:
        fabricopt.check(fabricopt.load(inst), fabricopt.load_solution(sol, kind))
    assert field is None or str(info.value).startswith(field)
    _one_line_exit_2(["check", str(inst), str(sol)], capsys)


def test_link_counts_cannot_wrap_around_the_degree_check():
    # four links of 2**62 at server 0 would sum to 2**64 = 0 in int64
    data = base("topology")[0]
    data["degree"] = 1
    sol = {"links": [[0, j, 2 ** 30] for j in (1, 2, 3)], "rings": [], "routes": []}
    inst = fabricopt.problems.instance_from_dict(data)
    verdict = fabricopt.check(inst, fabricopt.problems.solution_from_dict("topology", sol))
    assert not verdict.feasible and "interfaces" in verdict.reason


# -- 5. result envelopes -----------------------------------------------------------------

@pytest.mark.parametrize("key, value, message", [
    ("runtime_s", None, "runtime_s = None: must be a number"),
    ("runtime_s", [1], "runtime_s = [1]: must be a number"),
    ("runtime_s", {"a": 1}, "runtime_s = {'a': 1}: must be a number"),
    ("runtime_s", "x", "runtime_s = 'x': must be a number"),
    ("runtime_s", -1.0, "runtime_s = -1.0: must be >= 0"),
    ("runtime_s", 10 ** 400, "runtime_s = <an integer of 401 digits>: must be finite"),
    ("info", 7, "info = 7: must be an object or null"),
    ("info", [1, 2], "info = [1, 2]: must be an object or null"),
    ("status", "great", "status = 'great': must be one of"),
    ("status", ["feasible"], "status = ['feasible']: must be one of"),
    ("sense", "max", "sense = 'max': must be 'min' for circuits"),
    ("objective", "1", "objective = '1': must be a number"),
    ("bound", True, "bound = True: must be a number"),
    ("gap", float("nan"), "gap = nan: must be finite"),
    ("method", 3, "method = 3: must be a non-empty string"),
    ("solution", [1], "solution = [1]: must be an object or null"),
])
def test_result_envelope_is_validated_naming_the_field(key, value, message):
    from fabricopt.methods import Result

    envelope = base("circuits")[2]
    envelope[key] = value
    with pytest.raises(InvalidSolution) as info:
        Result.from_dict(envelope)
    assert str(info.value).startswith(message)


def test_a_valid_envelope_round_trips_and_unknown_fields_are_ignored():
    from fabricopt.methods import Result

    envelope = base("circuits")[2]
    result = Result.from_dict({**envelope, "from_a_later_version": 1})
    assert result.to_dict() == envelope


def test_a_bad_envelope_in_check_is_one_line_exit_2(tmp_path, capsys):
    envelope = base("circuits")[2]
    envelope["runtime_s"] = None
    inst, res = tmp_path / "i.json", tmp_path / "r.json"
    inst.write_text(json.dumps(base("circuits")[0]))
    res.write_text(json.dumps(envelope))
    _one_line_exit_2(["check", str(inst), str(res)], capsys, "runtime_s = None")
    _one_line_exit_2(["solve", str(res), "--method", "greedy"], capsys, "runtime_s = None")


@pytest.mark.parametrize("claimed", [float("nan"), float("-inf"), float("inf")])
def test_solve_never_returns_a_non_finite_bound(claimed, temporary_method):
    from fabricopt.algorithms.circuits import greedy

    temporary_method("circuits", "odd-bound",
                     lambda inst, **_: fabricopt.SolverOutput(greedy(inst), "feasible", claimed))
    result = fabricopt.solve(base("circuits")[0], "odd-bound")
    assert result.status == "feasible" and math.isfinite(result.bound)
