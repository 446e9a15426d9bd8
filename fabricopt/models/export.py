"""Write a method's exact MILP as an MPS or LP file, and map another solver's answer back.

The file is the model ``solve`` hands to HiGHS (in the per-instance units the
formulation scales to), written by HiGHS's own writer (``Highs.writeModel``) in
minimization form — a maximized objective is written negated, since CBC ignores MPS's
``OBJSENSE`` — with LP sections spelled as every reader knows them, so CBC, HiGHS,
Gurobi, CPLEX or SCIP solve the same model.
Columns and rows carry the formulation's names, made portable: the family name and
the indices joined by ``_`` (``x[0, 1, 2]`` is the column ``x_0_1_2``, the lightpath
variable ``x[0, 2, 'cw', 1]`` is ``x_0_2_cw_1``; see :func:`portable_name` and the
docs' Model export page for each formulation's variables). :func:`decode_values` rebuilds the same model and turns a
solver's column values — a JSON object, or a ``.sol`` file — into the kind's
solution, which ``fabricopt check`` then scores like any other.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any, Callable, Mapping

from fabricopt.errors import (InvalidArgument, InvalidInstance, InvalidOption, InvalidSolution,
                              SolverUnavailable)
from fabricopt.models import circuits, placement, priorities, topology, wavelengths
from fabricopt.problems import kind_of

__all__ = ["EXPORTABLE", "FORMATS", "build_model", "portable_name", "highs_model",
           "write_model", "read_values", "decode_values"]

_log = logging.getLogger(__name__)

#: (kind, method) -> the formulation's ``build``; the file is the model it makes.
EXPORTABLE: dict[tuple[str, str], Callable[..., Any]] = {
    ("circuits", "milp"): circuits.build,
    ("wavelengths", "milp"): wavelengths.build,
    ("topology", "milp"): topology.build,
    ("priorities", "milp"): priorities.build,
    ("placement", "milp"): placement.build,
}

#: File formats by suffix; HiGHS picks its writer from the suffix too.
FORMATS = (".mps", ".lp")


def build_model(instance, method: str = "milp", **options):
    """The :class:`~fabricopt.milp.model.MilpModel` that ``method`` solves.

    Raises
    ------
    SolverUnavailable
        If ``method`` of the instance's kind has no MILP to export.
    ValueError
        If an option is not one of the formulation's.
    """
    kind = kind_of(instance).name
    build = EXPORTABLE.get((kind, method))
    if build is None:
        have = ", ".join(f"{k}/{m}" for k, m in EXPORTABLE)
        raise SolverUnavailable(f"method = {method!r}: {kind} has no exportable MILP "
                                f"(exportable: {have})")
    try:
        return build(instance, **options)
    except TypeError as exc:
        raise InvalidOption(f"{kind}/{method}: {exc}") from None


_DROP = re.compile(r"[()',\"\[\] ]")


def portable_name(pulp_name: str) -> str:
    """A PuLP variable or row name as written to the file: brackets, quotes and commas
    dropped, runs of ``_`` collapsed — names every MPS and LP reader accepts.

    Examples
    --------
    >>> portable_name("x_(0,_2,_'ccw',_1)"), portable_name("t"), portable_name("out_0_3")
    ('x_0_2_ccw_1', 't', 'out_0_3')
    """
    return re.sub(r"_+", "_", _DROP.sub("", pulp_name)).strip("_") or pulp_name


def _names(items) -> list[str]:
    """Portable names of ``items`` (PuLP names), which must stay distinct."""
    out = [portable_name(name) for name in items]
    if len(set(out)) != len(out):
        seen = set()
        clash = next(n for n in out if n in seen or seen.add(n))
        raise SolverUnavailable(f"two model names become {clash!r} in a file; this model "
                                f"cannot be exported")
    return out


def model_arrays(problem):
    """The arrays ``solve`` loads for ``problem`` (a ``SparseModel`` or a PuLP problem)
    and its row names: a sparse model's rows are ``<row block>_<k>``."""
    from fabricopt.milp.arrays import from_pulp
    from fabricopt.milp.sparse import SparseModel

    if isinstance(problem, SparseModel):
        arrays = problem.arrays()
        rows = [f"r{k}" for k in range(len(arrays.row_lower))]
        for name, (first, count) in problem.row_blocks.items():
            rows[first:first + count] = [f"{name}_{k}" for k in range(count)]
        return arrays, rows
    return from_pulp(problem), list(problem.constraints)


def highs_model(problem):
    """A ``highspy.Highs`` holding ``problem`` — loaded as ``solve`` loads it — with its
    columns and rows named (:func:`portable_name`)."""
    from fabricopt.milp.highs import load_highs

    arrays, rows = model_arrays(problem)
    h = load_highs(arrays, rel_gap=0.0, seed=0, start=None)
    for k, name in enumerate(_names(arrays.names)):
        h.passColName(k, name)
    for r, name in enumerate(_names(rows)):
        h.passRowName(r, name)
    return h


def write_model(instance, path: str | Path, method: str = "milp", **options) -> Path:
    """Write ``method``'s MILP of ``instance`` to ``path`` (``.mps`` or ``.lp``).

    Parameters
    ----------
    instance : instance object
    path : str or Path
        The file; its suffix picks the format.
    method : str
        An exportable method of the instance's kind (see :data:`EXPORTABLE`).
    **options
        The formulation's options (e.g. ``symmetry_breaking=False``).

    Returns
    -------
    Path

    Raises
    ------
    ValueError
        If the suffix is not ``.mps`` or ``.lp``.
    SolverFailure
        If HiGHS cannot write the file.

    Examples
    --------
    >>> import os, tempfile, fabricopt
    >>> inst = fabricopt.generate("circuits", seed=1, gpus=4, switches=2)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = write_model(inst, os.path.join(tmp, "model.lp"))
    ...     "x_0_0_1" in path.read_text()
    True
    """
    from fabricopt.errors import SolverFailure
    from fabricopt.milp.highs import _stdout_silenced

    path = Path(path)
    if path.suffix.lower() not in FORMATS:
        raise InvalidArgument(f"--out = {str(path)!r}: the suffix must be .mps or .lp")
    model = build_model(instance, method, **options)
    arrays, _ = model_arrays(model.problem)
    if not len(arrays.names):
        raise SolverUnavailable(f"{kind_of(instance).name}/{method}: the model has no "
                                f"variables (solved by inspection); nothing to export")
    h = highs_model(model.problem)
    if arrays.maximize:
        _minimization_form(h, arrays)
    with _stdout_silenced():  # HiGHS reports the write on stdout
        status = h.writeModel(str(path))
    if status.name != "kOk" and not path.is_file():
        raise SolverFailure(f"HiGHS could not write {path}: {status}")
    if path.suffix.lower() == ".lp":
        _portable_lp_sections(path)
    _log.info("wrote %s: %d columns (%d integer), %d rows", path, h.getNumCol(),
              len(arrays.integer), h.getNumRow())
    return path


def _minimization_form(h, arrays) -> None:
    """Minimize the negated objective: CBC ignores MPS's ``OBJSENSE MAX`` section, and
    every solver reads a minimization the same way."""
    import highspy
    import numpy as np

    n = len(arrays.names)
    h.changeColsCost(n, np.arange(n, dtype=np.int32), -np.asarray(arrays.cost, dtype=float))
    h.changeObjectiveOffset(-float(arrays.offset))
    h.changeObjectiveSense(highspy.ObjSense.kMinimize)


# HiGHS heads the LP file's integer sections "bin" and "gen", which CBC's LP reader
# takes for column names (losing integrality); every reader knows the long keywords.
_LP_SECTIONS = {"bin": "binary", "gen": "general"}


def _portable_lp_sections(path: Path) -> None:
    """Spell the LP file's section headers as every LP reader knows them; drop an empty
    ``semi`` section (no model here has semi-continuous columns)."""
    lines = path.read_text().splitlines()
    out = []
    for k, line in enumerate(lines):
        word = line.strip()
        if word == "semi" and (k + 1 == len(lines) or lines[k + 1].strip() == "end"):
            continue
        out.append(_LP_SECTIONS.get(word, line) if line == word else line)
    path.write_text("\n".join(out) + "\n")


_CPLEX_XML = re.compile(r'<variable\s[^>]*name="([^"]+)"[^>]*value="([^"]+)"')


def read_values(source: str | Path, names=None) -> dict[str, float]:
    """Column values from a solver's answer: a JSON object ``{name: value}`` or a
    solution file of ``name value`` lines (Gurobi ``.sol``, SCIP, HiGHS
    ``writeSolution``), CBC's ``solu`` file (``index name value reduced-cost`` lines)
    or CPLEX's XML ``.sol``.

    Lines whose first word is not a column name (headers, comments, objective lines)
    are skipped when ``names`` (the model's column names) is given; HiGHS's row
    section (after ``# Rows``) is never read.

    Raises
    ------
    InvalidSolution
        If the file cannot be read or holds no value.
    """
    try:
        text = Path(source).read_text()
    except OSError as exc:
        raise InvalidSolution(f"{source}: cannot read ({exc.strerror or exc})") from None
    known = None if names is None else set(names)
    values: dict[str, float] = {}
    if text.lstrip().startswith("{"):
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise InvalidSolution(f"{source}: not valid JSON ({exc})") from None
        for name, value in data.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise InvalidSolution(f"{source}: {name} = {value!r}: must be a number")
            values[name] = float(value)
    elif "<variable" in text:
        values = {m.group(1): float(m.group(2)) for m in _CPLEX_XML.finditer(text)}
    else:
        for line in text.splitlines():
            if line.startswith("# Rows"):
                break
            words = line.split()
            if words[:1] == ["**"]:   # CBC marks a column it finds infeasible
                words = words[1:]
            if len(words) >= 3 and words[0].isdigit() and (known is None or words[1] in known):
                words = words[1:]     # CBC: index, name, value, reduced cost
            if len(words) < 2 or line.startswith("#") or (known is not None
                                                          and words[0] not in known):
                continue
            try:
                values[words[0]] = float(words[1])
            except ValueError:
                continue
    if not values:
        raise InvalidSolution(f"{source}: holds no column values")
    return values


class _Values(dict):
    """Column values where a column the file leaves out is 0 (SCIP writes non-zeros only)."""

    def __init__(self, values: Mapping[str, float], names):
        super().__init__({name: 0.0 for name in names})
        self.update(values)


def decode_values(instance, values, method: str = "milp", **options):
    """The kind's solution that column ``values`` of ``method``'s model stand for.

    Parameters
    ----------
    instance : instance object
        The instance the model was exported for.
    values : mapping, str or Path
        Column name -> value, or a file :func:`read_values` reads (a solver's ``.sol``
        file or a JSON object); columns left out are 0.
    method, **options
        As given to :func:`write_model` (the same model must be rebuilt).

    Returns
    -------
    solution object
        Check and score it with ``fabricopt.check`` / ``fabricopt.evaluate``.

    Raises
    ------
    InvalidSolution
        If ``values`` names a column the model does not have, or cannot be decoded.
    """
    from fabricopt.milp.sparse import ColumnValues

    model = build_model(instance, method, **options)
    arrays, _ = model_arrays(model.problem)
    pulp_names = list(arrays.names)
    by_file_name = dict(zip(_names(pulp_names), pulp_names))
    if isinstance(values, (str, Path)):
        values = read_values(values, by_file_name)
    unknown = sorted(set(values) - set(by_file_name))
    if unknown:
        raise InvalidSolution(f"{unknown[0]}: not a column of the {kind_of(instance).name}/"
                              f"{method} model (was it exported with other options?)")
    named = _Values({by_file_name[k]: v for k, v in values.items()}, pulp_names)
    try:
        # A sparse model's decoder reads the column vector; a PuLP one looks names up.
        return model.decode(ColumnValues(pulp_names, [named[n] for n in pulp_names]))
    except (InvalidInstance, InvalidSolution):
        raise
    except Exception as exc:  # a decode that trips over impossible values
        raise InvalidSolution(f"the values do not decode to a solution: "
                              f"{type(exc).__name__}: {exc}") from None
