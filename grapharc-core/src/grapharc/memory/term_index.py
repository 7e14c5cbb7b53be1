"""An impact-ordered inverted index of BM25F statistics, kept up to date as claims are added.

A term's contribution to a claim's score depends only on the claim's weighted
frequency of the term and its length (``bm25f.term_score``), so each term's
postings are also grouped by that pair: every claim in a group gets the same
contribution, computed once per group at query time. A search then
1. finds the claims holding two or more query terms (each posting list
   probed only against the positions of the smaller ones) and scores them in
   full, summing in query-term order as the scan does;
2. takes every other match from the groups, best contribution first across
   all query terms (such a claim's score is that one contribution), and stops
   once no group left can beat the k-th best score.
So a query costs its multi-term matches plus about k claims, not every posting
of its common terms, and the result is still exactly ``bm25f.exact_search``'s
top k, scores summed in query-term order as the scan sums them. Not thread-safe
on its own: the store that owns it serialises access.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

from grapharc.memory.bm25f import check_k, idf, term_score, weighted_frequencies
from grapharc.memory.claims import Claim, ScoredClaim
from grapharc.memory.terms import query_terms

_Postings = dict[int, float]
_Groups = dict[tuple[float, int], list[int]]


class TermIndex:
    """Postings (term -> position -> weighted frequency), the same grouped by (frequency,
    length), and each claim's record and length."""

    def __init__(self) -> None:
        self._postings: dict[str, _Postings] = {}
        self._groups: dict[str, _Groups] = {}
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
            self._groups.setdefault(term, {}).setdefault((frequency, length), []).append(position)
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
        wanted = [term for term in query_terms(query) if term in self._postings]
        if not wanted:
            return []
        total = len(self._claims)
        average = self._total_length / total
        idfs = [idf(total, len(self._postings[term])) for term in wanted]
        shared = _shared([self._postings[term] for term in wanted])
        best = _Best(k)
        for position, score in self._shared_scores(shared, wanted, idfs, average,
                                                   include_superseded).items():
            best.offer(score, position)
        for score, positions in self._groups_by_contribution(wanted, idfs, average):
            if not best.could_take(score):
                break
            for position in positions:
                if position in shared or not self._eligible(position, include_superseded):
                    continue
                if not best.offer(score, position):
                    break  # the group's later positions are newer, so they lose the tie too
        return [ScoredClaim(self._claims[position], score) for score, position in best.ranked()]

    def _eligible(self, position: int, include_superseded: bool) -> bool:
        return include_superseded or self._claims[position].superseded_by is None

    def _shared_scores(self, shared: set[int], wanted: Sequence[str], idfs: Sequence[float],
                       average: float, include_superseded: bool) -> dict[int, float]:
        """Each eligible claim of ``shared`` with its score over every query term it holds,
        summed in query-term order; a term's contribution is computed once per group."""
        scores = {position: 0.0 for position in shared
                  if self._eligible(position, include_superseded)}
        for term, term_idf in zip(wanted, idfs, strict=True):
            postings = self._postings[term]
            contributions: dict[tuple[float, int], float] = {}
            for position in scores:
                frequency = postings.get(position)
                if frequency is None:
                    continue
                group = (frequency, self._lengths[position])
                contribution = contributions.get(group)
                if contribution is None:
                    contribution = contributions[group] = term_score(term_idf, *group, average)
                scores[position] += contribution
        return scores

    def _groups_by_contribution(self, wanted: Sequence[str], idfs: Sequence[float],
                                average: float) -> list[tuple[float, list[int]]]:
        """Every query term's groups with their contribution, best first."""
        groups = [(term_score(term_idf, frequency, length, average), positions)
                  for term, term_idf in zip(wanted, idfs, strict=True)
                  for (frequency, length), positions in self._groups[term].items()]
        groups.sort(key=lambda group: -group[0])
        return groups


def _shared(postings: list[_Postings]) -> set[int]:
    """Positions in two or more of ``postings``, probing each list only against the smaller ones."""
    postings = sorted(postings, key=len)
    seen: set[int] = set()
    shared: set[int] = set()
    for rank, current in enumerate(postings):
        if len(seen) <= len(current):
            shared.update(filter(current.__contains__, seen))
        else:
            shared.update(filter(seen.__contains__, current))
        if rank < len(postings) - 1:
            seen.update(current)
    return shared


class _Best:
    """The ``k`` best (score, position) pairs so far: highest score, then oldest position."""

    def __init__(self, k: int) -> None:
        self._k = k
        self._heap: list[tuple[float, int]] = []  # (score, -position): the worst kept is first

    def could_take(self, score: float) -> bool:
        """Whether a claim scoring ``score`` might still enter (a tie may, if it is older)."""
        return len(self._heap) < self._k or score >= self._heap[0][0]

    def offer(self, score: float, position: int) -> bool:
        """Keep the pair if it beats the worst kept one; return whether it was kept."""
        item = (score, -position)
        if len(self._heap) < self._k:
            heapq.heappush(self._heap, item)
            return True
        if item <= self._heap[0]:
            return False
        heapq.heapreplace(self._heap, item)
        return True

    def ranked(self) -> list[tuple[float, int]]:
        """The kept pairs, best first."""
        return [(score, -negated) for score, negated in sorted(self._heap, reverse=True)]
