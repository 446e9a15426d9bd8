"""How good can an answer be: every bound on a kind's optimum, one module per kind.

Each module's functions are named ``<argument>_bound`` (``port_load_bound``,
``count_bound``, ``critical_path_bound`` …); the strongest cheap one is registered as
the kind's bound (``ProblemKind.bound``), which ``solve`` reports beside every answer
and names in ``Result.bound_source``. Bounds on one heuristic's answer, used only to
prune its own search (e.g. ``ring_lower_bound``), live beside that heuristic in
:mod:`fabricopt.algorithms`; the MILP's dual bound comes from the solve
(:mod:`fabricopt.methods.placement_bound`).
"""

from fabricopt.bounds import circuits, crux, placement, priorities, topology, wavelengths
from fabricopt.problems import register_bound

__all__ = ["circuits", "wavelengths", "topology", "placement", "priorities", "crux"]

register_bound("circuits", circuits.port_load_bound, "port-load")
register_bound("wavelengths", wavelengths.kept_count_bound, "count-relaxation")
register_bound("topology", topology.lower_bound)
register_bound("placement", placement.lower_bound)
register_bound("priorities", priorities.cut_weight_bound, "cut-weight")
register_bound("crux", crux.utilization_bound, "utilization")
