"""Example data shipped with fabricopt.

``simai/`` holds the AICB / SimAI example workloads, copied unchanged from the public
repository aliyun/SimAI under the Apache License 2.0 (``simai/LICENSE`` and
``simai/SOURCE.md`` beside them).

Examples
--------
>>> from fabricopt.fabrics.data import simai_example
>>> simai_example().name
'workload_analytical.txt'
>>> simai_example("microAllReduce.txt").is_file()
True
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["SIMAI_DIR", "simai_example"]

#: The folder of the SimAI example files (workloads, ``ratio/`` tables, LICENSE).
SIMAI_DIR = Path(__file__).resolve().parent / "simai"


def simai_example(name: str = "workload_analytical.txt") -> Path:
    """The path of one shipped SimAI example file.

    Parameters
    ----------
    name : str
        A file name under ``simai/``: ``workload_analytical.txt`` (a MoE model on 9,216
        GPUs), ``microAllReduce.txt``, or ``ratio/nic_ratio.csv`` and its siblings.

    Returns
    -------
    pathlib.Path
        The file's absolute path.

    Raises
    ------
    FileNotFoundError
        If no such file is shipped.
    """
    path = SIMAI_DIR / name
    if not path.is_file():
        shipped = sorted(str(p.relative_to(SIMAI_DIR)) for p in SIMAI_DIR.rglob("*") if p.is_file())
        raise FileNotFoundError(f"{name!r}: not a shipped SimAI example (files: {', '.join(shipped)})")
    return path
