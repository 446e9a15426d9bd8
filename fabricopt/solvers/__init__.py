"""Running methods: ``solve``, the method registry, the MILP backend, the result envelope."""

from .options import Option, at_least, between
from .plugins import PluginWarning
from .registry import Method, all_methods, get_method, methods, register_method
from .result import Result, SolverOutput, relative_gap
from .solve import solve

__all__ = ["solve", "Result", "SolverOutput", "relative_gap", "Method", "methods",
           "all_methods", "get_method", "register_method", "PluginWarning", "Option", "at_least",
           "between"]
