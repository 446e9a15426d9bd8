"""Run the ``fabricopt`` command as a user does: ``python -m fabricopt`` in a fresh
interpreter (fabricopt/__main__.py)."""

import subprocess
import sys


def run(*args, stdin=None):
    """``python -m fabricopt ARGS``: its exit code, stdout and stderr."""
    proc = subprocess.run([sys.executable, "-m", "fabricopt", *args], input=stdin,
                          capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr
