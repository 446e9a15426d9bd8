"""The iteration model's array paths equal the plain ones they stand for: the compiled
critical path and the Python loop, a plan built from the placement objects and from its
JSON, a balanced graph remembered across bandwidths and one balanced afresh, the port
bound from a group's block and from the whole traffic."""

from types import SimpleNamespace

import numpy as np
from hypothesis import assume, given, settings, strategies as st

from fabricopt import InfeasibleInstance

from fabricopt.fabrics.iteration import (_SUM_ORDER_RTOL, _balanced, _critical_path_python,
                                         _critical_path_s, _plan_from_solution, _port_bound_s,
                                         lower_bound_s, iteration_time, place,
                                         plan_from_placement)
from fabricopt.fabrics.traffic import hybrid_traffic, port_bound_s
from fabricopt.fabrics.workloads import get_workload
from fabricopt.methods import solve
from fabricopt.problems.placement import PlacementSolution, generate
from fabricopt.problems.opgraph import OpGraph
from tests.fabrics.test_iteration import TOY, needs_placement, random_plans


@st.composite
def placed_plans(draw):
    """A plan of a generated placement instance, placed by sipml or at random GPUs."""
    k = draw(st.integers(2, 6))
    l = draw(st.sampled_from([1, 2, 3]))
    inst = generate(seed=draw(st.integers(0, 10 ** 6)), ops=draw(st.integers(1, 40)), gpus=k,
                    max_peers=draw(st.integers(1, k - 1)))
    ops = [{"id": o.group, "compute_s": 1.0, "params_bytes": 8.0}
           for o in inst.ops if o.group is not None]
    graph = OpGraph(list({op["id"]: op for op in ops}.values()))
    if draw(st.booleans()):
        solution = solve(inst, "sipml").solution
    else:
        from fabricopt.problems.placement import schedule
        solution = schedule(inst, [draw(st.integers(0, k - 1)) for _ in inst.ops])
    if draw(st.booleans()):     # the same solution without the arrays a schedule keeps
        solution = PlacementSolution(dict(solution.gpu), dict(solution.start_s))
    return inst, graph, l, solution


@needs_placement
@settings(max_examples=60, deadline=None)
@given(placed_plans(), st.sampled_from([None, 1.0, 50.0, 0.0]))
def test_the_compiled_critical_path_equals_the_python_loop(case, gbps):
    inst, graph, l, solution = case
    plan = _plan_from_solution("g", graph, l, inst, solution, method="sipml", result=None,
                               max_peers=inst.max_peers)
    rates = None
    if gbps is not None:
        rates = np.random.default_rng(inst.size).uniform(0.5, 2.0, (plan.gpus, plan.gpus)) * gbps
    assert _critical_path_s(plan, rates) == _critical_path_python(plan, rates)
    if gbps is not None:   # one rate for every pair: one group's schedule stands for all
        assert _critical_path_s(plan, gbps) == _critical_path_s(
            plan, np.full((plan.gpus, plan.gpus), gbps))


@settings(max_examples=40, deadline=None)
@given(random_plans(), st.sampled_from([None, 10.0, 1000.0]))
def test_the_compiled_critical_path_equals_the_python_loop_on_hand_plans(plan, gbps):
    rates = None if gbps is None else np.full((plan.gpus, plan.gpus), gbps)
    assert _critical_path_s(plan, rates) == _critical_path_python(plan, rates)
    if gbps is not None:
        assert _critical_path_s(plan, gbps) == _critical_path_python(plan, rates)


@needs_placement
@settings(max_examples=40, deadline=None)
@given(placed_plans())
def test_a_plan_from_the_objects_equals_the_plan_from_json(case):
    inst, graph, l, solution = case
    fast = _plan_from_solution("g", graph, l, inst, solution, method="sipml", result=None,
                               max_peers=inst.max_peers)
    slow = plan_from_placement("g", graph, l, inst.to_dict(), solution.to_dict(),
                               method="sipml", max_peers=inst.max_peers)
    assert (fast.ops, fast.deps, fast.gpu) == (slow.ops, slow.deps, slow.gpu)
    assert fast.mp_bytes.tobytes() == slow.mp_bytes.tobytes()
    assert fast.params_bytes.tobytes() == slow.params_bytes.tobytes()
    assert fast._path_arrays is not None and "_path_arrays" not in slow.__dict__
    for mine, theirs in zip(fast._path_arrays, slow._path_arrays):
        assert mine.dtype == theirs.dtype and mine.tobytes() == theirs.tobytes()
    assert fast.compute_s == slow.compute_s
    assert fast.serial_s == slow.serial_s
    assert list(fast.ops) == list(slow.ops) and len(fast.ops) == len(slow.ops)
    for mine, theirs in zip(fast._arrays, slow._arrays):
        assert mine.tobytes() == theirs.tobytes()


@needs_placement
def test_a_remembered_balanced_graph_equals_one_balanced_afresh():
    import fabricopt.fabrics.iteration as iteration

    graph = get_workload("resnet50").op_graph(64)
    first = _balanced(graph, 8, tau_s=1e-5, max_peers=3, link_gbps=100.0)
    again = _balanced(get_workload("resnet50").op_graph(64), 8, tau_s=1e-5, max_peers=5,
                      link_gbps=400.0)
    iteration._balanced_graphs.clear()
    fresh = _balanced(graph, 8, tau_s=1e-5, max_peers=5, link_gbps=400.0)
    assert again.ops is first.ops and again == fresh and again.to_dict() == fresh.to_dict()
    assert again.delay_s.tolist() == fresh.delay_s.tolist()
    assert again.parents == fresh.parents


@needs_placement
@settings(max_examples=15, deadline=None)
@given(st.sampled_from([2, 4, 8]), st.sampled_from([25.0, 100.0, 1000.0]),
       st.sampled_from(["elect-flat", "sip-ocs", "sip-ring"]))
def test_the_lower_bound_never_exceeds_the_priced_iteration(k, gbps, name):
    from fabricopt.fabrics.comparison import make_fabric

    fabric = make_fabric(name, gbps, 8 * 2)
    plan = place(TOY, fabric, k, 16 // k, tau_s=1e-4)
    try:
        t = iteration_time(TOY, fabric, 16, k, 16 // k, plan=plan)
    except InfeasibleInstance:       # a ring of too few wavelengths for the traffic
        assume(False)
    assert lower_bound_s(plan, fabric) <= t.total_s * (1 + 1e-12)


@settings(max_examples=80)
@given(st.integers(1, 12), st.integers(1, 9), st.data(), st.sampled_from([1e-12, 1.0, 1e12]),
       st.sampled_from([0.1, 25.0, 8192.0]))
def test_the_port_bound_from_a_group_s_block_is_the_whole_traffic_s_or_just_below(
        k, l, data, scale, gbps):
    values = st.one_of(st.just(0.0), st.floats(1e-3, 1e10))
    mp = np.array(data.draw(st.lists(values, min_size=k * k, max_size=k * k))).reshape(k, k)
    np.fill_diagonal(mp, 0.0)
    held = np.array(data.draw(st.lists(values, min_size=k, max_size=k)))
    plan = SimpleNamespace(k=k, l=l, mp_bytes=mp * scale, params_bytes=held * scale)
    whole = port_bound_s(hybrid_traffic(plan.mp_bytes, plan.params_bytes, k, l), gbps)
    assert whole * (1 - 2 * _SUM_ORDER_RTOL) <= _port_bound_s(plan, gbps) <= whole
