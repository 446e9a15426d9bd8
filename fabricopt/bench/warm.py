"""Compiled kernels loaded before a run's clock starts.

numba compiles a kernel on its first call (seconds, a minute on a loaded machine) and
caches it on disk; loading the cache still takes about a second. Neither belongs in a
run's measured time, and a compile inside a run can outlast the run's hard limit, be
killed before it writes the cache, and so time out every run that needs the kernel.
:func:`warm` calls each kind's compiled code once, through its methods, on a tiny
instance: the bench's forkserver does it for every kind before it forks any run
(:mod:`fabricopt.bench.isolate`), so runs start with the kernels loaded, and a run's
process does it for its own kind before it reports ready (a no-op when forked warm; the
load, outside the limit, in a fresh interpreter).
"""

from __future__ import annotations

import functools

__all__ = ["WARM_UPS", "warm", "warm_fabrics", "warm_all"]

#: Per kind, the (method, generator sizes) calls that reach every compiled kernel of
#: the kind: placement's Algorithm 1 with and without a degree limit (``sipml`` on 3
#: GPUs with 1 peer, ``unconstrained``) and the local search's list schedule and
#: circulant schedule (``sipml-ls``); crux's contention simulator (every method's
#: scoring); topology's shortest-path walk (every heuristic's routing); SiP-Ring's
#: repair, first-fit colouring and fill-up (``mcf``'s rounding and fill-up; the eviction search
#: the rounding runs for a pair it left unserved is loaded by :func:`_eviction_search`,
#: as no ring small enough to warm up on leaves one).
WARM_UPS: dict[str, tuple[tuple[str, dict], ...]] = {
    "placement": (("sipml", {"ops": 8, "gpus": 3, "max_peers": 1}),
                  ("unconstrained", {"ops": 8, "gpus": 3, "max_peers": 1}),
                  ("sipml-ls", {"ops": 8, "gpus": 3, "max_peers": 1})),
    "crux": (("ecmp", {"jobs": 3, "levels": 2, "hosts_per_tor": 3}),),
    "topology": (("ring", {"servers": 4, "degree": 2}),),
    "wavelengths": (("mcf", {"nodes": 4, "wavelengths": 2, "max_hops": 2}),),
}


@functools.lru_cache(maxsize=None)
def warm(kind: str) -> None:
    """Load (compiling and caching the first time) the compiled kernels ``kind`` uses.

    Once per process; a process forked after the call inherits the loaded kernels.

    Examples
    --------
    >>> warm("crux")
    >>> warm("circuits")   # nothing compiled: nothing to do
    """
    from fabricopt.methods import solve
    from fabricopt.problems import generate

    for method, sizes in WARM_UPS.get(kind, ()):
        solve(generate(kind, seed=0, **sizes), method)
    if kind == "wavelengths":
        _eviction_search()


def _eviction_search() -> None:
    """Load SiP-Ring's eviction search as ``mcf``'s rounding calls it (on an empty
    schedule of the warm-up ring: the arrays' types are what matter)."""
    from fabricopt.algorithms import wavelengths as heuristics
    from fabricopt.problems import generate

    instance = generate("wavelengths", seed=0, **dict(WARM_UPS["wavelengths"])["mcf"])
    pairs = heuristics._Pairs(instance)
    heuristics._eviction_compiled(heuristics._Schedule(instance, pairs), 0, float("inf"))


@functools.lru_cache(maxsize=None)
def warm_fabrics() -> None:
    """Load the cost model's compiled kernels: the critical path of a placed step, on
    arrays of the types :mod:`fabricopt.fabrics.iteration` passes, and the step with
    its transfers as fluid flows (:func:`fabricopt.fabrics.flows.step_s`).

    Examples
    --------
    >>> warm_fabrics()
    """
    import numpy as np

    from fabricopt.fabrics._path_kernel import longest_path_s
    from fabricopt.fabrics.flows import port_links, step_s

    longest_path_s(1, np.zeros(1, dtype=np.int64), np.zeros(1), np.zeros(2, dtype=np.int64),
                   np.zeros(0, dtype=np.int64), np.zeros((0, 1)))
    step_s([("a", 1.0), ("b", 1.0)], [("a", "b", 1.0)], {"a": 0, "b": 1}, 2, 1, port_links(2, 8.0))


def warm_all() -> None:
    """:func:`warm` every kind that has compiled kernels, and :func:`warm_fabrics`."""
    for kind in WARM_UPS:
        warm(kind)
    warm_fabrics()
