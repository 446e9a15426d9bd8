"""Time to accuracy: iteration time times the training steps a global batch needs.

SiP-ML reports training time to a target accuracy, not iteration time: a configuration's
time is ``t_iter(B) * steps(B)``, where ``steps(B)`` — the steps to reach the target
at global batch B — comes from published measurements, and the batch is chosen per
configuration (SiP-ML §4.1-§4.2). Model parallelism matters here because it lets a
cluster run a smaller global batch, which needs more steps but possibly less time.

A :class:`StepsToTarget` table holds published (batch, steps) measurements for one
workload; :func:`steps_to_target` interpolates between them on log-log axes and refuses
batches outside the measured range (no extrapolation). The built-in tables, each with
its source:

- ``resnet50``: ImageNet-1k (1,281,167 training images), 90 epochs at every batch from
  256 to 8192 — Goyal et al. report no loss of accuracy up to a minibatch of 8k with
  their linear learning-rate scaling and warm-up, so ``steps = 90 * 1281167 / B``;
- ``megatron``: batch 1024 and 240,000 iterations, SiP-ML §4.1 (following its
  references [50, 87]); one point, so the batch is fixed.

SiP-ML takes the ResNet-50 and Transformer counts from Shallue et al., whose
measurements are published as figures and a database, not as a table we can cite
number by number: no built-in table is shipped for the Transformer. Supply one with
:func:`load_steps_table` (JSON ``{"workload": ..., "target": ..., "source": ...,
"points": [[batch, steps], ...]}``) to price it, or tabulate the critical-batch curve
of :func:`critical_batch_table`, whose shape is Shallue et al.'s: steps fall about
in proportion to the batch below a critical batch and flatten above it.

References
----------
.. [1] M. Khani et al., "SiP-ML", SIGCOMM 2021, §4.1 (time-to-accuracy, Megatron's
   1024 / 240,000), §4.2 (batch optimised per configuration).
.. [2] P. Goyal et al., "Accurate, Large Minibatch SGD: Training ImageNet in 1 Hour",
   arXiv:1706.02677, 2017 (no accuracy loss up to minibatch 8k; 90 epochs).
.. [3] C. J. Shallue et al., "Measuring the Effects of Data Parallelism on Neural
   Network Training", JMLR 20(112), 2019.
.. [4] S. McCandlish et al., "An Empirical Model of Large-Batch Training",
   arXiv:1812.06162, 2018, Eq. 2.11 (``S = S_min * (1 + B_noise / B)``).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from fabricopt.problems._validate import as_float, as_int, fail

__all__ = ["StepsToTarget", "STEPS_TO_TARGET", "steps_to_target", "load_steps_table",
           "critical_batch_table", "IMAGENET_TRAIN_IMAGES"]

#: Training images of ImageNet-1k (ILSVRC 2012).
IMAGENET_TRAIN_IMAGES = 1_281_167


@dataclass(frozen=True)
class StepsToTarget:
    """Published steps-to-target measurements of one workload.

    Attributes
    ----------
    workload : str
        The workload name (:data:`fabricopt.fabrics.workloads.WORKLOADS`).
    target : str
        What accuracy the steps reach.
    points : tuple of (int, float)
        (global batch, steps) pairs, batches strictly increasing, steps > 0.
    source : str
        Where the numbers come from.
    """

    workload: str
    target: str
    points: tuple
    source: str

    def __post_init__(self):
        if not self.points:
            fail("points", list(self.points), "must list at least one [batch, steps] pair")
        clean = []
        for k, pair in enumerate(self.points):
            if not isinstance(pair, Sequence) or isinstance(pair, str) or len(pair) != 2:
                fail(f"points[{k}]", pair, "must be a [batch, steps] pair")
            clean.append((as_int(f"points[{k}][0]", pair[0], minimum=1),
                          as_float(f"points[{k}][1]", pair[1], positive=True)))
        for k in range(1, len(clean)):
            if clean[k][0] <= clean[k - 1][0]:
                fail(f"points[{k}][0]", clean[k][0], "batches must increase strictly")
        object.__setattr__(self, "points", tuple(clean))

    @property
    def batches(self) -> tuple[int, ...]:
        return tuple(b for b, _ in self.points)


def steps_to_target(table: StepsToTarget, batch: int) -> float:
    """Steps to the target at global batch ``batch``: a measured point, or log-log
    interpolation between the two measured batches around it.

    Raises
    ------
    InvalidInstance
        If ``batch`` lies outside the measured range.

    Examples
    --------
    >>> t = STEPS_TO_TARGET["resnet50"]
    >>> steps_to_target(t, 8192) == 90 * IMAGENET_TRAIN_IMAGES / 8192
    True
    >>> round(steps_to_target(t, 3000))  # between the 2048 and 4096 points
    38435
    >>> steps_to_target(t, 16384)
    Traceback (most recent call last):
    ...
    fabricopt.errors.InvalidInstance: batch = 16384: outside the measured batches 256 ... 8192 of resnet50 (no extrapolation)
    """
    batch = as_int("batch", batch, minimum=1)
    lo, hi = table.points[0][0], table.points[-1][0]
    if not lo <= batch <= hi:
        fail("batch", batch, f"outside the measured batches {lo} ... {hi} of {table.workload} "
                             f"(no extrapolation)")
    measured = dict(table.points)
    if batch in measured:
        return measured[batch]
    for (b0, s0), (b1, s1) in zip(table.points, table.points[1:]):
        if b0 < batch < b1:
            w = (math.log(batch) - math.log(b0)) / (math.log(b1) - math.log(b0))
            return math.exp((1 - w) * math.log(s0) + w * math.log(s1))
    raise AssertionError("unreachable: batch is inside the measured range")


def load_steps_table(source: str | Path | Mapping[str, Any]) -> StepsToTarget:
    """A :class:`StepsToTarget` from a JSON file (or its parsed object).

    Examples
    --------
    >>> t = load_steps_table({"workload": "transformer", "target": "a goal loss",
    ...                       "source": "my runs", "points": [[256, 1e5], [1024, 4e4]]})
    >>> t.batches
    (256, 1024)
    """
    data = source if isinstance(source, Mapping) else json.loads(Path(source).read_text())
    if not isinstance(data, Mapping):
        fail("steps table", data, "must be a JSON object")
    missing = [k for k in ("workload", "target", "source", "points") if k not in data]
    if missing:
        fail("steps table", sorted(data), f"missing field {missing[0]!r}")
    return StepsToTarget(str(data["workload"]), str(data["target"]), tuple(data["points"]),
                         str(data["source"]))


def critical_batch_table(workload: str, *, baseline_batch: int, baseline_steps: float,
                         critical_batch: float, batches: Sequence[int], target: str,
                         source: str) -> StepsToTarget:
    """The critical-batch curve ``steps(B) = S_min * (1 + critical_batch / B)``, through
    ``(baseline_batch, baseline_steps)``, tabulated at ``batches``.

    Below the critical batch the steps fall almost in proportion to the batch (the
    samples to the target stay about ``S_min * critical_batch``); above it they
    flatten towards ``S_min`` (McCandlish et al. 2018, Eq. 2.11; the shape Shallue
    et al. 2019 measure). Between the tabulated batches :func:`steps_to_target`
    interpolates on log-log axes, as for a measured table.

    Parameters
    ----------
    workload, target, source : str
        As in :class:`StepsToTarget`.
    baseline_batch : int
        A batch whose steps are known.
    baseline_steps : float
        The steps at ``baseline_batch``.
    critical_batch : float
        Where the curve bends from falling to flat.
    batches : sequence of int
        The batches to tabulate, increasing.

    Returns
    -------
    StepsToTarget

    Examples
    --------
    >>> t = critical_batch_table("demo", baseline_batch=256, baseline_steps=1000.0,
    ...                          critical_batch=1024, batches=[64, 256, 1024, 16384],
    ...                          target="t", source="s")
    >>> [round(s) for _, s in t.points]
    [3400, 1000, 400, 212]
    """
    b0 = as_int("baseline_batch", baseline_batch, minimum=1)
    s0 = as_float("baseline_steps", baseline_steps, positive=True)
    critical = as_float("critical_batch", critical_batch, positive=True)
    min_steps = s0 / (1.0 + critical / b0)
    points = tuple((b, min_steps * (1.0 + critical / b))
                   for b in (as_int(f"batches[{i}]", b, minimum=1)
                             for i, b in enumerate(batches)))
    return StepsToTarget(workload, target, points, source)


#: The built-in tables (see the module docstring for each one's source).
STEPS_TO_TARGET = {
    "resnet50": StepsToTarget(
        "resnet50", "the batch-256 baseline's ImageNet top-1 accuracy in 90 epochs",
        tuple((b, 90 * IMAGENET_TRAIN_IMAGES / b) for b in (256, 512, 1024, 2048, 4096, 8192)),
        "Goyal et al. 2017 (arXiv:1706.02677): no accuracy loss up to minibatch 8k, 90 epochs"),
    "megatron": StepsToTarget(
        "megatron", "Megatron pre-training as run in SiP-ML", ((1024, 240_000.0),),
        "SiP-ML, SIGCOMM 2021, §4.1: batch 1024 and 240,000 iterations (its refs. [50, 87])"),
}
