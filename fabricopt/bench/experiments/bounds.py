"""Bounds: the certified primal–dual gap beside every heuristic answer.

- **Placement**: every method of the ``quick`` suite's placement rows, and the
  heuristics on the 2,000-op family (``k32-p7``, the ``paper`` suite's row):
  mean PD gap per method over the nine rows the issue was written against (``tiny``,
  ``small``, ``medium``, ``large``), over all current quick rows and per family, and
  per row with the bound that gave it (``Result.bound_source``).
- **Bound against the proven optimum**: the fast placement bound
  (:func:`fabricopt.problems.placement.lower_bound`) and the bound fabricopt reported
  the two classic bounds alone, ``max(critical path, total compute / gpus)``, against the MILP's
  proven optimum on the ``placement`` experiment's 30 small random instances.
- **Topology**: ``topoopt``'s PD gap at 32 and 128 servers (degree 8, one AllReduce
  group, 4 model-parallel peers), with its bound's source.

The quick variant keeps the tiny and small placement rows, one 500-op instance, six
optimum instances and one 32-server topology.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from fabricopt.bench.metrics import bound_gap, summarize
from fabricopt.problems.tolerances import CERTIFY_RTOL
from fabricopt.bench.runner import plan as plan_suite
from fabricopt.bench.suites import Row, Suite, TABLES
from fabricopt.bench.tasks import TaskSpec, register_task
from fabricopt.bench.experiments import Experiment, markdown_table, register_experiment, write_csv

__all__ = ["optimum_task", "ORIGINAL_ROWS"]

#: The quick suite's original placement rows (9 instances), where the target is set.
ORIGINAL_ROWS = ("tiny", "small", "medium", "large")
_HEURISTICS = ("sipml", "sipml-ls", "unconstrained", "round-robin")
_TOPOLOGY = {"degree": 8, "groups": 1, "mp_peers": 4}
# Which side of the gap is loose (full variant only): the MILP for 240 s on the medium
# rows, and the heuristics on the large row without its degree limit (31 peers of 32).
_EVIDENCE = (("medium-milp-240s", {"ops": 40, "gpus": 8, "max_peers": 3}, (0, 1), ("milp",),
              240.0),
             ("large-degree-free", {"ops": 2000, "gpus": 32, "max_peers": 31}, (0,),
              _HEURISTICS, 30.0))
# (quick rows kept, k16-p3 seeds, k32-p7 seeds, optimum seeds, topology (servers, seeds))
_FULL = (None, None, (0, 1, 2, 3), range(30), ((32, (0, 1)), (128, (0, 1))))
_QUICK = (("tiny", "small"), (0,), (), range(6), ((32, (0,)),))


@register_task("bounds.optimum")
def optimum_task(seed: int, ops: int, gpus: int, max_peers: int,
                 time_limit_s: float = 120.0) -> dict:
    """The MILP's answer on ``placement.generate(seed, ops, gpus, max_peers)`` beside the
    fast bound (and its source) and the classic bound max(critical path, load); ``value`` is the
    MILP's objective, ``status`` says whether it is proven optimal."""
    import fabricopt
    from fabricopt.problems import placement
    from fabricopt.bounds import placement as placement_bounds
    from fabricopt.bounds.placement import critical_path_bound, load_bound

    inst = placement.generate(seed, ops=ops, gpus=gpus, max_peers=max_peers)
    exact = fabricopt.solve(inst, "milp", time_limit=time_limit_s)
    bound = placement_bounds.lower_bound(inst)
    return {"value": exact.objective, "status": exact.status, "milp_bound": exact.bound,
            "bound": float(bound), "source": bound.source,
            "old_bound": max(critical_path_bound(inst), load_bound(inst))}


def _placement_rows(keep: Sequence[str] | None, k16_seeds, k32_seeds) -> list[Row]:
    rows = []
    for entry in TABLES["placement"]["quick"]:
        row = Row("placement", *entry)
        if row.name == "k16-p3":
            if k16_seeds is not None:
                row = Row("placement", row.name, row.sizes, tuple(k16_seeds), row.methods,
                          row.time_limit_s)
        elif keep is not None and row.name not in keep:
            continue
        rows.append(row)
    if k32_seeds:
        entry = next(e for e in TABLES["placement"]["paper"] if e[0] == "k32-p7")
        rows.append(Row("placement", entry[0], entry[1], tuple(k32_seeds), entry[3], entry[4]))
        rows += [Row("placement", *entry) for entry in _EVIDENCE]
    return rows


def _plan(suite: str, quick: bool) -> list:
    keep, k16, k32, optimum_seeds, topology = _QUICK if quick else _FULL
    rows = _placement_rows(keep, k16, k32)
    rows += [Row("topology", f"s{n}", {"servers": n, **_TOPOLOGY}, seeds, ("topoopt",), 60.0)
             for n, seeds in topology]
    specs = plan_suite(Suite(suite, tuple(rows)))
    for seed in optimum_seeds:
        params = {"seed": seed, "ops": 10 + seed % 3, "gpus": 4, "max_peers": 1 + seed % 2}
        specs.append(TaskSpec(suite, f"optimum/{seed}", "bounds.optimum", params,
                              method="milp", seed=seed, time_limit_s=300.0))
    return specs


def _row_name(r: dict) -> str:
    return r["instance_id"].split("/")[1]


def _pct(x: float | None) -> str | None:
    return None if x is None else f"{100 * x:.2f} %"


def _ms(x: float | None) -> str | None:
    return None if x is None else f"{1e3 * x:.4g}"


def _summary_table(groups: dict[str, list[dict]]) -> tuple[str, list]:
    """Mean PD gap per method (columns) over each group of placement rows (lines)."""
    methods = sorted({r["method"] for rows in groups.values() for r in rows})
    header = ["rows", "instances"] + [f"`{m}`" for m in methods]
    body, csv_rows = [], []
    for label, rows in groups.items():
        if not rows:
            continue
        by_method = {s.method: s for s in summarize(rows)}
        cells = []
        for m in methods:
            s = by_method.get(m)
            cells.append(None if s is None or s.mean_pd_gap is None else _pct(s.mean_pd_gap))
            if s is not None:
                csv_rows.append([label, m, s.instances, s.mean_pd_gap, s.bound_sources])
        body.append([label, len({r["instance_hash"] for r in rows})] + cells)
    return markdown_table(header, body), csv_rows


def _per_row_table(rows: list[dict]) -> tuple[str, list]:
    """Per instance: sizes, best objective, the best bound and its source, each
    method's PD gap."""
    methods = sorted({r["method"] for r in rows})
    by_instance: dict[str, list[dict]] = {}
    for r in rows:
        by_instance.setdefault(r["instance_id"], []).append(r)
    header = ["instance", "ops / GPUs / peers", "best makespan ms", "bound ms (source)"] + [
        f"`{m}` PD gap" for m in methods]
    body, csv_rows = [], []
    for instance_id, runs in by_instance.items():
        solved = [r for r in runs if r["status"] in ("optimal", "feasible")]
        best = min((r["objective"] for r in solved if r["objective"] is not None), default=None)
        bounded = [r for r in solved if r["bound"] is not None]
        top = max(bounded, key=lambda r: r["bound"], default=None)
        size = runs[0]["size"]
        gpus = runs[0]["sizes"].get("gpus")
        peers = runs[0]["sizes"].get("max_peers")
        if gpus is None:    # a family row names its sizes by the family
            from fabricopt.problems.placement import FAMILIES

            family = FAMILIES[runs[0]["sizes"]["family"]]
            gpus, peers = family["gpus"], family["max_peers"]
        gaps = {r["method"]: r["gap"] for r in solved}
        source = None if top is None else (top["info"] or {}).get("bound_source")
        body.append([instance_id, f"{size} / {gpus} / {peers}", _ms(best),
                     None if top is None else f"{_ms(top['bound'])} ({source})"]
                    + [_pct(gaps.get(m)) for m in methods])
        for r in solved:
            csv_rows.append([instance_id, r["method"], r["objective"], r["bound"],
                             (r["info"] or {}).get("bound_source"), r["gap"], r["runtime_s"]])
    return markdown_table(header, body), csv_rows


def _optimum_table(rows: list[dict]) -> tuple[str, list]:
    proven = [r for r in rows if r["status"] == "feasible"
              and r["info"].get("status") == "optimal"]
    header = ["bound", "mean gap to optimum", "max gap", "equal to optimum"]
    body, csv_rows = [], []
    for label, key in (("classic: max(critical path, load)", "old_bound"),
                       ("`placement.lower_bound` (fast bounds, no MILP)", "bound")):
        gaps = [bound_gap(r["objective"], r["info"][key]) for r in proven]
        if not gaps:
            continue
        body.append([label, f"{sum(gaps) / len(gaps):.4f}", f"{max(gaps):.4f}",
                     f"{sum(g <= CERTIFY_RTOL for g in gaps)}/{len(gaps)}"])
    for r in rows:
        info = r["info"] or {}
        csv_rows.append([r["instance_id"], info.get("status"), r["objective"],
                         info.get("bound"), info.get("source"), info.get("old_bound")])
    sources: dict[str, int] = {}
    for r in proven:
        sources[r["info"]["source"]] = sources.get(r["info"]["source"], 0) + 1
    named = ", ".join(f"{k} {v}" for k, v in sorted(sources.items(), key=lambda kv: -kv[1]))
    note = (f"{len(proven)}/{len(rows)} instances proven optimal by the MILP; the fast "
            f"bound's sources: {named or '-'}. Instances: "
            "`placement.generate(seed, ops=10 + seed % 3, gpus=4, max_peers=1 + seed % 2)`.")
    return markdown_table(header, body) + "\n\n" + note, csv_rows


def _topology_table(rows: list[dict]) -> tuple[str, list]:
    header = ["instance", "servers", "topoopt objective", "bound (source)", "PD gap",
              "runtime s"]
    body, csv_rows = [], []
    for r in sorted(rows, key=lambda r: (r["size"] or 0, r["seed"])):
        source = (r["info"] or {}).get("bound_source")
        body.append([r["instance_id"], r["size"],
                     None if r["objective"] is None else f"{r['objective']:.5f}",
                     None if r["bound"] is None else f"{r['bound']:.5f} ({source})",
                     _pct(r["gap"]), None if r["runtime_s"] is None else
                     f"{r['runtime_s']:.2f}"])
        csv_rows.append([r["instance_id"], r["size"], r["objective"], r["bound"], source,
                         r["gap"], r["runtime_s"]])
    return markdown_table(header, body), csv_rows


def _plan_position(r: dict) -> tuple:
    """Where a placement run's row stands in the plan (quick rows, the 2,000-op family,
    the evidence rows), then its instance seed: the tables do not follow the order in
    which a resumed run stored them."""
    names = [e[0] for e in TABLES["placement"]["quick"]] + ["k32-p7"] + [e[0] for e in _EVIDENCE]
    name = _row_name(r)
    seed = r["instance_id"].rsplit("/", 1)[-1]
    return (names.index(name) if name in names else len(names), name,
            int(seed) if seed.isdigit() else 0)


def _render(rows: list[dict], folder: Path, quick: bool) -> str:
    placement = sorted((r for r in rows if r["kind"] == "placement"), key=_plan_position)
    original = [r for r in placement if _row_name(r) in ORIGINAL_ROWS]
    quick_rows = [r for r in placement if _row_name(r) in ORIGINAL_ROWS + ("k16-p3",)]
    groups = {"original quick rows (tiny, small, medium, large: 9 in the full variant)": original,
              "all current quick placement rows": quick_rows,
              "500-op family (k16-p3: 500 ops, 16 GPUs, 3 peers)":
                  [r for r in placement if _row_name(r) == "k16-p3"],
              "2,000-op family (k32-p7: 2,000 ops, 32 GPUs, 7 peers)":
                  [r for r in placement if _row_name(r) == "k32-p7"]}
    summary, summary_csv = _summary_table(groups)
    per_row, per_row_csv = _per_row_table(placement)
    optimum, optimum_csv = _optimum_table([r for r in rows if r["kind"] == "task:bounds.optimum"])
    topo, topo_csv = _topology_table([r for r in rows if r["kind"] == "topology"])
    write_csv(folder / "bounds-summary.csv",
              ["rows", "method", "runs", "mean_pd_gap", "bound_sources"], summary_csv)
    write_csv(folder / "bounds-placement.csv",
              ["instance", "method", "objective", "bound", "bound_source", "pd_gap",
               "runtime_s"], per_row_csv)
    write_csv(folder / "bounds-optimum.csv",
              ["instance", "milp_status", "optimum", "bound", "source", "old_bound"],
              optimum_csv)
    write_csv(folder / "bounds-topology.csv",
              ["instance", "servers", "objective", "bound", "bound_source", "pd_gap",
               "runtime_s"], topo_csv)
    target = next((s.mean_pd_gap for s in summarize(original) if s.method == "sipml-ls"), None)
    lines = ["### Placement: mean primal–dual gap per method", "", summary, ""]
    if target is not None:
        lines += [f"`sipml-ls` on the original quick rows: {_pct(target)} (target: "
                  "10 %).", ""]
    lines += ["PD gap: each run's `(objective - bound) / objective` as `fabricopt.solve` "
              "scored it; every heuristic reports the largest of the fast bounds and, on "
              "instances of at most 16 ops and 16 GPUs, the MILP's LP relaxation and its "
              "dual bound after 500 branch-and-bound nodes (with 10 s of wall clock as a "
              "safety net: a node budget gives the same bound on a loaded machine).", "",
              "### Placement: per instance", "", per_row, "",
              "`medium-milp-240s` is the MILP for 240 s on the medium instances (is the "
              "primal or the bound loose there?); `large-degree-free` is the large instance "
              "with `max_peers` = 31, i.e. without its degree limit: its optimum is at most "
              "the large row's, so its heuristic answers against its bound show how much "
              "of the large row's gap the degree limit makes.", "",
              "### Placement bound against the proven optimum", "", optimum, "",
              "### Topology: `topoopt` at 32 and 128 servers", "", topo, "",
              "Topology instances: `topology.generate(seed, servers=N, degree=8, groups=1, "
              "mp_peers=4)`. CSV: `bounds-summary.csv`, `bounds-placement.csv`, "
              "`bounds-optimum.csv`, `bounds-topology.csv`."]
    return "\n".join(lines)


register_experiment(Experiment(
    name="bounds", version=1, title="Bounds: certified gaps beside heuristic answers",
    summary="placement PD gaps per method and row (with the bound's source), the fast "
            "bound against proven optima, topoopt's PD gap at 32 and 128 servers",
    plan=_plan, render=_render))
