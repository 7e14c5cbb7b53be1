"""The in-process claim store: claims in a dict for the life of the process.

It is the default because a plain run should write nothing to disk that the
user did not ask for; ``memory:`` is its URI. Durable stores live in the
grapharc-memory-sqlite and grapharc-memory-ladybug plugins.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from grapharc.errors import ConfigurationError
from grapharc.memory.claims import (
    Claim,
    ClaimAlreadySupersededError,
    ClaimNotFoundError,
    ClaimStoreClosedError,
    DuplicateClaimError,
    ScoredClaim,
    check_new_batch,
    first_current,
    require_claim,
    require_claim_id,
)
from grapharc.memory.subject_index import SubjectIndex
from grapharc.memory.term_index import TermIndex


class InMemoryClaimStore:
    """A thread-safe ``ClaimStore`` that keeps claims in a dict, in insertion order.

    Alongside the dict it keeps an inverted index for ``search`` and the claim ids per
    normalised subject for ``about``, so neither scans every claim. Claims are indexed when
    the next read needs the indexes, in one batch, so ``add`` costs a dict insert.
    """

    def __init__(self) -> None:
        self._claims: dict[str, Claim] = {}
        self._predecessor: dict[str, str] = {}
        self._subjects = SubjectIndex()
        self._index = TermIndex()
        self._unindexed: list[Claim] = []
        self._lock = threading.RLock()
        self._closed = False

    def _check_open(self) -> None:
        if self._closed:
            raise ClaimStoreClosedError("the in-process claim store")

    def _require(self, claim_id: str) -> Claim:
        claim = self._claims.get(require_claim_id(claim_id))
        if claim is None:
            raise ClaimNotFoundError(claim_id)
        return claim

    def _check_insertable(self, claim: Claim) -> None:
        require_claim(claim)
        if claim.id in self._claims:
            raise DuplicateClaimError(claim.id)
        if claim.superseded_by is not None:
            raise ClaimAlreadySupersededError(claim.id, claim.superseded_by)

    def _store(self, claims: Sequence[Claim]) -> None:
        for claim in claims:
            self._claims[claim.id] = claim
        self._unindexed.extend(claims)

    def _catch_up(self) -> None:
        """Index the claims stored since the indexes were last read, in storing order."""
        if self._unindexed:
            for claim in self._unindexed:
                self._subjects.add(claim)
            self._index.add_many(self._unindexed)
            self._unindexed = []

    def add(self, claim: Claim) -> Claim:
        """Store a new claim; see ``ClaimStore.add``."""
        with self._lock:
            self._check_open()
            self._check_insertable(claim)
            self._store([claim])
            return claim

    def add_many(self, claims: Sequence[Claim]) -> list[Claim]:
        """Store several new claims, all or none; see ``ClaimStore.add_many``."""
        with self._lock:
            self._check_open()
            check_new_batch(claims)
            for claim in claims:
                self._check_insertable(claim)
            self._store(claims)
            return list(claims)

    def get(self, claim_id: str) -> Claim:
        """Return the claim with this id; see ``ClaimStore.get``."""
        with self._lock:
            self._check_open()
            return self._require(claim_id)

    def supersede(self, old_id: str, new_claim: Claim) -> Claim:
        """Record ``new_claim`` as the correction of ``old_id``; see ``ClaimStore.supersede``."""
        with self._lock:
            self._check_open()
            old = self._require(old_id)
            if old.superseded_by is not None:
                raise ClaimAlreadySupersededError(old_id, old.superseded_by)
            self._check_insertable(new_claim)
            self._store([new_claim])
            self._claims[old_id] = old.model_copy(update={"superseded_by": new_claim.id})
            self._catch_up()
            self._index.mark_superseded(old_id, new_claim.id)
            self._predecessor[new_claim.id] = old_id
            return new_claim

    def about(self, subject: str, limit: int | None = None) -> list[Claim]:
        """Return current claims about ``subject``; see ``ClaimStore.about``."""
        with self._lock:
            self._check_open()
            self._catch_up()
            found = (self._claims[claim_id] for claim_id in self._subjects.ids_about(subject))
            return first_current(found, limit)

    def history(self, claim_id: str) -> list[Claim]:
        """Return the correction chain ``claim_id`` is in, oldest first."""
        with self._lock:
            self._check_open()
            self._require(claim_id)
            root = claim_id
            while root in self._predecessor:
                root = self._predecessor[root]
            chain = [self._claims[root]]
            while chain[-1].superseded_by is not None:
                chain.append(self._claims[chain[-1].superseded_by])
            return chain

    def all(self, include_superseded: bool = False) -> list[Claim]:
        """Return current claims, or every claim if ``include_superseded``."""
        with self._lock:
            self._check_open()
            return list(self._claims.values()) if include_superseded else self._current()

    def search(self, query: str, k: int = 10,
               include_superseded: bool = False) -> list[ScoredClaim]:
        """The ``k`` best claims for ``query`` from the inverted index; see ``ClaimStore.search``."""
        with self._lock:
            self._check_open()
            self._catch_up()
            return self._index.search(query, k, include_superseded)

    def _current(self) -> list[Claim]:
        return [c for c in self._claims.values() if c.superseded_by is None]

    def close(self) -> None:
        """Mark the store closed; the claims are dropped with it."""
        with self._lock:
            self._closed = True
            self._claims.clear()
            self._predecessor.clear()
            self._subjects = SubjectIndex()
            self._index = TermIndex()
            self._unindexed = []


def open_inprocess_store(location: str, kind: str) -> InMemoryClaimStore:
    """Open a fresh in-process claim store for the URI ``memory:`` (which takes no location)."""
    if kind != "claims":
        raise ConfigurationError(
            f"the memory: store scheme serves claims, not {kind!r}",
            hint="use a durable store (for example sqlite:PATH) for other kinds",
        )
    if location:
        raise ConfigurationError(
            f"store URI 'memory:{location}' has a location, but memory: takes none",
            hint="use 'memory:' for the in-process store, or 'sqlite:PATH' to keep claims on disk",
        )
    return InMemoryClaimStore()
