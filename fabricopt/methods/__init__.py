"""Running methods: ``solve``, the method registry, the MILP backend, the result envelope.

``fabricopt.methods`` is this package and, called, :func:`methods`
(``fabricopt.methods("circuits")``): a function of that name at the top level would hide
the package from ``import fabricopt.methods.wavelengths``.
"""

import sys
import types

from fabricopt.methods.options import Option, at_least, between
from fabricopt.methods.plugins import PluginWarning
from fabricopt.methods.registry import Method, all_methods, get_method, methods, register_method
from fabricopt.methods.result import Result, SolverOutput, relative_gap
from fabricopt.methods.solve import solve

__all__ = ["solve", "Result", "SolverOutput", "relative_gap", "Method", "methods",
           "all_methods", "get_method", "register_method", "PluginWarning", "Option", "at_least",
           "between"]


class _CallablePackage(types.ModuleType):
    """The package's type: calling it is calling :func:`methods`."""

    def __call__(self, kind: str | None = None):
        return methods(kind)


sys.modules[__name__].__class__ = _CallablePackage
