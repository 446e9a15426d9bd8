"""The report's PD-gap column names the bound behind each gap, counted over runs."""

from fabricopt.bench import Store, summarize, write_report


def _row(method, instance, gap, source, status="feasible"):
    return {"run_key": f"s|{instance}|{method}", "suite": "s", "instance_id": instance,
            "instance_hash": instance, "kind": "placement", "sense": "min", "size": 8,
            "sizes": {"ops": 8}, "method": method, "seed": 0, "time_limit_s": 10.0,
            "status": status, "objective": 2.0, "bound": 2.0 * (1 - gap), "gap": gap,
            "runtime_s": 0.1, "wall_s": 0.1, "peak_rss_bytes": 1, "message": None,
            "info": {} if source is None else {"bound_source": source},
            "versions": {"fabricopt": "0.1.0"}, "host": "h"}


def test_pd_gap_cell_names_the_bounds(tmp_path):
    with Store(tmp_path) as store:
        for row in (_row("h", "i1", 0.1, "degree-fan"), _row("h", "i2", 0.3, "degree-fan"),
                    _row("h", "i3", 0.2, "milp-dual"), _row("old", "i1", 0.5, None),
                    _row("m", "i1", 0.0, "optimal", status="optimal")):
            store.add(row, "sweep")
        summaries = {s.method: s for s in summarize(store.rows())}
    assert summaries["h"].bound_sources == "degree-fan 2, milp-dual 1"
    assert summaries["old"].bound_sources == ""       # stored before bounds were named
    text = write_report(tmp_path, plots=False).markdown.read_text()
    assert "| 20.00 % (degree-fan 2, milp-dual 1) |" in text
    assert "| 0.00 % (optimal 1) |" in text and "| 50.00 % |" in text
