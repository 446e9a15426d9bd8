"""The mcf rounding and first-fit colouring give the same schedules as the plain Python
oracle (tests/algorithms/_wavelengths_reference.py), and the compiled colouring loop the
same colours and busy bitmasks as the Python loop."""

import math
import pathlib
import sys
from collections import Counter
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fabricopt.algorithms import wavelengths as heuristics
from fabricopt.algorithms._first_fit_kernel import hold
from fabricopt.errors import InvalidArgument
from fabricopt.methods.wavelengths import _fractional_counts
from fabricopt.models.wavelengths import ArcFlows
from fabricopt.problems import check
from fabricopt.problems.wavelengths import WavelengthsInstance, generate

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import _fill_reference as fill_reference  # noqa: E402
import _wavelengths_reference as reference  # noqa: E402


@st.composite
def arcs(draw):
    n = draw(st.integers(2, 40))
    m = draw(st.integers(0, 120))
    first = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    hops = draw(st.lists(st.integers(1, n - 1), min_size=m, max_size=m))
    return n, first, hops


@given(arcs())
def test_compiled_colouring_matches_the_python_loop(case):
    n, first, hops = case
    compiled = heuristics._colour_arcs(n, first, hops)
    python = heuristics._colour_arcs(n, first, hops, compiled=False)
    assert compiled == python
    assert compiled[0] == reference.first_fit(n, first, hops)


def test_colouring_past_64_colours_uses_several_words():
    n, first, hops = 5, [0] * 150 + [2] * 10, [3] * 150 + [2] * 10
    colours, used = heuristics._colour_arcs(n, first, hops)
    assert (colours, used) == heuristics._colour_arcs(n, first, hops, compiled=False)
    assert sorted(colours[:150]) == list(range(150))
    assert used[0] == (1 << 150) - 1


def _same(instance, flows, **options):
    new = heuristics.mcf_schedule(instance, flows, **options)
    old = reference.mcf_schedule(instance, flows, **options)
    assert (new is None) == (old is None)
    if new is not None:
        assert new.lightpaths == old.lightpaths
        assert check(instance, new).feasible
    return new


def _random_flows(instance, seed, most):
    """Fractional counts drawn uniformly in [0, most) for both fibers of every pair."""
    rng = np.random.default_rng(seed)
    src, dst, _, _, _ = instance.pairs
    return {(int(i), int(j), d): float(rng.uniform(0, most))
            for i, j in zip(src, dst) for d in ("cw", "ccw")}


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**6), st.integers(6, 24), st.integers(2, 9), st.integers(1, 6),
       st.sampled_from(["hybrid", "long-reach"]), st.booleans())
def test_mcf_schedule_matches_the_reference_on_generated_instances(
        seed, nodes, wavelengths, hops, family, fill):
    instance = generate(seed=seed, nodes=nodes, wavelengths=wavelengths, max_hops=min(hops, nodes - 1),
                        family=family)
    flows, _, _ = _fractional_counts(instance, None, 0, "highs")
    _same(instance, flows, seed=seed, fill=fill, rounds=3)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**6), st.integers(6, 24), st.integers(2, 12), st.integers(1, 6))
def test_mcf_schedule_matches_the_reference_on_random_fractions(
        seed, nodes, wavelengths, hops):
    # Counts far above what fits: the repair, the eviction and the re-cover steps all run.
    instance = generate(seed=seed, nodes=nodes, wavelengths=wavelengths, max_hops=min(hops, nodes - 1))
    _same(instance, _random_flows(instance, seed, 2 * wavelengths), seed=seed, rounds=2)


def test_mcf_schedule_matches_the_reference_on_a_ring_with_model_parallel_pairs():
    # compare's shape: an all-reduce ring (i -> i+1) plus model-parallel pairs in groups.
    nodes, group = 32, 4
    traffic = np.zeros((nodes, nodes))
    for i in range(nodes):
        traffic[i, (i + 1) % nodes] = 4e8
        base = i - i % group
        for d in range(1, group):
            traffic[i, base + (i - base + d) % group] += 1e8
    instance = WavelengthsInstance(nodes, 6, 25.0, 4, traffic.tolist())
    flows, _, _ = _fractional_counts(instance, None, 0, "highs")
    assert _same(instance, flows, seed=0) is not None



def _filled(seed, nodes, wavelengths, hops, family, moves):
    """A schedule after ``moves`` (place a lightpath of pair ``m % pairs``, or, every
    fourth move, remove one), then filled until no pair can get one more."""
    instance = generate(seed=seed, nodes=nodes, wavelengths=wavelengths,
                        max_hops=min(hops, nodes - 1), family=family)
    pairs = heuristics._Pairs(instance)
    state = heuristics._Schedule(instance, pairs)
    for move in moves:
        if move % 4 == 0 and state.paths:
            state.remove(sorted(state.paths)[move % len(state.paths)])
        else:
            state.place(move % len(pairs))
    while any(state.place(k) is not None for k in range(len(pairs))):
        pass
    return state


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6), st.integers(6, 30), st.integers(1, 10), st.integers(2, 12),
       st.sampled_from(["hybrid", "long-reach"]),
       st.lists(st.integers(0, 10**6), max_size=80), st.floats(0.0, 2e7))
def test_compiled_eviction_search_chooses_as_the_python_search(
        seed, nodes, wavelengths, hops, family, moves, limit):
    # A full ring (no pair can get a lightpath without evicting), then for every pair
    # and limits from none to tight: the same lightpaths evicted, or none in both.
    state = _filled(seed, nodes, wavelengths, hops, family, moves)
    chosen = 0
    for k in range(len(state.pairs)):
        for bound in (float("inf"), limit):
            compiled = heuristics._eviction_compiled(state, k, bound)
            python = heuristics._eviction_python(state, k, bound)
            assert (compiled is None) == (python is None), (k, bound)
            assert compiled is None or set(compiled) == python, (k, bound)
            chosen += compiled is not None


def test_the_eviction_search_finds_choices_with_victims_on_a_full_ring():
    # The search above is not vacuous: on a filled ring it picks lightpaths to evict.
    state = _filled(3, 20, 8, 6, "long-reach", [])
    found = [heuristics._eviction_compiled(state, k, float("inf"))
             for k in range(len(state.pairs))]
    assert None in found                                  # some pairs cannot get one
    assert sorted({len(v) for v in found if v is not None}) == [1, 2]   # others evict



def test_mcf_fill_up_evicts_as_the_python_search_on_a_tight_ring():
    # The whole mcf_schedule, eviction by eviction: the same choices as in Python, and
    # the same lightpaths as the reference.
    instance = generate(seed=3, nodes=12, wavelengths=4, max_hops=4, family="long-reach")
    flows = _random_flows(instance, 3, 12)
    outcomes = []
    compiled = heuristics._eviction_compiled

    def both(state, k, limit):
        chosen = compiled(state, k, limit)
        expected = heuristics._eviction_python(state, k, limit)
        assert (chosen is None) == (expected is None)
        assert chosen is None or set(chosen) == expected
        outcomes.append(None if chosen is None else len(chosen))
        return chosen

    # The fill-up's evictions are the Python loop's, checked against the compiled one.
    with mock.patch.object(heuristics, "_eviction_compiled", both), \
            mock.patch.object(heuristics, "_augment", fill_reference.checked(Counter())):
        _same(instance, flows, seed=0, rounds=2)
    assert outcomes == [2, 3, None, 2, 3, None]   # two evictions, then stuck, per round


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 10**6), st.integers(5, 12), st.integers(60, 140), st.integers(1, 5),
       st.booleans())
def test_mcf_schedule_matches_the_reference_past_64_wavelengths(
        seed, nodes, wavelengths, hops, from_lp):
    # Bitmasks of several 64-bit words, cut to W: LP counts, or counts far above what
    # fits (the repair, eviction and fill-up steps run).
    instance = generate(seed=seed, nodes=nodes, wavelengths=wavelengths,
                        max_hops=min(hops, nodes - 1))
    if from_lp:
        flows, _, _ = _fractional_counts(instance, None, 0, "highs")
    else:
        flows = _random_flows(instance, seed, 2 * wavelengths)
    _same(instance, flows, seed=seed, rounds=2)


def test_a_crowded_ring_past_64_wavelengths_runs_every_step():
    # The case above is not vacuous: repair, forcing and fill-up all act on it.
    instance = generate(seed=5, nodes=10, wavelengths=70, max_hops=4)
    flows = _random_flows(instance, 5, 140)
    calls = {}

    def spy(name):
        real = getattr(heuristics, name)

        def counted(*args, **kwargs):
            calls[name] = calls.get(name, 0) + 1
            return real(*args, **kwargs)
        return mock.patch.object(heuristics, name, counted)

    with spy("_repair"), spy("_force"), spy("_augment"):
        assert _same(instance, flows, seed=5, rounds=2) is not None
    assert set(calls) == {"_repair", "_force", "_augment"}


@given(arcs(), st.integers(1, 200))
def test_a_fiber_keeps_the_colours_below_w(case, w):
    n, first, hops = case
    colours, used = heuristics._colour_fiber(n, np.array(first, np.int64),
                                             np.array(hops, np.int64), w)
    expected, busy = heuristics._colour_arcs(n, first, hops, compiled=False)
    assert colours.tolist() == expected
    assert used.shape == (n, (w + 63) // 64)
    assert heuristics._bitmasks(used) == [u & ((1 << w) - 1) for u in busy]


@given(arcs(), st.integers(1, 9), st.randoms())
def test_compiled_holding_marks_every_segment_of_every_arc(case, w, rnd):
    n, first, hops = case
    wls = [rnd.randrange(w) for _ in first]
    owner = np.full((n, w), -1, np.int64)
    hold(owner, np.array(first, np.int64), np.array(hops, np.int64),
         np.array(wls, np.int64), np.arange(len(first), dtype=np.int64))
    expected = np.full((n, w), -1, np.int64)
    for i, (a, h, c) in enumerate(zip(first, hops, wls)):
        for s in range(a, a + h):
            expected[s % n, c] = i
    assert np.array_equal(owner, expected)


def _reference_arcs(pairs, flows):
    """The reference's arcs of ``flows``: (pair, ccw) keys, segments and values, in
    sorted key order (tests/algorithms/_wavelengths_reference.py's own loop)."""
    index = {end: k for k, end in enumerate(zip(pairs.src, pairs.dst))}
    keys, segs, values = [], [], []
    for (i, j, direction), value in sorted(flows.items()):
        k = index.get((i, j))
        ccw = direction == "ccw"
        found = None if k is None else pairs.segs[k][ccw]
        if found is not None:
            keys.append((k, ccw))
            segs.append(found)
            values.append(max(float(value), 0.0))
    return keys, segs, values


@st.composite
def _odd_flows(draw, instance):
    """Flows keyed as callers may key them: pairs with and without traffic, ends out
    of the ring, bools, floats and numpy integers, values negative, zero and fractional."""
    n = instance.nodes
    end = st.one_of(st.integers(-2, n + 1), st.integers(0, n - 1).map(np.int64),
                    st.booleans(), st.sampled_from([1.0, 2.5]))
    key = st.tuples(end, end, st.sampled_from(["cw", "ccw", "cw2"]))
    value = st.one_of(st.floats(-2.0, 9.0), st.integers(-1, 9), st.just(-0.0))
    demanded = st.sampled_from(instance.demanded).flatmap(
        lambda ij: st.tuples(st.just(ij[0]), st.just(ij[1]), st.sampled_from(["cw", "ccw"])))
    return draw(st.dictionaries(st.one_of(key, demanded), value, max_size=40))


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 10**6), st.integers(6, 16), st.integers(1, 5), st.data())
def test_the_arcs_of_any_flows_follow_their_sorted_keys(seed, nodes, hops, data):
    instance = generate(seed=seed, nodes=nodes, wavelengths=3, max_hops=min(hops, nodes - 1))
    pairs = heuristics._Pairs(instance)
    flows = data.draw(st.sampled_from([{}, _random_flows(instance, seed, 3)]))
    flows.update(data.draw(_odd_flows(instance)))
    arcs = heuristics._Arcs(instance, pairs, flows)
    keys, segs, values = _reference_arcs(pairs, flows)
    assert list(zip(arcs.pair_array.tolist(), arcs.ccw.tolist())) == keys
    assert [heuristics._circular(a, h, nodes) for a, h in zip(arcs.first, arcs.hops)] == \
        [tuple(s) for s in segs]
    assert arcs.values.tolist() == values
    assert [math.copysign(1, v) for v in arcs.values] == [math.copysign(1, v) for v in values]


# heuristics._repair runs the compiled fabricopt.algorithms._repair_kernel.repair
@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6), st.integers(6, 30), st.integers(1, 10), st.integers(1, 8),
       st.sampled_from(["hybrid", "long-reach"]), st.floats(0.5, 4.0))
def test_compiled_repair_removes_as_the_python_repair(seed, nodes, wavelengths, hops, family,
                                                      crowding):
    # Rounded counts up to ``crowding`` times what fits: segments and transceivers over W.
    instance = generate(seed=seed, nodes=nodes, wavelengths=wavelengths,
                        max_hops=min(hops, nodes - 1), family=family)
    pairs = heuristics._Pairs(instance)
    flows = _random_flows(instance, seed, crowding * wavelengths)
    arcs = heuristics._Arcs(instance, pairs, flows)
    alloc = heuristics._round(arcs.values, np.random.default_rng(seed))
    expected = alloc.copy()
    heuristics._repair(instance, pairs, arcs, alloc)
    keys, segs, _ = _reference_arcs(pairs, flows)
    reference._repair(instance, pairs, keys, segs, expected)
    assert alloc.tolist() == expected.tolist()


def test_the_repair_above_removes_from_segments_and_from_transceivers():
    # Not vacuous: on a crowded ring the repair lowers counts for both reasons.
    instance = generate(seed=4, nodes=12, wavelengths=3, max_hops=4, family="long-reach")
    pairs = heuristics._Pairs(instance)
    arcs = heuristics._Arcs(instance, pairs, _random_flows(instance, 4, 9))
    alloc = heuristics._round(arcs.values, np.random.default_rng(4))
    before = alloc.copy()
    heuristics._repair(instance, pairs, arcs, alloc)
    assert (alloc <= before).all() and alloc.sum() < before.sum()
    w, n = instance.wavelengths, instance.nodes

    def most_on_a_segment(counts):
        load = np.zeros((2, n), np.int64)
        for d, a, h, c in zip(arcs.ccw, arcs.first, arcs.hops, counts):
            load[int(d), (a + np.arange(h)) % n] += c
        return load.max()

    def most_at_a_node(counts, ends):
        return np.bincount(ends[arcs.pair_array], weights=counts).max()

    assert most_on_a_segment(before) > w and most_on_a_segment(alloc) <= w
    for ends in (pairs.src_array, pairs.dst_array):
        assert most_at_a_node(alloc, ends) <= w
    assert most_at_a_node(before, pairs.src_array) > w


def test_a_flows_key_that_is_not_a_triple_is_refused():
    instance = generate(seed=1, nodes=6, wavelengths=2, max_hops=2)
    with pytest.raises(InvalidArgument, match=r"flows key \(0, 1\): must be \(src, dst, direction\)"):
        heuristics.mcf_schedule(instance, {(0, 1, "cw"): 1.0, (0, 1): 1.0})


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6), st.integers(6, 16), st.integers(1, 5), st.randoms())
def test_a_count_models_arrays_give_the_arcs_of_its_mapping(seed, nodes, hops, rnd):
    # ArcFlows in any arc order (and arcs of pairs without traffic) read as arrays
    # give the arcs its mapping gives read key by key.
    instance = generate(seed=seed, nodes=nodes, wavelengths=3, max_hops=min(hops, nodes - 1))
    pairs = heuristics._Pairs(instance)
    flows = _random_flows(instance, seed, 3)
    flows.update({(i, (i + 2) % nodes, d): 1.0 for i in range(3) for d in ("cw", "ccw")
                  if (i, (i + 2) % nodes) not in instance.demanded})
    keys = list(flows)
    rnd.shuffle(keys)
    arrays = ArcFlows(np.array([k[0] for k in keys]), np.array([k[1] for k in keys]),
                      np.array([k[2] == "ccw" for k in keys]), np.array([flows[k] for k in keys]))
    assert dict(arrays) == {k: flows[k] for k in keys}
    got, expected = (heuristics._Arcs(instance, pairs, f) for f in (arrays, dict(arrays)))
    for name in ("pair_array", "ccw", "first", "hops", "values"):
        assert getattr(got, name).tolist() == getattr(expected, name).tolist(), name
