"""The vector channel of ``query`` search, for a store given an ``Embedder``.

As for claims (``grapharc.memory.retrieval``): the BM25 hits are scaled so the best is
1.0, every item in scope whose vector's cosine similarity to the query's is at least
``similarity_floor`` is a vector hit, and an item both channels found scores the sum.
Vectors are computed once, when an item is written, from the text its ``index`` names
(an item put with ``index=False`` has none); the comparison at query time is brute
force over the items in scope, which is why the channel is opt-in. The embedder is the
operator's: nothing leaves the process unless it sends it somewhere.
"""

from __future__ import annotations

from collections.abc import Sequence

from grapharc.memory.claims import InvalidSearchError
from grapharc.memory.longterm.contracts import InvalidItemSearchError
from grapharc.memory.retrieval import Embedder, cosine

Vector = Sequence[float]


def embed_text(embedder: Embedder, text: str) -> Vector:
    """The embedder's one vector for ``text``, refused clearly if it returns anything else."""
    vectors = list(embedder.embed([text]))
    if len(vectors) != 1:
        raise InvalidItemSearchError(f"the embedder returned {len(vectors)} vectors for one text",
                                     hint="an Embedder returns one vector per text, in order")
    return vectors[0]


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
