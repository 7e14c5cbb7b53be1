"""An inverted index of BM25F statistics, kept up to date as claims are added or corrected.

A search scores only the claims that share a term with the query (the postings
of its terms), so its cost follows how common the query's terms are, not how
many claims there are. Scores equal ``bm25f.exact_search``'s. Not thread-safe
on its own: the store that owns it serialises access.
"""

from __future__ import annotations

from grapharc.memory.bm25f import check_k, idf, term_score, top_k, weighted_frequencies
from grapharc.memory.claims import Claim, ScoredClaim
from grapharc.memory.terms import query_terms


class TermIndex:
    """Postings (term -> claim position -> weighted frequency), claim lengths and totals."""

    def __init__(self) -> None:
        self._postings: dict[str, dict[int, float]] = {}
        self._claims: list[Claim] = []
        self._lengths: list[int] = []
        self._positions: dict[str, int] = {}
        self._total_length = 0

    def add(self, claim: Claim) -> None:
        """Index a newly stored claim at the next position."""
        position = len(self._claims)
        frequencies, length = weighted_frequencies(claim)
        for term, frequency in frequencies.items():
            self._postings.setdefault(term, {})[position] = frequency
        self._claims.append(claim)
        self._lengths.append(length)
        self._positions[claim.id] = position
        self._total_length += length

    def mark_superseded(self, old_id: str, new_id: str) -> None:
        """Record that the indexed claim ``old_id`` was corrected by ``new_id``."""
        position = self._positions[old_id]
        self._claims[position] = self._claims[position].model_copy(update={"superseded_by": new_id})

    def search(self, query: str, k: int, include_superseded: bool) -> list[ScoredClaim]:
        """The ``k`` best claims for ``query``; see ``ClaimStore.search``."""
        check_k(k)
        wanted = query_terms(query)
        if not wanted or not self._claims:
            return []
        total = len(self._claims)
        average_length = self._total_length / total
        scores: dict[int, float] = {}
        for term in wanted:
            postings = self._postings.get(term)
            if not postings:
                continue
            term_idf = idf(total, len(postings))
            for position, frequency in postings.items():
                contribution = term_score(term_idf, frequency, self._lengths[position],
                                          average_length)
                scores[position] = scores.get(position, 0.0) + contribution
        candidates = ((score, position, self._claims[position])
                      for position, score in scores.items())
        return top_k((item for item in candidates
                      if include_superseded or item[2].superseded_by is None), k)
