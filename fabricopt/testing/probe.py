"""Run one hostile input through the ``fabricopt`` command and the Python API, and judge.

:func:`probe` feeds a :class:`~fabricopt.testing.mutations.Case` to ``fabricopt solve``
(an instance) or ``fabricopt check`` (a solution or envelope) in this process, and to
the matching API calls, under a wall-clock alarm. The :class:`Outcome` lists every
broken promise of the README: exit code 0, 1 or 2 and never a traceback; at most one
short line on stderr; exit 2 exactly when the API raises a ``FabricError``; an
accepted instance solved by a fast method to a finite objective that ``check``
accepts; never a non-finite objective or bound.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import signal
import tempfile
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import FabricError
from .mutations import FAST_METHODS, Case

__all__ = ["Outcome", "probe", "Hang", "MAX_STDERR_CHARS"]

#: The longest stderr line that still counts as short: a field path, a value cut to 60
#: characters and a rule fit well inside it.
MAX_STDERR_CHARS = 400


class Hang(BaseException):
    """The alarm fired (a BaseException, so that ``except Exception`` lets it through)."""


@contextlib.contextmanager
def _alarm(seconds: float):
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
    failures: list = field(default_factory=list)

    @property
    def clean_error(self) -> bool:
        """Rejected as bad input the promised way: exit 2, one line, a FabricError."""
        return self.exit_code == 2 and self.api_fabric and not self.failures

    def summary(self) -> str:
        c = self.case
        return (f"{c.kind}/{c.target}/{c.family}/{c.seed} ({c.description[:80]}): "
                + "; ".join(self.failures))


def _run_cli(argv: list[str], outcome: Outcome) -> str:
    from ..cli import main

    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                outcome.exit_code = main(argv)
            except SystemExit as exc:  # argparse
                outcome.exit_code = exc.code if isinstance(exc.code, int) else 1
    except Hang:
        outcome.hang = True
        outcome.failures.append("cli: hang")
    except Exception as exc:  # noqa: BLE001 — this is what a user would see as a traceback
        outcome.traceback = True
        outcome.failures.append(f"cli: traceback {type(exc).__name__}: {str(exc)[:120]}")
    outcome.stderr = err.getvalue()
    return out.getvalue()


def _judge_cli(outcome: Outcome, stdout: str) -> None:
    code = outcome.exit_code
    if code is not None and code not in (0, 1, 2):
        outcome.failures.append(f"cli: exit code {code}")
    lines = outcome.stderr.splitlines()
    if len(lines) > 1:
        outcome.failures.append(f"cli: {len(lines)} lines on stderr")
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
    from .. import check, load, solve
    from ..problems import instance_from_dict

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
    from .. import check, evaluate, load, load_solution
    from ..solvers import Result

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


def probe(case: Case, timeout_s: float = 60.0) -> Outcome:
    """Feed ``case`` to the command and the API; each gets ``timeout_s`` seconds.

    Returns
    -------
    Outcome
    """
    outcome = Outcome(case)
    with tempfile.TemporaryDirectory(prefix="fabricopt-fuzz-") as tmp:
        inst_path, path = Path(tmp, "instance.json"), Path(tmp, f"{case.target}.json")
        inst_path.write_bytes(case.instance)
        path.write_bytes(case.data)
        if case.target == "instance":
            argv = ["solve", str(path), "--method", FAST_METHODS[case.kind], "--json"]
        else:
            argv = ["check", str(inst_path), str(path), "--json"]
        with _alarm(timeout_s):
            stdout = _run_cli(argv, outcome)
        _judge_cli(outcome, stdout)
        with _alarm(timeout_s):
            _run_api(case, inst_path, path, outcome)
    if not outcome.hang and outcome.exit_code is not None:
        if (outcome.exit_code == 2) != outcome.api_fabric:
            outcome.failures.append(
                f"exit code {outcome.exit_code} but the API "
                + (f"raised {outcome.api_error[:120]}" if outcome.api_error else "raised nothing"))
    return outcome
