"""An inverted index of BM25F statistics, kept up to date as claims are added or corrected.

A search scores only the claims that share a term with the query, and prunes
further the way MaxScore does: it walks the query's postings rarest first, and
once no claim outside the candidates found so far could reach the k-th score
(bounded by each remaining term's best possible contribution), it only looks
the remaining terms up for those candidates instead of walking their long
postings. The result is still exactly ``bm25f.exact_search``'s top k, with each
score summed in query-term order as the scan sums it. Not thread-safe on its
own: the store that owns it serialises access.
"""

from __future__ import annotations

import heapq

from grapharc.memory.bm25f import check_k, idf, term_score, top_k, weighted_frequencies
from grapharc.memory.claims import Claim, ScoredClaim
from grapharc.memory.terms import query_terms

# A pruning decision compares sums taken in another order than the final score's,
# so it keeps this relative margin against rounding.
_ROUNDING_MARGIN = 1e-9

_Postings = dict[int, float]


class TermIndex:
    """Postings (term -> claim position -> weighted frequency), claim lengths and totals."""

    def __init__(self) -> None:
        self._postings: dict[str, _Postings] = {}
        self._max_frequency: dict[str, float] = {}
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
            self._max_frequency[term] = max(frequency, self._max_frequency.get(term, 0.0))
        self._claims.append(claim)
        self._lengths.append(length)
        self._positions[claim.id] = position
        self._total_length += length

    def mark_superseded(self, old_id: str, new_id: str) -> None:
        """Record that the indexed claim ``old_id`` was corrected by ``new_id``."""
        position = self._positions[old_id]
        self._claims[position] = self._claims[position].model_copy(update={"superseded_by": new_id})

    def get(self, claim_id: str) -> Claim:
        """The indexed record of a claim, ``superseded_by`` included; KeyError if not indexed."""
        return self._claims[self._positions[claim_id]]

    def search(self, query: str, k: int, include_superseded: bool) -> list[ScoredClaim]:
        """The ``k`` best claims for ``query``; see ``ClaimStore.search``."""
        check_k(k)
        wanted = [(slot, term, self._postings[term])
                  for slot, term in enumerate(query_terms(query)) if term in self._postings]
        if not wanted:
            return []
        total = len(self._claims)
        average = self._total_length / total
        idfs = {slot: idf(total, len(postings)) for slot, _, postings in wanted}
        # a term's best contribution: its highest frequency in a claim of no length
        bounds = {slot: term_score(idfs[slot], self._max_frequency[term], 0, average)
                  for slot, term, _ in wanted}
        wanted.sort(key=lambda item: len(item[2]))
        partial: dict[int, dict[int, float]] = {}
        for rank, (slot, _, postings) in enumerate(wanted):
            reachable = sum(bounds[later] for later, _, _ in wanted[rank:])
            if reachable < self._threshold(partial, k, include_superseded) * (1 - _ROUNDING_MARGIN):
                self._complete(partial, wanted[rank:], idfs, average)
                break
            for position, frequency in postings.items():
                partial.setdefault(position, {})[slot] = term_score(
                    idfs[slot], frequency, self._lengths[position], average)
        return top_k(self._scored(partial, include_superseded), k)

    def _eligible(self, position: int, include_superseded: bool) -> bool:
        return include_superseded or self._claims[position].superseded_by is None

    def _threshold(self, partial: dict[int, dict[int, float]], k: int,
                   include_superseded: bool) -> float:
        """The k-th best score so far among eligible candidates (a lower bound of the final)."""
        sums = [sum(parts.values()) for position, parts in partial.items()
                if self._eligible(position, include_superseded)]
        return heapq.nlargest(k, sums)[-1] if len(sums) >= k else 0.0

    def _complete(self, partial: dict[int, dict[int, float]],
                  remaining: list[tuple[int, str, _Postings]], idfs: dict[int, float],
                  average: float) -> None:
        """Add the remaining terms' contributions to the candidates, by lookup."""
        for slot, _, postings in remaining:
            for position, parts in partial.items():
                frequency = postings.get(position)
                if frequency is not None:
                    parts[slot] = term_score(idfs[slot], frequency, self._lengths[position],
                                             average)

    def _scored(self, partial: dict[int, dict[int, float]],
                include_superseded: bool) -> list[tuple[float, int, Claim]]:
        """Each eligible candidate's score, summed in query-term order as the scan sums it."""
        scored = []
        for position, parts in partial.items():
            if self._eligible(position, include_superseded):
                score = 0.0
                for slot in sorted(parts):
                    score += parts[slot]
                scored.append((score, position, self._claims[position]))
        return scored
