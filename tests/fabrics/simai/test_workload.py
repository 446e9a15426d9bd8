"""The AICB / SimAI reader on the real 9,216-GPU MoE workload (shipped as package data)."""

import numpy as np
import pytest

from fabricopt import InvalidInstance
from fabricopt.fabrics.resolve import simai_data_path
from fabricopt.fabrics.simai.workload import GROUPS, parse_simai, read_simai

DATA = simai_data_path("")
MOE = DATA / "workload_analytical.txt"


@pytest.fixture(scope="module")
def moe():
    return read_simai(MOE)


@pytest.fixture(scope="module")
def rows():
    """The file split naively, independently of the reader."""
    lines = MOE.read_text().splitlines()
    return lines[0].split(), int(lines[1]), [ln.split() for ln in lines[2:] if ln.strip()]


def test_header_is_read(moe, rows):
    header, count, body = rows
    assert moe.policy == header[0] == "HYBRID_TRANSFORMER_FWD_IN_BCKWD"
    assert (moe.tp, moe.ep, moe.pp, moe.vpp, moe.ga, moe.all_gpus) == (2, 16, 12, 8, 24, 9216)
    assert moe.pp_comm_bytes == int(header[header.index("pp_comm") + 1])
    assert len(moe.layers) == count == len(body) == 1789


def test_compute_totals_match_the_file(moe, rows):
    _, _, body = rows
    ticks = moe.compute_ticks()
    for column, phase in ((2, "fwd"), (5, "ig"), (8, "wg"), (11, "update")):
        assert ticks[phase] == sum(int(r[column]) for r in body)
    assert moe.compute_s == pytest.approx(sum(ticks.values()) * 1e-9)
    assert read_simai(MOE, time_unit_s=1e-6).compute_s == pytest.approx(moe.compute_s * 1e3)


def test_comm_totals_match_the_file(moe, rows):
    _, _, body = rows
    expected = {}
    for r in body:
        for col, phase in ((3, "fwd"), (6, "ig"), (9, "wg")):
            if r[col] != "NONE":
                expected[(phase, r[col])] = expected.get((phase, r[col]), 0) + int(r[col + 1])
    got = {}
    for c in moe.collectives():
        suffix = {"TP": "", "DP": "", "EP": "_EP", "DP_EP": "_DP_EP"}[c.group]
        key = (c.phase, c.op + suffix)
        got[key] = got.get(key, 0) + c.bytes
    assert got == {k: v for k, v in expected.items() if v > 0}
    assert moe.comm_bytes()[("wg", "ALLGATHER", "DP_EP")] == 19327352832


def test_groups_partition_the_ranks(moe):
    groups = moe.groups(768)
    sizes = moe.group_sizes(768)
    assert sizes == {"TP": 2, "DP": 32, "EP": 16, "DP_EP": 2, "PP": 12}
    for kind, members in groups.items():
        assert members.shape[1] == sizes[kind]
        assert sorted(members.ravel()) == list(range(768))
    assert groups["TP"][0].tolist() == [0, 1]                  # TP ranks are adjacent
    assert groups["DP"][0].tolist() == list(range(0, 64, 2))   # same tp rank, same stage
    dp_of = {int(r): i for i, row in enumerate(groups["DP"]) for r in row}
    for row in [*groups["EP"], *groups["DP_EP"]]:
        assert len({dp_of[int(r)] for r in row}) == 1          # expert groups lie in a DP group
    ep_of = {int(r): i for i, row in enumerate(groups["EP"]) for r in row}
    for row in groups["DP_EP"]:                                # one member per EP group
        assert len({ep_of[int(r)] for r in row}) == len(row)


@pytest.mark.parametrize("gpus", [384, 1536, 9216])
def test_traffic_totals_match_the_collectives(moe, gpus):
    sizes = moe.group_sizes(gpus)
    expected = 0.0
    for c in moe.collectives():
        g = sizes[c.group]
        share = {"ALLREDUCE": 2.0, "ALLGATHER": 1.0, "REDUCESCATTER": 1.0, "ALLTOALL": 1.0}[c.op]
        expected += gpus * share * (g - 1) / g * c.bytes      # every GPU is in one group per kind
    pipelines = gpus // moe.pp
    expected += 2 * (moe.pp * moe.vpp - 1) * moe.ga * moe.pp_comm_bytes * pipelines
    traffic = moe.traffic(gpus)
    assert traffic.total_bytes == pytest.approx(expected, rel=1e-12)
    sent = traffic.sent_bytes()
    assert sent.min() > 0 and traffic.received_bytes().sum() == pytest.approx(sent.sum())


def test_microbenchmark_is_one_tp_ring():
    micro = read_simai(DATA / "microAllReduce.txt")
    t = micro.traffic(8)
    dense = t.to_dense()
    per_hop = 2 * 7 / 8 * (16777216 + 67108864)
    assert np.allclose(dense[np.arange(8), (np.arange(8) + 1) % 8], per_hop)
    assert dense.sum() == pytest.approx(8 * per_hop)
    assert t.to_traffic().nodes == 8


def test_alltoall_and_pipeline_pairs():
    text = ("HYBRID_TRANSFORMER model_parallel_NPU_group: 1 ep: 2 pp: 2 vpp: 1 ga: 3 "
            "all_gpus: 4 pp_comm 10\n1\n"
            "moe -1 1 ALLTOALL_EP 8 1 NONE 0 1 NONE 0 1\n")
    w = parse_simai(text)
    dense = w.traffic(4).to_dense()
    # ranks: stage 0 = {0, 1}, stage 1 = {2, 3}; EP groups {0, 1} and {2, 3}
    assert dense[0, 1] == dense[1, 0] == 8 / 2
    assert dense[0, 2] == dense[2, 0] == 3 * 10     # one stage boundary, 3 micro-batches
    assert dense[0, 3] == 0
    assert GROUPS[-1] == "PP"


@pytest.mark.parametrize("text, message", [
    ("", r"needs a header line"),
    ("MICRO ep: 1\n2\nl -1 1 NONE 0 1 NONE 0 1 NONE 0 1\n", r"line 2 = 2: announces 2 layer rows, the file has 1"),
    ("MICRO ep: 1\n1\nl -1 1 NONE 0 1 NONE 0 1 NONE 0\n", r"line 3 = .*: has 11 fields, expected 12"),
    ("MICRO ep: 1\n1\nl -1 x NONE 0 1 NONE 0 1 NONE 0 1\n", r"line 3 field 3 = 'x': must be an integer"),
    ("MICRO ep: 1\n1\nl -1 1 GATHER 0 1 NONE 0 1 NONE 0 1\n", r"line 3 fwd_comm = 'GATHER': unknown collective"),
    ("MICRO ep: 1 pp_comm: 1.5\n0\n", r"line 1: pp_comm = '1.5': must be a whole number"),
    ("MICRO ep: 1\n1\nl -1 1 ALLREDUCE_XY 0 1 NONE 0 1 NONE 0 1\n", r"unknown collective"),
    ("MICRO ep: 1\n1\nl -1 1 NONE -5 1 NONE 0 1 NONE 0 1\n", r"line 3 field 5 = -5: must be >= 0"),
    ("MICRO ep 1\n0\n", r"line 1 = 'ep': expected 'key: value' pairs"),
])
def test_malformed_files_name_the_line(text, message):
    with pytest.raises(InvalidInstance, match=message):
        parse_simai(text)


def test_gpu_counts_must_fit_the_parallelism(moe):
    with pytest.raises(InvalidInstance, match=r"gpus = 100: must be a multiple of TP\*PP = 24"):
        moe.traffic(100)
    with pytest.raises(InvalidInstance, match=r"gpus = 24: gives DP = 1, which EP = 16 must divide"):
        moe.traffic(24)
    with pytest.raises(InvalidInstance, match=r"cannot read"):
        read_simai(DATA / "no-such-file.txt")


def test_pp_comm_written_with_a_zero_fraction_reads_as_its_whole_number():
    text = ("T model_parallel_NPU_group: 1 ep: 1 pp: 2 vpp: 1 ga: 1 all_gpus: 2 "
            "pp_comm: 1048576.0\n0\n")
    assert parse_simai(text).pp_comm_bytes == 1048576


def test_broadcast_rows_are_read_and_send_the_whole_buffer_on_every_hop():
    text = ("T model_parallel_NPU_group: 4 ep: 1 pp: 1\n1\n"
            "embedding_layer -1 1 BROADCAST 1000 1 NONE 0 1 NONE 0 1\n")
    w = parse_simai(text)
    (c,) = w.collectives()
    assert (c.op, c.group, c.bytes) == ("BROADCAST", "TP", 1000)
    sent = w.traffic(4).sent_bytes()
    assert sent.tolist() == [1000.0] * 4
