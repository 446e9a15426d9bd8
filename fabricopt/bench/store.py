"""The results store: one SQLite file per results folder, one row per finished run.

Only the driver writes, one committed transaction per run as it finishes, so an
interrupted sweep loses no finished run. The database is in WAL mode with a generous
busy timeout, so a report can read it while a sweep writes
(:mod:`fabricopt.bench.runner` lets one sweep at a time write to a folder).

A store that cannot be used — its folder read-only or missing, the file truncated,
corrupted or empty, the disk full — raises :class:`~fabricopt.errors.InvalidArgument`
in one line naming the file and the fault, and the file is left as it was: the store
never recreates or rewrites a database it cannot read.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from pathlib import Path
from typing import Any, Iterator

from fabricopt.errors import InvalidArgument, printable

__all__ = ["Store", "COLUMNS", "DB_NAME", "store_faults", "database_path"]

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


#: SQLite's words for a fault, and what to tell the user about it.
_FAULTS = (
    ("disk is full", "the disk is full; the runs stored so far are kept: free space, then "
                     "add --resume"),
    ("readonly", "it is read-only"),
    ("read-only", "it is read-only"),
    ("unable to open", "cannot open it (is its folder writable?)"),
    ("not a database", "not a results database (corrupted or another kind of file); move "
                       "it away to start afresh"),
    ("malformed", "the database is corrupted or truncated; move it away to start afresh"),
    ("disk i/o error", "a disk I/O error"),
)


@contextlib.contextmanager
def store_faults(path: Path, doing: str) -> Iterator[None]:
    """Turn a SQLite or file-system error while ``doing`` something with the store at
    ``path`` into one line: ``InvalidArgument("<path>: cannot <doing>: <fault>")``.

    Examples
    --------
    >>> with store_faults(Path("r/bench.sqlite"), "store a run"):
    ...     raise sqlite3.OperationalError("database or disk is full")
    Traceback (most recent call last):
    ...
    fabricopt.errors.InvalidArgument: r/bench.sqlite: cannot store a run: the disk is full; the runs stored so far are kept: free space, then add --resume
    """
    try:
        yield
    except sqlite3.Error as exc:
        text = str(exc).lower()
        fault = next((say for words, say in _FAULTS if words in text), f"SQLite says {exc}")
        raise InvalidArgument(f"{printable(str(path))}: cannot {doing}: {fault}") from None
    except OSError as exc:
        raise InvalidArgument(f"{printable(str(path))}: cannot {doing}: "
                              f"{exc.strerror or exc}") from None


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


def database_path(path: str | Path, *, create: bool = True) -> Path:
    """The database file a results folder (or a file name ending in a suffix) names."""
    path = Path(path)
    if path.is_dir() or (create and not path.suffix):
        path = path / DB_NAME
    return path


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
        path = database_path(path, create=create)
        shown = printable(str(path))
        if not create and not path.is_file():
            raise InvalidArgument(f"{shown}: no results database here")
        if path.exists() and not path.is_file():
            raise InvalidArgument(f"{shown}: cannot open the results database: it is not a "
                                  f"regular file")
        if path.is_file() and path.stat().st_size == 0:
            # SQLite would take an empty file for a new database and build one in it
            raise InvalidArgument(f"{shown}: cannot open the results database: the file is "
                                  f"empty (0 bytes), not a database; move it away to start "
                                  f"afresh")
        self.path = path
        self._db = None
        with store_faults(path, "open the results database"):
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(path), timeout=120.0)
            self._db.row_factory = sqlite3.Row
            try:
                self._open()
            except BaseException:
                self.close()
                raise

    def _open(self) -> None:
        """SQLite's quick integrity check, then WAL mode, the table and its index: a
        truncated or corrupted file fails here, before anything is written to it, rather
        than in the middle of a sweep (the check reads every page once: milliseconds
        per megabyte)."""
        verdict = self._db.execute("PRAGMA quick_check(1)").fetchone()[0]
        if verdict != "ok":
            raise sqlite3.DatabaseError(f"database disk image is malformed ({verdict})")
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
        with store_faults(self.path, "store a run"), self._db:
            self._db.execute(f"INSERT INTO runs ({', '.join(n for n, _ in COLUMNS)}) "
                             f"VALUES ({marks})", values)

    def keys(self) -> set[str]:
        """Run keys already stored (what ``--resume`` skips)."""
        with store_faults(self.path, "read the results database"):
            return {r[0] for r in self._db.execute("SELECT DISTINCT run_key FROM runs")}

    def count(self) -> int:
        with store_faults(self.path, "read the results database"):
            return self._db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]

    def rows(self, latest: bool = True) -> list[dict[str, Any]]:
        """All runs as dicts (JSON columns parsed), oldest first.

        With ``latest`` (the default) a run stored twice (a sweep re-run without
        ``--resume``) counts once, by its most recent row.
        """
        where = ("WHERE id IN (SELECT MAX(id) FROM runs GROUP BY run_key)" if latest else "")
        with store_faults(self.path, "read the results database"):
            found = self._db.execute(f"SELECT * FROM runs {where} ORDER BY id").fetchall()
        out = []
        for r in found:
            d = dict(r)
            for name in _JSON:
                if d[name] is not None:
                    d[name] = json.loads(d[name])
            out.append(d)
        return out

    def close(self) -> None:
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._db = None

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
