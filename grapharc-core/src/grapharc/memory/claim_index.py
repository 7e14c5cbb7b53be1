"""``ClaimIndex``: a snapshot of claims with adjacency by entity, searched by the exact scan.

It answers the same ``about``/``search``/``all`` questions a store does, from a
list of claims held in memory, so ``retrieve`` runs over either. Its search is
``bm25f.exact_search`` (every claim scored; each claim's term frequencies are
computed once, when the snapshot is taken), which makes it the reference the
stores' indexes are checked against, and a convenient way to retrieve over
claims that are not in a store.
"""

from __future__ import annotations

from collections.abc import Iterable

from grapharc.memory.bm25f import scan, weighted_frequencies_of
from grapharc.memory.claims import (
    Claim,
    ClaimStore,
    ScoredClaim,
    first_current,
    normalise_entity,
)


class ClaimIndex:
    """Claims in insertion order, with the current claims about each normalised entity."""

    def __init__(self, claims: Iterable[Claim]) -> None:
        self._claims = list(claims)
        self._documents = weighted_frequencies_of(self._claims)
        self._by_entity: dict[str, list[Claim]] = {}
        for claim in self._claims:
            if claim.superseded_by is None:
                self._by_entity.setdefault(claim.subject_key, []).append(claim)

    @classmethod
    def of(cls, store: ClaimStore) -> ClaimIndex:
        """Snapshot every claim ``store`` holds, superseded ones included."""
        return cls(store.all(include_superseded=True))

    def about(self, subject: str, limit: int | None = None) -> list[Claim]:
        """The current claims whose normalised subject is ``subject``'s (the first ``limit``)."""
        return first_current(self._by_entity.get(normalise_entity(subject), ()), limit)

    def all(self, include_superseded: bool = False) -> list[Claim]:
        """Every claim in the snapshot, or only the current ones."""
        if include_superseded:
            return list(self._claims)
        return [claim for claim in self._claims if claim.superseded_by is None]

    def search(self, query: str, k: int = 10,
               include_superseded: bool = False) -> list[ScoredClaim]:
        """The ``k`` best claims by scoring every claim in the snapshot: O(claims)."""
        return scan(self._claims, self._documents, query, k, include_superseded)
