"""The benchmark harness: every method on seeded suites, scored by one cost model.

- :mod:`.suites`: suites as data (one block per problem kind; or a TOML file);
- :mod:`.runner`: plan a suite's runs and sweep them through an executor
  (:mod:`.executors`: a process pool, or Dask), each run in a process of its own that
  is killed at a hard wall-clock limit (:mod:`.isolate`, :mod:`.job`);
- :mod:`.store`: the SQLite database the driver writes as runs finish;
- :mod:`.metrics` and :mod:`.report`: gaps, shifted geometric mean runtimes, solved
  counts; markdown, CSV and PNG plots (:mod:`.plots`), rendered from the database alone.

From the shell: ``fabricopt bench`` (the quick suite) and ``fabricopt bench report DIR``.

Examples
--------
>>> from fabricopt.bench import Row, Suite, plan
>>> suite = Suite("demo", (Row("circuits", "tiny", {"gpus": 4, "switches": 2}, (0,)),))
>>> sorted(spec.method for spec in plan(suite))
['exact', 'greedy', 'milp']
"""

from fabricopt.bench.job import RunSpec
from fabricopt.bench.metrics import MethodSummary, shifted_geometric_mean, summarize
from fabricopt.bench.report import markdown_tables, write_report
from fabricopt.bench.runner import SweepOutcome, plan, run_sweep
from fabricopt.bench.store import Store
from fabricopt.bench.suites import ALL, SUITES, TABLES, Row, Suite, get_suite, kinds_without_rows

__all__ = ["Row", "Suite", "ALL", "SUITES", "TABLES", "get_suite", "kinds_without_rows",
           "RunSpec", "plan", "run_sweep", "SweepOutcome", "Store", "MethodSummary",
           "summarize", "shifted_geometric_mean", "markdown_tables", "write_report"]
