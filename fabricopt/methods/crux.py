"""Methods of the ``crux`` kind: ``crux``, ``ecmp``, ``sincronia``, ``sincronia-levels``,
``varys-levels``, ``enumerate``."""

from __future__ import annotations

from fabricopt.algorithms.crux import enumerate as exhaustive
from fabricopt.algorithms.crux import baselines
from fabricopt.algorithms.crux import crux as heuristics
from fabricopt.problems.crux import CruxInstance
from fabricopt.methods.options import Option, at_least
from fabricopt.methods.registry import register_method
from fabricopt.methods.result import SolverOutput


def crux(instance: CruxInstance, *, time_limit=None, seed=0, orders: int = 10,
         load: str = "utilization", jitter: float = 0.0, replays: int = 20,
         compression: str = "dp") -> SolverOutput:
    """Crux: intensity -> least-congested paths -> k_j-corrected priorities -> compression.

    ``compression="dp"`` is the paper's Algorithm 1, ``"exact"`` the optimal K-cut.
    ``time_limit`` stops the k_j replays (jobs left keep k_j = 1) and the drawing of
    BFS orders, one whole plan always (see ``heuristics.crux.crux_search``; a cut makes
    the answer machine-dependent); ``info`` counts ``corrections`` and ``orders_tried``.
    """
    solution, info = heuristics.crux_search(instance, seed=seed, orders=orders, load=load,
                                            jitter=jitter, replays=replays,
                                            compression=compression, time_limit=time_limit)
    return SolverOutput(solution, "feasible", info=info)


def ecmp(instance: CruxInstance, *, time_limit=None, seed=0) -> SolverOutput:
    """Baseline: a hashed path per flow, every job on one level."""
    return SolverOutput(heuristics.ecmp(instance, seed=seed), "feasible")


def sincronia(instance: CruxInstance, *, time_limit=None, seed=0) -> SolverOutput:
    """Baseline: the whole Sincronia scheduler, its BSSI order over the jobs' coflows on
    hashed ECMP paths, mapped onto the levels (see ``baselines.sincronia_schedule``)."""
    return SolverOutput(baselines.sincronia_schedule(instance, seed=seed), "feasible")


def sincronia_levels(instance: CruxInstance, *, time_limit=None, seed=0,
                     load: str = "utilization") -> SolverOutput:
    """Ablation: Crux's paths and priorities, Sincronia-style compression (top K-1 alone)."""
    return _ranked(instance, "sincronia", load, time_limit)


def varys_levels(instance: CruxInstance, *, time_limit=None, seed=0,
                 load: str = "utilization") -> SolverOutput:
    """Ablation: Crux's paths and priorities, Varys-style compression (K equal blocks)."""
    return _ranked(instance, "varys", load, time_limit)


def _ranked(instance: CruxInstance, rule: str, load: str, time_limit) -> SolverOutput:
    # time_limit cuts the k_j replays as in crux (heuristics.crux.ranked_search)
    solution, info = heuristics.ranked_search(instance, rule, load=load,
                                              time_limit=time_limit)
    return SolverOutput(solution, "feasible", info=info)


def enumerate_(instance: CruxInstance, *, time_limit=None, seed=0,
               max_path_choices: int = exhaustive.MAX_PATH_CHOICES,
               max_simulations: int = exhaustive.MAX_SIMULATIONS,
               max_labelings: int = exhaustive.MAX_LABELINGS) -> SolverOutput:
    """Exhaustive search over paths and levels (small cases; refuses larger ones).

    Too large a case raises :class:`~fabricopt.SolverUnavailable` before any simulation
    (``solve`` passes it on; the command line prints it and exits 2): the method is not
    available for that case, which is valid. Raise the ``max_*`` limits to insist.
    """
    solution, complete = exhaustive.enumerate_optimum(
        instance, time_limit=time_limit, max_path_choices=max_path_choices,
        max_simulations=max_simulations, max_labelings=max_labelings)
    return SolverOutput(solution, "optimal" if complete else "feasible",
                        info={"complete": complete})


LOAD = Option("load", str, "utilization", "link load rule of path selection",
              choices=heuristics._LOAD_RULES)

register_method("crux", "crux", crux, honours_time_limit=True, options=(
    Option("orders", int, 10, "random topological orders of the compression DP",
           check=at_least(1)),
    LOAD,
    Option("jitter", float, 0.0, "per-iteration compute jitter of the k_j replay",
           check=at_least(0.0)),
    Option("replays", int, 20, "seeds averaged when jitter > 0", check=at_least(1)),
    Option("compression", str, "dp",
           "compression step: dp (the paper's Algorithm 1) or exact (the optimal K-cut)",
           choices=heuristics.COMPRESSIONS)))
register_method("crux", "ecmp", ecmp, options=(),
                time_limit_note="one hashed path per flow: no search to cut short")
register_method("crux", "sincronia", sincronia, options=(),
                time_limit_note="one BSSI ordering on hashed paths: no search to cut short")
register_method("crux", "sincronia-levels", sincronia_levels, honours_time_limit=True,
                options=(LOAD,))
register_method("crux", "varys-levels", varys_levels, honours_time_limit=True, options=(LOAD,))
register_method("crux", "enumerate", enumerate_, exact=True, honours_time_limit=True, options=(
    Option("max_path_choices", int, exhaustive.MAX_PATH_CHOICES,
           "refuse cases with more path combinations", check=at_least(1)),
    Option("max_simulations", int, exhaustive.MAX_SIMULATIONS,
           "refuse cases needing more simulations", check=at_least(1)),
    Option("max_labelings", int, exhaustive.MAX_LABELINGS,
           "refuse cases with more level labelings", check=at_least(1))))
