"""FrozenMatrix behaves as the tuple of row tuples it stands for, and an instance built
from an array is the instance built from the equivalent lists."""

import copy
import json
import math
import operator
import pickle

import numpy as np
import pytest
from hypothesis import given, strategies as st

import fabricopt
from fabricopt import InvalidInstance
from fabricopt.problems._matrix import FrozenMatrix
from fabricopt.problems._validate import as_matrix
from fabricopt.problems.circuits import CircuitsInstance
from fabricopt.problems.topology import TopologyInstance
from fabricopt.problems.wavelengths import WavelengthsInstance

CELLS = [0.0, -0.0, 1.0, 3.0, 2.5e9, 1e-300, 7.0e12]


def _square(n):
    return st.lists(st.sampled_from(CELLS), min_size=n * n, max_size=n * n).map(
        lambda cells: np.array(cells).reshape(n, n))


def _tuples(array):
    """The tuple of tuples ``as_matrix`` is the sequence of."""
    return tuple(tuple(float(x) for x in row) for row in array.tolist())


matrices = st.integers(1, 12).flatmap(_square)


@given(matrices, st.data())
def test_a_frozen_matrix_reads_as_its_tuple_of_tuples(array, data):
    m, t = FrozenMatrix(array.copy()), _tuples(array)
    n = len(t)
    assert len(m) == n and list(m) == list(t) and tuple(m) == t
    assert list(reversed(m)) == list(reversed(t)) and bool(m) == bool(t)
    i = data.draw(st.integers(-n, n - 1))
    assert m[i] == t[i] and type(m[i]) is tuple
    assert all(type(x) is float for x in m[i])
    assert [math.copysign(1, x) for x in m[i]] == [math.copysign(1, x) for x in t[i]]
    start, stop = data.draw(st.integers(-n - 1, n + 1)), data.draw(st.integers(-n - 1, n + 1))
    step = data.draw(st.sampled_from([None, 1, 2, -1, -3]))
    assert m[start:stop:step] == t[start:stop:step]
    assert m[np.int64(i)] == t[i]
    row = data.draw(st.sampled_from(t))
    assert (row in m) and m.index(row) == t.index(row) and m.count(row) == t.count(row)
    assert repr(m) == repr(t) if n <= 8 else repr(m).startswith("<FrozenMatrix")
    for bad in (n, -n - 1):
        with pytest.raises(IndexError):
            m[bad]
    with pytest.raises(TypeError):
        m[1.0]


@given(matrices, matrices)
def test_equality_order_and_hash_are_those_of_the_tuples(a, b):
    ma, mb, ta, tb = FrozenMatrix(a.copy()), FrozenMatrix(b.copy()), _tuples(a), _tuples(b)
    assert (ma == mb) == (ta == tb) and (ma != mb) == (ta != tb)
    assert (ma == tb) == (ta == tb) and (ta == mb) == (ta == tb)
    assert hash(ma) == hash(ta)
    for compare in (operator.lt, operator.le, operator.gt, operator.ge):
        assert compare(ma, mb) == compare(ta, tb) == compare(ma, tb) == compare(ta, mb)
    assert ma != [list(r) for r in ta]           # a tuple is never equal to a list
    assert (ma, 1) == (ta, 1) and hash((ma, 1)) == hash((ta, 1))


def test_a_frozen_matrix_stays_read_only_through_copies_and_pickles():
    m = FrozenMatrix(np.array([[0.0, 2.0], [1.0, 0.0]]))
    with pytest.raises(ValueError):
        m.array[0, 1] = 5.0
    back = pickle.loads(pickle.dumps(m))
    assert back == m and not back.array.flags.writeable
    assert copy.copy(m) is m and copy.deepcopy(m) is m
    assert np.array(m).flags.writeable and np.asarray(m) is m.array
    assert np.asarray(m, dtype=np.float32).dtype == np.float32


def test_as_matrix_keeps_a_valid_frozen_matrix_and_names_the_cell_of_a_bad_one():
    m = as_matrix("traffic_bytes", [[0, 1], [2, 0]], 2)
    assert as_matrix("traffic_bytes", m, 2) is m
    with pytest.raises(InvalidInstance, match=r"^x\[1\]\[1\] = 3.0: the diagonal must be 0"):
        as_matrix("x", as_matrix("x", [[0, 1], [2, 3]], 2, zero_diagonal=False), 2)


def _instances(kind, array):
    """The instance of ``kind`` from ``array`` (the array, its lists, its rows as arrays)."""
    n = len(array)
    build = {"circuits": lambda t: CircuitsInstance(2, 100.0, t),
             "wavelengths": lambda t: WavelengthsInstance(n, 3, 25.0, n - 1, t),
             "topology": lambda t: TopologyInstance(n, 2, 100.0, [], t)}[kind]
    return [build(t) for t in (array, array.tolist(), list(array))]


@pytest.mark.parametrize("kind", ["circuits", "wavelengths", "topology"])
@given(st.integers(3, 7).flatmap(_square))
def test_an_instance_from_an_array_is_the_one_from_lists(kind, array):
    np.fill_diagonal(array, 0.0)
    first, *others = _instances(kind, array)
    text = json.dumps(first.to_dict())
    for other in others:
        assert other == first and hash(other) == hash(first)
        assert other.to_dict() == first.to_dict() and json.dumps(other.to_dict()) == text
    assert type(first).from_dict(json.loads(text)) == first
    assert first.traffic_bytes == _tuples(array)
    assert first.traffic.tobytes() == np.array(_tuples(array)).tobytes()


@pytest.mark.parametrize("kind,method", [("circuits", "greedy"), ("circuits", "exact"),
                                         ("wavelengths", "mcf"), ("wavelengths", "greedy"),
                                         ("topology", "topoopt")])
@given(st.integers(4, 7).flatmap(_square))
def test_an_instance_from_an_array_solves_as_the_one_from_lists(kind, method, array):
    np.fill_diagonal(array, 0.0)
    results = [fabricopt.solve(inst, method, seed=1) for inst in _instances(kind, array)]
    first = results[0]
    for other in results[1:]:
        assert other.status == first.status
        assert repr(other.objective) == repr(first.objective)
        assert (other.solution is None) == (first.solution is None)
        if first.solution is not None:
            assert other.solution.to_dict() == first.solution.to_dict()
