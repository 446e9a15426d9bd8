"""Imports run one way (docs/api.rst): cli → benchmarks → fabrics → solvers →
formulations | heuristics → milp → problems; ``errors`` is importable from anywhere."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "fabricopt"

# package -> the fabricopt packages it may import
ALLOWED = {
    "problems": {"problems", "errors"},
    "milp": {"milp", "problems", "errors"},
    "formulations": {"formulations", "milp", "problems", "errors"},
    "heuristics": {"heuristics", "milp", "problems", "errors"},
    "solvers": {"solvers", "formulations", "heuristics", "milp", "problems", "errors"},
}


def _imported_packages(path: Path, package: str) -> set[str]:
    tree = ast.parse(path.read_text())
    found = set()
    depth = len(path.relative_to(PACKAGE).parts) - 1  # 1 for fabricopt/<pkg>/mod.py
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 0 and (node.module or "").startswith("fabricopt."):
                found.add(node.module.split(".")[1])
            elif node.level > 0:
                up = node.level - 1  # levels above this module's own package
                parts = path.relative_to(PACKAGE).parts[:-1]
                base = list(parts[:len(parts) - up]) if up <= depth else []
                target = base + (node.module.split(".") if node.module else [])
                if target:
                    found.add(target[0])
                else:
                    found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("fabricopt."):
                    found.add(alias.name.split(".")[1])
    return found


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_imports_run_one_way(package):
    for path in sorted((PACKAGE / package).rglob("*.py")):
        extra = _imported_packages(path, package) - ALLOWED[package]
        assert not extra, f"{path.relative_to(PACKAGE.parent)} imports {sorted(extra)}"
