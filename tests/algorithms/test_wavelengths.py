"""Wavelength heuristics: first-fit colouring against interval-graph theory, greedy and
the mcf rounding against the checker and the count bound."""

from unittest import mock

import numpy as np
import pytest
from hypothesis import given, strategies as st

from fabricopt import InfeasibleInstance
from fabricopt.algorithms import wavelengths as heuristics
from fabricopt.algorithms.wavelengths import first_fit, greedy, mcf_schedule
from fabricopt.problems import check, evaluate
from fabricopt.problems.wavelengths import WavelengthsInstance, _generate, generate, segment_load
from fabricopt.bounds.wavelengths import count_bound


def segments(n, first, hops):
    return {(first + t) % n for t in range(hops)}


def assert_proper(n, first, hops, colours):
    for a in range(len(first)):
        for b in range(a):
            if segments(n, first[a], hops[a]) & segments(n, first[b], hops[b]):
                assert colours[a] != colours[b], (a, b)


@st.composite
def ring_arcs(draw, line=False):
    n = draw(st.integers(2, 14))
    count = draw(st.integers(0, 14))
    cut = draw(st.integers(0, n - 1))
    first, hops = [], []
    for _ in range(count):
        h = draw(st.integers(1, n - 1))
        if line:  # arcs that avoid segment `cut`: start after it and end before it
            start = draw(st.integers(0, n - 1 - h))
            first.append((cut + 1 + start) % n)
        else:
            first.append(draw(st.integers(0, n - 1)))
        hops.append(h)
    return n, first, hops


@given(ring_arcs())
def test_first_fit_is_proper_and_within_2L_minus_1(case):
    n, first, hops = case
    colours = first_fit(n, first, hops)
    assert len(colours) == len(first)
    assert_proper(n, first, hops, colours)
    if first:
        load = int(segment_load(n, first, hops).max())
        assert max(colours) + 1 <= 2 * load - 1


@given(ring_arcs(line=True))
def test_first_fit_uses_exactly_the_load_on_a_line(case):
    n, first, hops = case
    colours = first_fit(n, first, hops)
    assert_proper(n, first, hops, colours)
    load = int(segment_load(n, first, hops).max()) if first else 0
    assert len(set(colours)) == load and (not colours or max(colours) == load - 1)


def test_first_fit_odd_cycle_needs_three():
    # Five 2-hop arcs around a 5-ring load every segment twice but pairwise-overlap in an
    # odd cycle: no 2-colouring exists, and first-fit stays within 2L - 1 = 3.
    colours = first_fit(5, [0, 2, 4, 1, 3], [2] * 5)
    assert_proper(5, [0, 2, 4, 1, 3], [2] * 5, colours)
    assert len(set(colours)) == 3


CASES = [dict(nodes=8, wavelengths=4, max_hops=2), dict(nodes=12, wavelengths=8, max_hops=4),
         dict(nodes=10, wavelengths=4, max_hops=5, group=10, mp_peers=5),
         dict(nodes=32, wavelengths=16, max_hops=16)]


@pytest.mark.parametrize("sizes", CASES)
@pytest.mark.parametrize("seed", range(10))
def test_heuristics_serve_generated_instances(sizes, seed):
    inst, witness = _generate(seed, **sizes)
    bound = count_bound(inst)
    g = greedy(inst)
    assert g is not None and check(inst, g), check(inst, g).reason
    assert bound <= evaluate(inst, g) * (1 + 1e-9)
    assert greedy(inst) == g                                # deterministic
    # Flows from the witness: a fractional version of a feasible schedule.
    flows = {}
    for p in witness.lightpaths:
        flows[p.src, p.dst, p.dir] = flows.get((p.src, p.dst, p.dir), 0) + 1.5
    m = mcf_schedule(inst, flows, seed=seed)
    assert m is not None and check(inst, m), check(inst, m).reason
    assert bound <= evaluate(inst, m) * (1 + 1e-9)
    assert mcf_schedule(inst, flows, seed=seed) == m        # same seed, same schedule
    bare = mcf_schedule(inst, flows, seed=seed, fill=False)
    assert bare is not None and check(inst, bare)
    assert evaluate(inst, m) <= evaluate(inst, bare) * (1 + 1e-9)   # filling only helps


@given(seed=st.integers(0, 1000), data=st.data())
def test_mcf_rounding_of_any_flows_is_feasible_or_none(seed, data):
    inst = generate(seed, nodes=9, wavelengths=3, max_hops=4, group=9, mp_peers=4)
    flows = {(i, j, d): data.draw(st.floats(0, 4)) for i, j in inst.demanded
             for d in ("cw", "ccw")}
    sol = mcf_schedule(inst, flows, seed=seed)
    if sol is not None:
        assert check(inst, sol), check(inst, sol).reason


def _drawn_case(seed, data, nodes, wavelengths, **sizes):
    """A generated instance of drawn size and drawn fractional flows on its pairs."""
    inst = generate(seed, nodes=data.draw(nodes), wavelengths=data.draw(wavelengths), **sizes)
    flows = {(i, j, d): data.draw(st.floats(0, 4)) for i, j in inst.demanded
             for d in ("cw", "ccw")}
    return inst, flows


@given(seed=st.integers(0, 1000), data=st.data())
def test_mcf_scores_each_rounding_as_evaluate_scores_its_schedule(seed, data):
    # The rounds are compared on their per-pair counts; every score must be exactly
    # evaluate's of the schedule the round built.
    inst, flows = _drawn_case(seed, data, st.integers(4, 12), st.integers(1, 6), max_hops=3,
                              group=3, mp_peers=2)
    scores = []
    counted = heuristics._longest_transfer_s

    def checked(instance, state):
        scores.append((counted(instance, state), evaluate(instance, state.solution())))
        return scores[-1][0]

    with mock.patch.object(heuristics, "_longest_transfer_s", checked):
        sol = mcf_schedule(inst, flows, seed=seed, rounds=3)
    assert all(fast == slow for fast, slow in scores), scores
    if sol is not None:
        assert evaluate(inst, sol) == min(fast for fast, _ in scores)


@given(seed=st.integers(0, 1000), data=st.data())
def test_eviction_takes_the_lightpath_whose_loss_harms_least(seed, data):
    # Few wavelengths for many peers: transceivers run out and lightpaths get evicted.
    # Each choice must be the least harmful of all candidates (ties: lowest id), as if
    # every candidate lightpath were weighed.
    inst, flows = _drawn_case(seed, data, st.integers(6, 12), st.integers(1, 4), max_hops=4,
                              group=4, mp_peers=3)
    weighed = heuristics._least_harm

    def every_candidate(state, victims, candidates):
        pair_of = state.paths
        lost = {}
        for v in victims:
            lost[pair_of[v][0]] = lost.get(pair_of[v][0], 0) + 1

        def harm(pid):
            p = pair_of[pid][0]
            left = state.count[p] - lost.get(p, 0) - 1
            return (left < 1, state.pairs.size[p] / left if left >= 1 else 0.0, pid)
        chosen = weighed(state, victims, candidates)
        assert chosen == min(candidates, key=harm)
        return chosen

    # The Python search (the reference of the compiled one) is the one that calls it.
    with mock.patch.object(heuristics, "_least_harm", every_candidate), \
            mock.patch.object(heuristics, "_eviction_compiled", heuristics._eviction_python):
        sol = mcf_schedule(inst, flows, seed=seed, rounds=2)
    if sol is not None:
        assert check(inst, sol), check(inst, sol).reason


@given(seed=st.integers(0, 1000), moves=st.lists(st.integers(0, 10**6), max_size=60))
def test_a_schedule_knows_the_lightpaths_of_each_node_and_segment(seed, moves):
    inst = generate(seed, nodes=8, wavelengths=3, max_hops=3, group=3, mp_peers=2)
    pairs = heuristics._Pairs(inst)
    state = heuristics._Schedule(inst, pairs)
    for move in moves:
        if move % 3 == 0 and state.paths:
            state.remove(sorted(state.paths)[move % len(state.paths)])
        else:
            state.place(move % len(pairs))
        # a node's set is made when first asked for, then kept up to date
        state.sourced[move % inst.nodes], state.sunk[move // 7 % inst.nodes]
    for node in range(inst.nodes):
        assert state.sourced[node] == {pid for pid, (k, *_) in state.paths.items()
                                       if pairs.src[k] == node}
        assert state.sunk[node] == {pid for pid, (k, *_) in state.paths.items()
                                    if pairs.dst[k] == node}
    # ... and who holds each (fiber, segment, wavelength), with each holder's pair
    owner = np.full((2, inst.nodes, inst.wavelengths), -1)
    for pid, (k, ccw, segs, wl) in state.paths.items():
        owner[int(ccw), list(segs), wl] = pid
        assert state.pid_pair[pid] == k
    assert (state.owner == owner).all()
    assert state.count_array.tolist() == state.count


def test_greedy_gives_the_bottleneck_the_spare_wavelengths():
    # 0->1 carries 4x the bytes of 2->3; W = 4: 0->1 gets all four of its transceivers.
    t = [[0.0] * 4 for _ in range(4)]
    t[0][1], t[2][3] = 4e9, 1e9
    inst = WavelengthsInstance(4, 4, 8.0, 1, t)
    sol = greedy(inst)
    assert evaluate(inst, sol) == pytest.approx(1.0)        # 4e9 B over 4 x 8 Gbps
    assert count_bound(inst) == pytest.approx(1.0)


def test_heuristics_prove_reach_infeasibility():
    t = [[0.0] * 6 for _ in range(6)]
    t[0][3] = 1.0
    inst = WavelengthsInstance(6, 2, 25.0, 2, t)
    with pytest.raises(InfeasibleInstance, match=r"traffic_bytes\[0\]\[3\] = 1.0: node 3 is 3 hops"):
        greedy(inst)
    with pytest.raises(InfeasibleInstance, match="node 3 is 3 hops"):
        mcf_schedule(inst, {})


def test_continuity_infeasible_ring_is_not_served():
    # The 5-cycle of 2-hop cw arcs with W = 2 and reach 2: the count relaxation holds
    # (every segment twice), but three wavelengths would be needed.
    t = np.zeros((5, 5))
    for i in range(5):
        t[i, (i + 2) % 5] = 1e6
    inst = WavelengthsInstance(5, 2, 25.0, 2, t.tolist())
    assert np.isfinite(count_bound(inst))
    assert greedy(inst) is None
    assert mcf_schedule(inst, {(i, (i + 2) % 5, "cw"): 1.0 for i in range(5)}) is None
