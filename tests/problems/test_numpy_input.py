"""NumPy arrays (and lists of arrays) are accepted wherever a matrix or a list is."""

import numpy as np
import pytest

import fabricopt
from fabricopt import InvalidInstance
from fabricopt.problems.circuits import CircuitsInstance, CircuitsSolution

KINDS = [("circuits", {"gpus": 6, "switches": 2}),
         ("wavelengths", {}),
         ("topology", {})]


@pytest.mark.parametrize("kind,sizes", KINDS)
def test_an_instance_built_from_arrays_equals_the_one_from_lists(kind, sizes):
    inst = fabricopt.generate(kind, seed=2, **sizes)
    data = inst.to_dict()
    traffic = data["traffic_bytes"]
    if isinstance(traffic, dict):  # the sparse form: each of its lists as an array
        fields = {k: v for k, v in data.items() if k != "problem"}
        fields["traffic_bytes"] = {k: np.asarray(v) for k, v in traffic.items()}
        assert type(inst)(**fields) == inst
        data["traffic_bytes"] = inst.traffic.tolist()  # and the dense form below
        inst = type(inst).from_dict(data)
    for as_array in (np.asarray, lambda m: [np.asarray(row) for row in m]):
        fields = {k: v for k, v in data.items() if k != "problem"}
        fields["traffic_bytes"] = as_array(data["traffic_bytes"])
        assert type(inst)(**fields) == inst


def test_the_issue_example_is_accepted():
    inst = CircuitsInstance(8, 400.0, np.zeros((64, 64)))
    assert inst.gpus == 64 and inst.traffic.shape == (64, 64)


def test_integer_and_float32_arrays_are_read_as_numbers():
    t = np.array([[0, 3], [5, 0]], dtype=np.int64)
    assert CircuitsInstance(1, 8.0, t).traffic_bytes == ((0.0, 3.0), (5.0, 0.0))
    assert CircuitsInstance(1, 8.0, t.astype(np.float32)).traffic_bytes[1][0] == 5.0


def test_a_bad_array_still_names_the_cell():
    t = np.zeros((3, 3))
    t[2, 1] = -4.0
    with pytest.raises(InvalidInstance, match=r"^traffic_bytes\[2\]\[1\] = -4.0: must be >= 0"):
        CircuitsInstance(1, 8.0, t)
    with pytest.raises(InvalidInstance, match=r"^traffic_bytes\[0\] = 0.0: must be a list"):
        CircuitsInstance(1, 8.0, np.zeros(3))


def test_a_solution_accepts_an_array_of_ports():
    inst = CircuitsInstance(1, 8.0, [[0, 1e9], [0, 0]])
    sol = CircuitsSolution(np.array([[1, 0]]))
    assert sol.configs == ((1, 0),) and fabricopt.evaluate(inst, sol) == 1.0
