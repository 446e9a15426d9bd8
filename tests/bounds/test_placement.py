"""Validity of the placement lower bounds: never above the brute-force optimum on tiny
instances, never above any checked heuristic answer on larger ones, and tight where the
argument of a bound says it must be."""

import math

import pytest
from hypothesis import given, settings, strategies as st

from fabricopt.problems.placement import Dep, PlacementInstance, SubOp, generate
from fabricopt.bounds.placement import heads_and_tails, lower_bound
from fabricopt.bounds.placement import (bounds, critical_path_bound, diamond_time,
                                        energetic_bound, fan_heads_and_tails, fan_time,
                                        interval_load_bound)

from placement_cases import brute_force_optimum, small_instances

TOL = 1e-9


@st.composite
def fans(draw):
    """A root feeding k children that feed one sink: the fan-out and fan-in the degree
    bound reasons about, with mixed compute, transfers and zero-byte deps."""
    k = draw(st.integers(2, 5))
    gpus = draw(st.integers(2, 4))
    max_peers = draw(st.integers(1, 2))
    compute = st.sampled_from([0.0, 0.5, 1.0, 2.0])
    size = st.sampled_from([0.0, 0.5e9, 1e9, 2e9])
    ops = [SubOp("r", draw(compute))] + [SubOp(f"c{i}", draw(compute)) for i in range(k)]
    deps = [Dep("r", f"c{i}", draw(size)) for i in range(k)]
    if draw(st.booleans()):
        ops.append(SubOp("s", draw(compute)))
        deps += [Dep(f"c{i}", "s", draw(size)) for i in range(k)]
    return PlacementInstance(gpus, max_peers, 8.0, ops, deps)


def assert_below(instance, optimum):
    for name, value in bounds(instance, energetic=True).items():
        assert value <= optimum * (1 + TOL) + TOL, (name, value, optimum)


@given(small_instances(max_ops=6, max_gpus=3))
def test_every_bound_is_below_the_brute_force_optimum(instance):
    assert_below(instance, brute_force_optimum(instance))


@settings(max_examples=60)
@given(fans())
def test_fan_bounds_are_below_the_brute_force_optimum(instance):
    assert_below(instance, brute_force_optimum(instance))


def test_fan_out_over_few_peers_is_tight():
    # a (1 s) feeds four 1 s children over 1 s transfers with one peer: three at home
    # (1 + 3) or two on the peer after the transfer (1 + 1 + 2): makespan 4, proven
    ops = [SubOp("a", 1.0)] + [SubOp(f"b{i}", 1.0) for i in range(4)]
    inst = PlacementInstance(4, 1, 8.0, ops, [Dep("a", f"b{i}", 1e9) for i in range(4)])
    assert brute_force_optimum(inst) == pytest.approx(4.0)
    assert float(lower_bound(inst)) == pytest.approx(4.0)
    assert lower_bound(inst).source == "degree-fan"


def test_zero_byte_deps_do_not_count_towards_the_degree():
    # the same fan without bytes: all four children run at once on four GPUs
    ops = [SubOp("a", 1.0)] + [SubOp(f"b{i}", 1.0) for i in range(4)]
    inst = PlacementInstance(4, 1, 8.0, ops, [Dep("a", f"b{i}", 0.0) for i in range(4)])
    assert brute_force_optimum(inst) == pytest.approx(2.0)   # 4 children on 4 GPUs: 1 + 1
    assert float(lower_bound(inst)) == pytest.approx(2.0)


def test_fan_time_cases():
    assert fan_time(0, 0.0, 0.0, 1.0, 3) == 0.0
    assert fan_time(3, 3.0, 1.0, 5.0, 2) == 3.0       # transfers dearer than waiting: home
    assert fan_time(8, 8.0, 1.0, 0.0, 7) == 1.0       # free transfers: one op per GPU
    assert fan_time(5, 0.0, 0.0, 1.0, 2) == 0.0       # no compute, no wait


def test_fan_heads_never_below_compute_heads():
    inst = generate(seed=3, ops=60, gpus=8, max_peers=3)
    head, tail = heads_and_tails(inst)
    fan_head, fan_tail = fan_heads_and_tails(inst)
    assert (fan_head >= head - TOL).all() and (fan_tail >= tail - TOL).all()


def test_interval_load_counts_parallel_work():
    # six independent unit ops on two GPUs: the load, 3 s, beats the 1 s critical path
    inst = PlacementInstance(2, 1, 8.0, [SubOp(f"o{i}", 1.0) for i in range(6)])
    assert critical_path_bound(inst) == 1.0
    assert interval_load_bound(inst) == pytest.approx(3.0)
    assert energetic_bound(inst) <= 3.0 + TOL


def test_empty_and_zero_compute_instances():
    assert float(lower_bound(PlacementInstance(2, 1, 8.0, []))) == 0.0
    inst = PlacementInstance(2, 1, 8.0, [SubOp("a", 0.0), SubOp("b", 0.0)],
                             [Dep("a", "b", 1e9)])
    assert float(lower_bound(inst)) == 0.0


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("sizes", [dict(ops=40, gpus=8, max_peers=3),
                                   dict(ops=300, gpus=16, max_peers=3)])
def test_bounds_below_every_heuristic_answer(seed, sizes):
    import fabricopt

    inst = generate(seed=seed, **sizes)
    answers = [fabricopt.solve(inst, m, seed=seed, **opts) for m, opts in
               (("sipml", {}), ("sipml-ls", {"max_evals": 300, "restarts": 2}),
                ("unconstrained", {}), ("round-robin", {}))]
    best = min(r.objective for r in answers if r.status in ("optimal", "feasible"))
    assert_below(inst, best)
    assert all(math.isfinite(v) for v in bounds(inst).values())


def _count_split(k, c, d, m):
    if m <= 0:
        return k * c
    return min(max(q * c, d + math.ceil((k - q) / m) * c if k > q else 0) for q in range(k + 1))


def _count_diamond(k, c, d1, d2, m):
    return min(max(q1 * c + d2 if q1 else 0, d1 + q2 * c if q2 else 0,
                   d1 + d2 + math.ceil((k - q1 - q2) / m) * c if k - q1 - q2 else 0)
               for q1 in range(k + 1) for q2 in range(k + 1 - q1))


@given(st.integers(1, 12), st.integers(1, 6), st.sampled_from([0.5, 1.0, 2.0]),
       st.sampled_from([0.0, 0.3, 1.0, 2.5, 7.0]), st.sampled_from([0.0, 0.3, 1.0, 2.5, 7.0]))
def test_closed_forms_equal_enumerating_every_split(k, m, c, d1, d2):
    # equal ops of compute c: the closed forms must equal the least wait over every split
    work = k * c
    assert fan_time(k, work, c, d1, m) == pytest.approx(
        max(min(work, (work + m * d1) / (m + 1)), _count_split(k, c, d1, m)))
    same = max(min(work, (work + m * (d1 + d2)) / (m + 1)), _count_split(k, c, d1 + d2, m))
    apart = max(min(d1, d2) + work / (m + 2), _count_diamond(k, c, d1, d2, m))
    assert diamond_time(k, work, c, d1, d2, m) == pytest.approx(min(same, apart))


@settings(max_examples=60)
@given(st.integers(2, 5), st.integers(2, 4), st.integers(1, 2),
       st.sampled_from([0.5, 1.0]), st.sampled_from([0.5e9, 1e9, 3e9]))
def test_diamonds_are_below_the_brute_force_optimum(k, gpus, max_peers, c, size):
    # u -> k middle ops -> w, all transfers carrying bytes: the diamond bound's case
    ops = [SubOp("u", c), SubOp("w", c)] + [SubOp(f"x{i}", c) for i in range(k)]
    deps = [Dep("u", f"x{i}", size) for i in range(k)] + [Dep(f"x{i}", "w", size)
                                                          for i in range(k)]
    assert_below(PlacementInstance(gpus, max_peers, 8.0, ops, deps),
                 brute_force_optimum(PlacementInstance(gpus, max_peers, 8.0, ops, deps)))
