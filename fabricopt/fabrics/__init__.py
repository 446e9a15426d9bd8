"""The shared cost model of the target GPU fabrics.

- :mod:`~fabricopt.fabrics.workloads`: DNN models as op graphs (FLOP-based compute).
- :mod:`~fabricopt.fabrics.simai.workload`: the AICB / SimAI workload format and its traffic.
- :mod:`~fabricopt.fabrics.traffic`: per-iteration traffic, hybrid MP x DP helpers.
- :mod:`~fabricopt.fabrics.models`: Elect-Flat, Elect-Cluster, Fat-tree, SiP-OCS,
  SiP-Ring, direct-connect — communication time and $ cost.
- :mod:`~fabricopt.fabrics.iteration`: the iteration-time model, its step simulated
  with transfers as max-min fair flows (:mod:`~fabricopt.fabrics.flows`).
- :mod:`~fabricopt.fabrics.simai.iteration`: iteration time of traffic (SimAI) workloads,
  with :mod:`~fabricopt.fabrics.simai.efficiency` (SimAI's efficiency tables) and
  :mod:`~fabricopt.fabrics.resolve` (one name space for both kinds of workload);
  :mod:`~fabricopt.fabrics.simai.analytical`: SimAI-Analytical's own rules, to
  reproduce its figures.
- :mod:`~fabricopt.fabrics.comparison`: bandwidth sweeps, tables and plots.
- :mod:`~fabricopt.fabrics.strategies`: per-operator parallelization (data, model or
  hybrid per op) and the traffic it implies; :mod:`~fabricopt.fabrics.cosearch`:
  TopoOpt's alternating strategy and topology search.

Examples
--------
>>> from fabricopt import fabrics
>>> t = fabrics.iteration_time("resnet50", fabrics.ElectFlat(400.0), gpus=8, k=1, l=8)
>>> t.total_s > t.compute_s
True
"""

from fabricopt.fabrics.comparison import FABRIC_NAMES, compare, make_fabric
from fabricopt.fabrics.iteration import (IterationTime, Plan, iteration_time, place,
                                         search_iteration_time)
from fabricopt.fabrics.models import (Allocation, DirectConnect, ElectCluster, ElectFlat, Fabric,
                                      FatTree, SipOcs, SipRing, cost_matched_fat_tree)
from fabricopt.fabrics.prices import DEFAULT_PRICES, Prices
from fabricopt.fabrics.resolve import resolve_workload
from fabricopt.fabrics.simai.workload import SimAIWorkload, read_simai
from fabricopt.fabrics.simai.efficiency import read_efficiency, simai_efficiency
from fabricopt.fabrics.simai.iteration import (SimAIIterationTime, simai_cluster,
                                               simai_iteration_time)
from fabricopt.fabrics.simai.analytical import SimAICluster, simai_analytical_time
from fabricopt.fabrics.traffic import AllReduce, Traffic, hybrid_traffic, port_bound_s
from fabricopt.fabrics.workloads import WORKLOADS, Workload, get_workload

__all__ = ["compare", "make_fabric", "FABRIC_NAMES", "iteration_time", "search_iteration_time",
           "place", "Plan", "IterationTime", "Fabric", "Allocation", "ElectFlat",
           "ElectCluster", "FatTree", "SipOcs", "SipRing", "DirectConnect",
           "cost_matched_fat_tree", "Prices", "DEFAULT_PRICES", "read_simai", "SimAIWorkload",
           "Traffic", "AllReduce", "hybrid_traffic", "port_bound_s", "Workload", "WORKLOADS",
           "get_workload", "resolve_workload", "simai_iteration_time", "simai_cluster",
           "SimAIIterationTime", "simai_efficiency", "read_efficiency", "SimAICluster",
           "simai_analytical_time"]
