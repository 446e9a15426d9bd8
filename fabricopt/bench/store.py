"""The results store: one SQLite file per results folder, one row per finished run.

Only the driver writes, one committed transaction per run as it finishes, so an
interrupted sweep loses no finished run. The database is in WAL mode with a generous
busy timeout, so two sweeps (two processes) can write to the same file at once.
"""

from __future__ import annotations

from fabricopt.errors import InvalidArgument

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

__all__ = ["Store", "COLUMNS", "DB_NAME"]

#: File name of the database inside a results folder.
DB_NAME = "bench.sqlite"

#: Columns of the ``runs`` table, in order, with their SQL types.
COLUMNS = (
    ("run_key", "TEXT NOT NULL"),        # suite, instance, hash, method, seed, time limit
    ("sweep", "TEXT NOT NULL"),          # id of the `fabricopt bench` invocation
    ("suite", "TEXT NOT NULL"),
    ("instance_id", "TEXT NOT NULL"),    # <kind>/<name>/<seed>
    ("instance_hash", "TEXT NOT NULL"),  # sha256 of the instance's canonical JSON
    ("kind", "TEXT NOT NULL"),
    ("sense", "TEXT NOT NULL"),          # min / max
    ("size", "INTEGER"),                 # ProblemKind.size
    ("sizes", "TEXT NOT NULL"),          # generator options, JSON
    ("method", "TEXT NOT NULL"),
    ("seed", "INTEGER NOT NULL"),
    ("time_limit_s", "REAL NOT NULL"),
    ("status", "TEXT NOT NULL"),         # optimal / feasible / infeasible / no_solution / error
    ("objective", "REAL"),
    ("bound", "REAL"),
    ("gap", "REAL"),                     # primal-dual gap of the envelope
    ("runtime_s", "REAL"),               # the method's own wall time (solve's runtime_s)
    ("wall_s", "REAL"),                  # the whole run, process start to answer
    ("peak_rss_bytes", "INTEGER"),
    ("message", "TEXT"),
    ("info", "TEXT"),                    # JSON
    ("versions", "TEXT"),                # JSON
    ("host", "TEXT"),
    ("finished_at", "TEXT"),
)
_JSON = ("sizes", "info", "versions")


def _enable_wal(db: sqlite3.Connection, timeout_s: float) -> None:
    """Switch to WAL journaling, retrying while another sweep is doing the same.

    Changing the journal mode of a new database takes an exclusive lock, and SQLite
    answers "database is locked" at once, without waiting on its busy timeout, when two
    sweeps open the same fresh database together.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


class Store:
    """A results database.

    Parameters
    ----------
    path : str or Path
        The SQLite file, or a folder (then ``<folder>/bench.sqlite``). Created if absent.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp, Store(tmp) as store:
    ...     store.count()
    0
    """

    def __init__(self, path: str | Path, *, create: bool = True):
        path = Path(path)
        if path.is_dir() or (create and not path.suffix):
            path = path / DB_NAME
        if not create and not path.is_file():
            raise InvalidArgument(f"{path}: no results database here")
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._db = sqlite3.connect(str(path), timeout=120.0)
        self._db.row_factory = sqlite3.Row
        _enable_wal(self._db, timeout_s=120.0)
        self._db.execute("PRAGMA synchronous=NORMAL")
        cols = ",\n  ".join(f"{name} {sql}" for name, sql in COLUMNS)
        with self._db:
            self._db.execute(f"CREATE TABLE IF NOT EXISTS runs (\n  id INTEGER PRIMARY KEY "
                             f"AUTOINCREMENT,\n  {cols})")
            self._db.execute("CREATE INDEX IF NOT EXISTS runs_key ON runs(run_key)")

    def add(self, row: dict[str, Any], sweep: str) -> None:
        """Store one finished run and commit at once."""
        values = []
        for name, _ in COLUMNS:
            value = sweep if name == "sweep" else row.get(name)
            if name in _JSON and value is not None:
                value = json.dumps(value, sort_keys=True, default=str)
            values.append(value)
        marks = ", ".join("?" for _ in COLUMNS)
        with self._db:
            self._db.execute(f"INSERT INTO runs ({', '.join(n for n, _ in COLUMNS)}) "
                             f"VALUES ({marks})", values)

    def keys(self) -> set[str]:
        """Run keys already stored (what ``--resume`` skips)."""
        return {r[0] for r in self._db.execute("SELECT DISTINCT run_key FROM runs")}

    def count(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]

    def rows(self, latest: bool = True) -> list[dict[str, Any]]:
        """All runs as dicts (JSON columns parsed), oldest first.

        With ``latest`` (the default) a run stored twice (a sweep re-run without
        ``--resume``) counts once, by its most recent row.
        """
        where = ("WHERE id IN (SELECT MAX(id) FROM runs GROUP BY run_key)" if latest else "")
        out = []
        for r in self._db.execute(f"SELECT * FROM runs {where} ORDER BY id"):
            d = dict(r)
            for name in _JSON:
                if d[name] is not None:
                    d[name] = json.loads(d[name])
            out.append(d)
        return out

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
