"""The compiled circulant list schedule against the pure-Python loop it mirrors: the
same GPUs (or the same dead end) and the same work counted, so that a search under a
work budget stops at the same ring."""

import pytest
from hypothesis import given, settings, strategies as st

from fabricopt.algorithms._budget import Budget
from fabricopt.algorithms.placement.circulant_schedule import (OFFSET_FAMILIES,
                                                               circulant_masks,
                                                               circulant_offsets,
                                                               circulant_schedule)
from fabricopt.problems.placement import generate
from placement_cases import small_instances


def assert_same(inst, masks, limit=float("inf")):
    ours, theirs = Budget(limit), Budget(limit)
    compiled = circulant_schedule(inst, masks, _work=ours)
    reference = circulant_schedule(inst, masks, compiled=False, _work=theirs)
    assert compiled == reference
    assert ours.used == theirs.used
    return compiled


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), ops=st.integers(1, 1500), max_peers=st.integers(1, 15),
       extra=st.integers(0, 48), family=st.sampled_from(OFFSET_FAMILIES))
def test_compiled_matches_the_reference_on_rings(seed, ops, max_peers, extra, family):
    ring = min(max_peers + 1 + extra, 64)
    inst = generate(seed, ops=ops, gpus=ring, max_peers=max_peers)
    masks = circulant_masks(ring, circulant_offsets(family, max_peers))
    if masks is not None:
        assert_same(inst, masks)


@settings(max_examples=60, deadline=None)
@given(inst=small_instances(max_ops=12, max_gpus=6), family=st.sampled_from(OFFSET_FAMILIES),
       ring=st.integers(2, 8))
def test_compiled_matches_the_reference_on_small_dags(inst, family, ring):
    masks = circulant_masks(ring, circulant_offsets(family, 1))
    if masks is not None:
        assert_same(inst, masks)


@pytest.mark.parametrize("limit", [1, 500, 20_000])
def test_compiled_stops_where_the_reference_does_under_a_work_limit(limit):
    inst = generate(3, ops=800, gpus=24, max_peers=3)
    assert_same(inst, circulant_masks(24, circulant_offsets("powers-of-two", 3)), limit)


def test_compiled_dead_ends_where_the_reference_does():
    dead = []
    for seed in range(6):
        inst = generate(seed, ops=2000, gpus=64, max_peers=15)
        for ring in (24, 40, 64):
            dead.append(assert_same(inst, circulant_masks(ring, range(16))) is None)
    assert any(dead) and not all(dead)


@settings(max_examples=60, deadline=None)
@given(k=st.integers(1, 64), data=st.data())
def test_the_kernels_ring_masks_rotate_and_count_as_python_ints_do(k, data):
    import numpy as np

    from fabricopt.algorithms.placement import _circulant_kernel as kernel

    full = (1 << k) - 1
    mask = data.draw(st.integers(0, full))
    by = data.draw(st.integers(-2 * k, 2 * k))
    turned = int(kernel._turn(np.uint64(mask), by, k, np.uint64(full)))
    shift = by % k  # GPU g moves to g + by around a ring of k
    assert turned == ((mask << shift) | (mask >> (k - shift))) & full
    assert kernel._popcount(np.uint64(mask)) == bin(mask).count("1")
