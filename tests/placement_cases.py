"""Small placement instances for property tests, and a brute-force optimum to check
methods against (shared by the heuristics, formulations and solvers tests)."""

from hypothesis import strategies as st

from fabricopt.problems.placement import Dep, PlacementInstance, SubOp, schedule_times


@st.composite
def small_instances(draw, max_ops=6, max_gpus=3):
    """A random DAG (edges only from lower to higher index) on few GPUs; transfers of
    0, 0.5 or 2 seconds and compute of 0 to 3 seconds, so that placement choices matter."""
    n = draw(st.integers(1, max_ops))
    gpus = draw(st.integers(1, max_gpus))
    max_peers = draw(st.integers(1, 2))
    compute = draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 1.0, 2.0, 3.0]),
                            min_size=n, max_size=n))
    ops = [SubOp(f"o{i}", c, f"g{i // 2}") for i, c in enumerate(compute)]
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    chosen = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=len(pairs))) if pairs else []
    deps = [Dep(f"o{i}", f"o{j}", draw(st.sampled_from([0.0, 0.5e9, 2e9]))) for i, j in chosen]
    return PlacementInstance(gpus, max_peers, 8.0, ops, deps)


def _topological_orders(instance):
    parents = [{u for u, _, _ in instance.parents[v]} for v in range(instance.size)]

    def extend(prefix, placed):
        if len(prefix) == instance.size:
            yield list(prefix)
            return
        for v in range(instance.size):
            if v not in placed and parents[v] <= placed:
                prefix.append(v)
                placed.add(v)
                yield from extend(prefix, placed)
                placed.discard(v)
                prefix.pop()

    yield from extend([], set())


def _labellings(n, k):
    """Assignments of n ops to k interchangeable GPUs, one per partition: op i uses at
    most one GPU more than ops 0..i-1 did (restricted growth strings)."""
    def grow(prefix, used):
        if len(prefix) == n:
            yield tuple(prefix)
            return
        for g in range(min(used + 1, k)):
            yield from grow(prefix + [g], max(used, g + 1))

    yield from grow([], 0)


def brute_force_optimum(instance):
    """The optimal makespan by enumeration (tiny instances only).

    Every feasible schedule can be shifted left into the semi-active schedule of its
    own assignment and of the order of its start times, which is a topological order
    (ops without compute holding no GPU time, as ``check`` has it); so the optimum is
    the best such schedule over all degree-feasible assignments and all topological
    orders.
    """
    from fabricopt.problems.placement import peer_sets

    orders = list(_topological_orders(instance))
    best = float("inf")
    for gpu in _labellings(instance.size, instance.gpus):
        sends, receives = peer_sets(instance, gpu)
        if max(map(len, sends + receives), default=0) > instance.max_peers:
            continue
        for order in orders:
            _, end = schedule_times(instance, gpu, order, zero_holds_gpu=False)
            best = min(best, max(end, default=0.0))
    return best
