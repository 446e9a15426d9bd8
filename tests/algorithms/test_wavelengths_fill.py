"""The compiled fill-up (``_augment``) gives lightpath for lightpath the schedule of the
plain Python loop (tests/algorithms/_fill_reference.py) on the schedules that ``mcf``
and ``greedy`` hand it: the same ids, pairs, fibers and wavelengths, the same busy
bitmasks, transceivers and per-node sets."""

import pathlib
import sys
from collections import Counter
from unittest import mock

import numpy as np
from hypothesis import given, settings, strategies as st

from fabricopt.algorithms import wavelengths as heuristics
from fabricopt.methods.wavelengths import _fractional_counts
from fabricopt.problems.wavelengths import WavelengthsInstance, generate

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import _fill_reference as reference  # noqa: E402
from test_wavelengths_schedule import _random_flows  # noqa: E402


def _run(instance, flows, seed, rounds, seen):
    with mock.patch.object(heuristics, "_augment", reference.checked(seen)):
        heuristics.mcf_schedule(instance, flows, seed=seed, rounds=rounds)
        heuristics.greedy(instance, seed=seed)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10**6), st.integers(5, 24), st.sampled_from([1, 2, 3, 5, 8, 70, 130]),
       st.integers(1, 6), st.sampled_from(["hybrid", "long-reach"]), st.integers(1, 4),
       st.booleans(), st.booleans())
def test_compiled_fill_up_matches_the_python_loop(seed, nodes, wavelengths, hops, family,
                                                  rounds, from_lp, equal):
    # LP counts (little to evict), or counts far above what fits (a crowded ring:
    # forcing and eviction); W past 64 uses several bitmask words; pairs of equal bytes
    # tie for the slowest (ties go to the lower pair).
    instance = generate(seed=seed, nodes=nodes, wavelengths=wavelengths,
                        max_hops=min(hops, nodes - 1), family=family)
    if equal:
        instance = WavelengthsInstance(nodes, wavelengths, instance.wavelength_gbps,
                                       instance.max_hops,
                                       np.where(np.asarray(instance.traffic) > 0, 1e9, 0.0))
    if from_lp:
        flows, _, _ = _fractional_counts(instance, None, 0, "highs")
    else:
        flows = _random_flows(instance, seed, 2 * wavelengths)
    _run(instance, flows, seed, rounds, Counter())


def test_the_fill_up_cases_take_every_branch():
    # The comparison above is not vacuous: on crowded rings like the ones it draws, the
    # loop places, evicts (one lightpath and several) and ends stuck, and the compiled
    # loop resumes after growing the id arrays.
    seen, searches, calls = Counter(), Counter(), Counter()
    search, kernel = heuristics._eviction_compiled, heuristics.fill_up

    def counted_search(state, k, limit):
        chosen = search(state, k, limit)
        searches[chosen is None] += 1
        return chosen

    def counted_kernel(*args):
        calls["kernel"] += 1
        return kernel(*args)

    with mock.patch.object(heuristics, "_eviction_compiled", counted_search), \
            mock.patch.object(heuristics, "fill_up", counted_kernel):
        for seed, nodes, wavelengths in ((3, 12, 4), (5, 10, 70), (7, 16, 3)):
            instance = generate(seed=seed, nodes=nodes, wavelengths=wavelengths,
                                max_hops=4, family="long-reach")
            _run(instance, _random_flows(instance, seed, 2 * wavelengths), seed, 2, seen)
    assert seen["runs"] >= 6 and seen["placed"] > 0 and seen["several"] > 0
    assert seen["evicted"] > seen["several"]
    assert seen["stuck"] == seen["runs"]
    assert searches[True] > 0                 # searches that found nothing to evict
    assert calls["kernel"] > seen["runs"]
