"""The compiled Algorithm 1 against its pure-Python reference: the same GPUs, order,
relocation counts and so the same schedule, on generated balanced graphs (whose
relocations reach past the restart's replay bound from about 2,000 sub-ops) and on
small random DAGs (zero-byte deps, zero compute, one GPU)."""

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

from fabricopt.algorithms.placement.sipml import _KernelArrays, algorithm1, balance
from fabricopt.bench.experiments.placement_tasks import transformer_op_graph
from fabricopt.problems.placement import (Dep, PlacementInstance, evaluate, generate,
                                          schedule)
from placement_cases import small_instances


def assert_same_decisions(inst, **ring):
    reference = algorithm1(inst, compiled=False, **ring)
    compiled = algorithm1(inst, **ring)
    assert compiled == reference
    assert all(type(g) is int for g in compiled[0])
    ours, theirs = schedule(inst, *compiled[:2]), schedule(inst, *reference[:2])
    assert ours.gpu == theirs.gpu and ours.start_s == theirs.start_s
    assert evaluate(inst, ours) == evaluate(inst, theirs)
    return compiled[2]


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), ops=st.integers(1, 2500), gpus=st.integers(2, 64),
       max_peers=st.integers(1, 15), ring=st.sampled_from(["all", "window", "3"]))
def test_compiled_matches_the_reference_on_generated_graphs(seed, ops, gpus, max_peers, ring):
    inst = generate(seed, ops=ops, gpus=gpus, max_peers=min(max_peers, gpus))
    # the ring of all GPUs (relocations), the window's own ring (none), a ring of 3
    args = {"all": {}, "window": {"gpus": min(gpus, max_peers + 1), "degree": max_peers + 1},
            "3": {"gpus": min(3, gpus), "degree": 2}}[ring]
    assert_same_decisions(inst, **args)


@settings(max_examples=60, deadline=None)
@given(small_instances(max_ops=12, max_gpus=6))
def test_compiled_matches_the_reference_on_small_dags(inst):
    assert_same_decisions(inst)
    assert_same_decisions(inst, gpus=inst.gpus, degree=inst.gpus)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), ops=st.integers(150, 3000), gpus=st.integers(8, 64),
       max_peers=st.integers(1, 4))
def test_the_sparse_restart_matches_the_full_replay_on_relocating_graphs(seed, ops, gpus,
                                                                        max_peers):
    # the kernel re-times only the ops a relocation can change; the reference replays
    # every position from the snapshot: both must give the same GPUs
    inst = generate(seed, ops=ops, gpus=gpus, max_peers=max_peers)
    gpu, _, info = algorithm1(inst)
    assume(info["relocations"] > 0)
    reference_gpu, _, reference_info = algorithm1(inst, compiled=False)
    assert (gpu, info) == (reference_gpu, reference_info)


@pytest.mark.parametrize("seed", range(3))
def test_compiled_matches_where_relocations_reach_past_the_replay(seed):
    # 2,000 to 3,000 sub-ops: relocations move ops more than 1,024 positions back,
    # which are re-placed against the GPUs' last known timings
    info = assert_same_decisions(generate(seed, ops=3000, gpus=32, max_peers=3))
    assert info["relocations"] > 100


def test_compiled_matches_the_reference_on_the_transformer():
    inst = balance(transformer_op_graph(layers=2), 1e-5, 64, max_peers=15, link_gbps=400.0)
    info = assert_same_decisions(inst)
    assert info == {"relocations": 728, "relocated_ops": 2319}


def test_the_kernel_snapshots_and_replays_as_far_back_as_the_reference():
    from fabricopt.algorithms.placement import _algorithm1_kernel as kernel
    from fabricopt.algorithms.placement import sipml

    assert (kernel.SNAP, kernel.REPLAY) == (sipml._SNAP, sipml._REPLAY)


def _sorted_csr(rows, cols, n, *values):
    """The kernels' grouping sorted afresh: by row, each row's entries by column."""
    by = np.lexsort((cols, rows))
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=ptr[1:])
    return (ptr, np.ascontiguousarray(cols[by], dtype=np.int64),
            *(np.ascontiguousarray(v[by]) for v in values))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10 ** 6), st.integers(1, 120), st.integers(2, 8), st.data())
def test_the_kernel_arrays_group_the_deps_as_a_fresh_sort(seed, ops, gpus, data):
    inst = generate(seed=seed, ops=ops, gpus=gpus, max_peers=1)
    # some deps without bytes, so that the deps carrying bytes are a strict subset
    zero = data.draw(st.lists(st.booleans(), min_size=len(inst.deps), max_size=len(inst.deps)))
    deps = [Dep(d.src, d.dst, 0.0 if z else d.bytes) for d, z in zip(inst.deps, zero)]
    inst = PlacementInstance(inst.gpus, inst.max_peers, inst.link_gbps, inst.ops, deps)
    src, dst, n = inst.dep_src, inst.dep_dst, inst.size
    carries = inst._dep_bytes > 0
    arrays = _KernelArrays(inst._with_scalars(inst.gpus, inst.max_peers, 7.5))
    expected = {
        "parents": _sorted_csr(dst, src, n, arrays.instance.delay_s),
        "children": _sorted_csr(src, dst, n),
        "comm": (_sorted_csr(dst[carries], src[carries], n)
                 + _sorted_csr(src[carries], dst[carries], n)),
    }
    for name, want in expected.items():
        got = getattr(arrays, name)
        assert len(got) == len(want)
        for mine, theirs in zip(got, want):
            assert mine.dtype == theirs.dtype and mine.tobytes() == theirs.tobytes()
            assert mine.flags.c_contiguous
