"""A progress bar on stderr: runs done, failures, elapsed time and ETA.

On a terminal the bar redraws in place; elsewhere (CI logs, pipes) it prints a plain
line at most every ``every_s`` seconds and at the end.
"""

from __future__ import annotations

import sys
import time

__all__ = ["ProgressBar", "format_duration"]


def format_duration(seconds: float | None) -> str:
    """``m:ss`` or ``h:mm:ss``; ``?`` when unknown.

    Examples
    --------
    >>> format_duration(75.4), format_duration(3725), format_duration(None)
    ('1:15', '1:02:05', '?')
    """
    if seconds is None:
        return "?"
    s = int(round(seconds))
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class ProgressBar:
    """Progress of a sweep of ``total`` runs.

    Parameters
    ----------
    total : int
        Runs to do.
    stream : file, optional
        Default ``sys.stderr``.
    enabled : bool
        False draws nothing.
    every_s : float
        On a non-terminal, the shortest interval between two printed lines.

    Examples
    --------
    >>> import io
    >>> bar = ProgressBar(4, stream=io.StringIO(), clock=iter([0.0, 30.0]).__next__)
    >>> bar.line(done=1, failed=0, note="circuits/tiny/0 milp")
    '[#####...............]  1/4 runs  0 failed  0:30 elapsed  ETA 1:30  circuits/tiny/0 milp'
    """

    width = 20

    def __init__(self, total: int, *, stream=None, enabled: bool = True, every_s: float = 10.0,
                 clock=time.monotonic):
        self.total = int(total)
        self.stream = sys.stderr if stream is None else stream
        self.enabled = enabled
        self.every_s = every_s
        self._clock = clock
        self._start = clock()
        self._last_print = None
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._drawn = 0

    def line(self, *, done: int, failed: int, note: str = "") -> str:
        """The bar's text for the current state."""
        elapsed = self._clock() - self._start
        fill = self.width if self.total == 0 else self.width * done // self.total
        eta = None if done == 0 else elapsed / done * (self.total - done)
        text = (f"[{'#' * fill}{'.' * (self.width - fill)}]  {done}/{self.total} runs  "
                f"{failed} failed  {format_duration(elapsed)} elapsed  "
                f"ETA {format_duration(eta)}")
        return f"{text}  {note}" if note else text

    def update(self, *, done: int, failed: int, note: str = "") -> None:
        """Redraw (terminal) or print a line when due (elsewhere)."""
        if not self.enabled:
            return
        text = self.line(done=done, failed=failed, note=note)
        if self._tty:
            pad = max(0, self._drawn - len(text))
            self.stream.write("\r" + text + " " * pad)
            self._drawn = len(text)
            self.stream.flush()
            return
        now = self._clock()
        if done == self.total or self._last_print is None or now - self._last_print >= self.every_s:
            self._last_print = now
            self.stream.write(text + "\n")
            self.stream.flush()

    def close(self) -> None:
        """End the bar's line on a terminal."""
        if self.enabled and self._tty and self._drawn:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = 0
