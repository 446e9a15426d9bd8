"""Store faults: each ends in one line naming the file and the fault, and what is
stored stays stored."""

import os
import sqlite3

import pytest

from fabricopt.bench.store import Store
from fabricopt.cli import main
from fabricopt.errors import InvalidArgument


def _row(k: int) -> dict:
    return {"run_key": f"key-{k}", "suite": "s", "instance_id": f"circuits/t/{k}",
            "instance_hash": "h", "kind": "circuits", "sense": "min", "sizes": {},
            "method": "greedy", "seed": k, "time_limit_s": 1.0, "status": "feasible",
            "objective": 1.0, "info": {"pad": "x" * 200}}


@pytest.fixture
def stored(tmp_path):
    """A results folder holding 40 runs, closed (every page in the main file)."""
    folder = tmp_path / "out"
    with Store(folder) as store:
        for k in range(40):
            store.add(_row(k), "sweep")
    return folder


def _bytes(folder):
    return (folder / "bench.sqlite").read_bytes()


def _refused(folder, match):
    before = _bytes(folder)
    with pytest.raises(InvalidArgument, match=match) as info:
        Store(folder)
    assert "\n" not in str(info.value)
    assert _bytes(folder) == before  # nothing rewritten, nothing recreated
    assert sorted(p.name for p in folder.iterdir()) == ["bench.sqlite"]


def test_a_zero_length_store_is_refused_not_made_afresh(tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "bench.sqlite").touch()
    _refused(folder, r"bench.sqlite: cannot open the results database: the file is empty "
                     r"\(0 bytes\), not a database; move it away to start afresh$")


@pytest.mark.parametrize("keep", [0.5, 0.1])
def test_a_truncated_store_is_refused(stored, keep):
    data = _bytes(stored)
    (stored / "bench.sqlite").write_bytes(data[:int(len(data) * keep)])
    _refused(stored, r"bench.sqlite: cannot open the results database: the database is "
                     r"corrupted or truncated; move it away to start afresh$")


def test_a_store_with_a_damaged_page_is_refused(stored):
    data = bytearray(_bytes(stored))
    data[4096 + 8:4096 + 40] = b"\xff" * 32  # the header of the table's second page
    (stored / "bench.sqlite").write_bytes(bytes(data))
    _refused(stored, r"the database is corrupted or truncated")


def test_a_file_that_is_not_a_database_is_refused(tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "bench.sqlite").write_bytes(b"not sqlite at all\n" * 300)
    _refused(folder, r"cannot open the results database: not a results database "
                     r"\(corrupted or another kind of file\)")


def test_a_full_disk_keeps_every_run_stored_and_resume_goes_on(stored):
    with Store(stored) as store:
        pages = store._db.execute("PRAGMA page_count").fetchone()[0]
        # SQLite's own "database or disk is full" (SQLITE_FULL), as on a full disk
        store._db.execute(f"PRAGMA max_page_count = {pages}")
        with pytest.raises(InvalidArgument, match=r"bench.sqlite: cannot store a run: the "
                                                  r"disk is full; the runs stored so far are "
                                                  r"kept: free space, then add --resume$"):
            for k in range(40, 400):
                store.add(_row(k), "sweep")
    with Store(stored) as store:  # space freed: the next add works, nothing was lost
        kept = store.count()
        assert kept >= 40 and {f"key-{k}" for k in range(40)} <= store.keys()
        store.add(_row(999), "sweep")
        assert store.count() == kept + 1


def test_a_read_only_store_is_one_line(stored):
    with Store(stored) as store:
        store._db.execute("PRAGMA query_only = ON")  # SQLite's read-only refusal
        with pytest.raises(InvalidArgument, match=r"cannot store a run: it is read-only$"):
            store.add(_row(50), "sweep")
        assert store.count() == 40


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_folder_is_one_line(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        with pytest.raises(InvalidArgument, match=r"cannot open the results database: "):
            Store(folder)
    finally:
        folder.chmod(0o755)


def test_a_folder_under_a_file_is_one_line(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(InvalidArgument, match=r"file/out/bench.sqlite: cannot open the "
                                              r"results database: Not a directory$"):
        Store(tmp_path / "file" / "out")


def test_sqlite_errors_of_every_kind_become_one_line(stored, monkeypatch):
    with Store(stored) as store:
        class Broken:
            def execute(self, *args):
                raise sqlite3.OperationalError("disk I/O error")

        real, store._db = store._db, Broken()
        try:
            with pytest.raises(InvalidArgument, match=r"cannot read the results database: a "
                                                      r"disk I/O error$"):
                store.rows()
        finally:
            store._db = real


@pytest.mark.parametrize("damage", ["empty", "truncated"])
def test_the_commands_say_it_in_one_line_with_exit_2(stored, damage, capsys):
    data = _bytes(stored)
    (stored / "bench.sqlite").write_bytes(b"" if damage == "empty" else data[:len(data) // 3])
    for argv in (["bench", "report", str(stored), "--no-plots"],
                 ["reproduce", "hostile", "--quick", "--out", str(stored), "--resume",
                  "--no-progress"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("fabricopt: error: ") \
            and "bench.sqlite: cannot open the results database" in err, err
