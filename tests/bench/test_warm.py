"""fabricopt/bench/warm.py: every compiled kernel is loaded before a run's clock starts."""

import json
import subprocess
import sys

from fabricopt.bench import isolate

# In a fresh interpreter: warm every kind, then list each numba kernel of the package
# that Python calls (every public dispatcher in a module that imports numba; the private
# ones are compiled into them) with how many compiled signatures it holds.
_PROBE = r"""
import importlib, json, pathlib, pkgutil
import fabricopt
from numba.core.registry import CPUDispatcher
from fabricopt.bench.warm import warm_all

warm_all()
root = pathlib.Path(fabricopt.__file__).parent
found = {}
for info in pkgutil.walk_packages([str(root)], "fabricopt."):
    path = root.joinpath(*info.name.split(".")[1:])
    source = path / "__init__.py" if info.ispkg else path.with_suffix(".py")
    text = source.read_text()
    if "from numba" not in text and "import numba" not in text:
        continue
    module = importlib.import_module(info.name)
    for name, obj in vars(module).items():
        if (isinstance(obj, CPUDispatcher) and obj.__module__ == info.name
                and not name.startswith("_")):
            found[f"{info.name}.{name}"] = len(obj.signatures)
print(json.dumps(found))
"""


def test_warm_all_loads_every_compiled_kernel_of_the_package():
    done = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    kernels = json.loads(done.stdout)
    assert "fabricopt.problems._simkernel.run_component" in kernels
    # each compiled module of the package, named, so that a kernel left out of the
    # probe's walk (a module that stops importing numba by name) cannot go unnoticed
    assert {"fabricopt.fabrics._flows_kernel.run_groups",
            "fabricopt.fabrics._path_kernel.longest_path_s",
            "fabricopt.algorithms._first_fit_kernel.colour_line",
            "fabricopt.algorithms._eviction_kernel.best_eviction",
            "fabricopt.algorithms._repair_kernel.repair",
            "fabricopt.algorithms.topology._paths_kernel.shortest_paths",
            "fabricopt.algorithms.placement._schedule_kernel.list_schedule"} <= set(kernels)
    assert any(".placement." in name for name in kernels)
    cold = sorted(name for name, signatures in kernels.items() if not signatures)
    assert cold == [], f"not loaded by warm_all (add a call to WARM_UPS): {cold}"


def test_the_forkserver_warms_before_it_forks_a_run():
    assert "fabricopt.bench._warm_forkserver" in isolate._PRELOAD
