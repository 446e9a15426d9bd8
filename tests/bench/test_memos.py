"""Every memo in the package is either emptied between timed calls or holds no answers."""

import ast
import importlib
from pathlib import Path

import numpy as np

import fabricopt
from fabricopt.bench.memos import ANSWER_MEMOS, CONSTANT_MEMO_MODULES, forget_answers

PACKAGE = Path(fabricopt.__file__).parent


def _memos_in_source() -> set[tuple[str, str]]:
    """(module, name) of each module-level OrderedDict and ``lru_cache``'d function."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        module = ".".join(("fabricopt",) + path.relative_to(PACKAGE).with_suffix("").parts)
        module = module.removesuffix(".__init__")
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                value = node.value
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if isinstance(value, ast.Call) and ast.unparse(value.func).endswith(
                        "OrderedDict"):
                    found |= {(module, t.id) for t in targets if isinstance(t, ast.Name)}
            elif isinstance(node, ast.FunctionDef) and any(
                    "lru_cache" in ast.unparse(d) or ast.unparse(d).endswith("cache")
                    for d in node.decorator_list):
                found.add((module, node.name))
    return found


def test_every_memo_is_emptied_or_declared_constant():
    unknown = {(m, n) for m, n in _memos_in_source()
               if n not in ANSWER_MEMOS.get(m, ()) and m not in CONSTANT_MEMO_MODULES}
    assert not unknown, f"memos neither emptied nor declared constant: {sorted(unknown)}"
    for module, names in ANSWER_MEMOS.items():
        for name in names:
            assert (module, name) in _memos_in_source(), (module, name)


def test_forgetting_empties_a_memo_that_a_call_filled():
    from fabricopt.algorithms import _matching
    from fabricopt.fabrics import models

    for module, names in ANSWER_MEMOS.items():
        importlib.import_module(module)
    _matching.max_weight_matching(4, [(0, 1), (1, 2), (2, 3)], [2, 3, 2])
    ring = models.SipRing(wavelengths=2, wavelength_gbps=8.0)
    ring.allocate(np.array([[0, 2e9, 0], [0, 0, 0], [0, 0, 0]]))
    assert _matching._max_weight_matching.cache_info().currsize > 0
    assert len(models._ring_results) > 0 and len(models._ring_instances) > 0
    forget_answers()
    assert _matching._max_weight_matching.cache_info().currsize == 0
    assert len(models._ring_results) == 0 and len(models._ring_instances) == 0
