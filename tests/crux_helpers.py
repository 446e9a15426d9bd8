"""Shared oracles and cases of the priorities and crux tests."""

import dataclasses
import itertools

from fabricopt.problems import check, evaluate
from fabricopt.problems.crux import generate
from fabricopt.problems.priorities import PrioritiesSolution


def brute_force_priorities(inst):
    """The best feasible cut of a priorities instance over all K^n level assignments."""
    best = 0.0
    for levels in itertools.product(range(inst.levels), repeat=len(inst.jobs)):
        sol = PrioritiesSolution(dict(zip(inst.ids, levels)))
        if check(inst, sol):
            best = max(best, evaluate(inst, sol))
    return best


def small_crux_case(seed):
    """A 4-job, 2-ToR Clos case with a short window (12 longest iterations), for speed."""
    inst = generate(seed, jobs=4, tors=2, hosts_per_tor=3, placement="random")
    window = 12 * max(inst.standalone_iteration_s)
    return dataclasses.replace(inst, warmup_s=window / 4, window_s=window)
