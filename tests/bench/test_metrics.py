"""The report's numbers equal a hand computation on a tiny database."""

import csv
import math

import pytest

from fabricopt.bench import Store, summarize, write_report
from fabricopt.bench.metrics import best_known, shifted_geometric_mean, sgm_time_s


def _row(suite, instance, hash_, kind, sense, method, status, objective=None, bound=None,
         gap=None, runtime_s=1.0, size=4):
    return {"run_key": f"{suite}|{instance}|{method}", "suite": suite, "instance_id": instance,
            "instance_hash": hash_, "kind": kind, "sense": sense, "size": size,
            "sizes": {"gpus": size}, "method": method, "seed": 0, "time_limit_s": 10.0,
            "status": status, "objective": objective, "bound": bound, "gap": gap,
            "runtime_s": runtime_s, "wall_s": runtime_s, "peak_rss_bytes": 1,
            "message": "boom" if status == "error" else None, "info": {},
            "versions": {"fabricopt": "0.1.0"}, "host": "h"}


def _tiny_db(path):
    c, p = "circuits", "priorities"
    rows = [
        # I1 (min): the best objective, 1.9, comes from another suite's run.
        _row("s", "c/I1/0", "h1", c, "min", "a", "feasible", 2.0, 1.5, 0.25, 0.5),
        _row("s", "c/I1/0", "h1", c, "min", "b", "feasible", 2.5, 1.0, 0.6, 0.1),
        _row("s", "c/I1/0", "h1", c, "min", "c", "error", runtime_s=0.2),
        _row("other", "c/I1/0", "h1", c, "min", "z", "feasible", 1.9, runtime_s=3.0),
        # I3 (min): proven optimal by a.
        _row("s", "c/I3/0", "h3", c, "min", "a", "optimal", 4.0, 4.0, 0.0, 2.0, size=8),
        _row("s", "c/I3/0", "h3", c, "min", "b", "feasible", 5.0, 4.0, 0.2, 0.05, size=8),
        _row("s", "c/I3/0", "h3", c, "min", "c", "feasible", 4.0, runtime_s=12.0, size=8),
        # I2 (max): b was stored twice; its latest row (9.0) counts.
        _row("s", "p/I2/0", "h2", p, "max", "b", "feasible", 7.0, runtime_s=1.0),
        _row("s", "p/I2/0", "h2", p, "max", "a", "feasible", 8.0, 10.0, 0.2, 10.3),
        _row("s", "p/I2/0", "h2", p, "max", "b", "feasible", 9.0, runtime_s=1.0),
        _row("s", "p/I2/0", "h2", p, "max", "c", "no_solution", None, 9.5, None, 10.0),
    ]
    with Store(path) as store:
        for row in rows:
            store.add(row, "sweep-1")


def _sgm(*times):
    return math.exp(sum(math.log(t + 10.0) for t in times) / len(times)) - 10.0


def test_shifted_geometric_mean_by_hand():
    assert shifted_geometric_mean([0.5, 2.0]) == pytest.approx(math.sqrt(10.5 * 12.0) - 10)
    assert shifted_geometric_mean([5.0], shift=1.0) == pytest.approx(5.0)
    assert sgm_time_s({"status": "no_solution", "runtime_s": 3.0, "time_limit_s": 10.0}) == 3.0


def test_best_known_over_all_suites_and_bounds(tmp_path):
    _tiny_db(tmp_path)
    with Store(tmp_path) as store:
        best = best_known(store.rows())
    assert (best["h1"].objective, best["h1"].bound, best["h1"].proven) == (1.9, 1.5, False)
    assert (best["h3"].objective, best["h3"].bound, best["h3"].proven) == (4.0, 4.0, True)
    # Maximizing: the best objective is the highest, the best bound the lowest.
    assert (best["h2"].objective, best["h2"].bound) == (9.0, 9.5)


EXPECTED = {  # (suite, kind, method): instances, optimal, feasible, errors,
    #                                  mean gap, max gap, mean PD gap, sgm runtime
    ("other", "circuits", "z"): (1, 0, 1, 0, 0.0, 0.0, None, 3.0),
    ("s", "circuits", "a"): (2, 1, 2, 0, 0.025, 0.05, 0.125, _sgm(0.5, 2.0)),
    ("s", "circuits", "b"): (2, 0, 2, 0, 0.22, 0.24, 0.4, _sgm(0.1, 0.05)),
    ("s", "circuits", "c"): (2, 0, 1, 1, 0.0, 0.0, None, 10.0),  # error and 12 s at 10 s
    ("s", "priorities", "a"): (1, 0, 1, 0, 1 / 9, 1 / 9, 0.2, 10.0),  # 10.3 s capped
    ("s", "priorities", "b"): (1, 0, 1, 0, 0.0, 0.0, None, 1.0),
    ("s", "priorities", "c"): (1, 0, 0, 0, None, None, None, 10.0),
}


def test_summaries_equal_the_hand_computation(tmp_path):
    _tiny_db(tmp_path)
    with Store(tmp_path) as store:
        got = {(s.suite, s.kind, s.method): s for s in summarize(store.rows())}
    assert list(got) == sorted(EXPECTED)
    for key, (n, opt, feas, err, mean_gap, max_gap, pd, sgm) in EXPECTED.items():
        s = got[key]
        assert (s.instances, s.optimal, s.feasible, s.errors) == (n, opt, feas, err), key
        for value, want in ((s.mean_gap, mean_gap), (s.max_gap, max_gap),
                            (s.mean_pd_gap, pd), (s.sgm_runtime_s, sgm)):
            assert value == (None if want is None else pytest.approx(want)), key


def test_report_files_carry_the_same_numbers(tmp_path):
    _tiny_db(tmp_path)
    files = write_report(tmp_path)
    text = files.markdown.read_text()
    assert "## s: circuits" in text and "## other: circuits" in text
    assert "| b | 2 | 0 | 2 | 0 | 22.00 % | 24.00 % | 40.00 % | 0.075 |" in text
    assert "| c | 1 | 0 | 0 | 0 | - | - | - | 10 |" in text
    assert "- s / circuits / c: 1 run(s); first: boom" in text
    with open(files.summary_csv) as f:
        summary = {(r["suite"], r["kind"], r["method"]): r for r in csv.DictReader(f)}
    assert float(summary["s", "circuits", "b"]["mean_gap"]) == pytest.approx(0.22)
    assert summary["s", "priorities", "c"]["mean_gap"] == ""
    with open(files.runs_csv) as f:
        runs = list(csv.DictReader(f))
    assert len(runs) == 10  # the duplicate counts once
    gap = {(r["instance_id"], r["method"]): r["primal_gap"] for r in runs}
    assert float(gap["c/I1/0", "b"]) == pytest.approx(0.24)
    # Only s / circuits spans two sizes (4 and 8): elsewhere a runtime-vs-size line would
    # be a single point.
    assert [p.name for p in files.plots] == [
        "other-circuits-gap-vs-runtime.png", "s-circuits-gap-vs-runtime.png",
        "s-circuits-runtime-vs-size.png", "s-priorities-gap-vs-runtime.png"]
    assert text.count("runtime-vs-size: too few distinct points for a figure") == 2
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in files.plots)
    assert all(p.with_suffix(".pdf").read_bytes()[:5] == b"%PDF-" for p in files.plots)


def test_report_of_a_folder_without_database_is_one_clear_error(tmp_path):
    with pytest.raises(ValueError, match="no results database here"):
        write_report(tmp_path / "nothing")
