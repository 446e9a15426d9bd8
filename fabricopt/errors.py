"""The typed exception hierarchy of fabricopt.

Every error fabricopt raises on purpose derives from :class:`FabricError`, so a
caller can catch the whole family in one place; the two input errors are also
``ValueError`` so that generic code that expects one keeps working.
"""

__all__ = [
    "FabricError",
    "InvalidInstance",
    "InvalidSolution",
    "InvalidOption",
    "InvalidArgument",
    "MethodRefused",
    "InfeasibleInstance",
    "SolverUnavailable",
    "SolverFailure",
]


class FabricError(Exception):
    """Base class of every error fabricopt raises on purpose."""


class InvalidInstance(FabricError, ValueError):
    """An instance breaks its format: the message names the field and the value.

    Examples
    --------
    >>> raise InvalidInstance("traffic_bytes[3][1] = -5.0: must be >= 0")
    Traceback (most recent call last):
    ...
    fabricopt.errors.InvalidInstance: traffic_bytes[3][1] = -5.0: must be >= 0
    """


class InvalidSolution(FabricError, ValueError):
    """A solution is malformed or names things the instance does not have."""


class InvalidOption(FabricError, ValueError):
    """A method option (or ``time_limit`` / ``seed``) has a bad name or value; the
    message names it and the value: ``rounds = 0: must be >= 1``.

    Raised by ``solve`` before the method runs; the command line prints it on one line
    and exits 2.
    """


class InvalidArgument(FabricError, ValueError):
    """An argument that is neither an instance, a solution nor a method option is bad: a
    command-line flag, a file name, a workload or a parameter of a library call. The
    message names the argument and the value: ``--gpus-per-node = 0: must be >= 1``."""


class MethodRefused(FabricError):
    """A method declines an instance it was not built for (e.g. ``enumerate`` past its
    enumeration limit); ``solve`` reports it as status ``error`` with the reason."""


class InfeasibleInstance(FabricError):
    """The instance is well formed but provably has no feasible solution."""


class SolverUnavailable(FabricError):
    """The requested method or MILP backend does not exist or is not installed."""


class SolverFailure(FabricError):
    """A solver ran but failed in a way that yields no usable answer."""
