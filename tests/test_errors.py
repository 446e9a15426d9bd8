"""One error tree: every exception fabricopt raises on purpose derives from FabricError."""

import ast
import inspect
from pathlib import Path

import pytest

import fabricopt.errors as errors
from fabricopt.errors import FabricError

PACKAGE = Path(__file__).resolve().parents[1] / "fabricopt"
OURS = {name for name, obj in vars(errors).items()
        if inspect.isclass(obj) and issubclass(obj, FabricError)}
# Besides FabricError subclasses: the fuzzer's alarm (a BaseException by design, caught in
# the probe); AssertionError, which the test kit (fabricopt.testing) raises to fail a
# user's test and which marks unreachable code elsewhere; IndexError, which __getitem__
# raises by Python's sequence protocol; AttributeError, which a descriptor's __get__
# raises by the attribute protocol (a dataclass field read on the class has no default);
# sqlite3's DatabaseError, raised inside the store's fault handler
# (bench.store.store_faults), which turns it into a one-line InvalidArgument.
_ALLOWED = {"Hang", "AssertionError", "IndexError", "AttributeError", "MethodCheckError",
            "DatabaseError"}


def _raised_names(path: Path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(exc, ast.Name):
                yield node.lineno, exc.id
            elif isinstance(exc, ast.Attribute):
                yield node.lineno, exc.attr


def _local_error_classes(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
            and any(getattr(b, "id", getattr(b, "attr", "")) in OURS for b in node.bases)}


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")),
                         ids=lambda p: str(p.relative_to(PACKAGE)))
def test_every_raise_raises_a_fabric_error(path):
    local = _local_error_classes(path)
    bad = []
    for line, name in _raised_names(path):
        if name[:1].isupper() and name not in OURS | local | _ALLOWED:
            bad.append(f"{path.relative_to(PACKAGE.parent)}:{line} raises {name}")
    assert not bad, "\n".join(bad)


def test_argument_errors_are_value_errors_too():
    # generic code that catches ValueError keeps working
    for cls in (errors.InvalidInstance, errors.InvalidSolution, errors.InvalidOption,
                errors.InvalidArgument):
        assert issubclass(cls, FabricError) and issubclass(cls, ValueError)
