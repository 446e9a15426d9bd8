"""Test oracle: SiP-ML's count model built pair by pair in Python (``arc`` per pair and
direction, a list of segment incidences), which
:func:`fabricopt.models.wavelengths.build_count` and
:class:`fabricopt.models.wavelengths.CountRelaxation` must match array for array.
"""

from __future__ import annotations

import numpy as np

from fabricopt.milp import SparseModel
from fabricopt.problems.wavelengths import DIRECTIONS, WavelengthsInstance, arc


def count_model(instance: WavelengthsInstance, *, integer: bool = True,
                min_rate: float | None = None) -> SparseModel:
    """The count model of ``build_count(instance, integer=..., min_rate=...)``."""
    n, w = instance.nodes, instance.wavelengths
    src, dst, direction, pair, hops, seg_arc, seg_key = [], [], [], [], [], [], []
    for p, (i, j) in enumerate(instance.demanded):
        for ccw, _ in enumerate(DIRECTIONS):
            first, h = arc(n, i, j, bool(ccw))
            if h <= instance.max_hops:
                a = len(src)
                src.append(i)
                dst.append(j)
                direction.append(ccw)
                pair.append(p)
                hops.append(h)
                seg_arc.extend([a] * h)
                seg_key.extend(ccw * n + (first + s) % n for s in range(h))
    src, dst, pair, hops, seg_arc, seg_key = (np.array(v, dtype=np.int64) for v in
                                              (src, dst, pair, hops, seg_arc, seg_key))
    arcs = len(src)
    m = SparseModel("wavelength_counts", "max" if min_rate is None else "min")
    y = m.variables("y", (arcs,), 0, w, integer=integer)
    t = m.variables("t", (), 0, w)
    if min_rate is None:
        m.objective([t.start], [1.0])
    else:
        m.objective(y.ids, hops.astype(float))
        m.rows("min_rate", [0], [t.start], [1.0], lower=float(min_rate), count=1)
    keys, row = np.unique(seg_key, return_inverse=True)
    m.rows("seg", row, y[seg_arc], 1.0, upper=float(w), count=len(keys))
    t_max = float(instance.traffic.max())
    demanded = instance.demanded
    pairs = len(demanded)
    flat = y.ids
    m.rows("serve", pair, flat, 1.0, lower=1.0, count=pairs)
    t_hat = np.array([instance.traffic[i, j] / t_max for i, j in demanded])
    m.rows("rate", np.concatenate([pair, np.arange(pairs)]),
           np.concatenate([flat, np.full(pairs, t.start)]),
           np.concatenate([np.ones(len(flat)), -t_hat]), lower=0.0, count=pairs)
    for name, ends in (("tx", src), ("rx", dst)):
        nodes, row = np.unique(ends, return_inverse=True)
        m.rows(name, row, flat, 1.0, upper=float(w), count=len(nodes))
    return m
