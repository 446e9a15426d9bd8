"""``solve`` scores every answer itself and never trusts a method's claim."""

import importlib

import pytest

import fabricopt
import fabricopt.errors
from fabricopt import InvalidOption, SolverOutput, SolverUnavailable
from fabricopt.methods import at_least
from fabricopt.problems.circuits import CircuitsInstance, CircuitsSolution
from fabricopt.methods import register_method
from fabricopt.methods.registry import _METHODS
from fabricopt.methods.result import relative_gap

INST = CircuitsInstance(2, 8.0, [[0, 2e9, 0], [0, 0, 1e9], [1e9, 0, 0]])
SOLVE_MODULE = importlib.import_module("fabricopt.methods.solve")   # not the function


@pytest.fixture
def temp_method():
    added = []

    def add(name, fn, **kw):
        added.append(("circuits", name))
        register_method("circuits", name, fn, **kw)

    yield add
    for key in added:
        _METHODS.pop(key, None)


def test_envelope_keys_and_order():
    r = fabricopt.solve(INST, "exact")
    assert list(r.to_dict()) == ["problem", "method", "status", "sense", "objective", "bound",
                                 "gap", "runtime_s", "limit", "bound_source", "solution", "info"]
    assert r.status == "optimal" and r.gap == 0.0 and r.objective == pytest.approx(1.0)
    assert (r.limit, r.bound_source) == ("none", "optimal")


def test_why_a_run_stopped_is_a_typed_field(temp_method):
    import time

    from fabricopt.problems.placement import generate as placement_instance

    # a heuristic's evaluation budget: work
    inst = placement_instance(2, ops=30, gpus=8, max_peers=2)
    r = fabricopt.solve(inst, "sipml-ls", max_evals=3)
    assert r.limit == "work" and "limit" not in r.info
    assert fabricopt.solve(inst, "sipml").limit == "none"

    # a method that runs past the time limit: time, whatever it says
    def slow(instance, **_):
        time.sleep(0.05)
        return fabricopt.solve(instance, "greedy").solution

    temp_method("slow-test", slow)
    r = fabricopt.solve(INST, "slow-test", time_limit=0.01)
    assert r.limit == "time" and "time_limit_exceeded" in r.info

    # a MILP stopped by HiGHS's node budget: work
    from fabricopt.milp import run_milp
    from fabricopt.models.placement import build

    run = run_milp(build(placement_instance(1, ops=14, gpus=4, max_peers=2)), max_nodes=1)
    assert run.info["limit"] in ("work", "none")   # "none" only if the root node proved it
    if run.status == "feasible":
        assert run.info["limit"] == "work"


def test_the_envelope_round_trips_the_typed_fields():
    r = fabricopt.solve(INST, "greedy")
    back = fabricopt.Result.from_dict(r.to_dict())
    assert (back.limit, back.bound_source) == (r.limit, r.bound_source) == ("none", "port-load")
    legacy = {k: v for k, v in r.to_dict().items() if k not in ("limit", "bound_source")}
    assert fabricopt.Result.from_dict(legacy).limit == "none"
    with pytest.raises(fabricopt.InvalidSolution, match="limit = 'nodes': must be one of none"):
        fabricopt.Result.from_dict({**r.to_dict(), "limit": "nodes"})


def test_objective_comes_from_evaluate_not_the_method(temp_method):
    def liar(instance, **_):
        return SolverOutput(CircuitsSolution([[1, 2, 0], [None, None, None]]), "feasible",
                            bound=None, info={"objective": 0.0})
    temp_method("liar", liar)
    r = fabricopt.solve(INST, "liar")
    assert r.objective == pytest.approx(2.0)


def test_infeasible_answer_is_an_error(temp_method):
    temp_method("bad", lambda instance, **_: CircuitsSolution([[1, None, None], [None] * 3]))
    r = fabricopt.solve(INST, "bad")
    assert r.status == "error" and r.objective is None
    assert "method 'bad' returned an infeasible solution" in r.info["message"]


def test_raising_method_is_an_error(temp_method):
    def boom(instance, **_):
        raise RuntimeError("kaput")
    temp_method("boom", boom)
    r = fabricopt.solve(INST, "boom")
    assert r.status == "error" and "method 'boom' raised RuntimeError: kaput" in r.info["message"]


def test_wrong_type_is_an_error(temp_method):
    temp_method("wrong", lambda instance, **_: {"configs": []})
    r = fabricopt.solve(INST, "wrong")
    assert r.status == "error" and "returned a dict" in r.info["message"]


def test_bound_on_wrong_side_is_an_error(temp_method):
    temp_method("overbound", lambda instance, **_: SolverOutput(
        CircuitsSolution([[1, 2, 0], [None, None, None]]), "feasible", bound=5.0))
    r = fabricopt.solve(INST, "overbound")
    assert r.status == "error" and "wrong side" in r.info["message"]


def test_an_optimal_claim_without_a_bound_is_trusted_only_from_an_exact_method(temp_method):
    # 2.0 is not the optimum (1.0): solve cannot tell without a bound, so it believes an
    # exact method's proof (check_method is what catches a lying exact method) ...
    answer = CircuitsSolution([[1, 2, 0], [None, None, None]])
    temp_method("claims", lambda instance, **_: SolverOutput(answer, "optimal"), exact=True)
    r = fabricopt.solve(INST, "claims")
    assert r.status == "optimal" and r.bound == r.objective == pytest.approx(2.0)
    # ... and not a heuristic's: that keeps the kind's bound (the port load, 1.0).
    temp_method("brags", lambda instance, **_: SolverOutput(answer, "optimal"))
    r = fabricopt.solve(INST, "brags")
    assert r.status == "feasible" and r.bound == pytest.approx(1.0)
    assert "not declared exact" in r.info["optimality"]


def test_solve_never_manufactures_a_bound_from_a_contradicted_proof(temp_method):
    # The method proves the optimum is 1.0 but hands back a solution worth 2.0 (what
    # HiGHS does when it returns its unchanged MIP start): not optimal, bound kept.
    temp_method("stale", lambda instance, **_: SolverOutput(
        CircuitsSolution([[1, 2, 0], [None, None, None]]), "optimal", bound=1.0), exact=True)
    r = fabricopt.solve(INST, "stale")
    assert (r.status, r.objective, r.bound) == ("feasible", pytest.approx(2.0), 1.0)
    assert "claimed optimal with bound 1.0" in r.info["optimality"]


def test_without_a_bound_solve_computes_none_and_certifies_nothing(temp_method, monkeypatch):
    with_bound = fabricopt.solve(INST, "exact")
    monkeypatch.setattr(SOLVE_MODULE, "_kind_bound",
                        lambda *a: pytest.fail("the kind's bound was computed"))
    r = fabricopt.solve(INST, "exact", bound=False)
    assert (r.status, r.objective, r.solution) == ("feasible", with_bound.objective,
                                                   with_bound.solution)
    assert (r.bound, r.gap, r.bound_source) == (None, None, None)
    assert r.info["bound"] == "not computed: solve(..., bound=False)"
    assert r.info["optimality"] == ("method 'exact' claimed optimal; not certified without a "
                                    "bound (bound=False): reported feasible")
    # a method's own bound is dropped, even one on the wrong side of its objective
    temp_method("overbound2", lambda instance, **_: SolverOutput(
        CircuitsSolution([[1, 2, 0], [None, None, None]]), "feasible", bound=5.0))
    r = fabricopt.solve(INST, "overbound2", bound=False)
    assert (r.status, r.bound) == ("feasible", None)


def test_bound_false_reaches_only_a_method_that_names_it(temp_method):
    seen = []

    def named(instance, *, bound=True):
        seen.append(bound)
        return SolverOutput(CircuitsSolution([[1, 2, 0], [1, 2, 0]]), "feasible",
                            bound=0.5 if bound else None)

    def any_keywords(instance, **kwargs):
        seen.append(sorted(kwargs))
        return CircuitsSolution([[1, 2, 0], [1, 2, 0]])

    temp_method("named", named)
    temp_method("kwargs", any_keywords)
    assert fabricopt.solve(INST, "named").bound_source == "port-load"   # 1.0 beats its 0.5
    assert fabricopt.solve(INST, "named", bound=False).bound is None
    fabricopt.solve(INST, "kwargs", bound=False)
    assert seen == [True, False, ["seed", "time_limit"]]
    assert _METHODS["circuits", "named"].options == ()      # bound is solve's, not an option


@pytest.mark.parametrize("value, message", [
    ("no", r"^bound = 'no': must be True or False$"),
    (1, r"^bound = 1: must be True or False$"),
    (None, r"^bound = None: must be True or False$"),
])
def test_a_bad_bound_is_refused_before_the_method_runs(value, message):
    with pytest.raises(InvalidOption, match=message):
        fabricopt.solve(INST, "exact", bound=value)


def test_bound_false_is_refused_for_a_method_that_only_computes_a_bound():
    inst = fabricopt.generate("wavelengths", seed=0)
    with pytest.raises(InvalidOption, match=r"^bound = False: method wavelengths/count-bound "
                                            r"computes nothing but a bound$"):
        fabricopt.solve(inst, "count-bound", bound=False)


def test_bound_is_reserved_and_numpy_bools_are_taken():
    import numpy as np

    with pytest.raises(fabricopt.errors.InvalidArgument, match="option 'bound' is reserved"):
        register_method("circuits", "bound-opt", lambda instance, *, bound=True: None,
                        options=[fabricopt.Option("bound", bool, True)])
    assert fabricopt.solve(INST, "greedy", bound=np.False_).bound is None
    assert fabricopt.solve(INST, "greedy", bound=np.True_).bound is not None


def test_plugin_with_plain_signature(temp_method):
    temp_method("plain", lambda instance: CircuitsSolution([[1, 2, 0], [1, 2, 0]]))
    r = fabricopt.solve(INST, "plain", time_limit=3, seed=4)
    assert r.status == "feasible" and r.objective == pytest.approx(1.0)


def test_unknown_method_and_option():
    with pytest.raises(SolverUnavailable, match=r"method = 'nope': no such method for circuits "
                                                r"\(known: exact, greedy, milp\)"):
        fabricopt.solve(INST, "nope")
    with pytest.raises(InvalidOption, match=r"backend = 'cbc': not an option of method "
                                            r"circuits/exact \(options: none\)"):
        fabricopt.solve(INST, "exact", backend="cbc")
    with pytest.raises(InvalidOption, match="time_limit = -1: must be a number > 0"):
        fabricopt.solve(INST, "exact", time_limit=-1)
    with pytest.raises(InvalidOption, match="seed = 1.5: must be an integer"):
        fabricopt.solve(INST, "exact", seed=1.5)
    with pytest.raises(InvalidOption, match=r"rel_gap = 2.0: must be in \[0, 1\]"):
        fabricopt.solve(INST, "milp", rel_gap=2.0)
    with pytest.raises(InvalidOption, match="warm_start = 1: must be true or false"):
        fabricopt.solve(INST, "milp", warm_start=1)


def test_a_bad_option_is_refused_before_the_method_runs(temp_method):
    calls = []

    def mine(instance, *, rounds=3):
        calls.append(rounds)
        return CircuitsSolution([[1, 2, 0], [1, 2, 0]])

    temp_method("declared", mine, options=[fabricopt.Option("rounds", int, 3, "tries",
                                                            check=at_least(1))])
    with pytest.raises(InvalidOption, match="rounds = 0: must be >= 1"):
        fabricopt.solve(INST, "declared", rounds=0)
    with pytest.raises(InvalidOption, match=r"other = 1: not an option of method "
                                            r"circuits/declared \(options: rounds\)"):
        fabricopt.solve(INST, "declared", other=1)
    assert calls == []
    assert fabricopt.solve(INST, "declared", rounds=2).status == "feasible" and calls == [2]


def test_undeclared_plugins_keep_their_inferred_options(temp_method):
    temp_method("inferred", lambda instance, *, rounds=3: CircuitsSolution([[1, 2, 0]] * 2))
    with pytest.raises(InvalidOption, match="rounds = 'x': must be an integer"):
        fabricopt.solve(INST, "inferred", rounds="x")
    temp_method("anything", lambda instance, **kw: CircuitsSolution([[1, 2, 0]] * 2))
    assert fabricopt.solve(INST, "anything", whatever=[1]).status == "feasible"


def test_declaring_an_option_the_function_does_not_take_is_refused():
    with pytest.raises(fabricopt.errors.InvalidArgument, match="declares option 'rounds'"):
        register_method("circuits", "broken-decl", lambda instance: None,
                        options=[fabricopt.Option("rounds", int, 3)])


def test_a_method_crash_keeps_its_traceback(temp_method):
    def boom(instance, **_):
        raise RuntimeError("kaput")
    temp_method("boom2", boom)
    r = fabricopt.solve(INST, "boom2")
    assert "Traceback" in r.info["traceback"] and "kaput" in r.info["traceback"]


def test_running_past_the_time_limit_is_reported(temp_method):
    import time

    def slow(instance, *, time_limit=None):
        time.sleep(0.05)
        return CircuitsSolution([[1, 2, 0], [1, 2, 0]])
    temp_method("slow", slow)
    r = fabricopt.solve(INST, "slow", time_limit=0.01)
    assert "does not honour time_limit" in r.info["time_limit_exceeded"]


def test_solve_accepts_dicts_and_round_trips_results(tmp_path):
    r = fabricopt.solve(INST.to_dict(), "greedy")
    path = tmp_path / "r.json"
    fabricopt.dump(r, path)
    back = fabricopt.load(path)
    assert back == r


def test_gap_formula():
    assert relative_gap(-2.0, -1.0) == 0.5
    assert relative_gap(3.0, 3.0) == 0.0


def test_methods_listing():
    assert fabricopt.methods("circuits") == ["exact", "greedy", "milp"]
    assert "circuits" in fabricopt.methods()


def test_the_methods_package_imports_by_its_dotted_path_and_lists_when_called():
    import subprocess
    import sys

    # a fresh interpreter: the dotted import must work before anything else ran
    code = ("import fabricopt.methods.wavelengths as m; import fabricopt; "
            "from fabricopt import methods; "
            "print(m.__name__, fabricopt.methods('circuits') == methods('circuits') "
            "== fabricopt.methods.methods('circuits'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["fabricopt.methods.wavelengths", "True"]
    with pytest.raises(fabricopt.FabricError, match="nope"):
        fabricopt.methods("nope")


def test_every_builtin_method_honours_the_time_limit_or_says_why_not():
    from fabricopt.methods import all_methods

    for kind in fabricopt.kinds():
        for m in all_methods(kind):
            if m.source == "builtin":
                assert m.honours_time_limit or m.time_limit_note, f"{kind}/{m.name}"
                assert not (m.honours_time_limit and m.time_limit_note), f"{kind}/{m.name}"
