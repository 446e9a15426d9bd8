"""An immutable square matrix of floats that behaves as a tuple of row tuples.

Instances of the kinds with a traffic matrix keep it as :class:`FrozenMatrix`: the
methods read the array, and a 1,024 x 1,024 matrix as a million Python floats costs
~0.1 s to build and ~40 MB to hold, for callers that index a cell now and then.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np

__all__ = ["FrozenMatrix"]

#: Largest side whose ``repr`` lists every cell; a larger matrix is summarized.
REPR_MAX_SIDE = 8


class FrozenMatrix(Sequence):
    """A square float matrix over a read-only array, seen as a tuple of row tuples.

    Indexing gives a row as a tuple of Python floats (``m[i][j]``), slicing a tuple
    of such rows; ``len``, iteration, ``in``, ``==``, ``<`` and ``hash`` are those of
    the equivalent tuple of tuples, so a record holding one compares and hashes as
    if it held the tuples. The rows are made on demand, never kept.

    Parameters
    ----------
    array : numpy.ndarray
        A square float64 array, already validated; it is made read-only and kept
        without a copy, so the caller must not hold a writeable view of it.

    Examples
    --------
    >>> m = FrozenMatrix(np.array([[0.0, 2.0], [1.0, 0.0]]))
    >>> m[0][1], len(m), m == ((0.0, 2.0), (1.0, 0.0))
    (2.0, 2, True)
    >>> hash(m) == hash(((0.0, 2.0), (1.0, 0.0)))
    True
    >>> m
    ((0.0, 2.0), (1.0, 0.0))
    >>> FrozenMatrix(np.zeros((1024, 1024)))
    <FrozenMatrix 1024 x 1024, 0 non-zero cells>
    """

    __slots__ = ("_array", "_hash")

    def __init__(self, array: np.ndarray):
        array.flags.writeable = False
        self._array = array
        self._hash = None

    @property
    def array(self) -> np.ndarray:
        """The matrix as a read-only square float array (no copy)."""
        return self._array

    def __array__(self, dtype=None, copy=None):
        # the read-only array itself, a copy if asked; another dtype is always a copy
        out = self._array if dtype is None else self._array.astype(dtype, copy=False)
        return out.copy() if copy else out

    def __len__(self) -> int:
        return self._array.shape[0]

    def __getitem__(self, index):
        if isinstance(index, slice):
            return tuple(map(tuple, self._array[index].tolist()))
        return tuple(self._array[operator.index(index)].tolist())

    def __iter__(self):
        for row in self._array:
            yield tuple(row.tolist())

    def _tuples(self) -> tuple:
        return tuple(map(tuple, self._array.tolist()))

    def __eq__(self, other) -> bool:
        if isinstance(other, FrozenMatrix):
            return self._array.shape == other._array.shape and bool(
                np.array_equal(self._array, other._array))
        if isinstance(other, tuple):
            return len(other) == len(self) and self._tuples() == other
        return NotImplemented

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(self._tuples())
        return self._hash

    def _order(self, other, compare):
        if isinstance(other, FrozenMatrix):
            other = other._tuples()
        if not isinstance(other, tuple):
            return NotImplemented
        return compare(self._tuples(), other)

    def __lt__(self, other):
        return self._order(other, operator.lt)

    def __le__(self, other):
        return self._order(other, operator.le)

    def __gt__(self, other):
        return self._order(other, operator.gt)

    def __ge__(self, other):
        return self._order(other, operator.ge)

    def __repr__(self) -> str:
        n = len(self)
        if n <= REPR_MAX_SIDE:
            return repr(self._tuples())
        return (f"<FrozenMatrix {n} x {n}, "
                f"{int(np.count_nonzero(self._array)):,} non-zero cells>")

    def __reduce__(self):
        return (FrozenMatrix, (np.array(self._array),))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self
