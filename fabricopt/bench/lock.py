"""One sweep at a time per results folder: an advisory lock beside the database.

Two drivers (``fabricopt bench`` or ``fabricopt reproduce``) given the same ``--out``
would both run every run of the plan at once and store each twice. :func:`sweep_lock`
takes an exclusive ``flock`` on ``<database>.lock`` for the whole sweep; a second driver
says on one line that it waits, and starts when the first has finished, so that it
reads what the first stored (with ``--resume`` it runs only what is left). Two sweeps of
different suites into one folder thus still both land, one after the other. The kernel
releases the lock when its holder exits, however it exits, so a killed sweep never
leaves a stale lock behind.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import Iterator, TextIO

from fabricopt.errors import InvalidArgument, printable

try:
    import fcntl
except ImportError:  # not on POSIX: sweeps are not locked
    fcntl = None

__all__ = ["sweep_lock", "lock_path"]


def lock_path(database: Path) -> Path:
    """The lock file of a database: ``bench.sqlite`` -> ``bench.sqlite.lock``."""
    return database.with_name(database.name + ".lock")


@contextlib.contextmanager
def sweep_lock(database: Path, *, wait: bool = True,
               stream: TextIO | None = None) -> Iterator[Path]:
    """Hold the sweep lock of ``database`` (its folder is created if absent).

    Parameters
    ----------
    database : Path
        The results database the sweep writes.
    wait : bool
        When another process holds the lock: wait for it (saying so on ``stream``,
        default stderr), or refuse at once.
    stream : file, optional

    Raises
    ------
    InvalidArgument
        If another process holds it and ``wait`` is False, or the folder cannot hold a
        lock file.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     with sweep_lock(Path(tmp, "bench.sqlite")) as held:
    ...         held.name
    'bench.sqlite.lock'
    """
    path = lock_path(database)
    shown = printable(str(database.parent))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as exc:
        raise InvalidArgument(f"{shown}: cannot lock the results folder "
                              f"({exc.strerror or exc})") from None
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                holder = printable(os.pread(fd, 32, 0).decode(errors="replace").strip()
                                   or "?")
                if not wait:
                    raise InvalidArgument(
                        f"{shown}: another sweep (process {holder}) is running on this "
                        f"results folder; wait for it to finish or choose another "
                        f"--out") from None
                print(f"fabricopt: note: another sweep (process {holder}) is running on "
                      f"{shown}; waiting for it to finish", file=stream or sys.stderr,
                      flush=True)
                fcntl.flock(fd, fcntl.LOCK_EX)
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield path
    finally:
        os.close(fd)  # releases the flock
