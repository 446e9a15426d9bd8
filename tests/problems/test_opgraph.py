import pytest

from fabricopt import InvalidInstance
from fabricopt.problems.opgraph import OpGraph

OPS = [{"id": "a", "compute_s": 1.0, "params_bytes": 10}, {"id": "b", "compute_s": 2.0},
       {"id": "c", "compute_s": 0.5}]


def test_round_trip_and_order():
    g = OpGraph(OPS, [{"src": "a", "dst": "c", "bytes": 1}, {"src": "c", "dst": "b", "bytes": 2}])
    assert OpGraph.from_dict(g.to_dict()) == g
    assert g.topological_order() == ["a", "c", "b"]
    assert g.total_params_bytes == 10 and g.total_compute_s == 3.5


@pytest.mark.parametrize("ops, edges, message", [
    (OPS + [{"id": "a", "compute_s": 1}], [], r"ops\[3\].id = 'a': repeats an earlier op id"),
    (OPS, [{"src": "a", "dst": "z", "bytes": 1}], r"edges\[0\].dst = 'z': unknown op id"),
    (OPS, [{"src": "a", "dst": "b", "bytes": 1}, {"src": "b", "dst": "a", "bytes": 1}],
     r"edges: contain the cycle (a -> b -> a|b -> a -> b)"),
    (OPS, [{"src": "a", "dst": "a", "bytes": 1}], r"an op cannot feed itself"),
    (OPS, [{"src": "a", "dst": "b", "bytes": -1}], r"edges\[0\].bytes = -1.0: must be >= 0"),
    ([{"id": "a", "compute_s": float("nan")}], [], r"ops\[0\].compute_s = nan: must be finite"),
    ([{"id": "", "compute_s": 1}], [], r"ops\[0\].id = '': must be a non-empty string"),
])
def test_invalid(ops, edges, message):
    with pytest.raises(InvalidInstance, match=message):
        OpGraph(ops, edges)
