"""Placement heuristics beyond SiP-ML's own: the round-robin baseline and local search.

:func:`local_search` (ours) starts from any feasible assignment — in the ``sipml-ls``
method the better of ``sipml``'s and the circulant list schedule of
:mod:`fabricopt.algorithms.placement.circulant_schedule` — and moves or swaps ops between GPUs while the
makespan of the as-early-as-possible schedule falls, keeping the true degree limit
(distinct peers, not SiP-ML's stricter ring window). It is iterated: at a local optimum
it perturbs the best assignment with a few random moves and descends again.

References
----------
.. [1] M. Khani et al., "SiP-ML", SIGCOMM 2021, §3.2 (the problem and Algorithm 1).
.. [2] H. R. Lourenço, O. C. Martin, T. Stützle, "Iterated Local Search", in Handbook
   of Metaheuristics, 2003 (the descent-perturbation loop).
"""

from __future__ import annotations

import time
from typing import Sequence

import numpy as np

from fabricopt.problems.placement import PlacementInstance, PlacementSolution, evaluate, schedule
from fabricopt.algorithms.placement import sipml as paper
from fabricopt.algorithms._budget import Budget
from fabricopt.algorithms.placement.circulant_schedule import circulant_search, longest_work_first
from fabricopt.algorithms.placement.sipml import degree_safe_gpus

__all__ = ["round_robin", "Peers", "local_search", "sipml_ls", "best_start"]


def round_robin(instance: PlacementInstance) -> PlacementSolution:
    """Ops in topological order dealt to GPUs in turn, scheduled as early as possible.

    Only the ``min(gpus, max_peers + 1)`` GPUs that can all talk to each other are
    dealt to, so the answer is always feasible.

    Examples
    --------
    >>> from fabricopt.problems.placement import SubOp
    >>> inst = PlacementInstance(4, 2, 8.0, [SubOp(c, 1.0) for c in "abcd"])
    >>> dict(round_robin(inst).gpu)
    {'a': 0, 'b': 1, 'c': 2, 'd': 0}
    """
    k = degree_safe_gpus(instance)
    order = instance.topological_order()
    gpu = [0] * instance.size
    for i, v in enumerate(order):
        gpu[v] = i % k
    return schedule(instance, gpu, order)


class Peers:
    """Counts of deps with bytes > 0 between GPU pairs, kept as ops move.

    ``move(v, g)`` puts op ``v`` on GPU ``g`` and returns whether every GPU still has at
    most ``max_peers`` distinct peers in each direction (call ``move`` back to undo).

    Examples
    --------
    >>> from fabricopt.problems.placement import SubOp, Dep
    >>> inst = PlacementInstance(3, 1, 8.0, [SubOp(c, 1.0) for c in "abc"],
    ...                          [Dep("a", "b", 1.0), Dep("a", "c", 1.0)])
    >>> peers = Peers(inst, [0, 1, 1])
    >>> peers.move(2, 2), peers.move(2, 0)   # GPU 0 would send to 1 and 2
    (False, True)
    """

    def __init__(self, instance: PlacementInstance, gpu: Sequence[int]):
        k = instance.gpus
        self.limit = instance.max_peers
        self.gpu = list(gpu)
        self.parents = [[u for u, _, b in instance.parents[v] if b] for v in range(instance.size)]
        self.children = [[w for w, _, b in instance.children[v] if b]
                         for v in range(instance.size)]
        self.pairs = np.zeros((k, k), dtype=np.int64)
        self.out_peers = np.zeros(k, dtype=np.int64)
        self.in_peers = np.zeros(k, dtype=np.int64)
        for v in range(instance.size):
            for w in self.children[v]:
                self._add(self.gpu[v], self.gpu[w], 1)

    def _add(self, g: int, h: int, step: int) -> None:
        if g == h:
            return
        before = self.pairs[g, h]
        self.pairs[g, h] = before + step
        if before == 0 or before + step == 0:      # the pair appears or disappears
            self.out_peers[g] += step
            self.in_peers[h] += step

    def move(self, v: int, g: int) -> bool:
        old = self.gpu[v]
        if old == g:
            return self.feasible()
        for u in self.parents[v]:
            self._add(self.gpu[u], old, -1)
            self._add(self.gpu[u], g, 1)
        for w in self.children[v]:
            self._add(old, self.gpu[w], -1)
            self._add(g, self.gpu[w], 1)
        self.gpu[v] = g
        return self.feasible()

    def feasible(self) -> bool:
        return bool(self.out_peers.max(initial=0) <= self.limit
                    and self.in_peers.max(initial=0) <= self.limit)


class _Schedule:
    """Evaluates assignments in one fixed topological ``order``."""

    def __init__(self, instance: PlacementInstance, order: Sequence[int], budget: Budget,
                 compiled: bool = True):
        self.order = list(order)
        self.parents = instance.parents
        self.compute = instance.compute.tolist()
        self.k = instance.gpus
        self.budget = budget
        self.compiled = compiled
        if compiled:
            # numba takes a second to import: only when a search runs
            from fabricopt.algorithms.placement._schedule_kernel import parent_arrays

            self._order = np.array(self.order, dtype=np.int64)
            self._parents = parent_arrays(instance)
            self._compute = instance.compute

    def run(self, gpu: Sequence[int]) -> tuple:
        """``(makespan, total end, end, binding)``: ``binding[v]`` is the op whose end
        fixed ``v``'s start (-1 when ``v`` starts at 0)."""
        if not self.compiled:
            return self.run_python(gpu)
        from fabricopt.algorithms.placement._schedule_kernel import list_schedule

        self.budget.used += 1
        _, end, binding = list_schedule(self.k, self._order, np.asarray(gpu, dtype=np.int64),
                                        *self._parents, self._compute)
        end_list = end.tolist()
        return max(end_list, default=0.0), sum(end_list), end_list, binding.tolist()

    def run_python(self, gpu: Sequence[int]) -> tuple:
        """:meth:`run` in pure Python: the reference the compiled loop mirrors."""
        self.budget.used += 1
        n = len(self.compute)
        end, binding = [0.0] * n, [-1] * n
        free, last = [0.0] * self.k, [-1] * self.k
        for v in self.order:
            g = gpu[v]
            t, why = free[g], last[g]
            for u, delay, _ in self.parents[v]:
                ready = end[u] + delay if gpu[u] != g else end[u]
                if ready > t:
                    t, why = ready, u
            binding[v] = why
            end[v] = free[g] = t + self.compute[v]
            last[g] = v
        return max(end, default=0.0), sum(end), end, binding


def _critical(end: list, binding: list) -> list[int]:
    """Ops on a critical chain of the schedule, from the last to end backwards."""
    if not end:
        return []
    v = max(range(len(end)), key=end.__getitem__)
    chain = []
    while v >= 0:
        chain.append(v)
        v = binding[v]
    return chain


def _better(a: tuple, b: tuple) -> bool:
    """Is score ``a`` = (makespan, total end) strictly better than ``b``?"""
    if a[0] < b[0] * (1 - 1e-12):
        return True
    return a[0] <= b[0] * (1 + 1e-12) and a[1] < b[1] * (1 - 1e-12)


def local_search(instance: PlacementInstance, gpu: Sequence[int], *, seed: int = 0,
                 max_evals: int | None = None, restarts: int = 20,
                 time_limit: float | None = None, critical_order: Sequence[int] | None = None
                 ) -> tuple[PlacementSolution, dict]:
    """Iterated local search on the assignment of ops to GPUs (ours).

    Parameters
    ----------
    instance : PlacementInstance
    gpu : sequence of int
        A feasible starting assignment (e.g. ``sipml``'s), indexed like ``instance.ops``.
    seed : int
        Seeds the candidate order and the perturbations: same seed, same answer.
    max_evals : int, optional
        Most schedules evaluated. Default: about 3 million op visits' worth, at least 50
        and at most 20,000 — a second or two in CPython whatever the size.
    restarts : int
        Perturb-and-descend rounds after the first local optimum.
    time_limit : float, optional
        Wall-clock seconds. When it binds, the answer depends on the machine's speed;
        leave it out (or keep it loose) for reproducible results.
    critical_order : sequence of int, optional
        :func:`~fabricopt.algorithms.placement.circulant_schedule.longest_work_first`
        of ``instance`` when the caller has it already (default: computed here).

    Returns
    -------
    solution : PlacementSolution
        Never worse than the start: same or smaller makespan.
    info : dict
        ``evals``, ``improvements``, ``restarts`` done, ``order`` used
        (``"start"`` or ``"critical-path"``).

    Notes
    -----
    Two fixed topological orders are tried for the as-early-as-possible schedule: the
    instance's own (Algorithm 1's) and longest-remaining-work first; the better one is
    kept. A descent step takes the first improving candidate among moves of a critical
    op to another GPU and swaps of a critical op with an op on another GPU (at most
    ``max(2 * gpus, 16)`` of them), shuffled by ``seed``; improving means a smaller
    makespan, or an equal one with a smaller sum of end times (which lets it walk
    plateaus without cycling). Candidates that would give some GPU more than
    ``max_peers`` peers are skipped.

    Examples
    --------
    >>> from fabricopt.problems.placement import SubOp, evaluate
    >>> inst = PlacementInstance(2, 1, 8.0, [SubOp(c, 1.0) for c in "abcd"])
    >>> sol, info = local_search(inst, [0, 0, 0, 0])
    >>> evaluate(inst, sol)
    2.0
    """
    n = instance.size
    if max_evals is None:
        max_evals = int(min(20_000, max(50, 3_000_000 // (n + len(instance.deps) + 1))))
    budget = Budget.within(max_evals, time_limit)
    rng = np.random.default_rng(seed)
    if critical_order is None:
        critical_order = longest_work_first(instance)
    orders = {"start": instance.topological_order(), "critical-path": list(critical_order)}
    peers = Peers(instance, gpu)
    best = None
    for name, order in orders.items():
        candidate = _Schedule(instance, order, budget)
        result = candidate.run(peers.gpu)
        if best is None or _better(result[:2], best[:2]):
            best, sched, order_name = result, candidate, name
    current, best_gpu = best, list(peers.gpu)
    improvements = done_restarts = 0
    while not budget.spent():
        improved = _descend_step(instance, sched, peers, current, rng)
        if improved is not None:
            current = improved
            improvements += 1
            if _better(current[:2], best[:2]):
                best, best_gpu = current, list(peers.gpu)
        elif done_restarts < restarts and not budget.spent():
            done_restarts += 1
            _perturb(instance, peers, best_gpu, rng)
            current = sched.run(peers.gpu)
        else:
            break
    info = {"evals": budget.used, "improvements": improvements, "restarts": done_restarts,
            "order": order_name, "limit": budget.stopped_by()}
    return schedule(instance, best_gpu, sched.order), info


def _descend_step(instance, sched: _Schedule, peers: Peers, current: tuple,
                  rng: np.random.Generator) -> tuple | None:
    """Apply the first improving move or swap of a critical op and return its score;
    None at a local optimum or when the budget is spent (the assignment unchanged)."""
    k = instance.gpus
    gpu = peers.gpu
    critical = _critical(current[2], current[3])
    rng.shuffle(critical)
    for v in critical:
        home = gpu[v]
        for g in rng.permutation(k).tolist():
            if g == home:
                continue
            if peers.move(v, g):
                result = sched.run(gpu)
                if _better(result[:2], current[:2]):
                    return result
            peers.move(v, home)
            if sched.budget.spent():
                return None
        others = [w for w in rng.permutation(instance.size).tolist() if gpu[w] != home]
        for w in others[:max(2 * k, 16)]:
            there = gpu[w]
            peers.move(v, there)
            if peers.move(w, home):
                result = sched.run(gpu)
                if _better(result[:2], current[:2]):
                    return result
            peers.move(w, there)
            peers.move(v, home)
            if sched.budget.spent():
                return None
    return None


def _perturb(instance: PlacementInstance, peers: Peers, start: list,
             rng: np.random.Generator) -> None:
    """Reset to ``start`` and make a few random feasible moves."""
    for v, g in enumerate(start):
        peers.move(v, g)
    n, k = instance.size, instance.gpus
    if n == 0 or k == 1:
        return
    for _ in range(max(2, n // 20)):
        v = int(rng.integers(n))
        home = peers.gpu[v]
        g = int(rng.integers(k - 1))
        g += g >= home
        if not peers.move(v, g):
            peers.move(v, home)


def sipml_ls(instance: PlacementInstance, *, seed: int = 0, time_limit: float | None = None,
             max_evals: int | None = None, restarts: int = 20,
             rings: str = "search", circulant: bool = True) -> tuple[PlacementSolution, dict]:
    """SiP-ML's Algorithm 1 (:func:`~fabricopt.algorithms.placement.sipml.sipml` with ``rings``)
    and, with ``circulant``, :func:`~fabricopt.algorithms.placement.circulant_schedule.circulant_search`;
    then :func:`local_search` from the assignment whose schedule ends first (ties:
    Algorithm 1's).

    ``time_limit`` covers all of it: each step gets what the earlier ones left.
    Returns the solution and ``info`` (the search's, with Algorithm 1's under
    ``"sipml"``, the circulant search's under ``"circulant"`` and the start kept,
    ``"sipml"`` or ``"circulant"``, under ``"start"``).
    """
    began = time.perf_counter()
    deadline = None if time_limit is None else began + time_limit
    start, start_info = paper.sipml(instance, rings=rings)
    gpu = [start.gpu[op.id] for op in instance.ops]
    extra = {"sipml": start_info, "start": "sipml"}
    critical_order = None
    if circulant:
        found, critical_order, found_info = circulant_search(instance, deadline=deadline)
        extra["circulant"] = found_info
        if found is not None and found_info["makespan_s"] < evaluate(instance, start):
            gpu, extra["start"] = found, "circulant"
    if time_limit is not None:
        time_limit = max(time_limit - (time.perf_counter() - began), 0.0)
    solution, info = local_search(instance, gpu, seed=seed, max_evals=max_evals,
                                  restarts=restarts, time_limit=time_limit,
                                  critical_order=critical_order)
    return solution, {**info, **extra}


def best_start(instance: PlacementInstance, *, seed: int = 0,
               time_limit: float | None = None) -> tuple[str, PlacementSolution]:
    """The best answer of ``sipml-ls``, ``unconstrained`` and ``round-robin``: the MILP's
    warm start (``sipml-ls`` is never worse than ``sipml``). Returns (method, solution)."""
    candidates = {"sipml-ls": sipml_ls(instance, seed=seed, time_limit=time_limit)[0],
                  "unconstrained": paper.unconstrained(instance),
                  "round-robin": round_robin(instance)}
    name = min(candidates, key=lambda m: evaluate(instance, candidates[m]))
    return name, candidates[name]
