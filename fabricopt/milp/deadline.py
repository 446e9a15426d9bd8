"""A wall-clock deadline that model building checks, so a time limit bounds it too.

``run_milp``'s caller (:func:`fabricopt.methods.milp_method.milp_method`) opens
``with build_deadline(t):`` around a formulation's ``build``; the PuLP problems of
:func:`~fabricopt.milp.new_problem` call :func:`check_deadline` as they add
variables and rows, and so does the copy into the solver. Past the deadline it
raises :class:`BuildTimeLimit`, which the caller turns into "time ran out" (the
warm-start answer, or ``no_solution``). A formulation that builds its model some
other way (arrays) should call :func:`check_deadline` in its long loops.
"""

from __future__ import annotations

import contextlib
import contextvars
import time

from fabricopt.errors import FabricError

__all__ = ["BuildTimeLimit", "build_deadline", "check_deadline"]

_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "fabricopt_build_deadline", default=None)


class BuildTimeLimit(FabricError):
    """The deadline passed while a model was being built or copied into the solver."""


@contextlib.contextmanager
def build_deadline(deadline: float | None):
    """Within the block, :func:`check_deadline` raises after ``deadline``
    (``time.monotonic()`` seconds; None: never)."""
    token = _DEADLINE.set(deadline)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def check_deadline() -> None:
    """Raise :class:`BuildTimeLimit` if the current build deadline has passed."""
    deadline = _DEADLINE.get()
    if deadline is not None and time.monotonic() > deadline:
        raise BuildTimeLimit("the time limit ran out while the model was built")
