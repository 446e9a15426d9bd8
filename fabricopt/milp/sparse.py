"""A MILP assembled as named variable blocks over sparse matrices, without PuLP.

A formulation declares blocks of variables (a name, a shape, bounds, integrality) and
adds rows as blocks of COO triplets with their bounds; :meth:`SparseModel.arrays`
assembles the CSR matrix the solvers read (:class:`~fabricopt.milp.arrays.LinearArrays`)
in a few numpy calls. HiGHS takes those arrays directly; CBC gets a PuLP problem built
from the same arrays (:func:`to_pulp`), so the two backends solve one model. Solutions
come back as a column vector that :meth:`SparseModel.value` reads block by block.

Building through PuLP's object layer costs a Python object per variable and per term;
here a model of a million variables is a handful of arrays.
"""

from __future__ import annotations

from fabricopt.errors import InvalidArgument

import math
from dataclasses import dataclass
from collections.abc import Mapping, Sequence

import numpy as np
import pulp
from scipy.sparse import coo_matrix

from fabricopt.milp.arrays import LinearArrays
from fabricopt.milp.deadline import check_deadline

__all__ = ["Block", "SparseModel", "BlockNames", "ColumnValues", "to_pulp", "named_start",
           "columns_of"]


@dataclass(frozen=True)
class Block:
    """Columns ``start .. start + size - 1`` of a model, viewed with ``shape``.

    ``block.ids`` holds the column number of every element; ``block[i, j]`` indexes it
    like a numpy array.
    """

    name: str
    start: int
    shape: tuple[int, ...]

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def ids(self) -> np.ndarray:
        return np.arange(self.start, self.start + self.size, dtype=np.int64).reshape(self.shape)

    def __getitem__(self, index) -> np.ndarray:
        return self.ids[index]


class BlockNames(Sequence):
    """Column names ``block_i_j`` computed on demand (a million names cost nothing
    until a warm start or a CBC run asks for them)."""

    def __init__(self, blocks: Sequence[Block]):
        self.blocks = list(blocks)
        self.starts = np.array([b.start for b in self.blocks], dtype=np.int64)
        self.total = sum(b.size for b in self.blocks)

    def __len__(self) -> int:
        return self.total

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(self.total))]
        if k < 0:
            k += self.total
        if not 0 <= k < self.total:
            raise IndexError(k)
        block = self.blocks[int(np.searchsorted(self.starts, k, side="right")) - 1]
        index = np.unravel_index(k - block.start, block.shape) if block.shape else ()
        return "_".join([block.name, *map(str, index)])

    def __iter__(self):
        for block in self.blocks:
            if not block.shape:
                yield block.name
                continue
            for index in np.ndindex(*block.shape):
                yield "_".join([block.name, *map(str, index)])


class SparseModel:
    """A MILP built as blocks: ``min/max c·x + offset`` s.t. ``lo <= A x <= hi``, bounds.

    Parameters
    ----------
    name : str
    sense : {"min", "max"}

    Examples
    --------
    ``max 2x + y`` s.t. ``x + y <= 1.5`` with x, y in {0, 1}:

    >>> m = SparseModel("demo", "max")
    >>> v = m.variables("v", (2,), 0, 1, integer=True)
    >>> m.objective(v.ids, [2.0, 1.0])
    >>> m.rows("cap", [0, 0], v.ids, [1.0, 1.0], upper=[1.5])   # the first new row
    0
    >>> a = m.arrays()
    >>> a.maximize, list(a.names), a.starts.tolist(), a.index.tolist()
    (True, ['v_0', 'v_1'], [0], [0, 1])
    """

    def __init__(self, name: str, sense: str):
        if sense not in ("min", "max"):
            raise InvalidArgument(f"sense = {sense!r}: must be 'min' or 'max'")
        self.name, self.maximize = name, sense == "max"
        self.blocks: dict[str, Block] = {}
        self._n = 0
        self._lower: list[np.ndarray] = []
        self._upper: list[np.ndarray] = []
        self._integer: list[np.ndarray] = []
        self._cost: list[tuple[np.ndarray, np.ndarray]] = []
        self.offset = 0.0
        self._rows: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self._row_lower: list[np.ndarray] = []
        self._row_upper: list[np.ndarray] = []
        self.row_blocks: dict[str, tuple[int, int]] = {}   # name -> (first row, count)
        self._m = 0

    def variables(self, name: str, shape, lower=0.0, upper=math.inf, *,
                  integer: bool = False) -> Block:
        """Add a block of ``prod(shape)`` columns; bounds are scalars or arrays of ``shape``."""
        if name in self.blocks:
            raise InvalidArgument(f"variables {name!r}: the block exists already")
        shape = tuple(int(s) for s in np.atleast_1d(shape)) if np.ndim(shape) else (
            () if shape == () else (int(shape),))
        block = Block(name, self._n, shape)
        size = block.size
        self._lower.append(np.broadcast_to(np.asarray(lower, dtype=float), shape).ravel())
        self._upper.append(np.broadcast_to(np.asarray(upper, dtype=float), shape).ravel())
        if integer:
            self._integer.append(np.arange(self._n, self._n + size, dtype=np.int32))
        self._n += size
        self.blocks[name] = block
        return block

    def objective(self, cols, coefs, offset: float = 0.0) -> None:
        """Add ``sum coefs[k] * x[cols[k]] + offset`` to the objective."""
        cols = np.asarray(cols, dtype=np.int64).ravel()
        self._cost.append((cols, np.broadcast_to(np.asarray(coefs, float), cols.shape).ravel()))
        self.offset += float(offset)

    def rows(self, name: str, row, col, val, *, lower=-math.inf, upper=math.inf,
             count: int | None = None) -> int:
        """Add ``count`` rows ``lower[r] <= sum_k val[k] x[col[k]] (row[k] == r) <= upper[r]``.

        ``row`` numbers the new rows from 0; repeated ``(row, col)`` pairs add up.
        ``count`` defaults to the length of an array ``lower`` or ``upper``, else
        ``max(row) + 1``. Returns the number of the first new row.
        """
        check_deadline()
        row = np.asarray(row, dtype=np.int64).ravel()
        col = np.asarray(col, dtype=np.int64).ravel()
        val = np.broadcast_to(np.asarray(val, dtype=float), col.shape).ravel()
        if count is None:
            sized = [np.size(b) for b in (lower, upper) if np.ndim(b)]
            count = sized[0] if sized else (int(row.max()) + 1 if len(row) else 0)
        first = self._m
        self._rows.append((row + first, col, val))
        self._row_lower.append(np.broadcast_to(np.asarray(lower, float), (count,)).ravel())
        self._row_upper.append(np.broadcast_to(np.asarray(upper, float), (count,)).ravel())
        self.row_blocks[name] = (first, count)
        self._m += count
        return first

    def relax(self) -> None:
        """Make every integer column continuous (the LP relaxation)."""
        self._integer = []

    def arrays(self) -> LinearArrays:
        """The assembled model (CSR rows, duplicate entries summed, zeros dropped)."""
        check_deadline()
        n, m = self._n, self._m
        cost = np.zeros(n)
        for cols, coefs in self._cost:
            np.add.at(cost, cols, coefs)
        if self._rows:
            r = np.concatenate([t[0] for t in self._rows])
            c = np.concatenate([t[1] for t in self._rows])
            v = np.concatenate([t[2] for t in self._rows])
        else:
            r = c = np.zeros(0, np.int64)
            v = np.zeros(0)
        A = coo_matrix((v, (r, c)), shape=(m, n)).tocsr()
        A.sum_duplicates()
        A.eliminate_zeros()
        cat = (lambda parts, dt: np.concatenate(parts).astype(dt) if parts else np.zeros(0, dt))
        return LinearArrays(BlockNames(self.blocks.values()), cost, self.offset, self.maximize,
                            cat(self._lower, float), cat(self._upper, float),
                            cat(self._integer, np.int32),
                            cat(self._row_lower, float), cat(self._row_upper, float),
                            A.indptr[:-1].astype(np.int32), A.indices.astype(np.int32),
                            A.data.astype(float))

    def start(self) -> np.ndarray:
        """A column vector to fill as a MIP start: every column at 0, or at its bound
        nearest 0."""
        lower = np.concatenate(self._lower) if self._lower else np.zeros(0)
        upper = np.concatenate(self._upper) if self._upper else np.zeros(0)
        return np.clip(np.zeros(self._n), lower, upper)

    def value(self, block: Block | str, col: np.ndarray) -> np.ndarray:
        """The values of ``block`` in the column vector ``col``, with its shape."""
        block = self.blocks[block] if isinstance(block, str) else block
        return np.asarray(col)[block.start:block.start + block.size].reshape(block.shape)


def to_pulp(arrays: LinearArrays, name: str = "model") -> pulp.LpProblem:
    """The same model as a PuLP problem (for CBC), columns named as ``arrays.names``."""
    prob = pulp.LpProblem(name, pulp.LpMaximize if arrays.maximize else pulp.LpMinimize)
    integer = np.zeros(len(arrays.names), dtype=bool)
    integer[arrays.integer] = True
    xs = []
    for k, nm in enumerate(arrays.names):
        lo, hi = arrays.col_lower[k], arrays.col_upper[k]
        xs.append(pulp.LpVariable(nm, None if math.isinf(lo) else float(lo),
                                  None if math.isinf(hi) else float(hi),
                                  pulp.LpInteger if integer[k] else pulp.LpContinuous))
        if k % 4096 == 0:
            check_deadline()
    nz = np.flatnonzero(arrays.cost)
    prob += pulp.LpAffineExpression([(xs[k], float(arrays.cost[k])) for k in nz],
                                    constant=arrays.offset)
    ends = np.append(arrays.starts[1:], len(arrays.index)) if len(arrays.starts) else []
    for r, (s, e) in enumerate(zip(arrays.starts, ends)):
        if r % 256 == 0:
            check_deadline()
        expr = pulp.LpAffineExpression([(xs[k], float(v)) for k, v in
                                        zip(arrays.index[s:e], arrays.value[s:e])])
        lo, hi = float(arrays.row_lower[r]), float(arrays.row_upper[r])
        if lo == hi:
            prob += pulp.LpConstraint(expr, pulp.LpConstraintEQ, f"r{r}", lo)
            continue
        if not math.isinf(lo):
            prob += pulp.LpConstraint(expr, pulp.LpConstraintGE, f"r{r}_lo", lo)
        if not math.isinf(hi):
            prob += pulp.LpConstraint(expr, pulp.LpConstraintLE, f"r{r}_hi", hi)
    return prob


class ColumnValues(Mapping):
    """A solution as a column vector that also reads as ``{column name: value}``.

    Decoders of :class:`SparseModel` formulations read :attr:`col` by block; those of
    PuLP formulations look names up, which builds the name index on first use.
    """

    def __init__(self, names: Sequence[str], col: np.ndarray):
        self.names, self.col = names, np.asarray(col, dtype=float)
        self._position: dict[str, int] | None = None

    def _index(self) -> dict[str, int]:
        if self._position is None:
            self._position = {name: k for k, name in enumerate(self.names)}
        return self._position

    def __getitem__(self, name: str) -> float:
        return float(self.col[self._index()[name]])

    def __iter__(self):
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)


def named_start(arrays: LinearArrays, start):
    """A MIP start as ``{column name: value}`` (what PuLP takes) from a column vector."""
    if isinstance(start, np.ndarray):
        return dict(zip(arrays.names, start.tolist()))
    return start


def columns_of(arrays: LinearArrays, values: Mapping[str, float]) -> ColumnValues:
    """Named values (CBC's) as a column vector; a column PuLP left out (in no row and not
    in the objective) takes its bound nearest 0, which is as good as any."""
    col = np.clip(np.zeros(len(arrays.names)), arrays.col_lower, arrays.col_upper)
    for k, name in enumerate(arrays.names):
        if name in values:
            col[k] = values[name]
    return ColumnValues(arrays.names, col)
