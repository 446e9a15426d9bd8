"""A budget of work with an optional deadline, shared by the placement searches."""

from __future__ import annotations

import time


class Budget:
    """Work done (``used``, in whatever units the search counts) against ``limit``
    and an optional ``deadline`` (a ``time.perf_counter()`` value).

    Examples
    --------
    >>> b = Budget(2)
    >>> b.used += 2
    >>> b.spent(), Budget(deadline=0.0).spent()
    (True, True)
    >>> b.stopped_by(), Budget(deadline=0.0).stopped_by(), Budget().stopped_by()
    ('work', 'time', 'none')
    """

    def __init__(self, limit: float = float("inf"), deadline: float | None = None):
        self.used, self.limit, self.deadline = 0, limit, deadline

    @classmethod
    def within(cls, limit: float, time_limit: float | None) -> "Budget":
        """A budget whose deadline is ``time_limit`` seconds from now (None: no deadline)."""
        return cls(limit, None if time_limit is None else time.perf_counter() + time_limit)

    def spent(self) -> bool:
        return self.used >= self.limit or (
            self.deadline is not None and time.perf_counter() >= self.deadline)

    def stopped_by(self) -> str:
        """``"work"`` when the work ran out, ``"time"`` when the deadline passed, else
        ``"none"`` (``Result.limit``'s names)."""
        if self.used >= self.limit:
            return "work"
        if self.deadline is not None and time.perf_counter() >= self.deadline:
            return "time"
        return "none"
