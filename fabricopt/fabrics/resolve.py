"""One way to name a workload: an op-graph model, a SimAI/AICB file, or a shipped example.

Two kinds of workload exist. An op-graph :class:`~fabricopt.fabrics.workloads.Workload`
(ResNet-50, GPT-3, ...) is placed on k GPUs and priced by the SiP-ML-style model of
:mod:`~fabricopt.fabrics.iteration`; a traffic workload,
:class:`~fabricopt.fabrics.simai.workload.SimAIWorkload`, carries its own parallelism and
per-layer collectives and is priced by :mod:`~fabricopt.fabrics.simai.iteration`.
:func:`resolve_workload` turns a name or a path into either, so that
:func:`~fabricopt.fabrics.iteration.iteration_time`, ``fabricopt compare`` and
:func:`~fabricopt.fabrics.comparison.compare` accept both.

The SimAI examples ship as package data (Apache-2.0, ``fabricopt/fabrics/data/simai``):
``simai-moe`` is ``workload_analytical.txt``, ``simai-micro`` ``microAllReduce.txt``.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from fabricopt.problems._validate import fail
from fabricopt.fabrics.simai.workload import SimAIWorkload, read_simai
from fabricopt.fabrics.workloads import WORKLOADS, Workload

__all__ = ["SIMAI_EXAMPLES", "simai_data_path", "resolve_workload", "is_traffic_workload",
           "reject_traffic_options"]

#: Names of the shipped SimAI/AICB example workloads -> their files.
SIMAI_EXAMPLES = {"simai-moe": "workload_analytical.txt", "simai-micro": "microAllReduce.txt"}


def simai_data_path(filename: str) -> Path:
    """The path of a file of the shipped SimAI data (``data/simai/`` in the package).

    Examples
    --------
    >>> simai_data_path("microAllReduce.txt").is_file()
    True
    """
    return Path(str(resources.files("fabricopt.fabrics") / "data" / "simai" / filename))


def resolve_workload(spec, *, time_unit_s: float = 1e-9):
    """A workload from itself, a registered name, a SimAI example name, or a file path.

    Parameters
    ----------
    spec : Workload, SimAIWorkload, str or path
    time_unit_s : float
        Seconds per compute tick of a SimAI file read here.

    Raises
    ------
    InvalidInstance
        If ``spec`` is none of these.

    Examples
    --------
    >>> resolve_workload("resnet50").name, resolve_workload("simai-micro").tp
    ('resnet50', 8)
    >>> resolve_workload("nope")
    Traceback (most recent call last):
    ...
    fabricopt.errors.InvalidInstance: workload = 'nope': unknown workload (known: resnet50, vgg16, bert-large, transformer, megatron, gpt3-175b, dlrm, simai-moe, simai-micro, or the path of an AICB/SimAI workload file)
    """
    if isinstance(spec, (Workload, SimAIWorkload)):
        return spec
    text = str(spec)
    if text in WORKLOADS:
        return WORKLOADS[text]
    if text in SIMAI_EXAMPLES:
        w = read_simai(simai_data_path(SIMAI_EXAMPLES[text]), time_unit_s=time_unit_s)
        return SimAIWorkload(w.policy, w.header, w.layers, w.time_unit_s, text)
    if Path(text).is_file():
        return read_simai(text, time_unit_s=time_unit_s)
    fail("workload", text, f"unknown workload (known: {', '.join([*WORKLOADS, *SIMAI_EXAMPLES])}, "
                           f"or the path of an AICB/SimAI workload file)")


def is_traffic_workload(workload) -> bool:
    """Is ``workload`` a traffic workload (SimAI/AICB) rather than an op graph?"""
    return isinstance(workload, SimAIWorkload)


def reject_traffic_options(workload, options) -> None:
    """Refuse options that only traffic workloads take, given with an op-graph one.

    Examples
    --------
    >>> reject_traffic_options(resolve_workload("resnet50"), {"mode": "serial"})
    Traceback (most recent call last):
    ...
    fabricopt.errors.InvalidInstance: options = ['mode']: apply only to traffic workloads; resnet50 is an op-graph workload
    """
    if options:
        fail("options", sorted(options), f"apply only to traffic workloads; "
                                         f"{workload.name} is an op-graph workload")
