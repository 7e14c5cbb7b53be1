"""``VectorIndex``: a store's vectors as unit-length float32 rows, to find the likely nearest fast.

A row per kept vector, grouped by dimension, each with its key (the item's position) and its
namespace; a search multiplies the group of the query's dimension by the query in one
matrix-vector product (numpy, imported only when the first vector is kept). float32 halves the
memory a product reads, and scaling each row to length 1 first keeps every component within
[-1, 1], so the product's error has a bound (``error_bound``) that ``vector_search`` uses to
make the answer exact: the float32 figures only choose which items to compare in full.
A removed row is marked dead and reused by nobody; the rows are compacted once half are dead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from grapharc.memory.longterm.contracts import Namespace

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

FIRST_CAPACITY = 64


def error_bound(dimensions: int) -> float:
    """How far a float32 cosine of ``dimensions`` unit components may be from the float64 one.

    Rounding each unit component to float32 and summing ``dimensions`` float32 products each
    err by at most 2**-24 of the sum of the products' magnitudes, which is at most 1 for unit
    vectors (Cauchy-Schwarz); the float64 cosine's own error is far below that. Twice the sum,
    plus a floor for products that underflow, is a generous bound."""
    return 2 * (dimensions + 8) * 2.0**-24 + 1e-30


@dataclass
class Group:
    """The rows of one dimension: keys, namespace numbers, unit float32 rows and which are live."""

    dimensions: int
    keys: NDArray[np.int64]
    namespaces: NDArray[np.int32]
    rows: NDArray[np.float32]
    live: NDArray[np.bool_]
    size: int = 0
    at: dict[int, int] = field(default_factory=dict)

    @classmethod
    def empty(cls, dimensions: int, capacity: int = FIRST_CAPACITY) -> Group:
        import numpy as np

        return cls(
            dimensions,
            np.zeros(capacity, np.int64),
            np.zeros(capacity, np.int32),
            np.zeros((capacity, dimensions), np.float32),
            np.zeros(capacity, bool),
        )

    def append(self, keys: Sequence[int], namespaces: Sequence[int], vectors: Any) -> None:
        """Add rows (``vectors`` a float64 array, one row each), growing the arrays as needed."""
        import numpy as np

        count = len(keys)
        if self.size + count > len(self.keys):
            self._resize(max(2 * len(self.keys), self.size + count))
        end = self.size + count
        self.keys[self.size : end] = keys
        self.namespaces[self.size : end] = namespaces
        norms = np.sqrt(np.einsum("ij,ij->i", vectors, vectors))
        self.rows[self.size : end] = vectors / np.where(norms > 0, norms, 1.0)[:, None]
        self.live[self.size : end] = True
        self.at.update(zip(keys, range(self.size, end), strict=True))
        self.size = end

    def discard(self, key: int) -> bool:
        """Mark the row of ``key`` dead; whether it was here."""
        row = self.at.pop(key, None)
        if row is None:
            return False
        self.live[row] = False
        if 2 * len(self.at) < self.size and self.size > FIRST_CAPACITY:
            self._resize(max(FIRST_CAPACITY, 2 * len(self.at)))
        return True

    def _resize(self, capacity: int) -> None:
        """Copy the live rows, in order, into arrays of ``capacity`` rows."""
        import numpy as np

        kept = np.flatnonzero(self.live[: self.size])
        grown = Group.empty(self.dimensions, capacity)
        count = len(kept)
        grown.keys[:count], grown.namespaces[:count] = self.keys[kept], self.namespaces[kept]
        grown.rows[:count], grown.live[:count] = self.rows[kept], True
        self.keys, self.namespaces, self.rows, self.live = (
            grown.keys,
            grown.namespaces,
            grown.rows,
            grown.live,
        )
        self.size = count
        self.at = {int(key): row for row, key in enumerate(self.keys[:count])}


class VectorIndex:
    """Every kept vector of a store by key, as unit float32 rows grouped by dimension."""

    def __init__(self) -> None:
        self.groups: dict[int, Group] = {}
        self.namespaces: list[Namespace] = []
        self._numbers: dict[Namespace, int] = {}

    def _number(self, namespace: Namespace) -> int:
        number = self._numbers.get(namespace)
        if number is None:
            number = self._numbers[namespace] = len(self.namespaces)
            self.namespaces.append(namespace)
        return number

    def add(self, key: int, namespace: Namespace, vector: Sequence[float]) -> None:
        """Keep ``vector`` as the row of ``key`` (a key not kept already)."""
        import numpy as np

        group = self.groups.get(len(vector)) or self.groups.setdefault(len(vector), Group.empty(len(vector)))
        group.append([key], [self._number(namespace)], np.asarray([vector], np.float64))

    def discard(self, key: int) -> None:
        """Forget the row of ``key``, if any."""
        for group in self.groups.values():
            if group.discard(key):
                return

    def load(self, rows: Iterable[tuple[int, Namespace, bytes]]) -> None:
        """Keep many vectors at once, each given as ``vectors.packed`` made it (keys not kept already)."""
        import numpy as np

        by_size: dict[int, list[tuple[int, int, bytes]]] = {}
        for key, namespace, kept in rows:
            by_size.setdefault(len(kept), []).append((key, self._number(namespace), kept))
        for size, found in by_size.items():
            dimensions = size // 8
            keys, numbers, blobs = zip(*found, strict=True)
            vectors = np.frombuffer(b"".join(blobs), "<f8").reshape(len(found), dimensions)
            group = self.groups.get(dimensions) or self.groups.setdefault(
                dimensions, Group.empty(dimensions, len(found))
            )
            group.append(keys, numbers, vectors)

    def under(self, prefix: Namespace) -> NDArray[np.bool_]:
        """Whether each namespace (by number) is under ``prefix``: indexed by a row's namespace."""
        import numpy as np

        width = len(prefix)
        return np.fromiter(
            (namespace[:width] == prefix for namespace in self.namespaces), bool, len(self.namespaces)
        )


class GrowingIndex:
    """A ``VectorIndex`` of a table whose rows are never changed once written, read as it grows.

    A SQL store deletes an item's row and inserts a new one, under a key above every key before
    it, on each write; when writes commit in key order, the rows a store has not read yet are
    exactly those above the last key it read. Deleted rows stay in the index until it holds more
    than twice as many rows as the table (the store's scope check drops them from answers);
    then it is read afresh."""

    def __init__(self) -> None:
        self.index = VectorIndex()
        self._last = 0
        self._rows = 0

    def refresh(
        self, count: int, read_since: Callable[[int], Iterable[tuple[int, Namespace, bytes]]]
    ) -> VectorIndex:
        """The index with the rows ``read_since(key)`` gives (every row above ``key``, in key order,
        packed), given that the table holds ``count`` rows now."""
        if self._rows > 2 * count + FIRST_CAPACITY:
            self.index, self._last, self._rows = VectorIndex(), 0, 0
        rows = list(read_since(self._last))
        if rows:
            self.index.load(rows)
            self._last, self._rows = rows[-1][0], self._rows + len(rows)
        return self.index
