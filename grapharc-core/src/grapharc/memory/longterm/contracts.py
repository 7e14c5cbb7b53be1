"""The ``ItemStore`` contract: what a backend of the long-term store keeps and answers.

An item is a JSON object under a namespace (a tuple of labels) and a key, with
the times it was created and last written and, when it has a time to live, when
it expires. ``GraphARCStore`` (``grapharc.memory.longterm.store``) serves LangGraph's
``BaseStore`` over any ``ItemStore``; each backend answers ``search`` (namespace
prefix, ``filter``, ranked text ``query``, ``limit``/``offset``) and expiry itself, so
a SQL backend does both in the database. Methods are synchronous; the async side of
``GraphARCStore`` runs them in GraphARC's store threads. The checks every backend
makes on its input are here, so they refuse the same things with the same errors.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, Protocol, runtime_checkable

from langgraph.store.base import InvalidNamespaceError

from grapharc.errors import GraphARCError

Namespace = tuple[str, ...]
IndexFields = Literal[False] | Sequence[str] | None
"""What of a value ``query`` search reads: ``None`` every string in it, a list of LangGraph
field paths (``"title"``, ``"notes[*].text"``), or ``False`` for nothing."""
Clock = Callable[[], datetime]
"""The time now, timezone-aware; backends take one so tests can move it."""

def utc_now() -> datetime:
    """The current time in UTC: every backend's default clock."""
    return datetime.now(UTC)


class ItemStoreError(GraphARCError):
    """Something a long-term store refused or could not do."""


class InvalidItemNamespaceError(ItemStoreError, InvalidNamespaceError):
    """A namespace LangGraph's rules refuse (an ``InvalidNamespaceError`` too, as LangGraph raises)."""


class InvalidItemError(ItemStoreError, ValueError):
    """A key, value or time to live that cannot be stored."""


class InvalidItemSearchError(ItemStoreError, ValueError):
    """A search, filter or namespace listing that cannot be answered as asked."""


class ItemStoreClosedError(ItemStoreError):
    """The store was used after ``close()``."""

    def __init__(self, store: str) -> None:
        super().__init__(f"{store} is closed", hint="open the store again")


@dataclass(frozen=True)
class StoredItem:
    """An item as a backend returns it; ``score`` is its text-search score, or ``None``."""

    namespace: Namespace
    key: str
    value: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    expires_at: datetime | None = None
    ttl_minutes: float | None = None
    score: float | None = None


@runtime_checkable
class ItemStore(Protocol):
    """A backend of the long-term store; ``grapharc.testing.item_store_kit`` is its contract.

    Expired items are gone from every answer as soon as they expire, swept or not.
    """

    def put(self, namespace: Namespace, key: str, value: Mapping[str, Any], *,
            index: IndexFields = None, ttl_minutes: float | None = None) -> None:
        """Store ``value`` (a JSON object) at (namespace, key), replacing what was there but
        keeping its ``created_at``; ``index`` says what text search reads of it; with
        ``ttl_minutes`` it expires that long after its last write or refreshing read."""
        ...

    def get(self, namespace: Namespace, key: str, *, refresh_ttl: bool = True) -> StoredItem | None:
        """The item at (namespace, key), or ``None``; a read restarts its time to live
        unless ``refresh_ttl`` is false."""
        ...

    def delete(self, namespace: Namespace, key: str) -> None:
        """Remove the item at (namespace, key); nothing happens if there is none."""
        ...

    def search(self, namespace_prefix: Namespace, *, query: str | None = None,
               filter: Mapping[str, Any] | None = None, limit: int = 10, offset: int = 0,
               refresh_ttl: bool = True) -> list[StoredItem]:
        """Items under ``namespace_prefix`` whose value passes ``filter``
        (``grapharc.memory.longterm.filters``). Without ``query``: most recently written
        first, ``score`` ``None``. With ``query``: only items whose indexed text holds a query
        term, best BM25 score first (ties: least recently written first), ``score`` set.
        Skips ``offset`` items, returns at most ``limit``; refreshes what it returns."""
        ...

    def list_namespaces(self, *, prefix: Namespace | None = None, suffix: Namespace | None = None,
                        max_depth: int | None = None, limit: int = 100,
                        offset: int = 0) -> list[Namespace]:
        """The namespaces holding items, matching ``prefix`` and ``suffix`` (``"*"`` matches any
        label), cut to ``max_depth`` labels and deduplicated, in sorted order, paged."""
        ...

    def sweep(self) -> int:
        """Delete every expired item now; how many were deleted."""
        ...

    def close(self) -> None:
        """Release the store's resources; later calls raise ``ItemStoreClosedError``."""
        ...


def check_namespace(namespace: Namespace, *, for_write: bool = False) -> Namespace:
    """``namespace`` as a tuple, if LangGraph's label rules allow it: strings, not empty, no
    ``.`` and no NUL; one written to is not empty. (The reserved root ``langgraph`` is refused by
    ``BaseStore.put``, LangGraph's public method, not here: LangGraph's own stores take a
    ``PutOp`` under it handed to ``batch``, and so does every ``ItemStore``.)"""
    if not isinstance(namespace, tuple | list):
        raise InvalidItemNamespaceError(f"namespace {namespace!r} is not a tuple of labels")
    labels = tuple(namespace)
    for label in labels:
        if not isinstance(label, str) or not label or "." in label or "\x00" in label:
            raise InvalidItemNamespaceError(
                f"namespace {labels!r} has the label {label!r}",
                hint="each label is a non-empty string without '.' or NUL")
    if for_write and not labels:
        raise InvalidItemNamespaceError("an item needs a namespace of at least one label")
    return labels


def check_key(key: str) -> str:
    """``key`` if it is a non-empty string."""
    if not isinstance(key, str) or not key:
        raise InvalidItemError(f"item key {key!r} is not a non-empty string")
    return key


def _non_string_key(value: Any) -> Any:
    """A key in ``value``'s objects that is not a string (JSON would turn it into one), or None."""
    if isinstance(value, Mapping):
        for key, inner in value.items():
            if not isinstance(key, str):
                return key
            found = _non_string_key(inner)
            if found is not None:
                return found
    elif isinstance(value, list | tuple):
        for inner in value:
            found = _non_string_key(inner)
            if found is not None:
                return found
    return None


def encode_value(value: Mapping[str, Any]) -> str:
    """``value`` as JSON text, if it is a JSON object (string keys, JSON values, finite numbers)."""
    if not isinstance(value, Mapping):
        raise InvalidItemError(f"an item's value must be a JSON object, not {type(value).__name__}")
    key = _non_string_key(value)
    if key is not None:
        raise InvalidItemError(f"an item's value has the key {key!r}, which is not a string")
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise InvalidItemError(f"an item's value is not JSON: {exc}",
                               hint="store strings, numbers, booleans, null, lists and objects") from exc


def check_ttl(ttl_minutes: float | None) -> float | None:
    """``ttl_minutes`` if it is ``None`` or a positive, finite number of minutes."""
    if ttl_minutes is None:
        return None
    if isinstance(ttl_minutes, bool) or not isinstance(ttl_minutes, int | float) \
            or not math.isfinite(ttl_minutes) or ttl_minutes <= 0:
        raise InvalidItemError(f"time to live {ttl_minutes!r} is not a positive number of minutes")
    return float(ttl_minutes)


def expiry(now: datetime, ttl_minutes: float | None) -> datetime | None:
    """When an item written or refreshed ``now`` with ``ttl_minutes`` to live expires."""
    return None if ttl_minutes is None else now + timedelta(minutes=ttl_minutes)


MAX_PAGE_NUMBER = 2**62 - 1
"""The largest ``limit`` or ``offset`` a store takes: their sum still fits the signed 64-bit integers
SQLite and PostgreSQL bind (and ``itertools.islice``)."""


def check_page(limit: int, offset: int) -> None:
    """Refuse a negative or too large ``limit`` or ``offset``, naming it."""
    for name, number in (("limit", limit), ("offset", offset)):
        if isinstance(number, bool) or not isinstance(number, int) or number < 0:
            raise InvalidItemSearchError(f"{name} {number!r} is not a whole number >= 0")
        if number > MAX_PAGE_NUMBER:
            raise InvalidItemSearchError(
                f"{name} {number} is above the largest a store takes, {MAX_PAGE_NUMBER}")


def check_index(index: IndexFields) -> IndexFields:
    """``index`` if it is ``None``, ``False`` or a list of field paths (strings)."""
    if index is None or index is False:
        return index
    if isinstance(index, str) or not isinstance(index, Sequence) \
            or not all(isinstance(path, str) and path for path in index):
        raise InvalidItemError(f"index {index!r} is neither False nor a list of field paths")
    return list(index)
