"""Imports run one way (docs/api.rst), for every package and top-level module:

``cli → bench → {fabrics, testing} → io → methods → algorithms → models → bounds → milp →
problems → errors``; ``schemas`` sits beside ``problems``.
"""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "fabricopt"

_ORDER = ["_version", "errors", "problems", "schemas", "milp", "bounds", "models", "algorithms", "methods",
          "io"]
# package -> the fabricopt packages it may import
ALLOWED = {name: set(_ORDER[:i + 1]) for i, name in enumerate(_ORDER)}
ALLOWED["schemas"] = {"schemas", "problems", "errors"}
ALLOWED["milp"] = {"milp", "problems", "errors"}
ALLOWED["fabrics"] = set(_ORDER) | {"fabrics"}
ALLOWED["testing"] = set(_ORDER) | {"testing"}
ALLOWED["bench"] = set(_ORDER) | {"fabrics", "testing", "bench", "fabricopt"}
ALLOWED["cli"] = set(_ORDER) | {"fabrics", "testing", "bench", "cli", "fabricopt"}
ALLOWED["__main__"] = {"cli"}


def _unit(path: Path) -> str:
    """The package (or top-level module) a file belongs to."""
    rel = path.relative_to(PACKAGE)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def _imported_units(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}: relative import (use fabricopt.…)"
            module = node.module or ""
            if module == "fabricopt":
                found.update(alias.name for alias in node.names)
            elif module.startswith("fabricopt."):
                found.add(module.split(".")[1])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("fabricopt."):
                    found.add(alias.name.split(".")[1])
                elif alias.name == "fabricopt":
                    found.add("fabricopt")
    return found


def _units():
    return sorted({_unit(p) for p in PACKAGE.rglob("*.py")} - {"__init__"})


def test_every_unit_has_a_rule():
    assert set(_units()) <= set(ALLOWED), sorted(set(_units()) - set(ALLOWED))


@pytest.mark.parametrize("unit", _units())
def test_imports_run_one_way(unit):
    paths = sorted((PACKAGE / unit).rglob("*.py")) if (PACKAGE / unit).is_dir() \
        else [PACKAGE / f"{unit}.py"]
    for path in paths:
        extra = _imported_units(path) - ALLOWED[unit]
        assert not extra, f"{path.relative_to(PACKAGE.parent)} imports {sorted(extra)}"


def test_the_top_level_init_only_reexports():
    tree = ast.parse((PACKAGE / "__init__.py").read_text())
    logic = [type(node).__name__ for node in tree.body
             if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))]
    assert not logic
