"""``SQLiteItemStore``: the long-term store's items in one SQLite file, shared between processes.

An item is a row of ``items`` (``seq``, the rowid SQLite gives a new row above every one it gave before,
orders rows by their last write: a write deletes the old row and inserts the new one,
keeping ``created_at``); times are microseconds
since the epoch, UTC. Search and expiry run in SQL: a search's scope (namespace prefix,
not expired, ``filter``) is a ``WHERE`` expression (``item_filters``); without a query it
pages with ``ORDER BY seq DESC``, and with one the memory plane's impact walk reads the
item postings (``item_postings``) and asks SQL which offered items are in scope, so a
query reads about ``offset + limit`` items rather than every match (the claim store ranks
the same way). The file is in WAL mode with ``synchronous=FULL``, and each write is one
``BEGIN IMMEDIATE`` transaction, so another process opening the file sees every committed
item. A read that refreshes a time to live writes the new expiry in a second transaction.
Given an ``Embedder``, a write keeps the item's vector in ``items.vector`` (made before the write
lock is taken) and ``query`` search adds the vector channel (``longterm.vectors``), through a
``VectorIndex`` of the file's vectors that ``item_vectors`` keeps current. Schema version 2 added
that column; version 3 made ``seq`` ``AUTOINCREMENT``, so a new row never takes the ``seq`` of
one deleted before it (which the index relies on). An older file is brought to version 3 when
opened.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from grapharc.memory.claims import durable_store_path
from grapharc.memory.impact_walk import impact_search
from grapharc.memory.longterm.contracts import (
    Clock,
    IndexFields,
    ItemStoreClosedError,
    ItemStoreError,
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
from grapharc.memory.longterm.filters import conditions
from grapharc.memory.longterm.namespaces import check_listing, listed
from grapharc.memory.longterm.texts import term_counts
from grapharc.memory.longterm.vector_search import fused
from grapharc.memory.longterm.vectors import SIMILARITY_FLOOR, item_vector, packed, query_vector
from grapharc.memory.retrieval import Embedder
from grapharc.memory.sqlite import item_postings
from grapharc.memory.sqlite.database import (
    IN_JSON_LIST,
    SQLiteFileStore,
    json_list,
    read_through_memory_map,
    record_version,
    snapshot,
    use_wal,
)
from grapharc.memory.sqlite.item_filters import (
    decode_namespace,
    encode_namespace,
    live_clause,
    prefix_clause,
    register_functions,
    scope_clause,
)
from grapharc.memory.sqlite.item_vectors import VectorCache, admitted

SCHEMA_COMPONENT = "items"
SCHEMA_VERSION = 3
_ITEMS = """CREATE TABLE {name} (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        namespace TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        expires_at INTEGER,
        ttl_minutes REAL,
        terms TEXT NOT NULL,
        length INTEGER NOT NULL,
        vector BLOB,
        UNIQUE (namespace, key)
    )"""
_BY_EXPIRY = "CREATE INDEX items_by_expiry ON items (expires_at) WHERE expires_at IS NOT NULL"
_SCHEMA = (_ITEMS.format(name="items"), _BY_EXPIRY, *item_postings.SCHEMA)

BROAD_PREFIX = 2_000
_COLUMNS = "seq, namespace, key, value, created_at, updated_at, expires_at, ttl_minutes"
_ALL = f"{_COLUMNS}, terms, length, vector"
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def to_micros(moment: datetime) -> int:
    """A time as whole microseconds since the epoch."""
    return (moment - EPOCH) // _MICROSECOND


def from_micros(micros: int) -> datetime:
    """The UTC time ``micros`` microseconds after the epoch."""
    return EPOCH + timedelta(microseconds=micros)


def _broad(cursor: sqlite3.Cursor, prefix: Namespace) -> bool:
    """Whether more than ``BROAD_PREFIX`` items lie under ``prefix``. Then a search without a
    query reads the table newest first and stops at its page, rather than read every item under
    the prefix through the namespace index and sort them (at 100k items under one prefix, 0.4
    against 77 ms); under a narrow prefix the index is the shorter way."""
    narrowed, parameters = prefix_clause(prefix)
    return bool(cursor.execute(
        f"SELECT count(*) > ? FROM (SELECT 1 FROM items WHERE {narrowed} LIMIT ?)",  # noqa: S608 -- identifiers are GraphARC's own constants; values are bound
        (BROAD_PREFIX, *parameters, BROAD_PREFIX + 1)).fetchone()[0])


def _upgrade(cursor: sqlite3.Cursor) -> None:
    """Bring a version 1 or 2 ``items`` table to version 3: the ``vector`` column (version 2) and
    ``seq`` never used twice (``AUTOINCREMENT``: version 3), by copying it into a new table."""
    if "vector" not in {column for _, column, *_ in cursor.execute("PRAGMA table_info(items)")}:
        cursor.execute("ALTER TABLE items ADD COLUMN vector BLOB")
    cursor.execute(_ITEMS.format(name="items_upgraded"))
    cursor.execute(f"INSERT INTO items_upgraded ({_ALL}) SELECT {_ALL} FROM items")  # noqa: S608 -- identifiers are GraphARC's own constants
    cursor.execute("DROP TABLE items")
    cursor.execute("ALTER TABLE items_upgraded RENAME TO items")
    cursor.execute(_BY_EXPIRY)


def _stored(row: tuple[Any, ...], score: float | None = None) -> StoredItem:
    _, namespace, key, value, created, updated, expires, ttl = row
    return StoredItem(decode_namespace(namespace), key, json.loads(value), from_micros(created),
                      from_micros(updated), None if expires is None else from_micros(expires), ttl, score)


class SQLiteItemStore(SQLiteFileStore):
    """A durable ``ItemStore`` in one SQLite file; several processes may share the file."""

    noun = "item store"
    closed_error = ItemStoreClosedError

    def __init__(self, path: str | Path, *, clock: Clock = utc_now, embedder: Embedder | None = None,
                 similarity_floor: float = SIMILARITY_FLOOR) -> None:
        super().__init__(path)
        self._clock = clock
        self._embedder = embedder
        self._floor = similarity_floor
        self._vectors = VectorCache()
        try:
            self._connect()
            connection = self._open_connection()
            use_wal(connection, f"item store {str(self.path)!r}", ItemStoreError)
            read_through_memory_map(connection)
            register_functions(connection)
            with self._transaction() as cursor:
                if self._create_or_check(cursor, SCHEMA_COMPONENT, SCHEMA_VERSION, _SCHEMA, ItemStoreError,
                                         migratable=(1, 2)):
                    _upgrade(cursor)
                    record_version(cursor, SCHEMA_COMPONENT, SCHEMA_VERSION)
        except sqlite3.Error as error:
            self.close()
            raise ItemStoreError(f"cannot open item store {str(self.path)!r}: {error}",
                                 hint="give the path of a SQLite file (it is created if missing) "
                                      "in an existing, writable directory") from error
        except ItemStoreError:
            self.close()
            raise

    def _now(self) -> int:
        return to_micros(self._clock())

    def _remove(self, cursor: sqlite3.Cursor, seq: int, terms: str, length: int) -> None:
        item_postings.unindex_item(cursor, seq, terms, length)
        cursor.execute("DELETE FROM items WHERE seq = ?", (seq,))
        self._vectors.writes += 1

    def put(self, namespace: Namespace, key: str, value: Mapping[str, Any], *,
            index: IndexFields = None, ttl_minutes: float | None = None) -> None:
        """Store ``value`` at (namespace, key); see ``ItemStore.put``."""
        namespace, key = check_namespace(namespace, for_write=True), check_key(key)
        encoded, index, ttl_minutes = encode_value(value), check_index(index), check_ttl(ttl_minutes)
        decoded = json.loads(encoded)
        frequencies, length = term_counts(decoded, index)
        terms = json.dumps(frequencies, ensure_ascii=False, separators=(",", ":"))
        vector = packed(item_vector(self._embedder, decoded, index))
        stored_namespace = encode_namespace(namespace)
        with self._lock, self._transaction() as cursor:
            moment = self._clock()
            now = to_micros(moment)
            earlier = cursor.execute(
                "SELECT seq, terms, length, created_at, expires_at FROM items "
                "WHERE namespace = ? AND key = ?",
                (stored_namespace, key)).fetchone()
            created = now
            if earlier is not None:
                seq, old_terms, old_length, old_created, old_expiry = earlier
                if old_expiry is None or old_expiry > now:
                    created = old_created
                self._remove(cursor, seq, old_terms, old_length)
            expires = expiry(moment, ttl_minutes)
            cursor.execute(
                "INSERT INTO items (namespace, key, value, created_at, updated_at, expires_at, "
                "ttl_minutes, terms, length, vector) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (stored_namespace, key, encoded, created, now,
                 None if expires is None else to_micros(expires), ttl_minutes, terms, length, vector))
            assert cursor.lastrowid is not None  # noqa: S101 -- narrows the type: an INSERT always has a rowid
            item_postings.index_item(cursor, cursor.lastrowid, terms, length)
            self._vectors.writes += 1

    def _refresh(self, rows: list[tuple[Any, ...]], now: int) -> list[tuple[Any, ...]]:
        """Restart the time to live of the rows that have one; the rows as refreshed."""
        expiring = [row for row in rows if row[7] is not None]
        if not expiring:
            return rows
        with self._transaction() as cursor:
            cursor.execute(f"UPDATE items SET expires_at = ? + CAST(ttl_minutes * 60000000 AS INTEGER) "  # noqa: S608 -- identifiers are GraphARC's own constants; values are bound
                           f"WHERE seq {IN_JSON_LIST} AND ttl_minutes IS NOT NULL",
                           (now, json_list(row[0] for row in expiring)))
        return [row if row[7] is None else (*row[:6], now + int(row[7] * 60_000_000), row[7])
                for row in rows]

    def get(self, namespace: Namespace, key: str, *, refresh_ttl: bool = True) -> StoredItem | None:
        """The item at (namespace, key), or None; see ``ItemStore.get``."""
        namespace, key = check_namespace(namespace), check_key(key)
        with self._lock:
            now = self._now()
            live, parameters = live_clause(now)
            row = self._open_connection().execute(
                f"SELECT {_COLUMNS} FROM items WHERE namespace = ? AND key = ? AND {live}",  # noqa: S608 -- identifiers are GraphARC's own constants; values are bound
                (encode_namespace(namespace), key, *parameters)).fetchone()
            if row is None:
                return None
            return _stored(self._refresh([row], now)[0] if refresh_ttl else row)

    def delete(self, namespace: Namespace, key: str) -> None:
        """Remove the item at (namespace, key), if any."""
        namespace, key = check_namespace(namespace), check_key(key)
        with self._lock, self._transaction() as cursor:
            found = cursor.execute("SELECT seq, terms, length FROM items WHERE namespace = ? AND key = ?",
                                   (encode_namespace(namespace), key)).fetchone()
            if found is not None:
                self._remove(cursor, *found)

    def search(self, namespace_prefix: Namespace, *, query: str | None = None,
               filter: Mapping[str, Any] | None = None, limit: int = 10, offset: int = 0,
               refresh_ttl: bool = True) -> list[StoredItem]:
        """Items under the prefix that pass ``filter``, ranked by ``query``; see ``ItemStore.search``."""
        prefix, found = check_namespace(namespace_prefix), conditions(filter)
        check_page(limit, offset)
        wanted = query_vector(self._embedder, query) if limit else None
        with self._lock:
            now = self._now()
            scope, parameters = scope_clause(prefix, found, now)
            if limit == 0:
                return []
            with snapshot(self._open_connection()) as cursor:
                if not query:
                    table = "items NOT INDEXED" if _broad(cursor, prefix) else "items"
                    rows = cursor.execute(
                        f"SELECT {_COLUMNS} FROM {table} WHERE {scope} ORDER BY seq DESC LIMIT ? OFFSET ?",  # noqa: S608 -- the scope is built by item_filters from GraphARC's own constants; values are bound
                        (*parameters, limit, offset)).fetchall()
                    scores: dict[int, float | None] = {row[0]: None for row in rows}
                else:
                    source = item_postings.SQLiteItemPostings(cursor, scope, parameters)
                    lexical = impact_search(source, query, offset + limit, False)
                    ranked = (lexical if wanted is None else fused(
                        lexical, wanted, self._vectors.index(cursor), prefix, offset + limit, self._floor,
                        admitted(cursor, scope, parameters)))[offset:]
                    scores = {seq: score for score, seq in ranked}
                    by_seq = {row[0]: row for row in cursor.execute(
                        f"SELECT {_COLUMNS} FROM items WHERE seq {IN_JSON_LIST}",  # noqa: S608 -- identifiers are GraphARC's own constants; values are bound
                        (json_list(scores),))}
                    rows = [by_seq[seq] for seq in scores]
            if refresh_ttl:
                rows = self._refresh(rows, now)
            return [_stored(row, scores[row[0]]) for row in rows]

    def list_namespaces(self, *, prefix: Namespace | None = None, suffix: Namespace | None = None,
                        max_depth: int | None = None, limit: int = 100,
                        offset: int = 0) -> list[Namespace]:
        """Namespaces holding live items; see ``ItemStore.list_namespaces``. SQL narrows them by
        the prefix's labels before its first wildcard; the patterns are matched on the rest."""
        check_listing(prefix, suffix, max_depth, limit, offset)
        literal = tuple(prefix or ())
        if "*" in literal:
            literal = literal[:literal.index("*")]
        narrowed, narrowing = prefix_clause(literal)
        with self._lock:
            live, parameters = live_clause(self._now())
            texts = self._open_connection().execute(
                f"SELECT DISTINCT namespace FROM items WHERE {narrowed} AND {live}",  # noqa: S608 -- identifiers are GraphARC's own constants; values are bound
                (*narrowing, *parameters)).fetchall()
        return listed((decode_namespace(text) for (text,) in texts), prefix, suffix, max_depth,
                      limit, offset)

    def sweep(self) -> int:
        """Delete every expired item now; how many were deleted."""
        with self._lock, self._transaction() as cursor:
            expired = cursor.execute("SELECT seq, terms, length FROM items WHERE expires_at <= ?",
                                     (self._now(),)).fetchall()
            for seq, terms, length in expired:
                self._remove(cursor, seq, terms, length)
            return len(expired)


def open_item_store(location: str, kind: str, *, embedder: Embedder | None = None) -> SQLiteItemStore:
    """Open the item store for the URI ``sqlite:<location>``, where location is a file path, with
    the vector channel when given an ``embedder``."""
    path = durable_store_path("sqlite", "grapharc-memory-sqlite", location, kind,
                              noun="file", example="items.db", serves="items")
    return SQLiteItemStore(path, embedder=embedder)
