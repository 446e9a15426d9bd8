"""Benchmark suites as data: which instances each problem kind is benchmarked on.

A suite is a list of :class:`Row` s. A row names a problem kind, an instance name, the
size options of the kind's generator (``fabricopt.generate(kind, seed, **sizes)``), the
seeds (one instance per seed), the methods (``"all"``: every method registered for the
kind) and the time limit of each run.

The built-in suites are built from :data:`TABLES`, one block per problem kind:

- ``quick``: tiny to large instances, the whole suite in minutes on a laptop;
- ``paper``: the settings of the papers the kind comes from;
- ``scale``: sizes that grow until only the heuristics finish.

A kind that :func:`fabricopt.kinds` lists but that has no block is reported by
:func:`kinds_without_rows` (the CLI prints it, a test fails on it); a block naming a kind
that is not registered is an error, never skipped. A suite can also be a TOML file with
``[[rows]]`` tables of the same fields (see :func:`load_suite_file`).
"""

from __future__ import annotations

from fabricopt.errors import InvalidArgument

import inspect
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from fabricopt.problems import get_kind, kinds
from fabricopt.problems._validate import as_float, as_id, as_int, fail, reject_unknown_keys
from fabricopt.methods import all_methods, get_method

__all__ = ["ALL", "Row", "Suite", "TABLES", "SUITES", "get_suite", "load_suite_file",
           "kinds_without_rows"]

#: A row's ``methods`` value meaning every method registered for its kind.
ALL = "all"

#: The built-in suites and what each is for.
SUITES = {
    "quick": "tiny to large instances of every kind; minutes on 2 cores",
    "paper": "the papers' own settings (SiP-ML, TopoOpt, Crux)",
    "scale": "sizes that grow until only the heuristics finish",
}

# The size table. One block per problem kind; in it, one list per built-in suite of
#   (instance name, generator sizes, seeds, methods, time limit in seconds).
# Benchmarking a new kind is one edit: add its block here. Sizes go from tiny (the MILP
# proves optimality in well under a second) to sizes where building the MILP alone
# would take gigabytes, where rows list the heuristics only.
TABLES: dict[str, dict[str, list[tuple]]] = {
    "circuits": {
        "quick": [
            ("tiny", {"gpus": 8, "switches": 2}, (0, 1, 2), ALL, 10.0),
            ("small", {"gpus": 16, "switches": 4}, (0, 1, 2), ALL, 10.0),
            ("medium", {"gpus": 32, "switches": 8}, (0, 1, 2), ALL, 10.0),
            ("large", {"gpus": 64, "switches": 8}, (0, 1), ALL, 10.0),
            # Heavy-tailed (hot-pair) sizes; greedy stays optimal (its Notes prove it).
            ("skewed", {"gpus": 16, "switches": 4, "skew": 3.0}, (0, 1, 2), ALL, 10.0),
        ],
        # SiP-ML §5 / App. A.2: N = 1024 GPUs, Q = 16 OCSes by default (the artifact's
        # run_ocs.sh uses 20), B = 8 Tbps per GPU split over the Q circuits. The MILP
        # (16.7M binaries) cannot even be built here.
        "paper": [
            ("sipml-n1024-q16", {"gpus": 1024, "switches": 16, "circuit_gbps": 512.0},
             (0, 1, 2), ("exact", "greedy"), 600.0),
            ("sipml-n1024-q20", {"gpus": 1024, "switches": 20, "circuit_gbps": 409.6},
             (0, 1, 2), ("exact", "greedy"), 600.0),
            ("sipml-n1024-q16-skewed", {"gpus": 1024, "switches": 16, "circuit_gbps": 512.0,
                                        "skew": 3.0}, (0,), ("exact", "greedy"), 600.0),
        ],
        "scale": [
            ("n16-q4", {"gpus": 16, "switches": 4}, (0, 1), ALL, 60.0),
            ("n32-q8", {"gpus": 32, "switches": 8}, (0, 1), ALL, 60.0),
            ("n64-q8", {"gpus": 64, "switches": 8}, (0, 1), ALL, 60.0),
            ("n128-q16", {"gpus": 128, "switches": 16}, (0, 1), ALL, 60.0),
            ("n256-q16", {"gpus": 256, "switches": 16}, (0, 1), ("exact", "greedy"), 60.0),
            ("n512-q16", {"gpus": 512, "switches": 16}, (0, 1), ("exact", "greedy"), 60.0),
            ("n1024-q16", {"gpus": 1024, "switches": 16}, (0, 1), ("exact", "greedy"), 60.0),
        ],
    },
    "placement": {
        # Random layered DAGs already split into sub-ops (generator ``ops`` = sub-ops).
        "quick": [
            ("tiny", {"ops": 8, "gpus": 3, "max_peers": 1}, (0, 1, 2), ALL, 10.0),
            ("small", {"ops": 12, "gpus": 4, "max_peers": 2}, (0, 1, 2), ALL, 10.0),
            ("medium", {"ops": 40, "gpus": 8, "max_peers": 3}, (0, 1), ALL, 10.0),
            ("large", {"ops": 2000, "gpus": 32, "max_peers": 7}, (0,),
             ("sipml", "sipml-ls", "unconstrained", "round-robin"), 30.0),
            # a separating family: 500 sub-ops, 16 GPUs, 3 peers (problems.placement.FAMILIES)
            ("k16-p3", {"family": "k16-p3"}, (0, 1, 2, 3),
             ("sipml", "sipml-ls", "unconstrained", "round-robin"), 30.0),
        ],
        # SiP-ML §3.2 / §5: k-way model parallelism with D - 1 = 15 MP peers on 64 GPUs;
        # the balanced Transformer graph has > 20k sub-ops (SiP-ML's speed target).
        "paper": [
            ("sipml-k64-d16", {"ops": 20000, "gpus": 64, "max_peers": 15}, (0,),
             ("sipml", "sipml-ls", "unconstrained", "round-robin"), 120.0),
            # a separating family: 2,000 sub-ops, 32 GPUs, D = 8 (problems.placement.FAMILIES)
            ("k32-p7", {"family": "k32-p7"}, (0, 1, 2, 3),
             ("sipml", "sipml-ls", "unconstrained", "round-robin"), 60.0),
        ],
        "scale": [
            ("o10-k4", {"ops": 10, "gpus": 4, "max_peers": 1}, (0, 1), ALL, 60.0),
            ("o12-k4", {"ops": 12, "gpus": 4, "max_peers": 2}, (0, 1), ALL, 60.0),
            ("o24-k4", {"ops": 24, "gpus": 4, "max_peers": 2}, (0, 1), ALL, 60.0),
            ("o48-k8", {"ops": 48, "gpus": 8, "max_peers": 3}, (0, 1), ALL, 60.0),
            ("o500-k16", {"ops": 500, "gpus": 16, "max_peers": 3}, (0, 1),
             ("sipml", "sipml-ls", "unconstrained", "round-robin"), 60.0),
            ("o5000-k64", {"ops": 5000, "gpus": 64, "max_peers": 15}, (0,),
             ("sipml", "sipml-ls", "unconstrained", "round-robin"), 60.0),
        ],
    },
    "priorities": {
        "quick": [
            ("j8-k3", {"jobs": 8, "levels": 3}, (0, 1, 2), ALL, 10.0),
            ("j20-k4", {"jobs": 20, "levels": 4}, (0, 1, 2), ALL, 10.0),
            ("j200-k8", {"jobs": 200, "levels": 8}, (0,), ALL, 10.0),
        ],
        # Crux §6: 8 priority levels of commodity switches; the DP re-plans within a
        # minute of each job arrival on clusters of ~2,000 jobs (Crux's arrival-time target).
        "paper": [
            ("crux-j2000-k8", {"jobs": 2000, "levels": 8}, (0, 1, 2),
             ("exact", "crux", "sincronia", "varys"), 300.0),
        ],
        "scale": [
            ("j20-k4", {"jobs": 20, "levels": 4}, (0, 1), ALL, 60.0),
            ("j100-k8", {"jobs": 100, "levels": 8}, (0, 1), ALL, 60.0),
            ("j500-k8", {"jobs": 500, "levels": 8}, (0, 1), ALL, 60.0),
            ("j2000-k8", {"jobs": 2000, "levels": 8}, (0, 1), ALL, 60.0),
            # The priorities MILP stays fast (5,000 jobs proved optimal in ~5 s here): this
            # row measures the exact LP and the heuristics at the largest size.
            ("j5000-k8", {"jobs": 5000, "levels": 8}, (0, 1),
             ("exact", "crux", "sincronia", "varys"), 60.0),
        ],
    },
    "crux": {
        # The paper's microbenchmark: a two-layer Clos, 2 aggregation switches, hosts of
        # 8 GPUs, 5 jobs, 3 levels; ``enumerate`` is the yardstick on the small cases.
        "quick": [
            ("j3-clos", {"jobs": 3, "levels": 2, "hosts_per_tor": 3}, (0, 1, 2), ALL, 30.0),
            ("j5-clos", {"jobs": 5, "levels": 3}, (0,), ALL, 60.0),
        ],
        "paper": [
            ("microbench-j5", {"jobs": 5, "levels": 3}, tuple(range(10)), ALL, 600.0),
        ],
        "scale": [
            ("j5", {"jobs": 5, "levels": 3}, (0, 1), ALL, 120.0),
            ("j20", {"jobs": 20, "levels": 8, "hosts_per_tor": 10}, (0, 1),
             ("crux", "ecmp", "sincronia", "sincronia-levels", "varys-levels"), 120.0),
            ("j100", {"jobs": 100, "levels": 8, "tors": 20, "hosts_per_tor": 10}, (0,),
             ("crux", "ecmp", "sincronia", "sincronia-levels", "varys-levels"), 300.0),
        ],
    },
    "wavelengths": {
        "quick": [
            ("tiny", {"nodes": 8, "wavelengths": 2, "max_hops": 3}, (0, 1, 2), ALL, 10.0),
            ("small", {"nodes": 10, "wavelengths": 4, "max_hops": 4}, (0, 1, 2), ALL, 10.0),
            ("medium", {"nodes": 32, "wavelengths": 8, "max_hops": 8}, (0, 1), ALL, 10.0),
            ("large", {"nodes": 128, "wavelengths": 64, "max_hops": 16}, (0,),
             ("mcf", "greedy"), 10.0),
            # High load with max_hops binding: the heuristics' gaps to the optimum show.
            ("long-reach", {"nodes": 16, "wavelengths": 8, "max_hops": 6, "mp_peers": 4,
                            "family": "long-reach"}, (0, 1, 2, 3), ALL, 30.0),
        ],
        # SiP-ML §3.3 / artifact run_ring.sh: N = 1024, W in {20..320} x 25 Gbps, 16 hops;
        # the speed target is 128 nodes, W = 64.
        "paper": [
            ("ring-n128-w64", {"nodes": 128, "wavelengths": 64, "max_hops": 16}, (0, 1, 2),
             ("mcf", "greedy"), 600.0),
            ("sipml-n1024-w80", {"nodes": 1024, "wavelengths": 80, "max_hops": 16}, (0,),
             ("mcf", "greedy"), 600.0),
            ("long-reach-n32-w16", {"nodes": 32, "wavelengths": 16, "max_hops": 8,
                                    "mp_peers": 4, "family": "long-reach"}, (0, 1, 2), ALL,
             120.0),
        ],
        "scale": [
            ("n10-w4", {"nodes": 10, "wavelengths": 4, "max_hops": 4}, (0, 1), ALL, 60.0),
            ("n16-w8", {"nodes": 16, "wavelengths": 8, "max_hops": 4}, (0, 1), ALL, 60.0),
            ("n32-w16", {"nodes": 32, "wavelengths": 16, "max_hops": 8}, (0, 1), ALL, 60.0),
            ("n64-w32", {"nodes": 64, "wavelengths": 32, "max_hops": 16}, (0, 1), ALL, 60.0),
            ("n128-w64", {"nodes": 128, "wavelengths": 64, "max_hops": 16}, (0, 1),
             ("mcf", "greedy"), 60.0),
            ("n512-w64", {"nodes": 512, "wavelengths": 64, "max_hops": 16}, (0,),
             ("mcf", "greedy"), 60.0),
        ],
    },
    "topology": {
        "quick": [
            ("s6-d3", {"servers": 6, "degree": 3}, (0, 1, 2), ALL, 10.0),
            ("s6-d4", {"servers": 6, "degree": 4}, (0, 1, 2), ALL, 10.0),
            ("s8-mp", {"servers": 8, "degree": 3, "mp_peers": 4, "mp_bytes": 5e8}, (0,),
             ALL, 30.0),
            # Families where a ring is not optimal by construction: dense
            # all-to-all MP traffic, several groups at degree 2 (the optimum above the
            # cheap bound), and 32 servers with MP traffic, past the MILP's reach.
            ("a2a-s6-d3", {"servers": 6, "degree": 3, "mp_peers": 5, "mp_bytes": 5e8},
             (0, 1, 2), ALL, 30.0),
            ("a2a-s6-d2", {"servers": 6, "degree": 2, "mp_peers": 5, "mp_bytes": 3e8},
             (0, 1, 2), ALL, 30.0),
            ("groups-s6-d2", {"servers": 6, "degree": 2, "groups": 3, "mp_peers": 5,
                              "mp_bytes": 1e8}, (0, 1, 2), ALL, 30.0),
            ("s32-d4-mp", {"servers": 32, "degree": 4, "groups": 3, "mp_peers": 4}, (0, 1),
             ("topoopt", "ring", "random-regular", "ocs-reconfig"), 30.0),
        ],
        # TopoOpt §6: 128 servers, degree 8 (the speed target); the MILP cannot
        # be built at that size.
        "paper": [
            ("topoopt-s128-d8", {"servers": 128, "degree": 8, "groups": 1, "mp_peers": 4},
             (0, 1, 2), ("topoopt", "ring", "random-regular", "ocs-reconfig"), 300.0),
            ("a2a-s32-d8", {"servers": 32, "degree": 8, "groups": 2, "mp_peers": 31,
                            "mp_bytes": 1e8}, (0, 1, 2),
             ("topoopt", "ring", "random-regular", "ocs-reconfig"), 300.0),
            ("groups-s64-d4", {"servers": 64, "degree": 4, "groups": 4, "mp_peers": 4},
             (0, 1, 2), ("topoopt", "ring", "random-regular", "ocs-reconfig"), 300.0),
        ],
        "scale": [
            ("s6-d4", {"servers": 6, "degree": 4}, (0, 1), ALL, 60.0),
            ("s8-d4", {"servers": 8, "degree": 4}, (0, 1), ALL, 60.0),
            ("s12-d4", {"servers": 12, "degree": 4}, (0, 1), ALL, 60.0),
            ("s32-d8", {"servers": 32, "degree": 8, "groups": 1, "mp_peers": 4}, (0, 1),
             ("topoopt", "ring", "random-regular", "ocs-reconfig"), 60.0),
            ("s64-d8", {"servers": 64, "degree": 8, "groups": 1, "mp_peers": 4}, (0, 1),
             ("topoopt", "ring", "random-regular", "ocs-reconfig"), 60.0),
            ("s128-d8", {"servers": 128, "degree": 8, "groups": 1, "mp_peers": 4}, (0, 1),
             ("topoopt", "ring", "random-regular", "ocs-reconfig"), 60.0),
        ],
    },
}


@dataclass(frozen=True)
class Row:
    """One line of a suite: a kind's instance, seeded several times, run by some methods.

    Parameters
    ----------
    kind : str
        A registered problem kind.
    name : str
        The instance's name within the kind (e.g. ``"tiny"``); the instance id of seed
        ``s`` is ``"<kind>/<name>/<s>"``.
    sizes : mapping
        Size options of the kind's generator.
    seeds : sequence of int
        One instance per seed; the seed is also passed to each method.
    methods : "all" or sequence of str
        Method names, or :data:`ALL` for every method registered for ``kind``.
    time_limit_s : float
        Time limit of each run, in seconds.

    Raises
    ------
    ValueError
        If a field is malformed, the kind is not registered, or a size option is not
        one of the generator's, naming the field and the value.

    Examples
    --------
    >>> row = Row("circuits", "tiny", {"gpus": 8, "switches": 2}, (0, 1), "all", 10)
    >>> row.method_names(), row.instance_id(1)
    (['exact', 'greedy', 'milp'], 'circuits/tiny/1')
    """

    kind: str
    name: str
    sizes: Mapping[str, Any]
    seeds: tuple[int, ...]
    methods: str | tuple[str, ...] = ALL
    time_limit_s: float = 10.0

    def __post_init__(self):
        where = f"rows[{self.kind}/{self.name}]"
        get_kind(as_id(f"{where}.kind", self.kind, error=InvalidArgument))
        name = as_id(f"{where}.name", self.name, error=InvalidArgument)
        if "/" in name:
            fail(f"{where}.name", name, "must not contain '/'", ValueError)
        if not isinstance(self.sizes, Mapping):
            fail(f"{where}.sizes", self.sizes, "must be a table of generator options", ValueError)
        generator = get_kind(self.kind).generate
        if generator is None:
            fail(f"{where}.kind", self.kind, "has no instance generator", ValueError)
        accepted = [p for p in inspect.signature(generator).parameters if p != "seed"]
        for option in self.sizes:
            if option not in accepted:
                fail(f"{where}.sizes.{option}", self.sizes[option],
                     f"not a size option of the {self.kind} generator "
                     f"(options: {', '.join(accepted)})", ValueError)
        if isinstance(self.seeds, (str, bytes)) or not isinstance(self.seeds, Sequence) \
                or not self.seeds:
            fail(f"{where}.seeds", self.seeds, "must be a non-empty list of integers", ValueError)
        seeds = tuple(as_int(f"{where}.seeds[{k}]", s, minimum=0, error=InvalidArgument)
                      for k, s in enumerate(self.seeds))
        if len(set(seeds)) != len(seeds):
            fail(f"{where}.seeds", list(seeds), "must not repeat a seed", ValueError)
        object.__setattr__(self, "seeds", seeds)
        if self.methods != ALL:
            if isinstance(self.methods, (str, bytes)) or not isinstance(self.methods, Sequence) \
                    or not self.methods:
                fail(f"{where}.methods", self.methods,
                     f"must be {ALL!r} or a non-empty list of method names", ValueError)
            object.__setattr__(self, "methods", tuple(
                as_id(f"{where}.methods[{k}]", m, error=InvalidArgument)
                for k, m in enumerate(self.methods)))
        limit = as_float(f"{where}.time_limit_s", self.time_limit_s, positive=True,
                         error=InvalidArgument)
        object.__setattr__(self, "time_limit_s", limit)

    def method_names(self) -> list[str]:
        """The methods this row runs; an unregistered name raises ``SolverUnavailable``."""
        if self.methods == ALL:
            return [m.name for m in all_methods(self.kind)]
        return [get_method(self.kind, m).name for m in self.methods]

    def instance_id(self, seed: int) -> str:
        """``"<kind>/<name>/<seed>"``: the instance's name in the store and the report."""
        return f"{self.kind}/{self.name}/{seed}"


@dataclass(frozen=True)
class Suite:
    """A named list of rows.

    Examples
    --------
    >>> quick = get_suite("quick")
    >>> quick.name, sorted({row.kind for row in quick.rows}) == kinds_with_rows()
    ('quick', True)
    """

    name: str
    rows: tuple[Row, ...]

    def __post_init__(self):
        as_id("suite", self.name, error=InvalidArgument)
        seen = set()
        for row in self.rows:
            if (row.kind, row.name) in seen:
                fail(f"rows[{row.kind}/{row.name}]", row.name,
                     "appears twice in the suite", ValueError)
            seen.add((row.kind, row.name))

    def kinds(self) -> list[str]:
        """The kinds the suite covers, in order of appearance."""
        return list(dict.fromkeys(row.kind for row in self.rows))


def kinds_with_rows() -> list[str]:
    """Kinds that have a block in :data:`TABLES`, sorted."""
    return sorted(TABLES)


def kinds_without_rows() -> list[str]:
    """Registered kinds with an instance generator but no block in :data:`TABLES`."""
    return [k for k in kinds() if get_kind(k).generate is not None and k not in TABLES]


def _builtin(name: str) -> Suite:
    rows = []
    for kind in sorted(TABLES):  # an unregistered kind fails in Row, never skipped
        for entry in TABLES[kind].get(name, ()):
            rows.append(Row(kind, *entry))
    return Suite(name, tuple(rows))


_ROW_KEYS = ("kind", "name", "sizes", "seeds", "methods", "time_limit_s")


def load_suite_file(path: str | Path) -> Suite:
    """Read a suite from a TOML file.

    The file holds an optional ``name`` (default: the file's stem) and ``[[rows]]``
    tables with the fields of :class:`Row` (``methods`` and ``time_limit_s`` optional)::

        name = "mine"
        [[rows]]
        kind = "circuits"
        name = "tiny"
        sizes = {gpus = 8, switches = 2}
        seeds = [0, 1, 2]
        methods = ["exact", "greedy"]
        time_limit_s = 10

    Raises
    ------
    ValueError
        If the file cannot be read, is not TOML, or a row is malformed.
    """
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except OSError as exc:
        raise InvalidArgument(f"{path}: cannot read ({exc.strerror or exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise InvalidArgument(f"{path}: not valid TOML ({exc})") from None
    reject_unknown_keys(data, ("name", "rows"), error=InvalidArgument)
    rows = data.get("rows")
    if not isinstance(rows, list) or not rows:
        raise InvalidArgument(f"{path}: rows: must be a non-empty list of [[rows]] tables")
    out = []
    for k, entry in enumerate(rows):
        reject_unknown_keys(entry, _ROW_KEYS, where=f"rows[{k}]", error=InvalidArgument)
        for key in ("kind", "name", "sizes", "seeds"):
            if key not in entry:
                raise InvalidArgument(f"rows[{k}].{key}: missing required field")
        out.append(Row(**entry))
    return Suite(str(data.get("name", path.stem)), tuple(out))


def get_suite(name: str) -> Suite:
    """A built-in suite (``quick``, ``paper``, ``scale``) or a suite TOML file.

    Raises
    ------
    ValueError
        For an unknown suite name or a malformed table.
    """
    if name in SUITES:
        return _builtin(name)
    if name.endswith(".toml") or Path(name).is_file():
        return load_suite_file(name)
    raise InvalidArgument(f"suite = {name!r}: unknown suite (built-in: {', '.join(SUITES)}; "
                     f"or a .toml file)")
