"""Experiments: named, versioned sets of benchmark runs plus the tables and figures
computed from their stored results. ``fabricopt reproduce NAME`` runs one.

An :class:`Experiment` plans its runs — (instance, method) runs from suite rows and
measurement tasks (:mod:`fabricopt.bench.tasks`) — for a full or a ``quick``
variant. :func:`run_experiment` sends them through the same runner, per-run process,
store, progress bar and executors (process pool or Dask) as ``fabricopt bench``, so a
killed experiment resumes with ``--resume`` where it stopped. :func:`render_experiment`
then computes the experiment's markdown section, CSV files and PNG figures from the
store alone; :func:`update_document` writes that section into a document such as
``BENCHMARKS.md`` between markers, so every section there says which command made it.

The runs of an experiment are stored under the suite name ``NAME@VERSION`` (or
``NAME-quick@VERSION``): raising an experiment's version when its plan or its cost
model changes keeps old results from being mixed with new ones.
"""

from __future__ import annotations

from fabricopt.errors import InvalidArgument

import importlib
import os
import platform
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from fabricopt.bench.report import code_versions
from fabricopt.bench.runner import SweepOutcome, run_sweep
from fabricopt.bench.store import Store

__all__ = ["Experiment", "register_experiment", "get_experiment", "experiments",
           "suite_name", "run_experiment", "render_experiment", "update_document",
           "DEFAULT_OUT"]

#: Where ``fabricopt reproduce NAME`` writes unless told otherwise: ``DEFAULT_OUT/NAME``.
DEFAULT_OUT = "reproduce-results"

# One module per experiment family; importing them registers their experiments.
_MODULES = ("fabricopt.bench.experiments.crux",
            "fabricopt.bench.experiments.sipml",
            "fabricopt.bench.experiments.topoopt",
            "fabricopt.bench.experiments.topoopt_artifact",
            "fabricopt.bench.experiments.methods",
            "fabricopt.bench.experiments.circuits",
            "fabricopt.bench.experiments.wavelengths",
            "fabricopt.bench.experiments.topology",
            "fabricopt.bench.experiments.priorities",
            "fabricopt.bench.experiments.bounds",
            "fabricopt.bench.experiments.contract",
            "fabricopt.bench.experiments.speed",
            "fabricopt.bench.experiments.simai",
            "fabricopt.bench.experiments.hostile",
            "fabricopt.bench.experiments.placement",
            )


@dataclass(frozen=True)
class Experiment:
    """A reproducible experiment.

    Attributes
    ----------
    name : str
        What ``fabricopt reproduce`` calls it (``"crux"``).
    version : int
        Raised whenever the runs or the model behind them change.
    title : str
        The heading of its section.
    summary : str
        One line for ``fabricopt reproduce --list``.
    plan : callable
        ``plan(suite, quick) -> list of RunSpec / TaskSpec``, every spec's ``suite``
        set to ``suite``.
    render : callable
        ``render(rows, folder, quick) -> str``: the section's markdown body from the
        store's rows of this experiment; may write CSV and PNG files into ``folder``
        (link them relative to it).
    paper : str
        What it reproduces (paper and section), or ``""`` for a method experiment.
    """

    name: str
    version: int
    title: str
    summary: str
    plan: Callable[[str, bool], list]
    render: Callable[[list[dict], Path, bool], str]
    paper: str = ""


_EXPERIMENTS: dict[str, Experiment] = {}
_loaded = False


def register_experiment(experiment: Experiment) -> Experiment:
    """Add ``experiment`` to the registry (names are unique)."""
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", experiment.name):
        raise InvalidArgument(f"experiment name = {experiment.name!r}: lowercase letters, digits, -")
    if experiment.name in _EXPERIMENTS:
        raise InvalidArgument(f"experiment {experiment.name!r} is already registered")
    _EXPERIMENTS[experiment.name] = experiment
    return experiment


def _load() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        for module in _MODULES:
            importlib.import_module(module)


def experiments() -> list[Experiment]:
    """Every registered experiment: the papers' first, then the method experiments."""
    _load()
    return sorted(_EXPERIMENTS.values(), key=lambda e: (not e.paper, e.name))


def get_experiment(name: str) -> Experiment:
    """The experiment called ``name``.

    Raises
    ------
    ValueError
        If there is none (the message lists the known names).
    """
    _load()
    if name not in _EXPERIMENTS:
        raise InvalidArgument(f"experiment = {name!r}: unknown experiment "
                         f"(known: {', '.join(e.name for e in experiments())})")
    return _EXPERIMENTS[name]


def suite_name(experiment: Experiment, quick: bool) -> str:
    """The suite name its runs are stored under: ``NAME@V`` or ``NAME-quick@V``."""
    return f"{experiment.name}{'-quick' if quick else ''}@{experiment.version}"


def default_folder(name: str, quick: bool) -> Path:
    return Path(DEFAULT_OUT) / f"{name}{'-quick' if quick else ''}"


def run_experiment(name: str, out: str | Path | None = None, *, quick: bool = False,
                   resume: bool = False, workers: int | None = None,
                   executor: str = "process", scheduler: str | None = None,
                   progress: bool = True, stream=None) -> tuple[SweepOutcome, Path]:
    """Run experiment ``name`` and render its section.

    Parameters
    ----------
    name : str
    out : str or Path, optional
        The results folder (database, markdown, CSV, figures); default
        ``reproduce-results/NAME`` (``NAME-quick`` for the quick variant).
    quick : bool
        The small variant (minutes on 2 cores).
    resume : bool
        Skip the runs already stored (a killed experiment goes on where it stopped).
    workers, executor, scheduler, progress, stream
        As for :func:`fabricopt.bench.run_sweep`.

    Returns
    -------
    (SweepOutcome, Path)
        What the sweep did, and the rendered markdown file.
    """
    experiment = get_experiment(name)
    folder = Path(out) if out is not None else default_folder(name, quick)
    specs = experiment.plan(suite_name(experiment, quick), quick)
    outcome = run_sweep(specs, folder, workers=workers, executor=executor,
                        scheduler=scheduler, resume=resume, progress=progress, stream=stream)
    return outcome, render_experiment(name, folder, quick=quick)


def machine_line() -> str:
    """The machine a section was measured on, in one line."""
    return (f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores, "
            f"Python {platform.python_version()}")


def command_line(name: str, quick: bool) -> str:
    return f"fabricopt reproduce {name}{' --quick' if quick else ''}"


def render_experiment(name: str, out: str | Path | None = None, *, quick: bool = False) -> Path:
    """Render experiment ``name``'s section from the database in ``out`` alone.

    Writes ``out/NAME.md`` (heading, the command, machine and version line, the body)
    plus whatever CSV and PNG files the experiment draws; returns the markdown path.

    Raises
    ------
    ValueError
        If ``out`` holds no database, or no run of this experiment.
    """
    from fabricopt._version import __version__

    experiment = get_experiment(name)
    folder = Path(out) if out is not None else default_folder(name, quick)
    suite = suite_name(experiment, quick)
    with Store(folder, create=False) as store:
        rows = [r for r in store.rows() if r["suite"] == suite]
    if not rows:
        raise InvalidArgument(f"{folder}: no stored run of {suite}; run "
                         f"`{command_line(name, quick)} --out {folder}` first")
    versions = code_versions(rows)
    finished = max(r["finished_at"] or "" for r in rows)
    errors = sum(r["status"] == "error" for r in rows)
    body = experiment.render(rows, folder, quick)
    header = [f"## {experiment.title}{' (quick)' if quick else ''}", "",
              f"Generated by `{command_line(name, quick)}` (experiment `{suite}`): "
              f"{len(rows)} runs, {errors} failed, {run_time_line(rows)}, last finished "
              f"{finished}; fabricopt {', '.join(versions) or __version__} on "
              f"{machine_line()}."]
    if experiment.paper:
        header += ["", f"Reproduces: {experiment.paper}."]
    path = folder / f"{name}{'-quick' if quick else ''}.md"
    path.write_text("\n".join(header) + "\n\n" + body.rstrip() + "\n")
    return path


def run_time_line(rows) -> str:
    """What the stored runs cost: their CPU seconds summed (subprocesses included: a
    task's ``run_cpu_s``, a method run's ``cpu_s``) and their wall seconds summed.

    Examples
    --------
    >>> run_time_line([{"wall_s": 10.0, "info": {"cpu_s": 9.5}},
    ...                {"wall_s": 2.0, "info": {"cpu_s": 0.1, "run_cpu_s": 1.5}}])
    '11 CPU s and 12 wall s in all'
    >>> run_time_line([{"wall_s": 2.0, "info": None}])
    '2 wall s in all'
    """
    cpu = []
    for r in rows:
        info = r.get("info") if isinstance(r.get("info"), dict) else {}
        spent = info.get("run_cpu_s", info.get("cpu_s"))
        if isinstance(spent, (int, float)):
            cpu.append(spent)
    wall = sum(r.get("wall_s") or 0.0 for r in rows)
    # CPU only when every run recorded it: a partial sum would read as the whole cost
    spent = f"{sum(cpu):,.0f} CPU s and " if cpu and len(cpu) == len(rows) else ""
    return f"{spent}{wall:,.0f} wall s in all"


def _markers(name: str) -> tuple[str, str]:
    return (f"<!-- fabricopt reproduce {name}: begin -->",
            f"<!-- fabricopt reproduce {name}: end -->")


def update_document(document: str | Path, name: str, section: str | Path) -> bool:
    """Put ``section`` (markdown text, or a rendered file) into ``document`` between the
    markers of experiment ``name``, replacing what was there; append it (with its
    markers) when the document has none. Returns True if the document changed.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> doc = pathlib.Path(tempfile.mkdtemp()) / "B.md"
    >>> _ = doc.write_text("# Benchmarks\\n")
    >>> update_document(doc, "demo", "## Demo\\n\\nfirst\\n")
    True
    >>> update_document(doc, "demo", "## Demo\\n\\nsecond\\n")
    True
    >>> print(doc.read_text())
    # Benchmarks
    <BLANKLINE>
    <!-- fabricopt reproduce demo: begin -->
    ## Demo
    <BLANKLINE>
    second
    <!-- fabricopt reproduce demo: end -->
    <BLANKLINE>
    """
    document = Path(document)
    text = Path(section).read_text() if isinstance(section, Path) else section
    # Figures stay in the results folder (no binaries in the document's repository):
    # an image link becomes a note of the file the command writes.
    text = re.sub(r"!\[([^\]]*)\]\(([^)]+\.png)\)",
                  lambda m: f"Figure: {m.group(1)} (`{m.group(2)}`, written by the command "
                            f"into its results folder).", text)
    begin, end = _markers(name)
    block = f"{begin}\n{text.rstrip()}\n{end}"
    old = document.read_text() if document.exists() else ""
    if begin in old and end in old:
        head, rest = old.split(begin, 1)
        _, tail = rest.split(end, 1)
        new = head + block + tail
    else:
        new = old.rstrip() + ("\n\n" if old.strip() else "") + block + "\n"
    if new == old:
        return False
    document.write_text(new)
    return True


def rows_by(rows: Sequence[dict[str, Any]], *fields: str) -> dict[tuple, dict[str, Any]]:
    """Index rows by the values of ``fields`` (``info`` keys allowed as ``info.KEY``);
    a later row replaces an earlier one."""
    out = {}
    for row in rows:
        key = tuple(row["info"].get(f[5:]) if f.startswith("info.") else row.get(f)
                    for f in fields)
        out[key] = row
    return out


def markdown_table(header: Sequence[str], body: Sequence[Sequence[Any]]) -> str:
    """A markdown table; None cells print as ``-``.

    Examples
    --------
    >>> print(markdown_table(["a", "b"], [[1, None]]))
    | a | b |
    |---|---|
    | 1 | - |
    """
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for cells in body:
        lines.append("| " + " | ".join("-" if c is None else str(c) for c in cells) + " |")
    return "\n".join(lines)


def write_csv(path: Path, header: Sequence[str], body: Sequence[Sequence[Any]]) -> Path:
    """Write a CSV file of ``body`` under ``header`` (None as empty) and return its path."""
    import csv

    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        for cells in body:
            writer.writerow(["" if c is None else c for c in cells])
    return path

