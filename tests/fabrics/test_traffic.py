"""Traffic: validation, ring AllReduce volumes, port bound, hybrid MP x DP structure."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

from fabricopt import InvalidInstance
from fabricopt.fabrics.traffic import (Traffic, dp_groups, hybrid_traffic, mp_traffic,
                                       params_per_gpu, port_bound_s, ring_allreduce_bytes)
from fabricopt.problems.opgraph import OpGraph


@pytest.mark.parametrize("matrix, groups, message", [
    ([[0, -1], [0, 0]], (), r"traffic_bytes\[0\]\[1\] = -1.0: must be finite and >= 0"),
    ([[0, float("nan")], [0, 0]], (), r"traffic_bytes\[0\]\[1\] = nan"),
    ([[3, 0], [0, 0]], (), r"traffic_bytes\[0\]\[0\] = 3.0: the diagonal must be 0"),
    ([[0, 1, 2]], (), r"must be a non-empty square matrix"),
    ([[0, 1], [1, 0]], [{"members": [0, 2], "bytes": 1}], r"allreduce\[0\].members\[1\] = 2: must be <= 1"),
    ([[0, 1], [1, 0]], [{"members": [0, 0], "bytes": 1}], r"allreduce\[0\].members = \[0, 0\]: repeat a node"),
    ([[0, 1], [1, 0]], [{"members": [1], "bytes": 1}], r"at least 2 nodes"),
    ([[0, 1], [1, 0]], [{"members": [0, 1], "bytes": -1}], r"allreduce\[0\].bytes = -1.0: must be >= 0"),
])
def test_bad_traffic_names_the_field(matrix, groups, message):
    with pytest.raises(InvalidInstance, match=message):
        Traffic(matrix, groups)


@given(st.integers(2, 9), st.just(0.0) | st.floats(1e-300, 1e12))  # below 1e-300: invalid
def test_ring_allreduce_sends_two_g_minus_one_over_g(g, nbytes):
    t = Traffic(np.zeros((g, g)), [{"members": list(range(g))[::-1], "bytes": nbytes}])
    ring = t.ring_matrix()
    # every member sends to exactly one successor, in member order (reversed here)
    for i in range(g):
        assert ring[i, (i - 1) % g] == pytest.approx(2 * (g - 1) / g * nbytes)
    assert ring.sum() == pytest.approx(2 * (g - 1) * nbytes)


def test_the_total_is_a_fresh_array_each_call_over_one_kept_sum():
    t = Traffic([[0, 5], [0, 0]], [{"members": [0, 1], "bytes": 4}])
    first, second = t.total_matrix(), t.total_matrix()
    assert first is not second and first.flags.writeable
    first[0, 1] = -1.0                  # the caller's own: the traffic is unchanged
    assert second.tobytes() == (t.matrix_bytes + t.ring_matrix()).tobytes()
    assert t.total_matrix().tolist() == [[0.0, 9.0], [4.0, 0.0]]


def test_port_bound_takes_the_busier_direction():
    m = np.zeros((3, 3))
    m[1, 0] = m[2, 0] = 1e9        # GPU 0 receives 2 GB
    assert port_bound_s(m, 8.0) == 2.0
    assert port_bound_s(m.T, 8.0) == 2.0


def test_hybrid_traffic_replicates_mp_and_rings_each_position():
    mp = np.array([[0, 5, 0], [0, 0, 7], [1, 0, 0]], dtype=float)
    t = hybrid_traffic(mp, [4.0, 0.0, 2.0], k=3, l=4)
    assert t.nodes == 12
    for m in range(4):
        block = slice(3 * m, 3 * m + 3)
        assert np.array_equal(t.matrix_bytes[block, block], mp)
    assert t.matrix_bytes.sum() == 4 * mp.sum()
    assert [(g.members, g.bytes) for g in t.allreduce] == [((0, 3, 6, 9), 4.0), ((2, 5, 8, 11), 2.0)]
    assert dp_groups([4.0], 1, 1) == []          # no data parallelism, no ring


def test_mp_traffic_and_params_from_a_placement():
    graph = OpGraph([{"id": "a", "compute_s": 1, "params_bytes": 12},
                     {"id": "b", "compute_s": 1, "params_bytes": 4}],
                    [{"src": "a", "dst": "b", "bytes": 6}])
    inst = {"gpus": 3, "ops": [{"id": "a0", "group": "a"}, {"id": "a1", "group": "a"},
                               {"id": "a2", "group": "a"}, {"id": "b"}],
            "deps": [{"src": "a0", "dst": "b", "bytes": 2}, {"src": "a1", "dst": "b", "bytes": 2},
                     {"src": "a2", "dst": "b", "bytes": 2}]}
    gpu = {"a0": 0, "a1": 1, "a2": 2, "b": 1}
    assert mp_traffic(inst, gpu).tolist() == [[0, 2, 0], [0, 0, 0], [0, 2, 0]]
    assert params_per_gpu(graph, inst, gpu).tolist() == [4.0, 8.0, 4.0]
    with pytest.raises(InvalidInstance, match=r"ops.group = 'zz': names no op"):
        params_per_gpu(graph, {"gpus": 1, "ops": [{"id": "x", "group": "zz"}]}, {"x": 0})


_MP_CELLS = st.sampled_from([0.0, -0.0, 1.0, 2.5e9, 1e-300, -3.0, float("inf"), float("nan")])


@given(st.integers(1, 6).flatmap(lambda k: st.lists(_MP_CELLS, min_size=k * k, max_size=k * k)),
       st.integers(1, 5))
def test_the_block_diagonal_is_kron_cell_for_cell(cells, l):
    from fabricopt.fabrics.traffic import _block_diagonal
    k = int(len(cells) ** 0.5)
    mp = np.array(cells).reshape(k, k)
    with np.errstate(invalid="ignore"):         # kron's 0 * inf, as in _block_diagonal
        got, want = _block_diagonal(mp, l), np.kron(np.eye(l), mp)
    assert got.shape == want.shape and got.dtype == want.dtype
    assert got.tobytes() == want.tobytes()       # signs of zero and NaNs included


@st.composite
def _mp_blocks(draw):
    """A k x k model-parallel block, valid or with one bad cell (the diagonal included)."""
    k = draw(st.integers(2, 5))
    cells = draw(st.lists(st.sampled_from([0.0, -0.0, 1.0, 2.5e9, 1e-300]), min_size=k * k,
                          max_size=k * k))
    mp = np.array(cells).reshape(k, k)
    np.fill_diagonal(mp, 0.0)
    bad = draw(st.sampled_from([None, -3.0, float("inf"), float("nan"), 1.0]))
    if bad is not None:
        i = draw(st.integers(0, k - 1))
        j = i if bad == 1.0 else (i + draw(st.integers(0, k - 1))) % k
        mp[i, j] = bad
    return mp


@given(_mp_blocks(), st.integers(1, 5),
       st.lists(st.sampled_from([0.0, 4.0, 1e9]), min_size=5, max_size=5))
def test_hybrid_traffic_is_the_traffic_of_its_block_diagonal(mp, l, params):
    # hybrid_traffic checks the k x k block and keeps the block diagonal it builds: the
    # traffic (every byte, and every refusal's message) of the checked constructor
    k = mp.shape[0]

    def outcome(build):
        try:
            t = build()
        except InvalidInstance as exc:
            return str(exc)
        return (t.matrix_bytes.tobytes(), t.matrix_bytes.flags.writeable,
                [(g.members, g.bytes) for g in t.allreduce], t.ring_matrix().tobytes())

    with np.errstate(invalid="ignore"):
        reference = outcome(lambda: Traffic(np.kron(np.eye(l), mp), dp_groups(params[:k], k, l)))
        assert outcome(lambda: hybrid_traffic(mp, params[:k], k, l)) == reference


@given(st.lists(st.sampled_from([0, 1, 2, 3, -1, 4, 1.0, True, np.int64(2), "a"]),
                min_size=0, max_size=4))
def test_allreduce_members_read_as_cell_by_cell(members):
    def outcome(build):
        try:
            return [g.members for g in build().allreduce]
        except InvalidInstance as exc:
            return str(exc)
    from fabricopt.problems._validate import as_int
    zeros = np.zeros((4, 4))
    got = outcome(lambda: Traffic(zeros, [{"members": members, "bytes": 1.0}]))
    # the reference: every member through as_int, as the slow path does
    try:
        reference = tuple(as_int(f"allreduce[0].members[{i}]", v, minimum=0, maximum=3)
                          for i, v in enumerate(members))
    except InvalidInstance as exc:
        assert got == str(exc)
        return
    if len(set(reference)) == len(reference) and len(reference) >= 2:
        assert got == [reference] and all(type(v) is int for v in got[0])
    else:
        assert isinstance(got, str)
