"""Run one hostile input through the ``fabricopt`` command and the Python API, and judge.

:func:`probe` feeds a :class:`~fabricopt.bench.hostile.mutations.Case` to ``fabricopt solve``
(an instance) or ``fabricopt check`` (a solution or envelope) in a process of its own, and to
the matching API calls, under a wall-clock alarm. The :class:`Outcome` lists every
broken promise of the README: exit code 0, 1 or 2 and never a traceback; at most one
short line on stderr; exit 2 exactly when the API raises a ``FabricError``; an
accepted instance solved by a fast method to a finite objective that ``check``
accepts; never a non-finite objective or bound; never a raw control or format character
(newline inside a line, ESC, CR, NUL, U+202E ...) in what the command prints.
"""

from __future__ import annotations

import contextlib
import json
import math
import signal
import subprocess
import sys
import tempfile
import os
import traceback
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from fabricopt.errors import FabricError
from fabricopt.bench.hostile.mutations import FAST_METHODS, Case

__all__ = ["Outcome", "probe", "run_cli_subprocess", "Hang", "alarm", "MAX_STDERR_CHARS",
           "STARTUP_S", "raw_controls"]

#: The longest stderr line that still counts as short: a field path, a value cut to 60
#: characters and a rule fit well inside it.
MAX_STDERR_CHARS = 400

#: Seconds a fresh ``python -m fabricopt`` may take to start on a loaded machine, added
#: to the command's alarm, so that a slow start-up is not counted as a hang.
STARTUP_S = 10.0


def raw_controls(text: str) -> list[str]:
    """The control, format and line-separator characters in ``text`` (line breaks
    between lines excepted), as code points (``U+001B``): what must never reach a terminal raw.

    Examples
    --------
    >>> raw_controls("ok\\n"), raw_controls("a\\x1b[2Jb\\u202e\\n")
    ([], ['U+001B', 'U+202E'])
    """
    return sorted({f"U+{ord(ch):04X}" for line in text.splitlines() for ch in line
                   if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") and ch != "\t"})


class Hang(BaseException):
    """The alarm fired (a BaseException, so that ``except Exception`` lets it through)."""


@contextlib.contextmanager
def alarm(seconds: float):
    def ring(signum, frame):
        raise Hang(f"no answer within {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass
class Outcome:
    """What one case did. ``failures`` is empty exactly when every promise held.

    Attributes
    ----------
    exit_code : int or None
        The command's exit code (None after a traceback or a hang).
    stderr : str
    api_error : str or None
        ``"ClassName: message"`` of what the API raised, None when it raised nothing.
    api_fabric : bool
        The API raised a ``FabricError``.
    traceback, hang, non_finite : bool
        An uncaught exception (command or API, outside fabricopt's hierarchy); the alarm
        fired; a non-finite objective or bound came back.
    multi_line, raw_control : bool
        More than one line on stderr; a raw control or format character in what the
        command printed (:func:`raw_controls`).
    failures : list of str
    """

    case: Case
    exit_code: int | None = None
    stderr: str = ""
    api_error: str | None = None
    api_fabric: bool = False
    traceback: bool = False
    hang: bool = False
    non_finite: bool = False
    multi_line: bool = False
    raw_control: bool = False
    failures: list = field(default_factory=list)

    @property
    def clean_error(self) -> bool:
        """Rejected as bad input the promised way: exit 2, one line, a FabricError."""
        return self.exit_code == 2 and self.api_fabric and not self.failures

    def summary(self) -> str:
        c = self.case
        return (f"{c.kind}/{c.target}/{c.family}/{c.seed} ({c.description[:80]}): "
                + "; ".join(self.failures))


def run_cli_subprocess(argv: list[str], timeout_s: float) -> tuple[int | None, str, str]:
    """Run ``python -m fabricopt ARGV`` as a user would, in a process of its own:
    ``(exit code, stdout, stderr)``, exit code None if it ran past ``timeout_s``."""
    try:
        proc = subprocess.run([sys.executable, "-m", "fabricopt", *argv], capture_output=True,
                              text=True, stdin=subprocess.DEVNULL, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return None, "", ""
    return proc.returncode, proc.stdout, proc.stderr


def _run_cli(argv: list[str], outcome: Outcome, timeout_s: float, run_cli) -> str:
    code, stdout, stderr = run_cli(argv, timeout_s)
    if code is None:
        outcome.hang = True
        outcome.failures.append("cli: hang")
        return ""
    outcome.exit_code = code
    if "Traceback (most recent call last)" in stderr or "fabricopt: internal error:" in stderr:
        # an exception outside FabricError: a bug, whether or not -v showed its traceback
        outcome.traceback = True
        last = stderr.strip().splitlines()[-1]
        outcome.failures.append(f"cli: traceback {last[:120]}")
    outcome.stderr = stderr
    return stdout


def _judge_cli(outcome: Outcome, stdout: str) -> None:
    code = outcome.exit_code
    if code is not None and code not in (0, 1, 2):
        outcome.failures.append(f"cli: exit code {code}")
    lines = outcome.stderr.splitlines()
    if len(lines) > 1:
        outcome.multi_line = True
        outcome.failures.append(f"cli: {len(lines)} lines on stderr")
    raw = raw_controls(outcome.stderr + stdout)
    if raw:
        outcome.raw_control = True
        outcome.failures.append(f"cli: raw {', '.join(raw)} printed")
    if any(len(line) > MAX_STDERR_CHARS for line in lines):
        outcome.failures.append(f"cli: a stderr line of {max(map(len, lines))} characters")
    if "Traceback" in outcome.stderr:
        outcome.traceback = True
        outcome.failures.append("cli: a traceback on stderr")
    if code == 0 and stdout.strip():
        try:
            reply = json.loads(stdout)
        except ValueError:
            outcome.failures.append("cli: --json printed no JSON")
            return
        for key in ("objective", "bound"):
            value = reply.get(key)
            if value is not None and not math.isfinite(value):
                outcome.non_finite = True
                outcome.failures.append(f"cli: {key} {value}")


def _finite(outcome: Outcome, what: str, value) -> None:
    if value is not None and not math.isfinite(value):
        outcome.non_finite = True
        outcome.failures.append(f"api: {what} = {value}")


def _numbers(node, where: str):
    """``(path, value)`` of every float inside a JSON-like value."""
    if isinstance(node, float):
        yield where, node
    elif isinstance(node, dict):
        for key, child in node.items():
            yield from _numbers(child, f"{where}.{key}")
    elif isinstance(node, (list, tuple)):
        for k, child in enumerate(node):
            yield from _numbers(child, f"{where}[{k}]")


def _api_instance(case: Case, path: Path, outcome: Outcome) -> None:
    from fabricopt.problems import check
    from fabricopt.io import load
    from fabricopt.methods import solve
    from fabricopt.problems import instance_from_dict

    if isinstance(case.obj, dict):
        try:
            instance_from_dict(case.obj)
        except FabricError:
            pass
    instance = load(path)
    result = solve(instance, FAST_METHODS[case.kind])
    _finite(outcome, "objective", result.objective)
    _finite(outcome, "bound", result.bound)
    for where, value in _numbers(result.info, "info"):
        _finite(outcome, where, value)
    if result.status == "error":
        outcome.failures.append(f"api: the fast method failed: {result.message[:160]}")
    elif result.success and not check(instance, result.solution).feasible:
        outcome.failures.append("api: solve returned a solution check rejects")


def _api_solution(case: Case, inst_path: Path, path: Path, outcome: Outcome) -> None:
    from fabricopt.problems import check, evaluate
    from fabricopt.io import load, load_solution
    from fabricopt.methods import Result

    if case.target == "envelope" and isinstance(case.obj, dict):
        try:
            Result.from_dict(case.obj)
        except FabricError:
            pass
    instance = load(inst_path)
    solution = load_solution(path, case.kind)
    if check(instance, solution).feasible:
        _finite(outcome, "objective", evaluate(instance, solution))


def _run_api(case: Case, inst_path: Path, path: Path, outcome: Outcome) -> None:
    try:
        if case.target == "instance":
            _api_instance(case, path, outcome)
        else:
            _api_solution(case, inst_path, path, outcome)
    except Hang:
        outcome.hang = True
        outcome.failures.append("api: hang")
    except FabricError as exc:
        outcome.api_fabric = True
        outcome.api_error = f"{type(exc).__name__}: {exc}"
    except Exception as exc:  # noqa: BLE001
        outcome.traceback = True
        outcome.api_error = f"{type(exc).__name__}: {exc}"
        tb = traceback.extract_tb(exc.__traceback__)[-1]
        outcome.failures.append(f"api: {type(exc).__name__} outside FabricError "
                                f"({Path(tb.filename).name}:{tb.lineno}): {str(exc)[:120]}")


def _make_special(path: Path, special: str) -> None:
    """Put what ``special`` names at ``path`` in place of the file."""
    path.unlink()
    if special == "fifo":
        os.mkfifo(path)
    elif special == "folder":
        path.mkdir()
    else:  # "dev-zero", "dev-urandom"
        path.symlink_to("/dev/" + special.removeprefix("dev-"))


def probe(case: Case, timeout_s: float = 60.0, *, run_cli=None) -> Outcome:
    """Feed ``case`` to the command and the API; each gets ``timeout_s`` seconds.

    ``run_cli(argv, timeout_s) -> (exit code or None on a hang, stdout, stderr)`` runs the
    command; the default, :func:`run_cli_subprocess`, runs ``python -m fabricopt`` as a
    user would, with :data:`STARTUP_S` more seconds for the interpreter to start (tests
    pass an in-process runner to save the interpreter start-up).

    Returns
    -------
    Outcome
    """
    outcome = Outcome(case)
    with tempfile.TemporaryDirectory(prefix="fabricopt-fuzz-") as tmp:
        inst_path, path = Path(tmp, "instance.json"), Path(tmp, f"{case.target}.json")
        inst_path.write_bytes(case.instance)
        path.write_bytes(case.data)
        if case.special is not None:
            _make_special(path, case.special)
        if case.target == "instance":
            argv = ["solve", str(path), "--method", FAST_METHODS[case.kind], "--json"]
        else:
            argv = ["check", str(inst_path), str(path), "--json"]
        stdout = _run_cli(argv, outcome, timeout_s + (0 if run_cli else STARTUP_S),
                          run_cli or run_cli_subprocess)
        _judge_cli(outcome, stdout)
        with alarm(timeout_s):
            _run_api(case, inst_path, path, outcome)
    if not outcome.hang and outcome.exit_code is not None:
        if (outcome.exit_code == 2) != outcome.api_fabric:
            outcome.failures.append(
                f"exit code {outcome.exit_code} but the API "
                + (f"raised {outcome.api_error[:120]}" if outcome.api_error else "raised nothing"))
    return outcome
