"""Impact-ordered inverted indexes of BM25F statistics, kept up to date as documents change.

Each term's postings (position -> weighted frequency) are also grouped by
(frequency, document length), the pair that fixes the term's contribution to a
document's score, so ``impact_walk`` can visit the best groups first and stop
early. ``Postings`` is that walk's in-process ``PostingsSource`` over any documents
(positions grow with insertion; a removed document leaves every statistic);
``TermIndex`` indexes claims with it, and the long-term store's in-process items
(``grapharc.memory.longterm.inprocess``) index values with it. Not thread-safe on
their own: the store that owns one serialises access.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence

from grapharc.memory.bm25f import weighted_frequencies_of
from grapharc.memory.claims import Claim, ScoredClaim
from grapharc.memory.impact_walk import Group, impact_search


class Postings:
    """Postings (term -> position -> weighted frequency), the same grouped by (frequency,
    length), and each document's length: every method of ``PostingsSource`` but ``superseded``."""

    def __init__(self) -> None:
        self._postings: dict[str, dict[int, float]] = {}
        self._groups: dict[str, dict[Group, list[int]]] = {}
        self._lengths: dict[int, int] = {}
        self._total_length = 0

    def index(self, position: int, frequencies: Mapping[str, float], length: int) -> None:
        """Index a document at ``position``, above every position indexed so far."""
        for term, frequency in frequencies.items():
            self._postings.setdefault(term, {})[position] = frequency
            self._groups.setdefault(term, {}).setdefault((frequency, length), []).append(position)
        self._lengths[position] = length
        self._total_length += length

    def unindex(self, position: int, frequencies: Mapping[str, float]) -> None:
        """Remove the document indexed at ``position`` with ``frequencies`` from every statistic."""
        length = self._lengths.pop(position)
        self._total_length -= length
        for term, frequency in frequencies.items():
            within = self._postings[term]
            del within[position]
            groups = self._groups[term]
            members = groups[(frequency, length)]
            del members[bisect_left(members, position)]
            if not members:
                del groups[(frequency, length)]
            if not within:
                del self._postings[term], self._groups[term]

    def totals(self) -> tuple[int, int]:
        """Documents indexed and the sum of their lengths."""
        return len(self._lengths), self._total_length

    def groups(self, terms: Sequence[str]) -> list[dict[Group, int]]:
        """For each term, its groups and their sizes."""
        return [{group: len(positions) for group, positions in self._groups.get(term, {}).items()}
                for term in terms]

    def members(self, term: str, group: Group, after: int, limit: int) -> list[int]:
        """Up to ``limit`` positions in the group above ``after``, ascending."""
        positions = self._groups[term][group]
        start = bisect_right(positions, after)
        return positions[start:start + limit]

    def members_holding(self, term: str, group: Group, after: int,
                        others: Sequence[str]) -> list[int]:
        """Positions in the group above ``after`` holding any of ``others``, read from the group."""
        positions = self._groups[term][group]
        postings = [self._postings[other] for other in others]
        return [position for position in positions[bisect_right(positions, after):]
                if any(position in found for found in postings)]

    def members_among(self, term: str, group: Group, after: int,
                      others: Sequence[str]) -> list[int]:
        """The same positions, read from ``others``' postings."""
        frequency, length = group
        own = self._postings[term]
        return sorted({position for other in others for position in self._postings[other]
                       if position > after and own.get(position) == frequency
                       and self._lengths[position] == length})

    def frequencies(self, positions: Sequence[int],
                    terms: Sequence[str]) -> dict[int, dict[str, float]]:
        """Each position's weighted frequency of those of ``terms`` it holds."""
        postings = [(term, self._postings[term]) for term in terms]
        held: dict[int, dict[str, float]] = {}
        for position in positions:
            found = {term: frequency for term, within in postings
                     if (frequency := within.get(position)) is not None}
            if found:
                held[position] = found
        return held


class TermIndex(Postings):
    """``Postings`` of claims, with each claim's record: positions are claims in insertion order."""

    def __init__(self) -> None:
        super().__init__()
        self._claims: list[Claim] = []
        self._positions: dict[str, int] = {}

    def add(self, claim: Claim) -> None:
        """Index a newly stored claim at the next position."""
        self.add_many([claim])

    def add_many(self, claims: Sequence[Claim]) -> None:
        """Index newly stored claims at the next positions, splitting each distinct text into
        terms once (claims stored together often share a subject or a predicate)."""
        for claim, (frequencies, length) in zip(claims, weighted_frequencies_of(claims),
                                                strict=True):
            position = len(self._claims)
            self.index(position, frequencies, length)
            self._claims.append(claim)
            self._positions[claim.id] = position

    def mark_superseded(self, old_id: str, new_id: str) -> None:
        """Record that the indexed claim ``old_id`` was corrected by ``new_id``."""
        position = self._positions[old_id]
        self._claims[position] = self._claims[position].model_copy(update={"superseded_by": new_id})

    def get(self, claim_id: str) -> Claim:
        """The indexed record of a claim, ``superseded_by`` included; KeyError if not indexed."""
        return self._claims[self._positions[claim_id]]

    def search(self, query: str, k: int, include_superseded: bool) -> list[ScoredClaim]:
        """The ``k`` best claims for ``query``; see ``ClaimStore.search``."""
        return [ScoredClaim(self._claims[position], score)
                for score, position in impact_search(self, query, k, include_superseded)]

    def superseded(self, positions: Sequence[int]) -> set[int]:
        """Those of ``positions`` whose claims have been corrected."""
        return {position for position in positions
                if self._claims[position].superseded_by is not None}
