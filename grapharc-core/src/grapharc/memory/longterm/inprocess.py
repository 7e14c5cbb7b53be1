"""The in-process ``ItemStore`` (``memory:``): items in dicts, searched through an index.

It keeps for the life of the process what a plain run should not write to disk.
``query`` search walks the memory plane's impact-ordered BM25 postings
(``grapharc.memory.term_index.Postings`` with ``impact_walk``), so a query reads about
``offset + limit`` items plus those holding several query terms rather than every
item; namespace, filter and expiry are checked on the items the walk offers. A search
without a query merges each matching namespace's items newest first and stops at
``offset + limit``. A write moves an item to the next position, so positions order
items by their last write. Expired items are invisible at once and removed by ``sweep``
(or by being overwritten or deleted); their terms count in the BM25 statistics until then.
Given an ``Embedder``, ``query`` search adds the vector channel (``vectors``): vectors are
made when an item is written and kept in a ``VectorIndex`` too, through which
``vector_search`` finds the few in scope worth comparing with the query's.
"""

from __future__ import annotations

import heapq
import json
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from itertools import islice
from typing import Any

from grapharc.errors import ConfigurationError
from grapharc.memory.impact_walk import impact_search
from grapharc.memory.longterm.contracts import (
    Clock,
    IndexFields,
    ItemStoreClosedError,
    Namespace,
    StoredItem,
    check_index,
    check_key,
    check_namespace,
    check_page,
    check_ttl,
    encode_value,
    expiry,
    utc_now,
)
from grapharc.memory.longterm.filters import Condition, conditions, passes
from grapharc.memory.longterm.namespaces import check_listing, listed
from grapharc.memory.longterm.texts import term_counts
from grapharc.memory.longterm.vector_index import VectorIndex
from grapharc.memory.longterm.vector_search import fused
from grapharc.memory.longterm.vectors import SIMILARITY_FLOOR, Vector, item_vector, query_vector
from grapharc.memory.retrieval import Embedder
from grapharc.memory.term_index import Postings


@dataclass(frozen=True)
class _Record:
    """A stored item, the position of its last write, its value decoded and its term counts."""

    item: StoredItem
    position: int
    encoded: str
    frequencies: dict[str, float]
    vector: Vector | None = None

    def expired(self, now: datetime) -> bool:
        return self.item.expires_at is not None and self.item.expires_at <= now


class _ItemPostings(Postings):
    """The items' postings; for the search under way, ``keep`` says which positions may be found."""

    def __init__(self) -> None:
        super().__init__()
        self.keep: Callable[[int], bool] = lambda position: True

    def superseded(self, positions: Sequence[int]) -> set[int]:
        """Those of ``positions`` the search under way must not return."""
        return {position for position in positions if not self.keep(position)}


class InMemoryItemStore:
    """A thread-safe ``ItemStore`` holding items in dicts for the life of the process; with an
    ``embedder``, ``query`` search also ranks by vector similarity (at or above ``similarity_floor``)."""

    def __init__(self, *, clock: Clock = utc_now, embedder: Embedder | None = None,
                 similarity_floor: float = SIMILARITY_FLOOR) -> None:
        self._clock = clock
        self._embedder = embedder
        self._floor = similarity_floor
        self._records: dict[tuple[Namespace, str], _Record] = {}
        self._at: dict[int, tuple[Namespace, str]] = {}
        self._namespaces: dict[Namespace, dict[int, str]] = {}
        self._postings = _ItemPostings()
        self._vectors = VectorIndex()
        self._expiries: list[tuple[datetime, int]] = []
        self._next = 0
        self._lock = threading.RLock()
        self._closed = False

    def _check_open(self) -> None:
        if self._closed:
            raise ItemStoreClosedError("the in-process item store")

    def _live(self, namespace: Namespace, key: str, now: datetime) -> _Record | None:
        record = self._records.get((namespace, key))
        return None if record is None or record.expired(now) else record

    def _remove(self, record: _Record) -> None:
        namespace, key = record.item.namespace, record.item.key
        del self._records[(namespace, key)], self._at[record.position]
        within = self._namespaces[namespace]
        del within[record.position]
        if not within:
            del self._namespaces[namespace]
        self._postings.unindex(record.position, record.frequencies)
        if record.vector is not None:
            self._vectors.discard(record.position)

    def _remember_expiry(self, record: _Record) -> None:
        if record.item.expires_at is not None:
            heapq.heappush(self._expiries, (record.item.expires_at, record.position))

    def put(self, namespace: Namespace, key: str, value: Mapping[str, Any], *,
            index: IndexFields = None, ttl_minutes: float | None = None) -> None:
        """Store ``value`` at (namespace, key); see ``ItemStore.put``."""
        namespace, key = check_namespace(namespace, for_write=True), check_key(key)
        encoded, index, ttl_minutes = encode_value(value), check_index(index), check_ttl(ttl_minutes)
        decoded = json.loads(encoded)
        frequencies, length = term_counts(decoded, index)
        vector = item_vector(self._embedder, decoded, index)
        with self._lock:
            self._check_open()
            now = self._clock()
            earlier = self._records.get((namespace, key))
            created = earlier.item.created_at if earlier and not earlier.expired(now) else now
            if earlier is not None:
                self._remove(earlier)
            position, self._next = self._next, self._next + 1
            item = StoredItem(namespace, key, decoded, created, now, expiry(now, ttl_minutes), ttl_minutes)
            record = _Record(item, position, encoded, frequencies, vector)
            self._records[(namespace, key)] = record
            self._at[position] = (namespace, key)
            self._namespaces.setdefault(namespace, {})[position] = key
            self._postings.index(position, frequencies, length)
            if vector is not None:
                self._vectors.add(position, namespace, vector)
            self._remember_expiry(record)

    def _returned(self, record: _Record, now: datetime, refresh_ttl: bool,
                  score: float | None = None) -> StoredItem:
        """The record's item as a caller gets it (its own copy of the value), refreshed if asked."""
        item = record.item
        if refresh_ttl and item.ttl_minutes is not None:
            item = replace(item, expires_at=expiry(now, item.ttl_minutes))
            record = replace(record, item=item)
            self._records[(item.namespace, item.key)] = record
            self._remember_expiry(record)
        return replace(item, value=json.loads(record.encoded), score=score)

    def get(self, namespace: Namespace, key: str, *, refresh_ttl: bool = True) -> StoredItem | None:
        """The item at (namespace, key), or None; see ``ItemStore.get``."""
        namespace, key = check_namespace(namespace), check_key(key)
        with self._lock:
            self._check_open()
            now = self._clock()
            record = self._live(namespace, key, now)
            return None if record is None else self._returned(record, now, refresh_ttl)

    def delete(self, namespace: Namespace, key: str) -> None:
        """Remove the item at (namespace, key), if any."""
        namespace, key = check_namespace(namespace), check_key(key)
        with self._lock:
            self._check_open()
            record = self._records.get((namespace, key))
            if record is not None:
                self._remove(record)

    def _keeps(self, prefix: Namespace, found: list[Condition], now: datetime) -> Callable[[int], bool]:
        """Whether the item last written at a position is live, under ``prefix`` and passes."""
        width = len(prefix)

        def keep(position: int) -> bool:
            record = self._records[self._at[position]]
            return (record.item.namespace[:width] == prefix and not record.expired(now)
                    and passes(record.item.value, found))
        return keep

    def _newest_first(self, prefix: Namespace) -> Iterator[int]:
        """Positions of the items under ``prefix``, most recently written first."""
        width = len(prefix)
        within = [reversed(positions) for namespace, positions in self._namespaces.items()
                  if namespace[:width] == prefix]
        return heapq.merge(*within, reverse=True)

    def search(self, namespace_prefix: Namespace, *, query: str | None = None,
               filter: Mapping[str, Any] | None = None, limit: int = 10, offset: int = 0,
               refresh_ttl: bool = True) -> list[StoredItem]:
        """Items under the prefix that pass ``filter``, ranked by ``query``; see ``ItemStore.search``."""
        prefix, found = check_namespace(namespace_prefix), conditions(filter)
        check_page(limit, offset)
        wanted = query_vector(self._embedder, query)
        with self._lock:
            self._check_open()
            if limit == 0:
                return []
            now = self._clock()
            keep = self._keeps(prefix, found, now)
            if query:
                ranked = self._ranked(query, wanted, prefix, keep, offset + limit)[offset:]
                return [self._returned(self._records[self._at[position]], now, refresh_ttl, score)
                        for score, position in ranked]
            kept = (position for position in self._newest_first(prefix) if keep(position))
            page = [self._records[self._at[position]] for position in islice(kept, offset + limit)]
            return [self._returned(record, now, refresh_ttl) for record in page[offset:]]

    def _ranked(self, query: str, wanted: Vector | None, prefix: Namespace, keep: Callable[[int], bool],
                k: int) -> list[tuple[float, int]]:
        """The ``k`` best (score, position) in scope: BM25 from the postings, fused with the
        vector channel when there is a query vector."""
        self._postings.keep = keep
        try:
            lexical = impact_search(self._postings, query, k, False)
        finally:
            self._postings.keep = lambda position: True
        return fused(lexical, wanted, self._vectors, prefix, k, self._floor,
                     lambda positions: self._kept_vectors(positions, keep))

    def _kept_vectors(self, positions: list[int], keep: Callable[[int], bool]) -> dict[int, Vector]:
        """The vectors of those of ``positions`` that ``keep`` keeps."""
        records = (self._records[self._at[position]] for position in positions if keep(position))
        return {record.position: record.vector for record in records if record.vector is not None}

    def list_namespaces(self, *, prefix: Namespace | None = None, suffix: Namespace | None = None,
                        max_depth: int | None = None, limit: int = 100,
                        offset: int = 0) -> list[Namespace]:
        """Namespaces holding live items; see ``ItemStore.list_namespaces``."""
        check_listing(prefix, suffix, max_depth, limit, offset)
        with self._lock:
            self._check_open()
            now = self._clock()
            holding = (namespace for namespace, positions in self._namespaces.items()
                       if any(not self._records[(namespace, key)].expired(now)
                              for key in positions.values()))
            return listed(holding, prefix, suffix, max_depth, limit, offset)

    def sweep(self) -> int:
        """Delete every expired item now; how many were deleted."""
        with self._lock:
            self._check_open()
            now, swept = self._clock(), 0
            while self._expiries and self._expiries[0][0] <= now:
                expires_at, position = heapq.heappop(self._expiries)
                address = self._at.get(position)
                record = self._records.get(address) if address else None
                if record is not None and record.item.expires_at == expires_at:
                    self._remove(record)
                    swept += 1
            return swept

    def close(self) -> None:
        """Drop every item; later calls raise ``ItemStoreClosedError``."""
        with self._lock:
            self._closed = True
            self._records.clear()
            self._at.clear()
            self._namespaces.clear()
            self._postings = _ItemPostings()
            self._vectors = VectorIndex()
            self._expiries = []


def open_inprocess_items(location: str, kind: str, *, embedder: Embedder | None = None) -> InMemoryItemStore:
    """Open a fresh in-process item store for the URI ``memory:`` (which takes no location), its
    ``query`` search adding the vector channel when given an ``embedder``."""
    if kind != "items":
        raise ConfigurationError(f"grapharc.memory.longterm opens items, not {kind!r}")
    if location:
        raise ConfigurationError(
            f"store URI 'memory:{location}' has a location, but memory: takes none",
            hint="use 'memory:' for the in-process store, or 'sqlite:PATH' to keep items on disk")
    return InMemoryItemStore(embedder=embedder)
