"""The vector channel of ``query`` search, for a store given an ``Embedder``.

As for claims (``grapharc.memory.retrieval``): the BM25 hits are scaled so the best is
1.0, every item in scope whose vector's cosine similarity to the query's is at least
``similarity_floor`` is a vector hit, and an item both channels found scores the sum.
Vectors are computed once, when an item is written, from the text its ``index`` names
(an item put with ``index=False`` has none). The comparison at query time is exact over
the items in scope: ``every_similar`` defines it, and ``vector_search`` finds the same hits through a
``VectorIndex`` of float32 copies. The embedder is the operator's: nothing leaves the
process unless it sends it somewhere. Every backend ranks with ``vector_search.fused``
over the vectors it keeps (the SQL stores keep each as 8-byte floats, ``packed``), so one
query ranks alike in every store; an item written while the store had no embedder has no
vector, and only the BM25 channel finds it.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from grapharc.memory.claims import InvalidSearchError
from grapharc.memory.longterm.contracts import IndexFields, InvalidItemSearchError
from grapharc.memory.longterm.texts import indexed_texts
from grapharc.memory.retrieval import Embedder, cosine

Vector = Sequence[float]
SIMILARITY_FLOOR = 0.3
"""The cosine similarity below which the vector channel stays silent, as for claims."""


def embed_text(embedder: Embedder, text: str) -> Vector:
    """The embedder's one vector for ``text``, refused clearly if it returns anything else."""
    vectors = list(embedder.embed([text]))
    if len(vectors) != 1:
        raise InvalidItemSearchError(f"the embedder returned {len(vectors)} vectors for one text",
                                     hint="an Embedder returns one vector per text, in order")
    return vectors[0]


def item_vector(embedder: Embedder | None, value: Mapping[str, Any], index: IndexFields) -> Vector | None:
    """The vector of what ``index`` names of ``value`` (its texts joined by newlines), or None
    without an embedder or without text."""
    texts = indexed_texts(value, index) if embedder is not None else []
    return embed_text(embedder, "\n".join(texts)) if embedder is not None and texts else None


def query_vector(embedder: Embedder | None, query: str | None) -> Vector | None:
    """The vector of a search's ``query``, or None without an embedder or without a query."""
    return embed_text(embedder, query) if embedder is not None and query else None


def packed(vector: Vector | None) -> bytes | None:
    """A vector as the SQL stores keep it: little-endian 8-byte floats."""
    return None if vector is None else struct.pack(f"<{len(vector)}d", *vector)


def unpacked(kept: bytes) -> Vector:
    """A vector ``packed`` made."""
    return struct.unpack(f"<{len(kept) // 8}d", kept)


def similarity(left: Vector, right: Vector) -> float:
    """Cosine similarity, a dimension mismatch refused as an item search error."""
    try:
        return cosine(left, right)
    except InvalidSearchError as exc:
        raise InvalidItemSearchError(str(exc), hint=exc.hint) from exc


def fuse(lexical: Sequence[tuple[float, int]], similar: Sequence[tuple[float, int]],
         k: int) -> list[tuple[float, int]]:
    """The ``k`` best (score, position) of both channels: BM25 scaled to best 1.0 plus cosine,
    highest first, then oldest position first."""
    scores: dict[int, float] = {}
    if lexical:
        best = lexical[0][0]
        for score, position in lexical:
            scores[position] = score / best
    for score, position in similar:
        scores[position] = scores.get(position, 0.0) + score
    return sorted(((score, position) for position, score in scores.items()),
                  key=lambda pair: (-pair[0], pair[1]))[:k]


def every_similar(wanted: Vector, vectors: Iterable[tuple[int, Vector]],
                  floor: float = SIMILARITY_FLOOR) -> list[tuple[float, int]]:
    """(similarity, key) of every (key, vector) at least ``floor`` similar to ``wanted``: the
    channel's hits by definition, one comparison per vector, which ``vector_search.nearest``
    finds faster and must agree with."""
    return [(score, key) for key, vector in vectors if (score := similarity(wanted, vector)) >= floor]
