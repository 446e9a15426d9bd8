"""A read-only mapping of ids to the values of an array, made into a dict only when read.

A placement of half a million sub-ops is checked, scored and priced from its arrays; the
mapping of op id to GPU (or start time) that its solution also offers costs a dict of
half a million entries, which only a reader of the mapping pays for (once).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Iterator

import numpy as np

__all__ = ["ArrayMapping"]


class ArrayMapping(Mapping):
    """``{ids[k]: values[k]}``, read-only, behaving as a ``types.MappingProxyType`` of it.

    The dict is made on the first read of a key or value (its length needs none);
    equality, ``copy()``, ``|``, the views and the ``repr`` are those of the proxy of that
    dict. Like the proxy it is unhashable and refuses assignment; unlike it, it pickles
    (as its ids and values).

    Parameters
    ----------
    ids : tuple of str
        Distinct keys, in order (the mapping's iteration order).
    values : numpy.ndarray
        ``values[k]`` for ``ids[k]``, read-only: never written after this (the caller's
        promise), so the dict made later holds the values of now.

    Examples
    --------
    >>> import numpy as np
    >>> m = ArrayMapping(("a", "b"), np.array([3, 1]))
    >>> len(m), m["b"], m
    (2, 1, mappingproxy({'a': 3, 'b': 1}))
    >>> m == {"a": 3, "b": 1}, m.copy()
    (True, {'a': 3, 'b': 1})
    """

    __slots__ = ("_ids", "_values", "_dict")

    def __init__(self, ids: tuple, values: np.ndarray):
        self._ids, self._values = ids, values
        self._dict = None

    def _items(self) -> dict:
        if self._dict is None:
            # tolist gives Python ints and floats, the types the validating path stores
            self._dict = dict(zip(self._ids, self._values.tolist()))
        return self._dict

    def __getitem__(self, key) -> Any:
        return self._items()[key]

    def __iter__(self) -> Iterator:
        return iter(self._items())

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, key) -> bool:
        return key in self._items()

    def __reversed__(self) -> Iterator:
        return reversed(self._items())

    def get(self, key, default=None):
        return self._items().get(key, default)

    def keys(self):
        return self._items().keys()

    def values(self):
        return self._items().values()

    def items(self):
        return self._items().items()

    def copy(self) -> dict:
        """A new dict of the items, as ``MappingProxyType.copy`` gives."""
        return self._items().copy()

    def __or__(self, other):
        return self._items() | other

    def __ror__(self, other):
        return other | self._items()

    def __eq__(self, other) -> bool:
        return self._items() == other

    def __ne__(self, other) -> bool:
        return self._items() != other

    __hash__ = None

    def __repr__(self) -> str:
        return f"mappingproxy({self._items()!r})"

    def __reduce__(self):
        return (type(self), (self._ids, self._values))
