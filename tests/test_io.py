"""Reading and writing JSON: bounded reads, special files, duplicate keys, byte-order
marks, what ``load`` takes, atomic writes."""

import io
import json
import os
import threading

import pytest

import fabricopt
import fabricopt.io
from fabricopt.errors import InvalidArgument, InvalidInstance
from fabricopt.io import check_writable, load, load_solution, read_json, write_json
from fabricopt.problems import generate


@pytest.fixture
def instance():
    return generate("circuits", seed=1, gpus=4, switches=2)


# -- special files: refused before a byte is read ------------------------------------

@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_device_is_refused_before_reading(device):
    if not os.path.exists(device):
        pytest.skip(f"{device} does not exist here")
    with pytest.raises(InvalidInstance, match=rf"^{device}: cannot read \(it is a device, "
                                              r"not a regular file"):
        read_json(device)


def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    # opening a FIFO for reading blocks until a writer comes: run it in a thread that
    # a writer unblocks if read_json ever opens it, and fail then
    outcome = {}

    def target():
        try:
            read_json(fifo)
        except InvalidInstance as exc:
            outcome["error"] = str(exc)

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(timeout=30)
    if worker.is_alive():
        with open(fifo, "w"):  # unblock it
            pass
        pytest.fail("read_json opened the FIFO")
    assert outcome["error"] == (f"{fifo}: cannot read (it is a FIFO, not a regular file; "
                                f"use - to read standard input)")


def test_a_folder_is_refused(tmp_path):
    with pytest.raises(InvalidInstance, match=r"cannot read \(it is a folder"):
        read_json(tmp_path)


def test_reads_are_capped(monkeypatch):
    monkeypatch.setattr(fabricopt.io, "MAX_JSON_BYTES", 1000)
    zeros = io.BytesIO(b"\0" * 10_000)  # /dev/zero through standard input, in small
    with pytest.raises(InvalidInstance, match=r"^<file>: larger than 1,000 bytes, the most"):
        read_json(zeros)
    assert zeros.tell() == 1001  # read one byte past the cap, no more
    assert read_json(io.BytesIO(b"[" + b" " * 998 + b"]")) == []


def test_standard_input_is_capped(monkeypatch):
    monkeypatch.setattr(fabricopt.io, "MAX_JSON_BYTES", 100)

    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"0" * 500)))
    with pytest.raises(InvalidInstance, match=r"^<stdin>: larger than"):
        read_json("-")


def test_the_cap_is_documented():
    assert fabricopt.io.MAX_JSON_BYTES == 512 << 20
    assert "MAX_JSON_BYTES" in read_json.__doc__


# -- what JSON is accepted -------------------------------------------------------------

def test_a_key_twice_in_one_object_is_refused(tmp_path, instance):
    text = json.dumps(instance.to_dict()).replace('"switches": 2', '"switches": 2, '
                                                                   '"switches": 3')
    path = tmp_path / "dup.json"
    path.write_text(text)
    with pytest.raises(InvalidInstance, match=r"dup.json: not valid JSON \(the key "
                                              r"'switches' appears twice in one object\)"):
        load(path)


def test_a_key_repeated_in_different_objects_is_fine():
    assert read_json(io.StringIO('[{"a": 1}, {"a": 2}]')) == [{"a": 1}, {"a": 2}]


def test_a_byte_order_mark_is_accepted_from_every_source(tmp_path, instance):
    text = "\ufeff" + json.dumps(instance.to_dict())
    path = tmp_path / "bom.json"
    path.write_text(text, encoding="utf-8")
    assert load(path) == instance
    with open(path, encoding="utf-8") as text_mode:  # keeps the mark as U+FEFF
        assert load(text_mode) == instance
    with open(path, "rb") as binary:
        assert load(binary) == instance
    assert load(io.StringIO(text)) == instance


# -- what load takes ---------------------------------------------------------------------

@pytest.mark.parametrize("source, shown", [(None, "None"), (3, "3"), (2.5, "2.5"),
                                           (b"{}", r"b'\{\}'"), ([1], r"\[1\]")])
def test_load_names_a_source_it_cannot_read(source, shown):
    with pytest.raises(InvalidArgument, match=rf"^source = {shown}: must be a path, '-' for "
                                              r"standard input, an open file or a parsed"):
        load(source)


def test_load_takes_parsed_json_as_solve_does(instance):
    assert load(instance.to_dict()) == instance
    result = fabricopt.solve(instance.to_dict(), "greedy")
    assert load(result.to_dict()).objective == result.objective
    assert load_solution(result.solution.to_dict(), "circuits") == result.solution


def test_a_path_with_a_nul_byte_is_one_line(tmp_path):
    with pytest.raises(InvalidInstance, match=r"cannot read \(.*null byte"):
        read_json(str(tmp_path / "a\0b.json"))


# -- writing -------------------------------------------------------------------------------

def test_write_json_replaces_atomically_and_keeps_the_mode(tmp_path):
    path = tmp_path / "r.json"
    path.write_text("old")
    path.chmod(0o640)
    write_json({"a": 1}, path)
    assert json.loads(path.read_text()) == {"a": 1}
    assert path.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no temporary file left


def test_a_failed_write_leaves_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "r.json"
    path.write_text("old")

    def full(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fabricopt.io.os, "replace", full)
    with pytest.raises(InvalidArgument, match=r"r.json: cannot write \(No space left on "
                                              r"device\)$"):
        write_json({"a": 1}, path)
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


@pytest.mark.parametrize("where, rule", [
    ("missing/r.json", r"the folder .*missing does not exist"),
    ("", r"it is a folder; name a file"),
    ("file.txt/r.json", r"the folder .*file.txt is not a folder"),
])
def test_check_writable_names_the_fault(tmp_path, where, rule):
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(InvalidArgument, match=rf"cannot write \({rule}\)$"):
        check_writable(tmp_path / where)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_check_writable_refuses_a_read_only_folder(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        with pytest.raises(InvalidArgument, match=r"is not writable\)$"):
            check_writable(folder / "r.json")
    finally:
        folder.chmod(0o755)
