"""Run the ``fabricopt`` command as a user does: ``python -m fabricopt`` in a fresh
interpreter (fabricopt/__main__.py)."""

import subprocess
import sys


def run(*args, stdin=None):
    """``python -m fabricopt ARGS``: its exit code, stdout and stderr."""
    proc = subprocess.run([sys.executable, "-m", "fabricopt", *args], input=stdin,
                          capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


def run_in_process(argv, timeout_s):
    """The command in this process (for the fuzzer: no interpreter start-up per case):
    ``(exit code or None on a hang, stdout, stderr)``; an escaping exception is printed
    as the traceback a user would see."""
    import contextlib
    import io
    import traceback

    from fabricopt.bench.hostile.probe import Hang, alarm
    from fabricopt.cli import main

    out, err = io.StringIO(), io.StringIO()
    try:
        with alarm(timeout_s), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exc:  # argparse
                code = exc.code if isinstance(exc.code, int) else 1
    except Hang:
        return None, out.getvalue(), err.getvalue()
    except Exception:  # noqa: BLE001 — what a user would see as a traceback
        return 1, out.getvalue(), err.getvalue() + traceback.format_exc()
    return code, out.getvalue(), err.getvalue()
