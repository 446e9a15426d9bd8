"""Stored results of experiments, small enough to ship, and the figures drawn from them.

A stored result is one experiment's rows (as the store returns them) in a JSON file
``{"format": "fabricopt-stored-result/1", "experiment", "quick", "command", "rows"}``.
:func:`store_result` writes one from a results folder; :func:`render_stored` draws the
experiment's section and figures from one, without running anything. The documentation's
gallery and the figure tests use them, so every figure can be checked and shown from data
the repository ships.
"""

from __future__ import annotations

import json
from pathlib import Path

from fabricopt.bench.experiments import command_line, get_experiment, suite_name
from fabricopt.bench.store import Store
from fabricopt.errors import InvalidArgument

__all__ = ["FORMAT", "store_result", "load_stored", "render_stored"]

FORMAT = "fabricopt-stored-result/1"


def store_result(name: str, folder: str | Path, path: str | Path, *, quick: bool = True) -> Path:
    """Write the rows of experiment ``name`` stored in results ``folder`` to ``path``.

    Raises
    ------
    InvalidArgument
        If the folder holds no run of the experiment.
    """
    experiment = get_experiment(name)
    suite = suite_name(experiment, quick)
    with Store(folder, create=False) as store:
        rows = [r for r in store.rows() if r["suite"] == suite]
    if not rows:
        raise InvalidArgument(f"{folder}: no stored run of {suite}")
    path = Path(path)
    path.write_text(json.dumps({"format": FORMAT, "experiment": name, "quick": quick,
                                "command": command_line(name, quick), "rows": rows},
                               indent=1, sort_keys=True, default=str) + "\n")
    return path


def load_stored(path: str | Path) -> dict:
    """A stored result, checked for its format and experiment.

    Raises
    ------
    InvalidArgument
        If the file is not a stored result or names an unknown experiment.
    """
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise InvalidArgument(f"{path}: not a readable stored result ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InvalidArgument(f"{path}: format = {data.get('format') if isinstance(data, dict) else None!r}: "
                              f"expected {FORMAT!r}")
    get_experiment(data["experiment"])
    return data


def render_stored(path: str | Path, folder: str | Path) -> tuple[str, list[Path]]:
    """Render a stored result's section into ``folder``.

    Returns
    -------
    (str, list of Path)
        The section's markdown body and the PNG figures it drew (sorted).
    """
    data = load_stored(path)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    before = set(folder.glob("*.png"))
    body = get_experiment(data["experiment"]).render(data["rows"], folder, data["quick"])
    return body, sorted(set(folder.glob("*.png")) - before)
