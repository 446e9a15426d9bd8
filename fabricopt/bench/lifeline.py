"""Die with the driver: helper processes of a sweep exit when the process they serve dies.

A ``fabricopt bench`` driver starts pool workers (from a forkserver, so the worker's
parent is the forkserver, not the driver) and each worker starts run processes. If
the driver is killed with SIGKILL it cannot clean up, and workers blocked on their
task queue would live on forever, holding the driver's stdout and stderr open (a
caller waiting for end-of-file would block too). So every worker watches the driver,
and every run process watches its worker: :func:`die_with` starts a daemon thread
that waits on a pidfd (Linux 5.3+; a one-second poll of the pid elsewhere), runs a
clean-up callback and exits at once. On Linux the process also asks the kernel for
SIGKILL when its direct parent dies (``prctl(PR_SET_PDEATHSIG)``), which covers the
children that the watched process started directly.
"""

from __future__ import annotations

import ctypes
import os
import select
import signal
import sys
import threading
import time
from typing import Callable

__all__ = ["die_with", "set_parent_death_signal", "is_alive"]

_PR_SET_PDEATHSIG = 1
_POLL_S = 1.0


def set_parent_death_signal(sig: int = signal.SIGKILL) -> bool:
    """Ask Linux to send ``sig`` to this process when its parent thread exits.

    Returns False where there is no ``prctl`` (not Linux). Safe in a ``preexec_fn``.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:  # the symbols already loaded (libc among them): no library search, no fork
        return ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def is_alive(pid: int) -> bool:
    """Is process ``pid`` running (a zombie counts as dead)?

    Examples
    --------
    >>> is_alive(os.getpid())
    True
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a killed process whose parent has not reaped it yet is a zombie
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _wait_for_exit(pid: int) -> None:
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        fd = None
    if fd is not None:
        try:
            select.select([fd], [], [])  # readable once the process has exited
        finally:
            os.close(fd)
        return
    while is_alive(pid):
        time.sleep(_POLL_S)


def die_with(pid: int, cleanup: Callable[[], object] | None = None,
             exit_code: int = 128 + signal.SIGKILL) -> threading.Thread:
    """Exit this process (after ``cleanup``) as soon as process ``pid`` exits.

    Parameters
    ----------
    pid : int
        The process to outlive by no more than a moment, e.g. the sweep's driver.
    cleanup : callable, optional
        Run first, e.g. killing the run processes this worker started.
    exit_code : int
        The status of ``os._exit``.

    Returns
    -------
    threading.Thread
        The daemon thread that watches.
    """
    if pid == os.getppid():
        set_parent_death_signal()

    def watch():
        _wait_for_exit(pid)
        try:
            if cleanup is not None:
                cleanup()
        finally:
            os._exit(exit_code)

    thread = threading.Thread(target=watch, name=f"lifeline-{pid}", daemon=True)
    thread.start()
    return thread
