"""Experiments and tasks: planning, running through the runner, resume, rendering, the
document markers, and the CLI. The papers' quick variants run in slow tests."""

from __future__ import annotations

import math
import json
import re
import subprocess
import sys

import pytest

from fabricopt.bench import experiments as exp
from fabricopt.bench.job import RunSpec, execute, load_plugin
from fabricopt.bench.store import Store
from fabricopt.bench.tasks import TaskSpec, execute_task, spec_from_dict

from cli_helpers import run

# The task lives in a plug-in file: every run's process (a forkserver child) loads it.
TASK_PLUGIN = '''
from fabricopt.bench.tasks import register_task


@register_task("test.affine")
def affine(x: float, fail: bool = False) -> dict:
    if fail:
        raise RuntimeError(f"asked to fail at x = {x}")
    return {"value": 2.0 * x + 1.0, "x": x}
'''
PLUGINS: list[str] = []


def _demo_plan(suite, quick):
    xs = (1.0, 2.0) if quick else (1.0, 2.0, 3.0)
    specs = [TaskSpec(suite, f"demo/{x:g}", "test.affine", {"x": x}, method="affine",
                      time_limit_s=30.0, plugins=tuple(PLUGINS)) for x in xs]
    return specs + [TaskSpec(suite, "demo/fail", "test.affine", {"x": 0.0, "fail": True},
                             method="affine", time_limit_s=30.0, plugins=tuple(PLUGINS))]


def _demo_render(rows, folder, quick):
    (folder / "demo.csv").write_text("x,value\n" + "".join(
        f"{r['info']['x']},{r['objective']}\n" for r in rows if r["status"] == "feasible"))
    values = sorted(r["objective"] for r in rows if r["objective"] is not None)
    return f"values: {values}"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    plugin = tmp_path_factory.mktemp("plugin") / "affine_task.py"
    plugin.write_text(TASK_PLUGIN)
    PLUGINS[:] = [str(plugin)]
    load_plugin(str(plugin))
    experiment = exp.Experiment("test-demo", 3, "A demo", "a test experiment",
                                _demo_plan, _demo_render)
    exp.experiments()  # load the built-in ones first
    exp.register_experiment(experiment)
    yield experiment
    del exp._EXPERIMENTS["test-demo"]


#: Every registered experiment: each has a plan, a quick variant and a BENCHMARKS.md section.
ALL = [e.name for e in exp.experiments()]


def test_builtin_experiments_are_listed_papers_first():
    names = [e.name for e in exp.experiments()]
    assert names[:3] == ["crux", "sipml", "topoopt"]
    assert {"gaps", "scaling", "bounds"} <= set(names)
    for e in exp.experiments():
        assert e.summary and e.title and e.version >= 1


@pytest.mark.parametrize("name", ALL)
def test_every_plan_is_tagged_with_its_suite_and_quick_is_smaller(name):
    e = exp.get_experiment(name)
    quick = e.plan(exp.suite_name(e, True), True)
    full = e.plan(exp.suite_name(e, False), False)
    assert quick and full and len(quick) <= len(full)
    assert {s.suite for s in quick} == {f"{name}-quick@{e.version}"}
    assert {s.suite for s in full} == {f"{name}@{e.version}"}
    keys = [s.key for s in full]
    assert len(keys) == len(set(keys)), "two runs of one plan share a key"


def test_unknown_experiment_names_the_known_ones():
    with pytest.raises(ValueError, match=r"experiment = 'nope': unknown experiment \(known: crux"):
        exp.get_experiment("nope")


def test_task_spec_round_trips_and_has_a_stable_key(demo):
    spec = TaskSpec("s@1", "demo/1", "test.affine", {"x": 1.0}, method="affine")
    again = spec_from_dict(json.loads(json.dumps(spec.to_dict())))
    assert again == spec and again.key == spec.key
    assert TaskSpec("s@1", "demo/1", "test.affine", {"x": 2.0}, method="affine").key != spec.key
    assert spec.kind == "task:test.affine" and spec.sizes == {"x": 1.0}
    run = RunSpec("q", "circuits/t/0", "h", "circuits", "min", 4, {}, "exact", 0, 1.0, {})
    assert spec_from_dict(run.to_dict()) == run


def test_a_task_reports_its_value_or_its_error(demo):
    ok = execute_task(TaskSpec("s@1", "demo/1", "test.affine", {"x": 1.5}))
    assert ok["status"] == "feasible" and ok["objective"] == 4.0 and ok["info"]["x"] == 1.5
    bad = execute_task(TaskSpec("s@1", "demo/0", "test.affine", {"x": 0.0, "fail": True}))
    assert bad["status"] == "error" and "asked to fail at x = 0.0" in bad["message"]
    unknown = execute(TaskSpec("s@1", "demo/0", "test.nothing", {}))
    assert unknown["status"] == "error" and "unknown task" in unknown["message"]
    assert "peak_rss_bytes" in unknown


def test_run_resume_and_render(demo, tmp_path):
    out = tmp_path / "demo"
    outcome, md = exp.run_experiment("test-demo", out, quick=True, workers=1, progress=False)
    assert (outcome.planned, outcome.ran, outcome.failed) == (3, 3, 1)
    text = md.read_text()
    assert text.startswith("## A demo (quick)\n")
    assert "`fabricopt reproduce test-demo --quick`" in text and "test-demo-quick@3" in text
    assert "3 runs, 1 failed" in text and "values: [3.0, 5.0]" in text
    assert (out / "demo.csv").read_text().splitlines()[1:] == ["1.0,3.0", "2.0,5.0"]
    again, _ = exp.run_experiment("test-demo", out, quick=True, workers=1, progress=False,
                                  resume=True)
    assert (again.skipped, again.ran) == (3, 0)
    # The full variant shares the folder but not the suite: its rows stay apart.
    full, md_full = exp.run_experiment("test-demo", out, workers=1, progress=False)
    assert full.ran == 4 and "values: [3.0, 5.0, 7.0]" in md_full.read_text()
    with Store(out, create=False) as store:
        assert {r["suite"] for r in store.rows()} == {"test-demo-quick@3", "test-demo@3"}


def test_render_needs_stored_runs(demo, tmp_path):
    Store(tmp_path).close()
    with pytest.raises(ValueError, match="no stored run of test-demo-quick@3"):
        exp.render_experiment("test-demo", tmp_path, quick=True)


def test_update_document_replaces_only_its_own_section(tmp_path):
    doc = tmp_path / "BENCHMARKS.md"
    doc.write_text("# Benchmarks\n\nhand-written\n")
    assert exp.update_document(doc, "a", "## A\n\none\n")
    assert exp.update_document(doc, "b", "## B\n\ntwo\n")
    assert exp.update_document(doc, "a", "## A\n\nthree\n")
    assert not exp.update_document(doc, "a", "## A\n\nthree\n")
    text = doc.read_text()
    assert text.startswith("# Benchmarks\n\nhand-written\n")
    assert "three" in text and "one" not in text and "two" in text
    assert text.index("## A") < text.index("## B")


def test_cli_lists_runs_and_updates(demo, tmp_path):
    # The demo experiment lives in this process only: the CLI is called in-process.
    from fabricopt.cli import main

    assert main(["reproduce", "--list"]) == 0
    out = tmp_path / "cli"
    doc = tmp_path / "DOC.md"
    assert main(["reproduce", "test-demo", "--quick", "--out", str(out), "--workers", "1",
                 "--no-progress", "--update", str(doc)]) == 0
    assert "values: [3.0, 5.0]" in doc.read_text()
    # the header sums what the stored runs cost, from the store itself
    from fabricopt.bench.store import Store

    with Store(out, create=False) as store:
        rows = store.rows()
    cpu = sum(r["info"]["run_cpu_s"] for r in rows)
    wall = sum(r["wall_s"] for r in rows)
    assert f"{len(rows)} runs, 1 failed, {cpu:,.0f} CPU s and {wall:,.0f} wall s in all, " \
           f"last finished " in doc.read_text()
    assert main(["reproduce", "test-demo", "--quick", "--out", str(out), "--render-only"]) == 0


def test_cli_unknown_experiment_is_one_line_exit_2():
    code, stdout, stderr = run("reproduce", "nope")
    assert code == 2 and stdout == ""
    assert len(stderr.strip().splitlines()) == 1 and "unknown experiment" in stderr


@pytest.mark.slow
@pytest.mark.parametrize("name", ALL)
def test_quick_variant_runs_and_renders(name, tmp_path):
    proc = subprocess.run([sys.executable, "-m", "fabricopt", "reproduce", name, "--quick",
                           "--out", str(tmp_path), "--no-progress"],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    md = tmp_path / f"{name}-quick.md"
    assert md.read_text().startswith("## ")
    # what the runs cost, summed from the stored runs (CPU where each recorded it)
    assert re.search(r"\d+ runs, \d+ failed, ([\d,]+ CPU s and )?[\d,]+ wall s in all, "
                     r"last finished ", md.read_text())
    # enumerate may refuse a case above its budget
    assert "0 failed" in md.read_text() or name in ("crux", "gaps", "paper-suite")
    assert list(tmp_path.glob("*.csv"))


@pytest.mark.parametrize("name", ALL)
def test_benchmarks_md_paper_sections_carry_the_command_that_made_them(name):
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "BENCHMARKS.md").read_text()
    begin, end = exp._markers(name)
    assert begin in text and end in text, f"BENCHMARKS.md has no generated {name} section"
    block = text.split(begin, 1)[1].split(end, 1)[0].strip()
    assert block.startswith("## ")
    assert f"Generated by `fabricopt reproduce {name}" in block
    assert "fabricopt " in block and "cores" in block  # the version and the machine


def test_compare_task_records_what_solve_reported():
    from fabricopt import generate, solve
    from fabricopt.bench.experiments.comparisons import compare_task, method_stats

    out = compare_task("circuits", {"gpus": 8, "switches": 2}, [0, 1],
                       [["greedy", "greedy", {}], ["exact", "exact", {}]],
                       reference=["milp", "milp", {}])
    records = out["records"]
    assert out["value"] == 2.0 and [r["seed"] for r in records] == [0, 1]
    for r in records:
        inst = generate("circuits", seed=r["seed"], gpus=8, switches=2)
        assert r["exact"]["value"] == solve(inst, "exact").objective
        assert r["reference"]["status"] == "optimal" and r["size"] == 8
        assert r["greedy"]["cpu_s"] >= 0
    # greedy and exact are both optimal on circuits: the MILP agrees
    for label in ("greedy", "exact"):
        stats = method_stats(records, label)
        assert stats["n"] == 2 and stats["optimal"] == 2 and stats["max_gap"] <= 1e-9


def test_compare_task_skips_what_an_extra_refuses():
    from fabricopt.bench.experiments.comparisons import compare_task

    exp.experiments()  # registers the wavelengths builders and extras
    out = compare_task("wavelengths", {}, list(range(12)), [["greedy", "greedy", {}]],
                       builder="wavelengths-uniform", extras=["wavelengths.feasible_only"])
    skipped = [r for r in out["records"] if "skip" in r]
    assert out["value"] == 12 - len(skipped)
    assert all("greedy" not in r for r in skipped)
    assert all(r["greedy"]["status"] in ("feasible", "optimal")
               for r in out["records"] if "skip" not in r)


def test_fabric_curves_read_back_by_batch():
    from fabricopt.bench.experiments.fabric_curves import curve_points, curve_spec

    spec = curve_spec("s@1", "sipml", "resnet50", 8, [100.0], ["elect-flat"], global_batch=512)
    assert spec.instance_id == "sipml/resnet50/8/batch512" and spec.task == "fabrics.compare"
    point = {"workload": "resnet50", "fabric": "elect-flat", "gbps": 100.0, "iteration_s": 1.0}
    rows = [{"status": "feasible", "sizes": {}, "info": {"rows": [point]}},
            {"status": "feasible", "sizes": {"global_batch": 512},
             "info": {"rows": [{**point, "global_batch": 512, "iteration_s": 0.2}]}},
            {"status": "error", "sizes": {}, "info": {}}]
    assert curve_points(rows) == {"resnet50": {("elect-flat", 100.0): point}}
    by_batch = curve_points(rows, batches=True)["resnet50"]
    assert by_batch[("elect-flat", 100.0, 8192)] == point      # the workload's own batch
    assert by_batch[("elect-flat", 100.0, 512)]["iteration_s"] == 0.2


def test_bounds_optimum_task_never_certifies_above_the_proven_optimum():
    from fabricopt.bench.experiments.bounds import optimum_task

    out = optimum_task(seed=0, ops=10, gpus=4, max_peers=1)
    assert out["status"] == "optimal"
    assert out["old_bound"] <= out["bound"] <= out["value"] * (1 + 1e-9)
    assert out["source"] and out["milp_bound"] <= out["value"] * (1 + 1e-9)


def test_sipml_plans_the_scenario_and_its_artifact_strategies():
    from fabricopt.bench.experiments import sipml

    v = sipml.scenario().values
    for quick in (True, False):
        plan = sipml._plan("sipml@2", quick)
        specs = [s for s in plan if s.task == "fabrics.compare"]
        gpus = v["quick"]["gpus"] if quick else v["gpus"]
        assert {s.params["gpus"] for s in specs} == {gpus}
        assert {s.params["memory_bytes"] for s in specs} == {32e9}
        assert {s.params["tau_s"] for s in specs} == {1e-5}
        fixed = [s for s in specs if s.params.get("k_values")]
        assert sorted({(s.params["workload"], s.params["k_values"][0],
                        s.params["global_batch"]) for s in fixed}) == [
            ("megatron", 8, 1024), ("resnet50", 8, 8192), ("transformer", 8, 1024)]
        assert len({s.instance_id for s in specs}) == len(specs)
        assert len({s.instance_id for s in plan}) == len(plan)
        # the full variant runs a task per bandwidth (a kill loses only the points in
        # flight); --quick a task per curve
        swept = v["quick"]["bandwidths_gbps"] if quick else v["bandwidths_gbps"]
        per_task = {len(s.params["bandwidths"]) for s in specs}
        assert per_task == ({len(swept)} if quick else {1})
        points = sorted(b for s in specs if s.params["workload"] == "megatron"
                        and not s.params.get("k_values") for b in s.params["bandwidths"])
        assert points == sorted(float(b) for b in swept)
        rings = [s for s in plan if s.task == "sipml.rings"]
        assert {s.params["model"] for s in rings if "model" in s.params} == set(sipml.WORKLOADS)
        assert {s.params["family"] for s in rings if "family" in s.params} == {
            "k16-p3", "k32-p7", "k64-p15"}
    assert v["bandwidths_gbps"] == [128, 256, 512, 1024, 2048, 4096, 8192]


def test_sipml_scenario_matches_the_fabrics_it_builds():
    from fabricopt.bench.experiments import sipml
    from fabricopt.fabrics.comparison import make_fabric

    v = sipml.scenario().values
    cluster = make_fabric("elect-cluster-200", 1024.0, 64)
    assert cluster.gpus_per_server == v["elect_cluster"]["gpus_per_server"]
    assert [make_fabric(f"elect-cluster-{g}", 1.0, 8).inter_gbps
            for g in v["elect_cluster"]["inter_server_gbps"]] == [200.0, 400.0]
    ocs = make_fabric("sip-ocs", 1024.0, 64, switches=v["sip_ocs"]["switches"])
    assert (ocs.switches, ocs.reconfig_s) == (16, v["sip_ocs"]["reconfig_s"])
    ring = make_fabric("sip-ring", 2000.0, 64)
    r = v["sip_ring"]
    assert (ring.wavelength_gbps, ring.max_hops, ring.reconfig_s, ring.interval_s) == (
        r["wavelength_gbps"], r["max_hops"], r["reconfig_s"], r["interval_s"])
    assert ring.wavelengths == v["teraphy"]["wavelengths"]


def test_sipml_section_reports_ratios_half_bandwidth_and_shapes(tmp_path):
    from fabricopt.bench.experiments import sipml

    def point(fabric, gbps, batch, seconds, k=8, l=8):
        return {"workload": "transformer", "fabric": fabric, "gbps": gbps,
                "global_batch": batch, "iteration_s": seconds, "k": k, "l": l}

    plan = {s.instance_id: s for s in sipml._plan("", quick=True)}

    def row(point_id, points, status="feasible"):
        spec = plan[point_id]
        return {"status": status, "kind": "task:fabrics.compare", "instance_id": point_id,
                "sizes": spec.params, "info": {"rows": points}}

    own = [point("sip-ocs", 1024.0, 1024, 1.0), point("elect-cluster-400", 1024.0, 1024, 3.0),
           point("elect-cluster-200", 1024.0, 1024, 5.0),
           point("elect-flat-half", 1024.0, 1024, 0.3), point("elect-flat", 1024.0, 1024, 2.0)]
    half = [{**point("sip-ocs", 1024.0, 512, 0.5, 4, 16), "mp_peers": 1},
            point("elect-cluster-400", 1024.0, 512, 1.5, 1, 64)]
    rows = [row("sipml/transformer/64/batch1024", own), row("sipml/transformer/64/batch512", half),
            row("sipml/transformer/64/batch1024/k8", [point("sip-ocs", 1024.0, 1024, 1.5)]),
            row("sipml/megatron/64/batch1024", [], "error"),
            {**row("sipml/transformer/64/batch512", half), "sizes": {"stale": True}}]
    searched, kept = sipml.read_points(rows)
    assert len(searched["transformer"]) == 7 and len(kept["transformer"]) == 1
    text = sipml._render(rows, tmp_path, quick=True)
    assert "| `gpus` | 1024 | paper: SiP-ML §4.3, Fig. 5 (N = 1024 GPUs) |" in text
    # batch 512 needs 5/3 the steps of 1024 (critical batch 2048) at half the time: chosen
    assert "4x16 b512 p1" in text and "1x64 b512 |" in text      # pure DP: no peers
    assert "SiP-OCS at B at least as fast as Elect-Flat at B/2 at 0 of 1 points" in text
    assert "| 3.00 | 5.00 | NO |" in text        # iteration ratios at batch 1024, B/2 fails
    assert "SiP-OCS is faster than Elect-Flat at equal B at 1 of 1 points" in text
    assert (tmp_path / "sipml-time-to-accuracy.csv").exists()
    # a row the plan does not hold (other parameters) stays out of the section
    assert len(sipml._planned(rows, quick=True)) == 4


def test_sipml_rings_count_the_kept_ring_against_the_electrical_baseline():
    from fabricopt.bench.experiments.sipml_rings import rings_lines, rings_task
    from fabricopt.algorithms.placement.sipml import algorithm1, sipml
    from fabricopt.problems.placement import generate, schedule_times

    out = rings_task(family="k16-p3", seed=1)
    inst = generate(seed=1, family="k16-p3")
    _, info = sipml(inst)
    assert out["kept"] == info["ring_gpus"] and set(out["makespans_s"]) == {"1", "4", "16"}
    gpu, order, _ = algorithm1(inst, gpus=16, degree=16)
    assert out["electrical_s"] == max(schedule_times(inst, gpu, order)[1])
    assert out["value"] == pytest.approx(out["makespans_s"]["16"] / out["electrical_s"])
    rows = [{"status": "feasible", "kind": "task:sipml.rings",
             "sizes": {"family": "k16-p3", "seed": 1}, "info": out}]
    text = "\n".join(rings_lines(rows))
    kept = [int(out["kept"] == ring) for ring in (16, 4, 1)]
    assert f"| k16-p3 | 1 | 500 | {kept[0]} | {kept[1]} | {kept[2]} | " in text


def test_speed_points_keep_the_least_of_their_timed_calls():
    from fabricopt.bench.experiments.speed import call_task

    out = call_task("circuits-exact", 16, repeats=3)
    assert len(out["cpu_s_all"]) == 3 and out["value"] == min(out["cpu_s_all"])
    assert out["first_cpu_s"] == out["cpu_s_all"][0] and out["objective"] > 0


def test_speed_papers_scale_rows_cover_every_call_and_slope():
    from fabricopt.bench.experiments import speed

    heavy = [(s, n) for _, s, n, *_ in speed.PAPER_SCALE] + \
        [(s, n) for _, s, sizes, _ in speed.PAPER_SLOPES for n in sizes]
    assert {s for s, _ in heavy} <= set(speed.SNIPPETS)
    assert set(heavy) <= set(speed.points(quick=False))
    # every path but the README's compare, which takes minutes even at 16 GPUs
    assert {s for s, _ in speed.points(quick=True)} == set(speed.SNIPPETS) - {
        "compare-transformer"}
    # measured rows: CPU s and peak RSS shown, goals tested, slopes from the two sizes
    row = {"status": "feasible", "peak_rss_bytes": 100 * 2**20, "message": None}
    got = {("sipml-transformer", 24): {**row, "info": {"cpu_s": 0.5}},
           ("sipml-transformer", 48): {**row, "info": {"cpu_s": 1.5}}}
    body = speed._paper_rows(got)
    assert body[0][2:] == ["0.50", "100", "yes"]
    assert body[1][2:] == ["not run", None, "**no**"]
    slope = body[len(speed.PAPER_SCALE)]
    assert slope[2] == f"{math.log(3) / math.log(2):.2f}" and slope[4] == "**no**"


def test_speed_points_are_timed_as_often_as_their_row_declares():
    from fabricopt.bench.experiments import speed

    declared = {(s, n): calls for _, s, n, _, _, calls in speed.PAPER_SCALE}
    for point, calls in declared.items():
        assert speed._repeats(*point) == calls
    assert declared[("compare-transformer", 4096)] == 1
    # a slope's other size is timed like its snippet's row; the targets as REPEATS
    assert speed._repeats("compare-simai", 4608) == declared[("compare-simai", 9216)] == 3
    assert speed._repeats("topoopt", 256) == speed.REPEATS
    plan = {t.instance_id: t.params["repeats"] for t in speed._plan("speed@test", False)
            if "repeats" in t.params}
    assert plan["speed/compare-transformer/1024"] == 1
    assert plan["speed/sipml-transformer/48"] == 3


def test_speed_papers_scale_snippets_run_at_small_sizes():
    from fabricopt.bench.experiments.speed import call_task

    for snippet, n in [("sipml-transformer", 1), ("topology-generate", 16),
                       ("crux-ecmp", 10), ("crux-crux", 10)]:
        out = call_task(snippet, n, repeats=1)
        assert out["cpu_s"] >= 0 and len(out["cpu_s_all"]) == 1


def test_speed_bench_row_times_the_bench_command_and_names_a_failure(tmp_path):
    from fabricopt.bench.experiments import speed
    from fabricopt.errors import InvalidArgument

    suite = tmp_path / "t.toml"
    suite.write_text('[[rows]]\nkind = "circuits"\nname = "tiny"\nsizes = {gpus = 4}\n'
                     'seeds = [0]\nmethods = ["greedy"]\ntime_limit_s = 10\n')
    out = speed.bench_suite_task(str(suite), workers=1)
    assert out["value"] == out["wall_s"] > 0 and out["cpu_s"] > 0
    assert out["summary"].startswith("suite t: 1 runs") and "0 failed" in out["summary"]
    row = {"kind": "task:speed.bench_suite", "status": "feasible", "info": out}
    line = speed._bench_line([row])
    assert f"{out['wall_s']:.1f} s wall" in line and line.endswith("machine runs).")
    assert "not run" in speed._bench_line([])
    with pytest.raises(InvalidArgument, match=r"fabricopt bench --suite .*nope.toml exited 2"):
        speed.bench_suite_task(str(tmp_path / "nope.toml"), workers=1)
