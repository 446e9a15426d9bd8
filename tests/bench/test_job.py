"""fabricopt/bench/job.py: run identity, plug-ins, and what a run's process returns."""

import hashlib
import json
import re
import sys
from pathlib import Path

import pytest

import fabricopt
from fabricopt.bench import job
from fabricopt.bench.job import (RunSpec, execute, instance_hash, load_plugin, peak_rss_bytes,
                                 run_key)
from fabricopt.bench.runner import plan
from fabricopt.methods import registry

from .support import tiny_suite


def spec_for(method, *, gpus=4, seed=0, time_limit_s=10.0, plugins=()):
    [spec] = plan(tiny_suite((method,), seeds=(seed,), time_limit_s=time_limit_s, gpus=gpus),
                  plugins=plugins)
    return spec


def test_instance_hash_is_sha256_of_canonical_json():
    by_hand = hashlib.sha256(b'{"a":[1.0,2],"b":{"c":null}}').hexdigest()
    assert instance_hash({"b": {"c": None}, "a": [1.0, 2]}) == by_hand
    assert instance_hash({"a": [1.0, 2], "b": {"c": 0}}) != by_hand
    with pytest.raises(ValueError):  # NaN has no JSON: never hashed as "NaN"
        instance_hash({"a": float("nan")})


def test_run_key_changes_with_every_field_and_not_with_the_limits_type():
    base = ("s", "circuits/tiny/0", "h" * 64, "exact", 0, 10.0)
    key = run_key(*base)
    assert len(key) == 32 and int(key, 16) >= 0
    assert run_key(*base[:5], 10) == key  # --time-limit 10 and 10.0 are one run
    for k, other in enumerate(("t", "circuits/tiny/1", "g" * 64, "greedy", 1, 10.5)):
        assert run_key(*base[:k], other, *base[k + 1:]) != key


def test_spec_key_hard_limit_and_json_round_trip():
    spec = spec_for("exact", time_limit_s=20.0)
    assert spec.key == run_key(spec.suite, spec.instance_id, spec.instance_hash, spec.method,
                               spec.seed, spec.time_limit_s)
    assert spec.instance_hash == instance_hash(spec.instance)
    assert spec.hard_limit_s == pytest.approx(20.0 + 5.0 + 2.0)  # default grace 5 + 10 %
    assert RunSpec(**{**spec.to_dict(), "grace_s": 0.5}).hard_limit_s == 20.5
    text = json.dumps(spec.to_dict())   # plugins become a list in JSON ...
    again = RunSpec.from_dict(json.loads(text))
    assert again == spec and isinstance(again.plugins, tuple)  # ... and a tuple again


def test_execute_reports_the_envelope_of_solve():
    spec = spec_for("exact", gpus=5, seed=3)
    out = execute(spec)
    truth = fabricopt.solve(fabricopt.generate("circuits", seed=3, gpus=5, switches=2), "exact",
                            seed=3)
    assert out["status"] == truth.status == "optimal"
    assert out["objective"] == truth.objective and out["bound"] == truth.bound
    assert out["gap"] == 0.0 and out["message"] is None and out["runtime_s"] >= 0
    json.dumps(out, allow_nan=False)  # a store row: plain JSON


def test_execute_records_the_cpu_seconds_of_the_method(temporary_method):
    import time

    from fabricopt.algorithms.circuits import greedy

    def busy(instance, **_):
        start = time.process_time()
        while time.process_time() - start < 0.3:
            pass
        return greedy(instance)

    temporary_method("circuits", "busy", busy)
    out = execute(RunSpec(**{**spec_for("greedy").to_dict(), "method": "busy"}))
    assert out["status"] == "feasible"
    assert 0.3 <= out["info"]["cpu_s"] < 0.3 + 60.0


def test_execute_counts_the_cpu_seconds_of_a_solver_subprocess(temporary_method):
    import subprocess

    from fabricopt.algorithms.circuits import greedy

    child_cpu = []

    def shells_out(instance, **_):
        # a child that burns a fixed amount of work and reports its own CPU seconds
        code = ("import time\nx = 0\nfor i in range(3_000_000): x += i\n"
                "print(time.process_time())")
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              check=True)
        child_cpu.append(float(done.stdout))
        return greedy(instance)

    temporary_method("circuits", "shells-out", shells_out)
    out = execute(RunSpec(**{**spec_for("greedy").to_dict(), "method": "shells-out"}))
    assert out["status"] == "feasible" and child_cpu[0] > 0
    assert out["info"]["cpu_s"] >= child_cpu[0]


def test_execute_records_failures_instead_of_raising():
    out = execute(RunSpec(**{**spec_for("exact").to_dict(), "method": "nope"}))
    assert out["status"] == "error" and "SolverUnavailable" in out["message"]
    broken = RunSpec(**{**spec_for("exact").to_dict(), "plugins": ("no_such_module_xyz",)})
    out = execute(broken)
    assert out["status"] == "error" and "plugin = 'no_such_module_xyz'" in out["message"]
    assert out["objective"] is None and out["peak_rss_bytes"] > 0


@pytest.fixture
def registry_restored():
    """The method registry and sys.modules as they were, after the test."""
    registry.all_methods()  # built-ins first: they are not ours to undo
    saved, before = dict(registry._METHODS), set(sys.modules)
    yield
    registry._METHODS.clear()
    registry._METHODS.update(saved)
    for name in set(sys.modules) - before:
        if name.startswith("fabricopt_plugin_"):
            del sys.modules[name]


def test_load_plugin_file_runs_once_and_registers(tmp_path, registry_restored):
    path = tmp_path / "counting.py"
    path.write_text("import builtins\n"
                    "from fabricopt.algorithms.circuits import greedy\n"
                    "from fabricopt.methods import register_method\n"
                    "builtins.plugin_runs = getattr(builtins, 'plugin_runs', 0) + 1\n"
                    "register_method('circuits', 'plugged', lambda inst, **_: greedy(inst))\n")
    import builtins

    builtins.plugin_runs = 0
    try:
        load_plugin(str(path))
        load_plugin(str(path))
        assert builtins.plugin_runs == 1  # a second load is a no-op
    finally:
        del builtins.plugin_runs
    assert "plugged" in fabricopt.methods("circuits")
    # labelled by the file the user named, not by the hashed module it is imported as
    assert registry.get_method("circuits", "plugged").source == "counting.py"


def test_load_plugin_errors_name_the_reference(tmp_path, registry_restored):
    with pytest.raises(ValueError, match=r"plugin = '.*missing\.py': no such file"):
        load_plugin(str(tmp_path / "missing.py"))
    with pytest.raises(ValueError, match=r"plugin = 'no_such_module_xyz': cannot import"):
        load_plugin("no_such_module_xyz")
    bad = tmp_path / "raises.py"
    bad.write_text("raise RuntimeError('at import')\n")
    with pytest.raises(RuntimeError, match="at import"):
        load_plugin(str(bad))
    with pytest.raises(RuntimeError, match="at import"):  # not cached as loaded
        load_plugin(str(bad))


def test_peak_rss_is_the_kernels_high_water_mark_in_bytes():
    status = Path("/proc/self/status")
    if not status.exists():
        pytest.skip("needs Linux's /proc/self/status")
    hwm_bytes = int(re.search(r"VmHWM:\s+(\d+) kB", status.read_text()).group(1)) * 1024
    assert peak_rss_bytes() == pytest.approx(hwm_bytes, rel=0.02)  # bytes, not KiB


def test_job_main_writes_the_outcome(tmp_path):
    spec = spec_for("greedy", gpus=5)
    src, dst = tmp_path / "spec.json", tmp_path / "result.json"
    src.write_text(json.dumps(spec.to_dict()))
    assert job._main([str(src), str(dst)]) == 0
    out = json.loads(dst.read_text())
    assert out["status"] == "feasible" and out["objective"] == execute(spec)["objective"]
