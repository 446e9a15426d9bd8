"""Time scaling of instances, for the scale-invariance tests: ``scale_times(d, s)``
multiplies every time-like input of an instance dict by ``s`` (compute seconds, bytes
moved over fixed links, windows, job intensities), so a time objective becomes ``s``
times as large and a utilization stays the same (:data:`OBJECTIVE_POWER`)."""

import copy

#: The power of s the objective of each kind scales with under ``scale_times``.
OBJECTIVE_POWER = {"circuits": 1, "wavelengths": 1, "topology": 1, "placement": 1,
                   "priorities": 1, "crux": 0}


def scale_times(data: dict, s: float) -> dict:
    """A copy of instance dict ``data`` with every time-like input multiplied by ``s``."""
    d = copy.deepcopy(data)
    kind = d["problem"]
    if kind in ("circuits", "wavelengths", "topology"):
        traffic = d["traffic_bytes"]
        if isinstance(traffic, dict):  # the sparse form {src, dst, bytes}
            traffic["bytes"] = [v * s for v in traffic["bytes"]]
        else:
            d["traffic_bytes"] = [[v * s for v in row] for row in traffic]
        for group in d.get("allreduce", []):
            group["bytes"] *= s
    elif kind == "placement":
        for op in d["ops"]:
            op["compute_s"] *= s
        for dep in d["deps"]:
            dep["bytes"] *= s
    elif kind == "priorities":
        for job in d["jobs"]:
            job["intensity"] *= s
    elif kind == "crux":
        for job in d["jobs"]:
            job["compute_s"] *= s
            for flow in job["flows"]:
                flow["bytes"] *= s
        for key in ("warmup_s", "window_s"):
            if d.get(key) is not None:
                d[key] *= s
    else:
        raise KeyError(f"no time scaling for kind {kind!r}")
    return d
