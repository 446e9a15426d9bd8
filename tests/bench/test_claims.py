"""The report checks claims against each other in one database."""

import textwrap

import pytest

from fabricopt.bench import plan, run_sweep, write_report
from fabricopt.bench.claims import contradictions, with_contradictions
from fabricopt.methods.registry import _METHODS

from .support import tiny_suite

LIARS = '''
from fabricopt.algorithms.circuits import greedy
from fabricopt.problems.circuits import CircuitsInstance
from fabricopt.methods import SolverOutput, register_method


def one_switch(instance):
    """Feasible on generate()'s instances (each GPU has one peer) but uses one switch."""
    alone = CircuitsInstance(1, instance.circuit_gbps, instance.traffic_bytes)
    row = greedy(alone).configs[0]
    return type(greedy(alone))([row] + [[None] * instance.gpus] * (instance.switches - 1))


def liar(instance, **_):
    return SolverOutput(None, "infeasible")


def cocky(instance, **_):
    return SolverOutput(one_switch(instance), "optimal")


def tight(instance, **_):
    from fabricopt.problems.circuits import evaluate
    solution = one_switch(instance)
    return SolverOutput(solution, "feasible", bound=evaluate(instance, solution))


for fn in (liar, cocky, tight):
    register_method("circuits", fn.__name__, fn, source="test plug-in")
'''


@pytest.fixture
def liars(tmp_path):
    path = tmp_path / "liars.py"
    path.write_text(textwrap.dedent(LIARS))
    yield path
    for name in ("liar", "cocky", "tight"):
        _METHODS.pop(("circuits", name), None)


def test_false_claims_are_errors_listed_under_failures(tmp_path, liars):
    specs = plan(tiny_suite(("exact", "liar", "cocky", "tight"), seeds=(0, 1)),
                 plugins=[str(liars)])
    run_sweep(specs, tmp_path, workers=1, progress=False)
    files = write_report(tmp_path, plots=False)
    errors = {s.method: (s.errors, s.optimal) for s in files.summaries}
    assert errors == {"exact": (0, 2), "liar": (2, 0), "cocky": (2, 0), "tight": (2, 0)}
    report = files.markdown.read_text()
    failures = report.split("## Failures", 1)[1]
    for method, why in (("liar", "claims infeasible, but exact"),
                        ("cocky", "claims optimal at"), ("tight", "claims bound")):
        assert f"/ {method}: 2 run(s); first: contradicted: {why}" in failures
    assert "/ exact:" not in failures


def _row(key, status, objective=None, bound=None, sense="min", hash_="h"):
    return {"run_key": key, "instance_hash": hash_, "sense": sense, "method": key,
            "suite": "s", "status": status, "objective": objective, "bound": bound,
            "message": None}


@pytest.mark.parametrize("rows, refuted", [
    ([_row("a", "feasible", 2.0, 1.0), _row("b", "feasible", 1.5)], set()),
    ([_row("a", "optimal", 2.0, 2.0), _row("b", "feasible", 2.0 * (1 - 1e-9))], set()),
    ([_row("a", "optimal", 2.0, 2.0), _row("b", "feasible", 1.9)], {"a"}),
    ([_row("a", "no_solution", None, 3.0), _row("b", "feasible", 2.5)], {"a"}),
    ([_row("a", "infeasible"), _row("b", "error", 1.0)], set()),  # errors prove nothing
    ([_row("a", "infeasible"), _row("b", "feasible", 1.0, hash_="other")], set()),
    ([_row("a", "feasible", 8.0, 10.0, "max"), _row("b", "feasible", 11.0, None, "max")], {"a"}),
    ([_row("a", "optimal", 8.0, 8.0, "max"), _row("b", "feasible", 7.0, None, "max")], set()),
])
def test_which_claims_are_refuted(rows, refuted):
    assert set(contradictions(rows)) == refuted
    again = with_contradictions(with_contradictions(rows))
    assert again == with_contradictions(rows)  # idempotent
    assert {r["run_key"] for r in again if r["status"] == "error"} >= refuted
