"""The Threshold Algorithm walk over impact-ordered postings, shared by every indexed store.

A term's contribution to a claim's score depends only on the claim's weighted
frequency of the term and its length (``bm25f.term_score``), so each term's
postings are grouped by that pair: every claim in a group gets the same
contribution, computed once per group. The walk visits the query terms'
groups, best contribution first, reading each group's claims oldest first:
- a claim met for the first time is scored in full (its other query terms are
  looked up, a batch of claims at a time) and offered to the top k;
- once a claim holding only the group's term fails to enter, the group's
  later claims that hold only that term (newer, scoring the same) cannot
  either, so only the rest of the group that also holds a query term whose
  groups are not all walked is read, found from the smaller side: the rest of
  the group, or those terms' postings;
- the walk stops when the best a claim not yet met could score (each term's
  next group, summed: the Threshold Algorithm's bound) cannot enter.
So a query reads about k claims plus those holding several query terms in its
best groups, not every posting of its terms, and the result is still exactly
``bm25f.exact_search``'s top k, scores summed in query-term order as the scan
sums them. A ``PostingsSource`` is where the postings live: the in-process
``TermIndex``, or a store's tables.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Protocol

from grapharc.memory.bm25f import check_k, idf, term_score
from grapharc.memory.terms import query_terms

Group = tuple[float, int]  # (weighted frequency of a term in a claim, the claim's length)

_FIRST_READ = 16  # claims read from a group beyond k before the walk knows more
_MOST_READ = 500  # claims read or looked up at once, well under SQLite's parameter limit


class PostingsSource(Protocol):
    """Impact-ordered postings and collection statistics; positions grow with insertion."""

    def totals(self) -> tuple[int, int]:
        """Claims indexed (superseded ones included) and the sum of their lengths."""
        ...

    def groups(self, terms: Sequence[str]) -> list[dict[Group, int]]:
        """For each term, its groups and how many claims each holds (empty if unknown)."""
        ...

    def members(self, term: str, group: Group, after: int, limit: int) -> list[int]:
        """Up to ``limit`` positions of the group's claims above ``after``, ascending."""
        ...

    def members_holding(self, term: str, group: Group, after: int,
                        others: Sequence[str]) -> list[int]:
        """Positions above ``after`` in the group that hold any of ``others``, ascending,
        found by reading the rest of the group."""
        ...

    def members_among(self, term: str, group: Group, after: int,
                      others: Sequence[str]) -> list[int]:
        """The same positions as ``members_holding``, found by reading ``others``' postings."""
        ...

    def frequencies(self, positions: Sequence[int],
                    terms: Sequence[str]) -> dict[int, dict[str, float]]:
        """For each position holding any of ``terms``, its weighted frequency of each."""
        ...

    def superseded(self, positions: Sequence[int]) -> set[int]:
        """Those of ``positions`` whose claims have been corrected."""
        ...


def impact_search(source: PostingsSource, query: str, k: int,
                  include_superseded: bool) -> list[tuple[float, int]]:
    """The ``k`` best (score, position) pairs for ``query``, best first; see the module."""
    check_k(k)
    asked = query_terms(query)
    if not asked:
        return []
    found = [(term, groups) for term, groups in zip(asked, source.groups(asked), strict=True)
             if groups]
    if not found:
        return []
    total, total_length = source.totals()
    average = total_length / total
    contributions = []
    for _, groups in found:
        term_idf = idf(total, sum(groups.values()))
        contributions.append({group: term_score(term_idf, *group, average) for group in groups})
    walk = _Walk(source, [term for term, _ in found], [groups for _, groups in found],
                 contributions, _Best(k), include_superseded)
    return walk.run()


class _Walk:
    """One query's walk: the groups still ahead per term, the claims met, the best k."""

    def __init__(self, source: PostingsSource, terms: list[str], sizes: list[dict[Group, int]],
                 contributions: list[dict[Group, float]], best: _Best,
                 include_superseded: bool) -> None:
        self._source = source
        self._terms = terms
        self._document_frequencies = [sum(groups.values()) for groups in sizes]
        self._sizes = sizes
        self._contributions = contributions
        self._ladders = [[*sorted(found.values(), reverse=True), 0.0] for found in contributions]
        self._climbed = [0] * len(terms)
        self._best = best
        self._met: set[int] = set()
        self._include_superseded = include_superseded

    def run(self) -> list[tuple[float, int]]:
        steps = sorted(((score, slot, group) for slot, found in enumerate(self._contributions)
                        for group, score in found.items()), key=lambda step: -step[0])
        for score, slot, group in steps:
            # a claim not met yet is in no group walked yet: each term adds at most its next
            bound = sum(ladder[rung] for ladder, rung in zip(self._ladders, self._climbed,
                                                              strict=True))
            if not self._best.could_take(bound):
                break
            self._visit(slot, group, score, bound)
            self._climbed[slot] += 1
        return self._best.ranked()

    def _visit(self, slot: int, group: Group, score: float, bound: float) -> None:
        """Offer the group's claims that could still enter, oldest first."""
        term = self._terms[slot]
        after, read, limit = -1, 0, self._first_read()
        singles_open = self._best.could_take(score)
        while singles_open:
            positions = self._source.members(term, group, after, limit)
            singles_open = self._offer(slot, group, score, positions)
            read += len(positions)
            if len(positions) < limit:
                return
            after, limit = positions[-1], min(limit * 4, _MOST_READ)
        open_terms = [other for place, other in enumerate(self._terms)
                      if place != slot and self._ladders[place][self._climbed[place]] > 0.0]
        if not open_terms or not self._best.could_take_after(bound, after):
            return
        pooled = sum(self._document_frequencies[self._terms.index(other)] for other in open_terms)
        if pooled < self._sizes[slot][group] - read:
            positions = self._source.members_among(term, group, after, open_terms)
        else:
            positions = self._source.members_holding(term, group, after, open_terms)
        for start in range(0, len(positions), _MOST_READ):
            self._offer(slot, group, score, positions[start:start + _MOST_READ])

    def _first_read(self) -> int:
        """How many claims a group's first read asks for."""
        return min(self._best.k + _FIRST_READ, _MOST_READ)

    def _offer(self, slot: int, group: Group, score: float, positions: Sequence[int]) -> bool:
        """Score and offer each claim not met before; return whether one holding only this
        group's term could still enter."""
        fresh = [position for position in positions if position not in self._met]
        self._met.update(fresh)
        others = [other for place, other in enumerate(self._terms) if place != slot]
        held = self._source.frequencies(fresh, others) if others and fresh else {}
        dropped = set() if self._include_superseded or not fresh \
            else self._source.superseded(fresh)
        singles_open = True
        for position in fresh:
            if position in dropped:
                continue
            frequencies = held.get(position)
            if frequencies is not None:
                self._best.offer(self._full_score(slot, group, frequencies), position)
            elif singles_open and not self._best.offer(score, position):
                singles_open = False  # the group's later positions are newer: they lose too
        return singles_open

    def _full_score(self, slot: int, group: Group, frequencies: dict[str, float]) -> float:
        """A claim's score over every query term it holds, summed in query-term order."""
        length = group[1]
        score = 0.0
        for place, (term, found) in enumerate(zip(self._terms, self._contributions, strict=True)):
            if place == slot:
                score += found[group]
            elif term in frequencies:
                score += found[(frequencies[term], length)]
        return score


class _Best:
    """The ``k`` best (score, position) pairs so far: highest score, then oldest position."""

    def __init__(self, k: int) -> None:
        self.k = k
        self._heap: list[tuple[float, int]] = []  # (score, -position): the worst kept is first

    def could_take(self, score: float) -> bool:
        """Whether a claim scoring ``score`` might still enter (a tie may, if it is older)."""
        return len(self._heap) < self.k or score >= self._heap[0][0]

    def could_take_after(self, score: float, position: int) -> bool:
        """Whether a claim scoring at most ``score`` and newer than ``position`` might enter."""
        return len(self._heap) < self.k or (score, -(position + 1)) > self._heap[0]

    def offer(self, score: float, position: int) -> bool:
        """Keep the pair if it beats the worst kept one; return whether it was kept."""
        item = (score, -position)
        if len(self._heap) < self.k:
            heapq.heappush(self._heap, item)
            return True
        if item <= self._heap[0]:
            return False
        heapq.heapreplace(self._heap, item)
        return True

    def ranked(self) -> list[tuple[float, int]]:
        """The kept pairs, best first."""
        return [(score, -negated) for score, negated in sorted(self._heap, reverse=True)]
