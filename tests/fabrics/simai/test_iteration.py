"""Iteration time of SimAI/AICB traffic workloads: the composition, pinned by hand-computed
values and by SimAI-Analytical 1.7's published breakdown of its example workload."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fabricopt import InfeasibleInstance, InvalidInstance
from fabricopt import fabrics
from fabricopt.fabrics.models import (DirectConnect, ElectCluster, ElectFlat, FatTree, SipOcs,
                                      SipRing)
from fabricopt.fabrics.traffic import PairTraffic
from fabricopt.fabrics.resolve import simai_data_path
from fabricopt.fabrics.simai.workload import parse_simai
from fabricopt.fabrics.simai.iteration import (SMALL_MESSAGE_S, gib_per_s_to_gbps, simai_cluster,
                                               simai_iteration_time)

GIB = 2 ** 30
MICRO_BYTES = 16777216 + 67108864          # the two TP AllReduces of microAllReduce.txt
MICRO_COMPUTE_S = 2 * (556000 + 1 + 1) * 1e-9   # fwd + ig + wg ticks of its two rows


@pytest.fixture(scope="module")
def moe():
    return fabrics.read_simai(simai_data_path("workload_analytical.txt"))


@pytest.fixture(scope="module")
def micro():
    return fabrics.read_simai(simai_data_path("microAllReduce.txt"))


# SimAI-Analytical 1.7, -g 384 -nv 360 -nic 48.5 -n_p_s 8 -g_p_s 8.
REFERENCE_384 = {"compute_s": 4.5428, "exposed_comm_s": 1.5874, "bubble_s": 0.3460,
                 "iteration_s": 6.4762}
REFERENCE_GROUPS_384 = {"DP": 0.0379, "DP_EP": 0.0, "TP": 0.3267, "EP": 1.2228}


def test_the_preset_reproduces_simai_analytical_at_384_gpus(moe):
    t = simai_iteration_time(moe, simai_cluster(360.0, 48.5, 8, 8), 384)
    got = t.to_dict()
    for key, expected in REFERENCE_384.items():
        assert got[key] == pytest.approx(expected, rel=0.01), key
    for group, expected in REFERENCE_GROUPS_384.items():
        assert t.exposed_by_group_s[group] == pytest.approx(expected, rel=0.01, abs=1e-4), group
    assert t.exposed_by_group_s["PP"] == 0.0            # SimAI's default -pp_o 1
    assert t.iteration_s == pytest.approx(t.compute_s + t.exposed_comm_s + t.bubble_s)


def test_micro_all_reduce_by_hand(micro):
    # Two TP AllReduces over 8 GPUs of one server: 2 * 7/8 of the bytes at NVLink's 360 GiB/s.
    t = simai_iteration_time(micro, simai_cluster(360.0, 48.5, 8, 8), 8)
    tp_s = 2 * 7 / 8 * MICRO_BYTES / (360 * GIB)
    assert t.compute_s == pytest.approx(MICRO_COMPUTE_S)
    assert t.exposed_by_group_s == pytest.approx({"DP": 0.0, "DP_EP": 0.0, "TP": tp_s,
                                                  "EP": 0.0, "PP": 0.0})
    assert t.bubble_s == 0.0                              # PP = 1
    assert t.iteration_s == pytest.approx(MICRO_COMPUTE_S + tp_s)


def test_micro_on_a_flat_switch_by_hand(micro):
    t = simai_iteration_time(micro, ElectFlat(800.0), 8)
    assert t.exposed_comm_s == pytest.approx(2 * 7 / 8 * MICRO_BYTES * 8 / 800e9)


def test_overlap_hides_a_fraction_of_a_group(micro):
    full = simai_iteration_time(micro, ElectFlat(800.0), 8)
    half = simai_iteration_time(micro, ElectFlat(800.0), 8, overlap={"TP": 0.25})
    assert half.exposed_comm_s == pytest.approx(0.75 * full.exposed_comm_s)
    assert half.comm_by_group_s["TP"] == pytest.approx(full.comm_by_group_s["TP"])


def test_concurrent_equals_serial_when_one_group_sends(micro):
    # Two AllReduces of the same ring, at once or one after the other: the same bytes
    # per link in a fluid model.
    serial = simai_iteration_time(micro, ElectFlat(800.0), 8)
    concurrent = simai_iteration_time(micro, ElectFlat(800.0), 8, mode="concurrent")
    assert concurrent.exposed_comm_s == pytest.approx(serial.exposed_comm_s)
    assert concurrent.exposed_by_group_s is None


def test_concurrent_is_never_slower_than_serial(moe):
    cluster = simai_cluster()
    serial = simai_iteration_time(moe, cluster, 384, efficiency=None)
    concurrent = simai_iteration_time(moe, cluster, 384, mode="concurrent")
    assert concurrent.exposed_comm_s <= serial.exposed_comm_s * (1 + 1e-9)
    assert concurrent.exposed_comm_s >= max(serial.exposed_by_group_s.values()) * (1 - 1e-9)


def _one_row(comm: str, nbytes: int, tp: int = 2, pp: int = 1, ga: int = 1, vpp: int = 1,
             name: str = "layer") -> str:
    return (f"T model_parallel_NPU_group: {tp} ep: 1 pp: {pp} vpp: {vpp} ga: {ga} "
            f"all_gpus: {tp * pp} pp_comm 0\n1\n"
            f"{name} -1 1000 {comm} {nbytes} 2000 NONE 0 3000 NONE 0 7\n")


def test_small_messages_cost_the_fixed_latency():
    w = parse_simai(_one_row("ALLGATHER", 1000))
    t = simai_iteration_time(w, simai_cluster(), 2)
    assert t.exposed_by_group_s["TP"] == SMALL_MESSAGE_S
    t = simai_iteration_time(w, simai_cluster(), 2, small_message_s=0.5)
    assert t.exposed_by_group_s["TP"] == 0.5


def test_efficiency_applies_to_tp_allgather_by_the_table():
    # 48 MiB: half-way between the 32 MiB (0.55) and 64 MiB (0.65) rows of the NVLink
    # table's one-node column, whose 16 GiB entry is 0.81.
    nbytes = 48 * 2 ** 20
    w = parse_simai(_one_row("ALLGATHER", nbytes))
    bare = nbytes / 2 / (360 * GIB)
    t = simai_iteration_time(w, simai_cluster(), 2)
    assert t.exposed_comm_s == pytest.approx(bare / (0.60 / 0.81))
    assert simai_iteration_time(w, simai_cluster(), 2, efficiency=None).exposed_comm_s == \
        pytest.approx(bare)
    # AllReduce is priced at the nominal bus bandwidth.
    w = parse_simai(_one_row("ALLREDUCE", nbytes))
    assert simai_iteration_time(w, simai_cluster(), 2).exposed_comm_s == \
        pytest.approx(2 * bare)


def test_bubble_by_hand():
    text = ("T model_parallel_NPU_group: 1 ep: 1 pp: 2 vpp: 1 ga: 2 all_gpus: 2 pp_comm 0\n2\n"
            "embedding_layer -1 100 NONE 0 100 NONE 0 100 NONE 0 5\n"
            "layer -1 1000 NONE 0 2000 NONE 0 3000 NONE 0 7\n")
    t = simai_iteration_time(parse_simai(text), ElectFlat(100.0), 2)
    assert t.compute_s == pytest.approx(6300e-9)                # update ticks left out
    assert t.bubble_s == pytest.approx((2 - 1) / (2 * 1) * 6000e-9)   # embedding left out
    assert t.iteration_s == pytest.approx(6300e-9 + 3000e-9)


def test_bubble_counts_fwd_and_ig_comm_but_not_wg():
    nbytes = 64 * 2 ** 20
    fwd = parse_simai(_one_row("ALLREDUCE", nbytes, pp=2, ga=4, vpp=2))
    t = simai_iteration_time(fwd, ElectFlat(100.0), 4)
    comm = 2 * 1 / 2 * nbytes * 8 / 100e9
    assert t.bubble_s == pytest.approx(1 / 8 * (6000e-9 + comm))


def test_pipeline_traffic_is_exposed_only_when_asked():
    text = ("T model_parallel_NPU_group: 1 ep: 1 pp: 2 vpp: 1 ga: 3 all_gpus: 2 pp_comm 1000\n"
            "1\nlayer -1 1 NONE 0 1 NONE 0 1 NONE 0 1\n")
    w = parse_simai(text)
    assert simai_iteration_time(w, ElectFlat(8.0), 2).exposed_comm_s == 0.0
    t = simai_iteration_time(w, ElectFlat(8.0), 2, pp_overlap=0.0)
    # one boundary, 3 micro-batches of 1000 bytes each way, at 1 GB/s
    assert t.exposed_by_group_s["PP"] == pytest.approx(3000 / 1e9)


def test_sip_ocs_prices_collectives_on_its_job_circuits(micro):
    # A ring of 8: exact gives every GPU both of its circuits to its successor.
    fabric = SipOcs(switches=2, gbps=200.0)
    t = simai_iteration_time(micro, fabric, 8)
    assert t.exposed_comm_s == pytest.approx(2 * 7 / 8 * MICRO_BYTES * 8 / 200e9)
    assert t.allocation.result.method == "exact"


@pytest.mark.parametrize("name, gpus, switches", [("micro", 8, 2), ("micro", 16, 3),
                                                   ("micro", 16, 8), ("moe", 384, 32),
                                                   ("moe", 384, 64)])
def test_sip_ocs_prices_from_its_circuit_counts_as_from_its_switch_configurations(
        request, temporary_method, name, gpus, switches):
    from fabricopt.algorithms.circuits import exact
    from fabricopt.methods.result import SolverOutput

    workload, fabric = request.getfixturevalue(name), SipOcs(switches=switches, gbps=400.0)
    counted = simai_iteration_time(workload, fabric, gpus)
    assert counted.allocation.result.solution is None
    # a re-registered exact runs through solve: the same circuits, as permutations
    temporary_method("circuits", "exact",
                     lambda instance: SolverOutput(exact(instance), "optimal"), options=())
    solved = simai_iteration_time(workload, fabric, gpus)
    assert solved.allocation.result.solution is not None
    assert (counted.iteration_s, counted.exposed_comm_s, counted.exposed_by_group_s) == \
        (solved.iteration_s, solved.exposed_comm_s, solved.exposed_by_group_s)   # bit-equal


def test_direct_connect_is_at_least_the_port_bound(micro):
    t = simai_iteration_time(micro, DirectConnect(2, 100.0), 8)
    assert t.exposed_comm_s >= 2 * 7 / 8 * MICRO_BYTES * 8 / 200e9 * (1 - 1e-9)
    assert math.isfinite(t.iteration_s)


def test_fabrics_that_cannot_carry_the_moe_say_why(moe):
    with pytest.raises(InfeasibleInstance, match=r"sends to 18 GPUs but has only 16 ports"):
        simai_iteration_time(moe, SipOcs(16, 400.0), 384)
    with pytest.raises(InfeasibleInstance, match=r"hops apart both ways round"):
        simai_iteration_time(moe, SipRing(20), 384)


def test_iteration_time_takes_either_kind_of_workload(micro, moe):
    path = simai_data_path("microAllReduce.txt")
    fabric = ElectFlat(800.0)
    direct = simai_iteration_time(micro, fabric, 8)
    for spec in (micro, path, str(path), "simai-micro"):
        assert fabrics.iteration_time(spec, fabric, gpus=8).iteration_s == direct.iteration_s
    t = fabrics.iteration_time("resnet50", fabric, gpus=8, k=1, l=8)
    assert t.total_s > 0
    with pytest.raises(InvalidInstance, match=r"k = 1: a traffic workload .* carries its own"):
        fabrics.iteration_time(micro, fabric, gpus=8, k=1, l=8)
    with pytest.raises(InvalidInstance, match=r"resnet50 is an op-graph workload: give k and l"):
        fabrics.iteration_time("resnet50", fabric, gpus=8)
    with pytest.raises(InvalidInstance, match=r"apply only to traffic workloads"):
        fabrics.iteration_time("resnet50", fabric, gpus=8, k=1, l=8, mode="serial")


@pytest.mark.parametrize("kwargs, message", [
    ({"mode": "fast"}, r"mode = 'fast': must be one of serial, concurrent"),
    ({"overlap": {"XP": 0.5}}, r"overlap = 'XP': is not a group"),
    ({"overlap": {"TP": 1.5}}, r"overlap\[TP\] = 1.5"),
    ({"pp_overlap": -1}, r"pp_overlap = -1"),
    ({"efficiency": "/no/such/folder"}, r"cannot read"),
])
def test_bad_options_are_one_line_errors(micro, kwargs, message):
    with pytest.raises(InvalidInstance, match=message):
        simai_iteration_time(micro, ElectFlat(1.0), 8, **kwargs)


def test_gpu_counts_the_parallelism_does_not_divide(moe):
    with pytest.raises(InvalidInstance, match=r"gpus = 100: must be a multiple of TP\*PP = 24"):
        simai_iteration_time(moe, simai_cluster(), 100)


SMALL_MOE = parse_simai(
    "T model_parallel_NPU_group: 2 ep: 4 pp: 2 vpp: 2 ga: 4 all_gpus: 64 pp_comm 4194304\n2\n"
    "attention -1 1000 ALLGATHER 67108864 2000 REDUCESCATTER 67108864 3000 "
    "REDUCESCATTER 134217728 7\n"
    "moe -1 1000 ALLTOALL_EP 33554432 2000 ALLTOALL_EP 33554432 3000 "
    "ALLGATHER_DP_EP 67108864 7\n")


@given(nic=st.floats(1.0, 400.0), scale=st.floats(1.0, 64.0), nvlink=st.floats(10.0, 900.0))
def test_faster_nics_never_slow_the_iteration(nic, scale, nvlink):
    base = simai_iteration_time(SMALL_MOE, simai_cluster(nvlink, nic), 64)
    faster = simai_iteration_time(SMALL_MOE, simai_cluster(nvlink, nic * scale), 64)
    assert faster.iteration_s <= base.iteration_s * (1 + 1e-12)
    # TP stays inside the servers: NICs do not change it.
    assert faster.exposed_by_group_s["TP"] == pytest.approx(base.exposed_by_group_s["TP"])
    for t in (base, faster):
        assert t.iteration_s == pytest.approx(t.compute_s + t.exposed_comm_s + t.bubble_s)
        assert t.exposed_comm_s == pytest.approx(sum(t.exposed_by_group_s.values()))


def test_units():
    assert gib_per_s_to_gbps(1.0) == 8 * 2 ** 30 / 1e9
    assert isinstance(simai_cluster(), ElectCluster)


def test_direct_connect_gives_the_dp_ring_a_topology_at_the_port_bound():
    # One DP AllReduce over 4 GPUs, degree 2: TopoOpt's ring (or its two directions)
    # lets every GPU send at its whole port, as the ideal flat switch does.
    w = parse_simai("T model_parallel_NPU_group: 1 ep: 1 pp: 1\n1\n"
                    "l -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 1000000000 0\n")
    direct = simai_iteration_time(w, DirectConnect(2, 8.0), 4, efficiency=None)
    flat = simai_iteration_time(w, ElectFlat(16.0), 4, efficiency=None)
    assert direct.exposed_by_group_s["DP"] == pytest.approx(flat.exposed_by_group_s["DP"])
    assert direct.allocation.result.solution.rings             # the ring is TopoOpt's


@pytest.mark.slow
def test_direct_connect_at_384_gpus_responds_to_degree_and_bandwidth(moe):
    per_gpu = gib_per_s_to_gbps(48.5)
    times = {d: simai_iteration_time(moe, DirectConnect(d, per_gpu / d), 384)
             for d in (4, 8, 16)}
    ep = [times[d].exposed_by_group_s["EP"] for d in (4, 8, 16)]
    # More interfaces per GPU: more all-to-all peers one hop away.
    assert ep[0] > ep[1] > ep[2]
    assert len({round(t.iteration_s, 6) for t in times.values()}) == 3
    # Twice the bandwidth, the same topology: half the time (fixed small-message costs
    # set to 0, they do not scale).
    base, fast = (simai_iteration_time(moe, DirectConnect(8, k * per_gpu / 8), 384,
                                       small_message_s=0.0) for k in (1, 2))
    assert fast.exposed_comm_s == pytest.approx(base.exposed_comm_s / 2, rel=1e-6)


def test_sip_ring_reconfigures_per_phase_and_pays_a_retuning_each():
    # Two collectives of different groups: each gets its own lightpaths (a job-wide
    # schedule would split the wavelengths between them) and one 25 us retuning.
    w = parse_simai("T model_parallel_NPU_group: 2 ep: 1 pp: 1\n1\n"
                    "l -1 1 ALLREDUCE 100000000 1 NONE 0 1 ALLREDUCE 100000000 0\n")
    ring = SipRing(4, max_hops=3)
    t = simai_iteration_time(w, ring, 4, efficiency=None)
    # Each group alone: a ring of 2 members, every member sends 1e8 bytes to its
    # partner on all 4 wavelengths (one hop), at the duty cycle.
    alone = 1e8 * 8 / (4 * 25e9) / ring.duty_cycle + ring.reconfig_s
    assert t.exposed_by_group_s["TP"] == pytest.approx(alone)
    assert t.exposed_by_group_s["DP"] == pytest.approx(alone)
    assert t.allocation is None


def test_sip_ring_runs_a_dense_all_to_all_in_rounds():
    # All-to-all over 8 GPUs with 1 wavelength: one round per peer, one retuning each.
    w = parse_simai("T model_parallel_NPU_group: 1 ep: 8 pp: 1\n1\n"
                    "l -1 1 ALLTOALL_EP 80000000 1 NONE 0 1 NONE 0 0\n")
    ring = SipRing(1, max_hops=7)
    t = simai_iteration_time(w, ring, 8, efficiency=None)
    assert math.isfinite(t.exposed_by_group_s["EP"])
    # Every GPU sends 7 x 1e7 bytes through its one 25 Gbps transmitter: a lower bound.
    assert t.exposed_by_group_s["EP"] >= 7 * 1e7 * 8 / 25e9 / ring.duty_cycle


@pytest.mark.slow
def test_optical_what_ifs_at_384_gpus_respond_to_switches_and_bandwidth(moe):
    per_gpu = gib_per_s_to_gbps(48.5)
    ocs = {q: simai_iteration_time(moe, SipOcs(q, per_gpu), 384) for q in (18, 24)}
    assert ocs[18].iteration_s != pytest.approx(ocs[24].iteration_s)
    fast = simai_iteration_time(moe, SipOcs(18, 2 * per_gpu), 384, small_message_s=0.0)
    base = simai_iteration_time(moe, SipOcs(18, per_gpu), 384, small_message_s=0.0)
    assert fast.exposed_comm_s == pytest.approx(base.exposed_comm_s / 2, rel=1e-6)
    ring = simai_iteration_time(moe, SipRing(17, max_hops=32), 384)
    wider = simai_iteration_time(moe, SipRing(34, max_hops=32), 384)
    assert wider.exposed_comm_s < ring.exposed_comm_s


class _DenseCluster(ElectCluster):
    """SimAI's cluster priced through its N x N allocation (the dense path)."""

    sparse_pricing = False


class _DenseFlat(ElectFlat):
    sparse_pricing = False


class _DenseTree(FatTree):
    sparse_pricing = False


@pytest.mark.parametrize("mode", ["serial", "concurrent"])
@pytest.mark.parametrize("gpus", [384, 768])
def test_pricing_from_pairs_equals_pricing_the_dense_matrix(moe, mode, gpus):
    cluster = simai_cluster()
    pairs = [(cluster, _DenseCluster(cluster.intra_gbps, cluster.inter_gbps, 8)),
             (ElectFlat(400.0), _DenseFlat(400.0)),
             (FatTree(gpus, 400.0, oversubscription=2.0), _DenseTree(gpus, 400.0, 2.0))]
    for sparse, dense in pairs:
        got = simai_iteration_time(moe, sparse, gpus, mode=mode)
        want = simai_iteration_time(moe, dense, gpus, mode=mode)
        assert got.allocation is None and want.allocation is not None
        assert got.comm_by_group_s == pytest.approx(want.comm_by_group_s, rel=1e-12, abs=0.0)
        assert got.iteration_s == pytest.approx(want.iteration_s, rel=1e-12)
        assert got.bubble_s == pytest.approx(want.bubble_s, rel=1e-12, abs=0.0)
        if mode == "serial":
            assert got.exposed_by_group_s == pytest.approx(want.exposed_by_group_s,
                                                           rel=1e-12, abs=0.0)


def test_thousands_of_gpus_are_priced_without_an_n_by_n_matrix(moe, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("an N x N matrix was built")

    monkeypatch.setattr(PairTraffic, "to_dense", refuse)
    monkeypatch.setattr(ElectCluster, "allocate", refuse)
    for mode in ("serial", "concurrent"):
        t = simai_iteration_time(moe, simai_cluster(), 9216, mode=mode)
        assert t.iteration_s > t.compute_s > 0


def test_a_fat_tree_smaller_than_the_job_is_refused_before_pricing(micro):
    with pytest.raises(InvalidInstance, match=r"traffic_bytes = '16 x 16'.*8 hosts"):
        simai_iteration_time(micro, FatTree(8, 100.0), 16)
