"""SimAI-Analytical's collective-efficiency tables, and where it applies them.

SimAI-Analytical scales a collective's bus bandwidth by a measured efficiency
(achieved / peak bus bandwidth) that depends on the message size and the group's
shape. Its tables are CSV files (``nic_ratio.csv``, ``nvlink_ratio.csv``,
``ata_ratio.csv``): a header row, then one row per message size in bytes (first
column) with one efficiency per group shape — column 1 one NVLink node, columns 2-8
groups of 2, 4, ..., 128 nodes over NICs, column 9 the "Multi 16" shape. Facts of
SimAI-Analytical 1.7 source (``astra-sim/system/calbusbw.cc``), restated:

- every column is normalised to its 16 GiB entry (the last row), so the largest
  messages run at the nominal bus bandwidth;
- between two sizes the factor is interpolated linearly, below the smallest size the
  smallest size's factor is used; an empty cell reads as 1;
- a group of ``m`` nodes reads the column of ``m`` (1, 2, 4, ... 128), 9 nodes the
  "Multi" column (``getValue`` maps 9 to column 9), other node counts the 16-node
  column; above the largest size (SimAI stops with an error) we
  use the largest size's factor, 1;
- the factors apply only to TP AllGather / ReduceScatter (the NVLink table when
  NVLink is the bottleneck of the bus bandwidth, else the NIC table — a TP group inside a
  server reads the NIC table, whose one-node column equals the NVLink table's; column
  ``max(1, TP / gpus per server)``), TP all-to-all (the all-to-all table, column ``max(1, TP / gpus per
  server)``) and EP all-to-all (the all-to-all table: column 1 when ``TP*EP`` fits in a
  server, "Multi" when TP alone fills one, else ``TP*EP / gpus per server`` nodes);
  every other collective has factor 1.

The tables of SimAI (Apache-2.0) ship as package data in
``fabricopt/fabrics/data/simai/ratio/`` with their licence and notice.

References
----------
.. [1] aliyun/SimAI, ``astra-sim-alibabacloud/inputs/ratio/`` and
   ``astra-sim-alibabacloud/astra-sim/system/calbusbw.cc`` (``getValue``, ``cal_ratio``).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np

from fabricopt.errors import InvalidInstance
from fabricopt.problems._validate import fail

__all__ = ["EfficiencyTable", "Efficiency", "read_table", "read_efficiency",
           "simai_efficiency", "MULTI", "TABLE_FILES"]

#: The "Multi" group shape (column 9 of SimAI's tables).
MULTI = "multi"
#: The three tables and their file names.
TABLE_FILES = {"nic": "nic_ratio.csv", "nvlink": "nvlink_ratio.csv", "ata": "ata_ratio.csv"}
_NODE_COLUMNS = {1: 1, 2: 2, 4: 3, 8: 4, 16: 5, 32: 6, 64: 7, 128: 8, 9: 9, MULTI: 9}
_DEFAULT_COLUMN = 5


@dataclass(frozen=True, eq=False)
class EfficiencyTable:
    """One SimAI efficiency table: ``values[row, column]`` for ``sizes_bytes[row]``.

    Examples
    --------
    >>> t = EfficiencyTable("toy", np.array([1.0, 3.0]), np.array([[0.2, 0.5], [0.4, 1.0]]))
    >>> round(t.factor(2.0, 1), 12), t.factor(0.5, 2), t.factor(9.0, 1)
    (0.75, 0.5, 1.0)
    """

    name: str
    sizes_bytes: np.ndarray
    values: np.ndarray       # rows x (columns after the size column)

    def column(self, nodes) -> int:
        """The 1-based column of a group of ``nodes`` nodes (or :data:`MULTI`)."""
        return _NODE_COLUMNS.get(nodes, _DEFAULT_COLUMN)

    def factor(self, nbytes: float, column: int) -> float:
        """The efficiency of an ``nbytes`` message in 1-based ``column``, normalised
        to the column's largest-size entry (see the module docstring)."""
        if nbytes <= 0:
            return 1.0
        col = self.values[:, column - 1]
        return float(np.interp(nbytes, self.sizes_bytes, col) / col[-1])


def read_table(path) -> EfficiencyTable:
    """Read one table in SimAI's CSV format.

    Raises
    ------
    InvalidInstance
        If the file cannot be read, a cell is not a number, sizes do not increase,
        or a row is short of the 9 columns SimAI reads.
    """
    path = Path(path)
    try:
        rows = list(csv.reader(path.read_text().splitlines()))[1:]
    except OSError as exc:
        raise InvalidInstance(f"{path}: cannot read ({exc.strerror or exc})") from None
    rows = [r for r in rows if any(c.strip() for c in r)]
    if not rows:
        raise InvalidInstance(f"{path}: has no rows after the header")
    sizes, values = [], []
    for i, row in enumerate(rows, start=2):
        cells = [c.strip() or "1" for c in row]      # SimAI reads an empty cell as 1
        if len(cells) < 10:
            fail(f"{path.name} line {i}", row, "needs a size and 9 efficiency columns")
        try:
            numbers = [float(c) for c in cells[:10]]
        except ValueError:
            fail(f"{path.name} line {i}", row, "has a cell that is not a number")
        if numbers[0] <= 0 or any(v <= 0 for v in numbers[1:]):
            fail(f"{path.name} line {i}", row, "sizes and efficiencies must be > 0")
        sizes.append(numbers[0])
        values.append(numbers[1:])
    sizes_arr = np.array(sizes)
    if np.any(np.diff(sizes_arr) <= 0):
        fail(f"{path.name}", sizes, "sizes must increase down the file")
    return EfficiencyTable(path.stem, sizes_arr, np.array(values))


@dataclass(frozen=True, eq=False)
class Efficiency:
    """SimAI's three tables and the rule of where each applies (module docstring).

    Examples
    --------
    48 MiB lies half-way between the 32 MiB (0.55) and 64 MiB (0.65) rows of the NVLink
    column, whose 16 GiB entry is 0.81:

    >>> e = simai_efficiency()
    >>> round(e.collective_factor("TP", "ALLGATHER", 50331648, tp=2, ep=16,
    ...                           gpus_per_server=8), 4) == round(0.60 / 0.81, 4)
    True
    >>> e.collective_factor("DP", "ALLGATHER", 50331648, tp=2, ep=16, gpus_per_server=8)
    1.0
    """

    nic: EfficiencyTable
    nvlink: EfficiencyTable
    ata: EfficiencyTable

    def collective_factor(self, group: str, op: str, nbytes: float, *, tp: int, ep: int,
                          gpus_per_server: int, nvlink_bound: bool | None = None) -> float:
        """The efficiency of one collective (``op`` over ``group`` moving ``nbytes``).

        ``nvlink_bound`` says whether NVLink bounds the collective's bus bandwidth (it
        picks the table of a TP AllGather / ReduceScatter); default: a TP group inside
        a server is, one across servers is not.
        """
        if group == "TP" and op in ("ALLGATHER", "REDUCESCATTER"):
            if nvlink_bound is None:
                nvlink_bound = tp <= gpus_per_server
            table = self.nvlink if nvlink_bound else self.nic
            return table.factor(nbytes, table.column(max(1, tp // gpus_per_server)))
        if group == "TP" and op == "ALLTOALL":
            return self.ata.factor(nbytes, self.ata.column(max(1, tp // gpus_per_server)))
        if group == "EP" and op == "ALLTOALL":
            if tp * ep <= gpus_per_server:
                nodes = 1
            elif tp >= gpus_per_server:
                nodes = MULTI
            else:
                nodes = tp * ep // gpus_per_server
            return self.ata.factor(nbytes, self.ata.column(nodes))
        return 1.0


def read_efficiency(folder) -> Efficiency:
    """Read ``nic_ratio.csv``, ``nvlink_ratio.csv`` and ``ata_ratio.csv`` from ``folder``."""
    folder = Path(folder)
    return Efficiency(*(read_table(folder / TABLE_FILES[k]) for k in ("nic", "nvlink", "ata")))


@lru_cache(maxsize=1)
def simai_efficiency() -> Efficiency:
    """SimAI's own tables, shipped as package data (Apache-2.0, see SOURCE.md there)."""
    return read_efficiency(resources.files("fabricopt.fabrics") / "data" / "simai" / "ratio")
