"""The exhaustive crux search: exact (against a naive brute force), never beaten by a
heuristic, and refusing cases too large to enumerate."""

import itertools

import pytest
from hypothesis import given, settings, strategies as st

import fabricopt
from fabricopt import SolverUnavailable
from fabricopt.algorithms.crux.enumerate import enumerate_optimum, plan, weak_orders
from fabricopt.problems import check, evaluate
from fabricopt.problems.crux import CruxInstance, CruxSolution, generate

from crux_helpers import small_crux_case


def naive_optimum(inst):
    """Every path combination x every level labeling, scored by ``evaluate``."""
    flows = [(job.id, len(f.paths)) for job in inst.jobs for f in job.flows]
    best = -1.0
    for combo in itertools.product(*(range(c) for _, c in flows)):
        path = {job.id: [] for job in inst.jobs}
        for (jid, _), i in zip(flows, combo):
            path[jid].append(i)
        for levels in itertools.product(range(inst.levels), repeat=len(inst.jobs)):
            level = dict(zip(inst.ids, levels))
            best = max(best, evaluate(inst, CruxSolution(path, level, level)))
    return best


@st.composite
def tiny_cases(draw):
    links = {f"e{k}": draw(st.sampled_from([4.0, 8.0])) for k in range(4)}
    names = sorted(links)
    jobs = []
    for k in range(draw(st.integers(1, 3))):
        flows = [{"bytes": draw(st.sampled_from([0.5e9, 1e9, 2e9])),
                  "paths": draw(st.lists(st.lists(st.sampled_from(names), min_size=1,
                                                  max_size=2, unique=True),
                                         min_size=1, max_size=2))}
                 for _ in range(draw(st.integers(0, 2)))]
        jobs.append({"id": f"j{k}", "gpus": draw(st.sampled_from([1, 4, 8])),
                     "compute_s": draw(st.sampled_from([0.5, 1.0, 1.5])),
                     "overlap": draw(st.sampled_from([0.0, 0.5, 1.0])), "flows": flows})
    return CruxInstance(draw(st.integers(1, 2)), links, jobs, 3.0, 15.0)


@settings(max_examples=15)
@given(tiny_cases())
def test_enumerate_equals_naive_brute_force(inst):
    solution, complete = enumerate_optimum(inst)
    assert complete and check(inst, solution)
    assert evaluate(inst, solution) == pytest.approx(naive_optimum(inst), rel=1e-12, abs=1e-12)


@settings(max_examples=6)
@given(st.integers(0, 10**6))
def test_no_method_beats_enumerate(seed):
    inst = small_crux_case(seed)
    best = fabricopt.solve(inst, "enumerate")
    assert best.status == "optimal" and best.gap == 0.0
    for method in ("crux", "ecmp", "sincronia", "sincronia-levels", "varys-levels"):
        result = fabricopt.solve(inst, method)
        assert result.status == "feasible"
        assert result.objective <= best.objective + 1e-12


def test_weak_orders_are_the_ordered_partitions():
    assert len(list(weak_orders(3, 3))) == 13          # Fubini number
    assert len(list(weak_orders(4, 2))) == 15          # 1 + (2^4 - 2)
    assert len(set(weak_orders(4, 3))) == len(list(weak_orders(4, 3)))


def test_too_large_cases_are_refused_before_any_simulation():
    inst = generate(6, placement="random", hosts_per_tor=3)
    with pytest.raises(SolverUnavailable, match=r"enumerate: .* this case is too large to "
                                                r"enumerate"):
        plan(inst, max_simulations=100)
    with pytest.raises(SolverUnavailable, match=r"\d+ path combinations exceed "
                                                r"max_path_choices = 4"):
        fabricopt.solve(inst, "enumerate", max_path_choices=4)
    with pytest.raises(SolverUnavailable, match="max_labelings = 10"):
        plan(inst, max_labelings=10)


def test_cli_reports_refusal_in_one_line(tmp_path, capsys):
    from fabricopt.cli import main

    path = tmp_path / "big.json"
    fabricopt.dump(generate(6, placement="random", hosts_per_tor=3), path)
    code = main(["solve", str(path), "--method", "enumerate", "--option", "max_simulations=50"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err and "too large to enumerate" in err


def test_time_limit_returns_the_incumbent_as_feasible():
    inst = small_crux_case(3)
    result = fabricopt.solve(inst, "enumerate", time_limit=1e-9)
    assert result.status in ("feasible", "optimal") and check(inst, result.solution)
