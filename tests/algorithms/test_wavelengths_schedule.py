"""The mcf rounding and first-fit colouring give the same schedules as the plain Python
oracle (tests/algorithms/_wavelengths_reference.py), and the compiled colouring loop the
same colours and busy bitmasks as the Python loop."""

import pathlib
import sys

import numpy as np
from hypothesis import given, settings, strategies as st

from fabricopt.algorithms import wavelengths as heuristics
from fabricopt.methods.wavelengths import _fractional_counts
from fabricopt.problems import check
from fabricopt.problems.wavelengths import WavelengthsInstance, generate

sys.path.insert(0, str(pathlib.Path(__file__).parent))
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
    rng = np.random.default_rng(seed)
    src, dst, _, _, _ = instance.pairs
    flows = {(int(i), int(j), d): float(rng.uniform(0, 2 * wavelengths))
             for i, j in zip(src, dst) for d in ("cw", "ccw")}
    _same(instance, flows, seed=seed, rounds=2)


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
