"""Plug-in methods: the decorator, entry-point discovery, ``FABRICOPT_PLUGINS``, and
broken plug-ins reported without breaking anything.

Distributions are faked by a ``*.dist-info`` folder (METADATA + entry_points.txt) on
``sys.path``, which ``importlib.metadata`` finds as it finds installed ones.
"""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import fabricopt
from fabricopt.methods import PluginWarning, registry

pytest_plugins = ["fabricopt.testing.pytest_plugin"]

ROOT = Path(__file__).resolve().parents[2]
INST = fabricopt.generate("circuits", seed=2, gpus=6, switches=3)

# A module of plug-in methods: a plain function, a decorated exact one, a decorated one.
METHODS_MODULE = '''
import numpy as np
import fabricopt
from fabricopt import SolverOutput
from fabricopt.algorithms.circuits import decompose, exact, require_feasible
from fabricopt.problems.circuits import CircuitsSolution


def ones(instance):
    """One circuit per demanded pair."""
    require_feasible(instance)
    return CircuitsSolution(decompose((instance.traffic > 0).astype(int), instance.switches))


def mine_exact(instance, *, time_limit=None, seed=0):
    """The exact method again, under another name."""
    return SolverOutput(exact(instance), "optimal")


@fabricopt.register_method("circuits", "decorated")
def decorated(instance):
    """Registered by its decorator."""
    return ones(instance)
'''


def make_dist(root: Path, name: str, version: str, entry_points: dict[str, str]) -> None:
    info = root / f"{name}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    lines = ["[fabricopt.methods]"] + [f"{k} = {v}" for k, v in entry_points.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")


@pytest.fixture
def plugin_dir(tmp_path, monkeypatch):
    """A sys.path folder with the plug-in module, and a registry that loads afresh."""
    module = f"fakeplug_{os.getpid()}_{abs(hash(tmp_path)) % 10**8}"
    (tmp_path / f"{module}.py").write_text(METHODS_MODULE)
    (tmp_path / f"{module}_reg.py").write_text(textwrap.dedent(f'''
        import fabricopt
        from {module} import mine_exact
        fabricopt.register_method("circuits", "mine-exact", mine_exact, exact=True)
    '''))
    (tmp_path / f"{module}_boom.py").write_text("raise RuntimeError('kaput at import')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("FABRICOPT_PLUGINS", raising=False)
    registry.all_methods()
    saved = dict(registry._METHODS)
    registry._loaded = False  # the next registry use discovers plug-ins again
    yield tmp_path, module
    registry._METHODS.clear()
    registry._METHODS.update(saved)
    registry._loaded = True
    for name in (module, f"{module}_reg", f"{module}_boom"):
        sys.modules.pop(name, None)


def test_decorator_registers_and_returns_the_function(temporary_method):
    from fabricopt.problems.circuits import CircuitsSolution

    @fabricopt.register_method("circuits", "everything-once")
    def solve_it(instance):
        """Docstring line becomes the summary."""
        return fabricopt.solve(instance, "exact").solution

    assert isinstance(solve_it(INST), CircuitsSolution)  # still a plain function
    record = registry.get_method("circuits", "everything-once")
    assert record.fn is solve_it and not record.exact
    assert record.summary == "Docstring line becomes the summary."
    assert record.source == __name__  # not "builtin": it is not fabricopt's
    assert fabricopt.solve(INST, "everything-once").status == "feasible"
    registry._METHODS.pop(("circuits", "everything-once"))


def test_function_entry_point_is_registered_under_its_name(plugin_dir):
    root, module = plugin_dir
    make_dist(root, "fakeplug", "0.1", {"circuits.ones": f"{module}:ones"})
    assert "ones" in fabricopt.methods("circuits")
    record = registry.get_method("circuits", "ones")
    assert record.source == "fakeplug 0.1" and not record.exact
    assert record.summary == "One circuit per demanded pair."
    result = fabricopt.solve(INST, "ones")
    assert result.status == "feasible" and fabricopt.check(INST, result.solution)


def test_module_entry_point_registers_what_it_declares(plugin_dir):
    root, module = plugin_dir
    make_dist(root, "fakeplug", "0.2", {"fakeplug": f"{module}_reg",
                                        "circuits.decorated": f"{module}:decorated"})
    exact = registry.get_method("circuits", "mine-exact")
    assert exact.exact and exact.source == "fakeplug 0.2"
    decorated = registry.get_method("circuits", "decorated")  # once, by its decorator
    assert decorated.source == "fakeplug 0.2"
    assert fabricopt.solve(INST, "mine-exact").status == "optimal"


@pytest.mark.parametrize("entry_points, error", [
    ({"circuits.nope": "{module}:nope"}, r"AttributeError: module '\w+' has no attribute 'nope'"),
    ({"circuits.boom": "{module}_boom"}, "RuntimeError: kaput at import"),
    ({"placement9.ones": "{module}:ones"}, "problem = 'placement9': unknown problem kind"),
    ({"ones": "{module}:ones"}, "entry point name 'ones' must be '<kind>.<method>'"),
    ({"circuits.exact": "{module}:ones"}, "method circuits/exact is already registered by builtin"),
    ({"circuits.x": "{module}:INST_NOT_THERE"}, "AttributeError"),
])
def test_broken_plugin_is_a_warning_naming_it(plugin_dir, entry_points, error):
    root, module = plugin_dir
    make_dist(root, "brokenplug", "2.0",
              {k: v.format(module=module) for k, v in entry_points.items()})
    make_dist(root, "goodplug", "1.0", {"circuits.ones": f"{module}:ones"})
    with pytest.warns(PluginWarning, match=r"plug-in brokenplug 2\.0 \(entry point .*\) failed"
                                           r".*" + error):
        names = fabricopt.methods("circuits")
    assert {"exact", "greedy", "milp", "ones"} <= set(names)  # the rest still loads
    assert registry.get_method("circuits", "exact").source == "builtin"  # never shadowed


def test_plugins_env_var_takes_modules_and_files(plugin_dir, monkeypatch):
    root, module = plugin_dir
    other = root / "sub" / "loose_method.py"
    other.parent.mkdir()
    other.write_text(textwrap.dedent('''
        import fabricopt
        from fabricopt.algorithms.circuits import greedy

        @fabricopt.register_method("circuits", "loose")
        def loose(instance):
            return greedy(instance)
    '''))
    monkeypatch.setenv("FABRICOPT_PLUGINS", os.pathsep.join([f"{module}_reg", str(other)]))
    try:
        assert {"mine-exact", "loose"} <= set(fabricopt.methods("circuits"))
        assert registry.get_method("circuits", "loose").source == str(other)
        assert fabricopt.solve(INST, "loose").status == "feasible"
    finally:
        sys.modules.pop("loose_method", None)


def test_plugins_env_var_missing_file_is_a_warning(plugin_dir, monkeypatch):
    monkeypatch.setenv("FABRICOPT_PLUGINS", "no/such/file.py")
    with pytest.warns(PluginWarning, match=r"plug-in no/such/file\.py .* InvalidArgument"):
        assert "exact" in fabricopt.methods("circuits")


def run_cli(args, root, stdin=None):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root), str(ROOT)]))
    env.pop("FABRICOPT_PLUGINS", None)
    return subprocess.run([sys.executable, "-m", "fabricopt", *args], input=stdin, env=env,
                          capture_output=True, text=True, cwd=ROOT, timeout=120)


def test_cli_lists_and_solves_with_plugins_despite_a_broken_one(plugin_dir):
    root, module = plugin_dir
    make_dist(root, "fakeplug", "0.1", {"circuits.ones": f"{module}:ones"})
    make_dist(root, "brokenplug", "2.0", {"circuits.nope": f"{module}:nope"})
    listing = run_cli(["methods", "circuits"], root)
    assert listing.returncode == 0, listing.stderr
    assert "ones            One circuit per demanded pair. [fakeplug 0.1]" in listing.stdout
    assert "PluginWarning: plug-in brokenplug 2.0" in listing.stderr
    assert "has no attribute 'nope'" in listing.stderr
    solved = run_cli(["solve", "-", "--method", "ones", "--json"], root,
                     stdin=fabricopt.dump(INST))
    assert solved.returncode == 0, solved.stderr
    result = fabricopt.Result.from_dict(__import__("json").loads(solved.stdout))
    assert result.method == "ones" and result.status == "feasible"


def test_import_fabricopt_loads_neither_plugins_nor_testing(plugin_dir):
    root, module = plugin_dir
    make_dist(root, "fakeplug", "0.1", {"circuits.ones": f"{module}:ones"})
    code = ("import sys, fabricopt; "
            "print(sorted(m for m in sys.modules if m.startswith(('fabricopt.testing', "
            f"'hypothesis', '{module}'))))")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root), str(ROOT)]))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, cwd=ROOT, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stderr
