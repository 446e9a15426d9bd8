"""Running methods: ``solve``, the method registry, the MILP backend, the result envelope."""

from fabricopt.methods.options import Option, at_least, between
from fabricopt.methods.plugins import PluginWarning
from fabricopt.methods.registry import Method, all_methods, get_method, methods, register_method
from fabricopt.methods.result import Result, SolverOutput, relative_gap
from fabricopt.methods.solve import solve

__all__ = ["solve", "Result", "SolverOutput", "relative_gap", "Method", "methods",
           "all_methods", "get_method", "register_method", "PluginWarning", "Option", "at_least",
           "between"]
