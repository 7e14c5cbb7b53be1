"""Okapi BM25F over a claim's subject, predicate and object, and the exact reference scan.

The score is the BM25F form SQLite's FTS5 ``bm25()`` computes, so every store
ranks alike: a term's frequency in a claim is the sum of its field weights over
its occurrences (``FIELD_WEIGHTS``: subject 3.0, object 1.5, predicate 1.0, so a
match on what a claim is about counts most); length normalisation uses the
claim's term count over all fields against the corpus average; ``K1 = 1.2`` and
``B = 0.75`` (FTS5's fixed values). A term's idf is
``ln((N - n + 0.5) / (n + 0.5))``, floored at ``1e-6`` for terms in half or more
of the claims. Corpus statistics count every stored claim, superseded or not,
so a correction does not shift other claims' scores; superseded claims are
then left out of results unless asked for.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterable, Sequence

from grapharc.memory.claims import Claim, InvalidSearchError, ScoredClaim
from grapharc.memory.terms import query_terms, terms

FIELD_WEIGHTS = (("subject", 3.0), ("predicate", 1.0), ("object", 1.5))
K1 = 1.2
B = 0.75
IDF_FLOOR = 1e-6


def field_terms(claim: Claim,
                split: Callable[[str], list[str]] = terms) -> tuple[list[str], list[str], list[str]]:
    """The claim's terms per field, in ``FIELD_WEIGHTS`` order."""
    return split(claim.subject), split(claim.predicate), split(claim.object)


def weighted_frequencies(claim: Claim,
                         split: Callable[[str], list[str]] = terms) -> tuple[dict[str, float], int]:
    """Each term's field-weighted frequency in ``claim``, and the claim's term count."""
    frequencies: dict[str, float] = {}
    length = 0
    for (_, weight), found in zip(FIELD_WEIGHTS, field_terms(claim, split), strict=True):
        length += len(found)
        for term in found:
            frequencies[term] = frequencies.get(term, 0.0) + weight
    return frequencies, length


def weighted_frequencies_of(claims: Iterable[Claim]) -> list[tuple[dict[str, float], int]]:
    """``weighted_frequencies`` of each claim, splitting each distinct text into terms once:
    claims added together often share a subject or a predicate."""
    split_texts: dict[str, list[str]] = {}

    def split(text: str) -> list[str]:
        found = split_texts.get(text)
        if found is None:
            found = split_texts[text] = terms(text)
        return found

    return [weighted_frequencies(claim, split) for claim in claims]


def idf(total: int, containing: int) -> float:
    """Inverse document frequency of a term found in ``containing`` of ``total`` claims."""
    value = math.log((total - containing + 0.5) / (containing + 0.5))
    return value if value > 0.0 else IDF_FLOOR


def term_score(term_idf: float, frequency: float, length: int, average_length: float) -> float:
    """One term's contribution to a claim's score (written as FTS5 evaluates it)."""
    denominator = frequency + K1 * (1 - B + B * length / average_length)
    return term_idf * (frequency * (K1 + 1.0)) / denominator


def check_k(k: int) -> None:
    """Refuse a result count below one, naming it."""
    if k < 1:
        raise InvalidSearchError(f"search asked for k={k} results",
                                 hint="ask for at least one result (k >= 1)")


def top_k(scored: Iterable[tuple[float, int, Claim]], k: int) -> list[ScoredClaim]:
    """The ``k`` best of (score, insertion position, claim): highest score, then oldest first."""
    best = heapq.nsmallest(k, scored, key=lambda item: (-item[0], item[1]))
    return [ScoredClaim(claim, score) for score, _, claim in best]


def exact_search(claims: Sequence[Claim], query: str, k: int = 10,
                 include_superseded: bool = False) -> list[ScoredClaim]:
    """Score every claim in ``claims`` (every stored claim, in insertion order): O(claims).

    The reference the stores' indexes are tested and benchmarked against.
    """
    return scan(claims, weighted_frequencies_of(claims), query, k,
                include_superseded)


def scan(claims: Sequence[Claim], documents: Sequence[tuple[dict[str, float], int]], query: str,
         k: int, include_superseded: bool) -> list[ScoredClaim]:
    """``exact_search`` over claims whose ``weighted_frequencies`` are already computed."""
    check_k(k)
    wanted = query_terms(query)
    if not wanted or not claims:
        return []
    average_length = sum(length for _, length in documents) / len(documents)
    idfs = [idf(len(documents), sum(1 for freqs, _ in documents if term in freqs))
            for term in wanted]
    scored: list[tuple[float, int, Claim]] = []
    for position, (claim, (freqs, length)) in enumerate(zip(claims, documents, strict=True)):
        if claim.superseded_by is not None and not include_superseded:
            continue
        score, matched = 0.0, False
        for term, term_idf in zip(wanted, idfs, strict=True):
            if term in freqs:
                score += term_score(term_idf, freqs[term], length, average_length)
                matched = True
        if matched:
            scored.append((score, position, claim))
    return top_k(scored, k)
