"""The typed exception hierarchy of fabricopt.

Every error fabricopt raises on purpose derives from :class:`FabricError`, so a
caller can catch the whole family in one place; the two input errors are also
``ValueError`` so that generic code that expects one keeps working.
"""

import unicodedata

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
    "printable",
]

# Characters a terminal acts on or that reorder text: C0/C1 controls (newline, CR, ESC,
# NUL, DEL) and the Unicode format characters (bidirectional overrides such as U+202E,
# zero-width joiners). Everything else is echoed as is.
_ESCAPED_CATEGORIES = ("Cc", "Cf", "Zl", "Zp")


def printable(text: str) -> str:
    """``text`` with every control, format and line-separator character escaped as
    ``\\n``, ``\\x1b``, ``\\u202e`` ...: user strings echoed in a message can then
    neither break it onto a second line nor rewrite what the terminal shows.

    Parameters
    ----------
    text : str

    Returns
    -------
    str
        ``text`` itself when it holds none of those characters.

    Examples
    --------
    >>> print(printable("op\\nfeasible: objective 0"))
    op\\nfeasible: objective 0
    >>> printable("\\x1b[2Jevil\\u202e"), printable("plain é")
    ('\\\\x1b[2Jevil\\\\u202e', 'plain é')
    """
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() or (ch == " ")
                   or unicodedata.category(ch) not in _ESCAPED_CATEGORIES
                   else _escape(ch) for ch in text)


def _escape(ch: str) -> str:
    code = ord(ch)
    named = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(ch)
    if named:
        return named
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 \
        else f"\\U{code:08x}"


class FabricError(Exception):
    """Base class of every error fabricopt raises on purpose.

    Its message is one line: control and format characters of the values it echoes
    are escaped by :func:`printable`.

    Examples
    --------
    >>> str(FabricError("ops['a\\nfeasible'].x: unknown field"))
    "ops['a\\\\nfeasible'].x: unknown field"
    """

    def __str__(self) -> str:
        return printable(super().__str__())


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
