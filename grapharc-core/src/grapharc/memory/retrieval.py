"""``retrieve``: BM25F seeds, an optional vector channel, then a walk along entity links.

Seeds come from the source's ``search`` (BM25F, scaled so the best is 1.0) plus,
when an ``Embedder`` is given, cosine similarity between the query and each
current claim, counted only at or above ``similarity_floor`` so a poor match
stays silent. The walk reads each reached claim's object as an entity and
follows to the current claims about it, each hop multiplying the inherited
score by ``decay``: a query about Ada reaches (Ada, worked with, Babbage), then
what is known about Babbage. Every claim reached from one claim inherits the
same score, so only the oldest k about each entity are read (``about``'s
limit), and the result is what reading them all would give: past k, a newly
reached claim would tie with k older ones and lose, and what it would reach
next scores less than they do; claims already found are raised as before.
The vector channel compares against every current claim (it is opt-in and
brute force); the other channels do not scan.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from operator import mul
from typing import Protocol, runtime_checkable

from grapharc.memory.claims import (
    Claim,
    InvalidEntityError,
    InvalidSearchError,
    ScoredClaim,
    normalise_entity,
)


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors of one dimension; the caller's model, never a default."""

    def embed(self, texts: Sequence[str]) -> Sequence[Sequence[float]]:
        """Return one vector per text, in order."""
        ...


class ClaimSource(Protocol):
    """What retrieval reads: a ``ClaimStore`` or a ``ClaimIndex``."""

    def search(self, query: str, k: int = 10,
               include_superseded: bool = False) -> list[ScoredClaim]: ...

    def about(self, subject: str, limit: int | None = None) -> list[Claim]: ...

    def all(self, include_superseded: bool = False) -> list[Claim]: ...


@dataclass(frozen=True)
class Hit:
    """A retrieved claim, its score, the channels that found it and the claim it came through."""

    claim: Claim
    score: float
    channels: tuple[str, ...]
    via: str | None = None
    hops: int = 0


def cosine(left: Sequence[float], right: Sequence[float]) -> float:
    """Cosine similarity of two vectors of one dimension; 0.0 when either is all zeros."""
    if len(left) != len(right):
        raise InvalidSearchError(
            f"the embedder returned vectors of {len(left)} and {len(right)} dimensions",
            hint="an Embedder must embed every text into the same dimension")
    # map(mul) makes the same products, summed in the same order, as a generator would, at a third
    # of the time: the vector channel compares many items tied at its cut this way
    norm = math.sqrt(sum(map(mul, left, left))) * math.sqrt(sum(map(mul, right, right)))
    return sum(map(mul, left, right)) / norm if norm else 0.0


def claim_text(claim: Claim) -> str:
    """The text a claim is embedded as: subject, predicate and object in one line."""
    return f"{claim.subject} {claim.predicate} {claim.object}"


def _check(k: int, hops: int, decay: float, similarity_floor: float) -> None:
    if k < 1 or hops < 0:
        raise InvalidSearchError(f"retrieve got k={k}, hops={hops}",
                                 hint="ask for k >= 1 results and hops >= 0")
    if not 0.0 < decay < 1.0 or not -1.0 <= similarity_floor <= 1.0:
        raise InvalidSearchError(
            f"retrieve got decay={decay}, similarity_floor={similarity_floor}",
            hint="decay is between 0 and 1 (exclusive); a cosine floor is within [-1, 1]")


def _lexical(source: ClaimSource, query: str, k: int, include_superseded: bool) -> list[Hit]:
    found = source.search(query, k=k, include_superseded=include_superseded)
    if not found:
        return []
    best = found[0].score
    return [Hit(claim, score / best, ("bm25f",)) for claim, score in found]


def _vector(source: ClaimSource, query: str, embedder: Embedder, floor: float,
            include_superseded: bool) -> list[Hit]:
    claims = source.all(include_superseded=include_superseded)
    if not claims:
        return []
    vectors = list(embedder.embed([query, *(claim_text(c) for c in claims)]))
    if len(vectors) != len(claims) + 1:
        raise InvalidSearchError(
            f"the embedder returned {len(vectors)} vectors for {len(claims) + 1} texts",
            hint="an Embedder must return one vector per text, in order")
    similarities = (cosine(vectors[0], vector) for vector in vectors[1:])
    return [Hit(claim, similarity, ("vector",))
            for claim, similarity in zip(claims, similarities, strict=True)
            if similarity >= floor]


def _merge(hits: dict[str, Hit], hit: Hit) -> None:
    """Add ``hit``; a claim both seed channels found scores the sum of the two."""
    known = hits.get(hit.claim.id)
    if known is None:
        hits[hit.claim.id] = hit
    else:
        hits[hit.claim.id] = Hit(known.claim, known.score + hit.score,
                                 known.channels + hit.channels)


def _neighbours(source: ClaimSource, hits: dict[str, Hit], entity: str, inherited: float,
                k: int) -> list[Claim]:
    """The current claims about ``entity`` the walk must weigh: the oldest ``k``, and any
    already found (a positive score past k can only raise those). Raises InvalidEntityError."""
    if inherited <= 0.0:
        return source.about(entity)
    oldest = source.about(entity, limit=k)
    if len(oldest) < k:
        return oldest
    key = normalise_entity(entity)
    listed = {claim.id for claim in oldest}
    return oldest + [hit.claim for hit in hits.values()
                     if hit.claim.subject_key == key and hit.claim.superseded_by is None
                     and hit.claim.id not in listed]


def _walk(source: ClaimSource, hits: dict[str, Hit], frontier: list[Hit], hops: int,
          decay: float, k: int) -> None:
    """Follow each frontier claim's object to the claims about it, ``hops`` times."""
    for hop in range(1, hops + 1):
        reached: list[Hit] = []
        for hit in frontier:
            inherited = hit.score * decay
            try:
                neighbours = _neighbours(source, hits, hit.claim.object, inherited, k)
            except InvalidEntityError:
                continue
            for claim in neighbours:
                known = hits.get(claim.id)
                if known is None or known.score < inherited:
                    hits[claim.id] = Hit(claim, inherited, ("graph",), hit.claim.id, hop)
                    reached.append(hits[claim.id])
        frontier = reached


def retrieve(source: ClaimSource, query: str, k: int = 10, *,
             include_superseded: bool = False, embedder: Embedder | None = None,
             similarity_floor: float = 0.3, hops: int = 1, decay: float = 0.5) -> list[Hit]:
    """The ``k`` claims most relevant to ``query``, best first; see the module docstring.

    ``hops=0`` turns the entity walk off. Superseded claims are seeds only if
    ``include_superseded``; the walk reaches current claims only.
    """
    _check(k, hops, decay, similarity_floor)
    hits: dict[str, Hit] = {}
    for hit in _lexical(source, query, k, include_superseded):
        _merge(hits, hit)
    if embedder is not None:
        for hit in _vector(source, query, embedder, similarity_floor, include_superseded):
            _merge(hits, hit)
    seeds = sorted(hits.values(), key=lambda hit: -hit.score)[:k]
    hits = {hit.claim.id: hit for hit in seeds}
    _walk(source, hits, seeds, hops, decay, k)
    return sorted(hits.values(), key=lambda hit: -hit.score)[:k]
