"""An impact-ordered inverted index of BM25F statistics, kept up to date as claims are added.

A term's contribution to a claim's score depends only on the claim's weighted
frequency of the term and its length (``bm25f.term_score``), so each term's
postings are also grouped by that pair: every claim in a group gets the same
contribution, computed once per group at query time. A search
finds the claims holding two or more query terms (each posting list probed
only against the positions of the smaller ones), then walks the query terms'
groups, best contribution first:
- a claim holding one query term scores that group's contribution, so the walk
  stops offering them once a group cannot beat the k-th best score;
- a claim holding several is scored in full when the walk first meets it, and
  the walk goes on for them only while the best they could still reach (each
  term's next group, summed, as in the Threshold Algorithm) can beat it.
So a query costs about k claims plus the multi-term claims in its best groups,
not every posting of its terms, and the result is still exactly
``bm25f.exact_search``'s top k, scores summed in query-term order as the scan
sums them. Not thread-safe
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
        contributions = [
            {group: term_score(idf(total, len(self._postings[term])), *group, average)
             for group in self._groups[term]} for term in wanted]
        shared = _shared([self._postings[term] for term in wanted])
        unscored = {position for position in shared if self._eligible(position, include_superseded)}
        ladders = [[*sorted(found.values(), reverse=True), 0.0] for found in contributions]
        climbed = [0] * len(wanted)
        best = _Best(k)
        walk = sorted(((score, slot, group) for slot, found in enumerate(contributions)
                       for group, score in found.items()), key=lambda step: -step[0])
        for score, slot, group in walk:
            # an unscored shared claim is in no group walked yet: each term adds at most its next
            shared_open = bool(unscored) and best.could_take(
                sum(ladder[rung] for ladder, rung in zip(ladders, climbed, strict=True)))
            single_open = best.could_take(score)
            if not shared_open and not single_open:
                break
            for position in self._groups[wanted[slot]][group]:
                if position in unscored:
                    unscored.discard(position)
                    best.offer(self._full_score(position, wanted, contributions), position)
                elif single_open and position not in shared \
                        and self._eligible(position, include_superseded) \
                        and not best.offer(score, position):
                    single_open = False  # the group's later positions are newer: they lose too
                    if not shared_open:
                        break
            climbed[slot] += 1
        return [ScoredClaim(self._claims[position], score) for score, position in best.ranked()]

    def _eligible(self, position: int, include_superseded: bool) -> bool:
        return include_superseded or self._claims[position].superseded_by is None

    def _full_score(self, position: int, wanted: Sequence[str],
                    contributions: Sequence[dict[tuple[float, int], float]]) -> float:
        """A claim's score over every query term it holds, summed in query-term order."""
        length = self._lengths[position]
        score = 0.0
        for term, found in zip(wanted, contributions, strict=True):
            frequency = self._postings[term].get(position)
            if frequency is not None:
                score += found[(frequency, length)]
        return score


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
