"""The vector channel's hits found through a ``VectorIndex``, exactly as comparing every vector would.

``vectors.every_similar`` defines the hits: every in-scope item whose cosine similarity
(``vectors.similarity``, in float64) to the query is at least the floor. ``fuse`` then keeps
the ``k`` best of both channels, so besides the BM25 items only the ``k`` best other hits can
matter. ``nearest`` finds those without comparing every vector in Python: one float32
matrix-vector product over the index gives every row's cosine to within ``error_bound``
(``vector_index``); rows are then taken best first, in batches, and the store's ``admit``
says which are in scope (prefix, expiry, filter) and gives their float64 vectors, until ``k``
are admitted and no row left could come within the bound of the ``k``-th. Every row taken is
then compared exactly with ``similarity``, so the scores, the ties and their order are the
exhaustive comparison's; items tied at the cut cost one exact comparison each.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from grapharc.memory.longterm.contracts import Namespace
from grapharc.memory.longterm.vector_index import Group, VectorIndex, error_bound
from grapharc.memory.longterm.vectors import Vector, fuse, similarity

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

Admit = Callable[[list[int]], Mapping[int, Vector]]
"""Of the given keys, those in the search's scope that have a vector, with their float64 vectors."""
FIRST_BATCH = 32


def fused(
    lexical: list[tuple[float, int]],
    wanted: Vector | None,
    index: VectorIndex,
    prefix: Namespace,
    k: int,
    floor: float,
    admit: Admit,
) -> list[tuple[float, int]]:
    """The ``k`` best (score, key): the BM25 ones alone without a query vector, else fused with the
    vector hits under ``prefix`` that ``admit`` lets in."""
    if wanted is None:
        return lexical
    return fuse(lexical, nearest(wanted, index, prefix, [key for _, key in lexical], k, floor, admit), k)


def nearest(
    wanted: Vector,
    index: VectorIndex,
    prefix: Namespace,
    lexical: Sequence[int],
    k: int,
    floor: float,
    admit: Admit,
) -> list[tuple[float, int]]:
    """(similarity, key) of the vector hits ``fuse`` needs: those among ``lexical`` and the ``k``
    best others (with any tied with the ``k``-th); refused like ``similarity`` if an in-scope
    vector has another dimension than ``wanted``."""
    import numpy as np

    numbers = index.under(prefix)
    _refuse_other_dimensions(wanted, index, numbers, admit)
    compared = dict(admit(list(lexical))) if lexical else {}
    group = index.groups.get(len(wanted))
    if group is not None and group.size:
        compared.update(_likely(wanted, group, numbers, np.asarray(lexical, np.int64), k, floor, admit))
    return [
        (score, key) for key, vector in compared.items() if (score := similarity(wanted, vector)) >= floor
    ]


def _refuse_other_dimensions(
    wanted: Vector, index: VectorIndex, numbers: NDArray[np.bool_], admit: Admit
) -> None:
    """Compare ``wanted`` with one in-scope vector of another dimension, if any, so it is refused."""

    for dimensions, group in index.groups.items():
        if dimensions != len(wanted):
            rows = group.live[: group.size] & numbers[group.namespaces[: group.size]]
            for vector in admit(group.keys[: group.size][rows].tolist()).values():
                similarity(wanted, vector)


def _likely(
    wanted: Vector,
    group: Group,
    numbers: NDArray[np.bool_],
    lexical: NDArray[np.int64],
    k: int,
    floor: float,
    admit: Admit,
) -> dict[int, Vector]:
    """The admitted keys (and vectors) of ``group`` not in ``lexical`` that may be among the ``k``
    most similar at or above ``floor``, taken best first by their float32 cosine."""
    import numpy as np

    query = np.asarray(wanted, np.float64)
    length = math.sqrt(float(query @ query))
    unit = (query / (length or 1.0)).astype(np.float32)
    # einsum's own loop, not BLAS: a matrix-vector product is bound by memory, and BLAS threads
    # only spend the other core's time on it (twice the CPU at 100k rows, measured)
    approx = np.einsum("ij,j->i", group.rows[: group.size], unit).astype(np.float64)
    bound = error_bound(group.dimensions)
    pending = np.flatnonzero(approx >= floor - bound)
    pending = pending[
        group.live[pending] & numbers[group.namespaces[pending]] & ~np.isin(group.keys[pending], lexical)
    ]
    admitted: list[tuple[float, int, Vector]] = []
    cut, batch = -math.inf, max(FIRST_BATCH, 2 * k)
    while pending.size:
        if pending.size > batch:
            order = np.argpartition(-approx[pending], batch - 1)
            taken, pending = pending[order[:batch]], pending[order[batch:]]
        else:
            taken, pending = pending, pending[:0]
        kept = admit(group.keys[taken].tolist())
        admitted.extend(
            (float(approx[row]), key, kept[key])
            for row, key in zip(taken.tolist(), group.keys[taken].tolist(), strict=True)
            if key in kept
        )
        if k and len(admitted) >= k:
            cut = heapq.nlargest(k, (near for near, _, _ in admitted))[-1] - 2 * bound
            pending = pending[approx[pending] >= cut]
        batch *= 4
    return {key: vector for near, key, vector in admitted if near >= cut}
