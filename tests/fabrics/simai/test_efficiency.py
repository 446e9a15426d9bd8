"""SimAI's efficiency tables: read from its CSV format, normalised, applied where SimAI does."""

import csv

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fabricopt import InvalidInstance
from fabricopt.fabrics.resolve import simai_data_path
from fabricopt.fabrics.simai.efficiency import MULTI, read_table, simai_efficiency

RATIO = simai_data_path("ratio")
TABLES = ("nic_ratio.csv", "nvlink_ratio.csv", "ata_ratio.csv")


def _naive(name):
    """The file split by hand: sizes and the 9 columns, empty cells as 1."""
    rows = list(csv.reader((RATIO / name).read_text().splitlines()))[1:]
    return ([float(r[0]) for r in rows],
            [[float(c) if c.strip() else 1.0 for c in r[1:10]] for r in rows])


@pytest.mark.parametrize("name", TABLES)
def test_tables_read_as_written_and_normalise_to_16_gib(name):
    table = read_table(RATIO / name)
    sizes, values = _naive(name)
    assert table.sizes_bytes.tolist() == sizes and sizes[-1] == 16 * 2 ** 30
    assert table.values.tolist() == values
    for column in range(1, 10):
        assert table.factor(16 * 2 ** 30, column) == 1.0
        # below the smallest size: the smallest size's factor
        assert table.factor(1.0, column) == pytest.approx(values[0][column - 1]
                                                          / values[-1][column - 1])


@given(st.sampled_from(TABLES), st.integers(1, 9), st.floats(1.0, 16 * 2 ** 30))
def test_factors_stay_within_the_column(name, column, nbytes):
    table = read_table(RATIO / name)
    col = table.values[:, column - 1] / table.values[-1, column - 1]
    assert col.min() - 1e-12 <= table.factor(nbytes, column) <= col.max() + 1e-12


def test_where_simai_applies_them():
    e = simai_efficiency()
    size = 64 * 2 ** 20                                  # a row of every table
    nvlink, nic, ata = (_naive(n)[1][2] for n in ("nvlink_ratio.csv", "nic_ratio.csv",
                                                  "ata_ratio.csv"))
    last = {n: _naive(n)[1][-1] for n in TABLES}

    def rel(name, row, col):
        return row[col - 1] / last[name][col - 1]

    f = e.collective_factor
    assert f("TP", "ALLGATHER", size, tp=2, ep=16, gpus_per_server=8) == \
        pytest.approx(rel("nvlink_ratio.csv", nvlink, 1))
    assert f("TP", "REDUCESCATTER", size, tp=16, ep=1, gpus_per_server=8) == \
        pytest.approx(rel("nic_ratio.csv", nic, 2))       # 2 servers over NICs
    assert f("TP", "ALLTOALL", size, tp=2, ep=1, gpus_per_server=8) == \
        pytest.approx(rel("ata_ratio.csv", ata, 1))
    assert f("EP", "ALLTOALL", size, tp=2, ep=16, gpus_per_server=8) == \
        pytest.approx(rel("ata_ratio.csv", ata, 3))       # TP*EP = 32 GPUs: 4 nodes
    assert f("EP", "ALLTOALL", size, tp=2, ep=4, gpus_per_server=8) == \
        pytest.approx(rel("ata_ratio.csv", ata, 1))       # fits in a server
    assert f("EP", "ALLTOALL", size, tp=8, ep=4, gpus_per_server=8) == \
        pytest.approx(rel("ata_ratio.csv", ata, 9))       # "Multi"
    for group, op in (("TP", "ALLREDUCE"), ("DP", "ALLGATHER"), ("DP_EP", "REDUCESCATTER"),
                      ("EP", "ALLGATHER")):
        assert f(group, op, size, tp=2, ep=16, gpus_per_server=8) == 1.0
    assert read_table(RATIO / "ata_ratio.csv").column(MULTI) == 9
    assert read_table(RATIO / "ata_ratio.csv").column(3) == 5      # SimAI's fallback


@pytest.mark.parametrize("text, message", [
    ("Size,a\n", r"has no rows"),
    ("Size,a\n1,0.5\n", r"needs a size and 9 efficiency columns"),
    ("Size\n1,x,1,1,1,1,1,1,1,1\n", r"not a number"),
    ("Size\n1,0,1,1,1,1,1,1,1,1\n", r"must be > 0"),
    ("Size\n2,1,1,1,1,1,1,1,1,1\n1,1,1,1,1,1,1,1,1,1\n", r"sizes must increase"),
])
def test_bad_tables_are_one_line_errors(tmp_path, text, message):
    path = tmp_path / "t.csv"
    path.write_text(text)
    with pytest.raises(InvalidInstance, match=message):
        read_table(path)


def test_a_missing_table_is_named(tmp_path):
    with pytest.raises(InvalidInstance, match=r"t.csv: cannot read"):
        read_table(tmp_path / "t.csv")
    assert np.isfinite(simai_efficiency().nic.values).all()
