"""SimAI-Analytical's rules (the simai rules): notes, options, and invariants."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabricopt import InvalidInstance
from fabricopt.fabrics.simai.analytical import (SimAICluster, simai_analytical_time,
                                                simai_bus_bandwidth, simai_collective_s)
from fabricopt.fabrics.simai.comparison import compare_simai
from fabricopt.fabrics.simai.iteration import simai_cluster, simai_iteration_time
from fabricopt.fabrics.simai.workload import parse_simai

HEAD = "HYBRID_TRANSFORMER_FWD_IN_BCKWD"


def _workload(tp, ep, rows, pp=1, extra=""):
    body = "\n".join(rows)
    return parse_simai(f"{HEAD} model_parallel_NPU_group: {tp} ep: {ep} pp: {pp} vpp: 1 ga: 1"
                       f"{extra}\n{len(rows)}\n{body}\n")


def test_ep_integer_node_count_is_kept_and_named():
    w = _workload(1, 12, ["moe -1 1 ALLTOALL_EP 67108864 1 NONE 0 1 NONE 0 0"])
    t = simai_analytical_time(w, SimAICluster(), 96)
    assert any("EP group of 12 GPUs as 1 node(s)" in n for n in t.notes)
    # SimAI prices it at NVLink; the physical model pays for the second server.
    physical = simai_iteration_time(w, simai_cluster(), 96)
    assert physical.exposed_by_group_s["EP"] > t.exposed_by_group_s["EP"]


def test_broadcast_costs_nothing_under_simai_and_says_so():
    w = _workload(4, 1, ["embedding_layer -1 1 BROADCAST 67108864 1 NONE 0 1 NONE 0 0"])
    t = simai_analytical_time(w, SimAICluster(), 4)
    assert t.exposed_comm_s == 0.0
    assert any("BROADCAST as no communication" in n for n in t.notes)
    assert simai_iteration_time(w, simai_cluster(), 4).exposed_comm_s > 0


def test_tp1_collectives_cost_nothing_where_simai_overflows():
    w = _workload(1, 1, ["l -1 1 ALLREDUCE 67108864 1 NONE 0 1 NONE 0 0"])
    t = simai_analytical_time(w, SimAICluster(), 8)
    assert t.exposed_by_group_s["TP"] == 0.0
    assert any("TP = 1" in n for n in t.notes)


def test_zero_integer_nic_share_takes_the_real_share():
    # 4 NICs per 8-GPU server at TP 8: SimAI's 4 // 8 = 0 NICs; the real share is 0.5.
    w = _workload(8, 1, ["l -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 134217728 0"])
    t = simai_analytical_time(w, SimAICluster(nics_per_server=4), 16)
    assert t.exposed_by_group_s["DP"] == pytest.approx(2 * 0.125 / (0.5 * 48.5) * 1 / 2)
    assert any("real share, 0.5 NICs" in n for n in t.notes)


def test_dp_overlap_covers_dp_ep_and_a_dp_ep_option_is_refused():
    w = _workload(2, 8, ["l -1 1 NONE 0 1 NONE 0 1 ALLREDUCE_DP_EP 67108864 0"])
    full = simai_analytical_time(w, SimAICluster(), 32)
    half = simai_analytical_time(w, SimAICluster(), 32, overlap={"DP": 0.5})
    assert half.exposed_by_group_s["DP_EP"] == pytest.approx(0.5 * full.exposed_by_group_s["DP_EP"])
    with pytest.raises(InvalidInstance, match=r"overlap = 'DP_EP': SimAI has no DP_EP overlap"):
        simai_analytical_time(w, SimAICluster(), 32, overlap={"DP_EP": 0.5})
    # The physical rules: DP= covers DP_EP unless DP_EP= is given.
    p_full = simai_iteration_time(w, simai_cluster(), 32)
    p_half = simai_iteration_time(w, simai_cluster(), 32, overlap={"DP": 0.5})
    assert p_half.exposed_by_group_s["DP_EP"] == pytest.approx(
        0.5 * p_full.exposed_by_group_s["DP_EP"])
    p_kept = simai_iteration_time(w, simai_cluster(), 32, overlap={"DP": 0.5, "DP_EP": 0.0})
    assert p_kept.exposed_by_group_s["DP_EP"] == pytest.approx(p_full.exposed_by_group_s["DP_EP"])


def test_bad_options_name_the_option():
    w = _workload(2, 1, ["l -1 1 NONE 0 1 NONE 0 1 NONE 0 0"], pp=2,
                  extra=" pp_comm: 1024")
    with pytest.raises(InvalidInstance, match=r"pp_overlap = 0.0: SimAI's pipeline formula"):
        simai_analytical_time(w, SimAICluster(), 4, pp_overlap=0.0)
    with pytest.raises(InvalidInstance, match=r"gpus_per_server = 0: must be >= 1"):
        SimAICluster(gpus_per_server=0)
    with pytest.raises(InvalidInstance, match=r"rules = 'simai': prices only elect-cluster"):
        compare_simai(w, 4, fabrics=["elect-cluster", "sip-ocs"], rules="simai")
    with pytest.raises(InvalidInstance, match=r"rules = 'nccl': must be one of physical, simai"):
        compare_simai(w, 4, rules="nccl")


def test_compare_rows_carry_the_rules_and_notes():
    w = _workload(1, 12, ["moe -1 1 ALLTOALL_EP 67108864 1 NONE 0 1 NONE 0 0"])
    (row,) = compare_simai(w, 96, rules="simai")
    assert row.rules == "simai" and "integer division" in row.note
    (row,) = compare_simai(w, 96)
    assert row.rules == "physical" and row.note == ""


@settings(max_examples=40, deadline=None)
@given(op=st.sampled_from(["ALLREDUCE", "ALLGATHER", "REDUCESCATTER", "ALLTOALL"]),
       group=st.sampled_from(["TP", "EP", "DP", "DP_EP"]),
       tp=st.sampled_from([1, 2, 4, 8, 16]), members=st.sampled_from([2, 3, 8, 12, 16, 72]),
       mib=st.integers(1, 4096), nic=st.floats(10.0, 400.0))
def test_collective_time_is_linear_in_bytes_and_never_slower_with_faster_nics(
        op, group, tp, members, mib, nic):
    cluster = SimAICluster(nic_GBps=nic)
    faster = SimAICluster(nic_GBps=2 * nic)
    kwargs = dict(tp=tp, ep=members if group == "EP" else 2, efficiency=None)
    one = simai_collective_s(op, group, members, mib * 2 ** 20, cluster=cluster, **kwargs)
    two = simai_collective_s(op, group, members, 2 * mib * 2 ** 20, cluster=cluster, **kwargs)
    assert two == pytest.approx(2 * one)
    assert simai_collective_s(op, group, members, mib * 2 ** 20, cluster=faster,
                              **kwargs) <= one * (1 + 1e-12)


@given(nodes=st.integers(2, 64), per_node=st.integers(1, 16), nics=st.integers(1, 16),
       nv=st.floats(10.0, 1000.0), nic=st.floats(1.0, 400.0))
def test_ring_bus_bandwidth_is_nccls_bound(nodes, per_node, nics, nv, nic):
    c = SimAICluster(nvlink_GBps=nv, nic_GBps=nic)
    bw = simai_bus_bandwidth("ALLGATHER", nodes, per_node, nics, c).GBps
    assert bw <= nics * nic * (1 + 1e-12)
    if per_node > 1:
        assert bw <= nv * per_node / (per_node - 1) * (1 + 1e-12)
