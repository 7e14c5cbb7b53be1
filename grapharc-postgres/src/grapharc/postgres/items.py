"""The PostgreSQL ``ItemStore``: the ``items`` kind of ``postgres://``, the long-term store several
machines share (``grapharc_store_items`` with the postings, groups and totals of
``grapharc.postgres.item_postings``: migration 10).

Search, filter (``grapharc.postgres.item_filters``) and expiry run in SQL. ``query`` ranks with the
memory plane's BM25 (``grapharc.memory.bm25f``: k1 1.2, b 0.75, idf floored, statistics over every
stored item) inside PostgreSQL (``grapharc.postgres.item_ranking``), over impact-ordered postings
this store writes: two statements, the second scoring only the items that can still reach the top
``offset + limit``, not every item holding a term. Terms are split by ``grapharc.memory.terms``
(through ``longterm.texts``). PostgreSQL's own full text search (``ts_rank``) was not taken: its parser,
stop words and stemming split text differently from the memory plane, so one query would find and
rank other items here than in ``memory:`` or ``sqlite:``, and ``ts_rank`` is not BM25 (no idf).

Times come from the store's ``clock`` (tests move it); a namespace is kept as its labels joined by
``.`` with a final ``.`` (labels hold no period), so a prefix is a ``LIKE 'a.b.%'`` an index
serves. ``written`` numbers items by their last write (a sequence), so it orders a search without
a query, newest first, and breaks ties between equal scores, oldest first. Every write takes the
totals row's lock first (``item_postings``), so writes to one database run one at a time.
Given an ``Embedder``, a write keeps the item's vector in ``vector`` (migration 11; made before the
transaction begins) and ``query`` search adds the vector channel (``longterm.vectors``), through a
``VectorIndex`` of the table's vectors that ``item_vectors`` keeps current.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb

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
from grapharc.memory.longterm.filters import conditions
from grapharc.memory.longterm.namespaces import WILDCARD, check_listing, listed
from grapharc.memory.longterm.texts import term_counts
from grapharc.memory.longterm.vector_search import fused
from grapharc.memory.longterm.vectors import SIMILARITY_FLOOR, item_vector, packed, query_vector
from grapharc.memory.retrieval import Embedder
from grapharc.memory.terms import query_terms
from grapharc.postgres.connect import conninfo
from grapharc.postgres.database import Conn, open_database
from grapharc.postgres.item_filters import where
from grapharc.postgres.item_postings import index_item, lock_totals, unindex_item
from grapharc.postgres.item_ranking import rank
from grapharc.postgres.item_vectors import VectorCache, admitted
from grapharc.stores.masking import masked

_COLUMNS = "written, path, key, value, created_at, updated_at, expires_at, ttl_minutes"
_LIVE = "(expires_at IS NULL OR expires_at > %s)"


def path_of(namespace: Namespace) -> str:
    """How a namespace is kept: its labels joined by ``.``, ending with ``.``."""
    return "".join(f"{label}." for label in namespace)


def _namespace(path: str) -> Namespace:
    return tuple(path[:-1].split("."))


def _under(prefix: Namespace) -> str:
    """The LIKE pattern of every path under ``prefix`` (its own ``%``, ``_`` and ``\\`` escaped)."""
    escaped = path_of(prefix).replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped + "%"


class PostgresItemStore:
    """Long-term store items in the PostgreSQL database ``uri``; see ``ItemStore``."""

    def __init__(self, uri: str, *, clock: Clock = utc_now, embedder: Embedder | None = None,
                 similarity_floor: float = SIMILARITY_FLOOR) -> None:
        self.uri = uri
        self._clock = clock
        self._embedder = embedder
        self._floor = similarity_floor
        self._vectors = VectorCache(_namespace)
        self._closed = False
        self._database, self._give_back = open_database(uri, self)

    def _transaction(self) -> Any:
        if self._closed:
            raise ItemStoreClosedError(f"the PostgreSQL item store {masked(self.uri)}")
        return self._database.transaction()

    def put(self, namespace: Namespace, key: str, value: Mapping[str, Any], *,
            index: IndexFields = None, ttl_minutes: float | None = None) -> None:
        """Store ``value`` at (namespace, key), with its postings; see ``ItemStore.put``."""
        namespace, key = check_namespace(namespace, for_write=True), check_key(key)
        encoded, index, ttl_minutes = encode_value(value), check_index(index), check_ttl(ttl_minutes)
        decoded = json.loads(encoded)
        frequencies, length = term_counts(decoded, index)
        vector = packed(item_vector(self._embedder, decoded, index))
        with self._transaction() as conn:
            lock_totals(conn)
            now = self._clock()
            old = conn.execute("DELETE FROM grapharc_store_items WHERE path = %s AND key = %s "
                               "RETURNING written, created_at, expires_at, length, frequencies",
                               (path_of(namespace), key)).fetchone()
            created = now
            if old is not None:
                unindex_item(conn, old["written"], old["frequencies"], old["length"])
                if old["expires_at"] is None or old["expires_at"] > now:
                    created = old["created_at"]
            written = conn.execute(
                "INSERT INTO grapharc_store_items (written, path, key, value, created_at, updated_at, "
                "expires_at, ttl_minutes, length, frequencies, vector) VALUES "
                "(nextval('grapharc_store_writes'), %s, %s, %s::jsonb, %s, %s, %s, %s, %s, %s, %s) "
                "RETURNING written",
                (path_of(namespace), key, encoded, created, now, expiry(now, ttl_minutes), ttl_minutes,
                 length, Jsonb(frequencies), vector)).fetchall()[0]["written"]
            index_item(conn, written, frequencies, length)

    def get(self, namespace: Namespace, key: str, *, refresh_ttl: bool = True) -> StoredItem | None:
        """The live item at (namespace, key), or None; see ``ItemStore.get``."""
        namespace, key = check_namespace(namespace), check_key(key)
        with self._transaction() as conn:
            now = self._clock()
            found = conn.execute(f"SELECT {_COLUMNS} FROM grapharc_store_items "  # noqa: S608
                                 f"WHERE path = %s AND key = %s AND {_LIVE}",
                                 (path_of(namespace), key, now)).fetchall()
            items = self._returned(conn, found, now, refresh_ttl)
        return items[0] if items else None

    def delete(self, namespace: Namespace, key: str) -> None:
        """Remove the item at (namespace, key), if any, and its postings."""
        namespace, key = check_namespace(namespace), check_key(key)
        with self._transaction() as conn:
            lock_totals(conn)
            self._forget(conn, conn.execute(
                "DELETE FROM grapharc_store_items WHERE path = %s AND key = %s "
                "RETURNING written, length, frequencies", (path_of(namespace), key)).fetchall())

    def search(self, namespace_prefix: Namespace, *, query: str | None = None,
               filter: Mapping[str, Any] | None = None, limit: int = 10, offset: int = 0,
               refresh_ttl: bool = True) -> list[StoredItem]:
        """Live items under the prefix passing ``filter``, newest first or ranked by ``query``;
        see ``ItemStore.search``."""
        prefix = check_namespace(namespace_prefix)
        condition, bound = where(conditions(filter))
        check_page(limit, offset)
        if limit == 0:
            return []
        wanted = query_vector(self._embedder, query)
        with self._transaction() as conn:
            now = self._clock()
            scope = f"path LIKE %s AND {_LIVE} AND {condition}"
            params = [_under(prefix), now, *bound]
            if not query:
                rows = conn.execute(f"SELECT {_COLUMNS}, NULL::float8 AS score "  # noqa: S608
                                    f"FROM grapharc_store_items WHERE {scope} "
                                    "ORDER BY written DESC LIMIT %s OFFSET %s",
                                    [*params, limit, offset]).fetchall()
            else:
                lexical = rank(conn, query_terms(query), scope, params, offset + limit)
                with self._vectors.lock:
                    ranked = (lexical if wanted is None else fused(
                        lexical, wanted, self._vectors.index(conn), prefix, offset + limit, self._floor,
                        admitted(conn, scope, params)))[offset:]
                scores = {written: score for score, written in ranked}
                by_write = {row["written"]: row for row in conn.execute(
                    f"SELECT {_COLUMNS} FROM grapharc_store_items WHERE written = ANY(%s)",  # noqa: S608
                    (list(scores),))}
                rows = [{**by_write[written], "score": score} for written, score in scores.items()
                        if written in by_write]  # one deleted since it was ranked is gone
            return self._returned(conn, rows, now, refresh_ttl)

    def _returned(self, conn: Conn, rows: list[dict[str, Any]], now: datetime,
                  refresh_ttl: bool) -> list[StoredItem]:
        """``rows`` as items, their time to live restarted ``now`` if ``refresh_ttl``."""
        refreshed = [row["written"] for row in rows if refresh_ttl and row["ttl_minutes"] is not None]
        if refreshed:
            conn.execute("UPDATE grapharc_store_items SET expires_at = %s + ttl_minutes * "
                         "interval '1 minute' WHERE written = ANY(%s)", (now, refreshed))
        return [StoredItem(_namespace(row["path"]), row["key"], row["value"], row["created_at"],
                           row["updated_at"],
                           expiry(now, row["ttl_minutes"]) if row["written"] in refreshed
                           else row["expires_at"], row["ttl_minutes"], row.get("score"))
                for row in rows]

    def list_namespaces(self, *, prefix: Namespace | None = None, suffix: Namespace | None = None,
                        max_depth: int | None = None, limit: int = 100, offset: int = 0) -> list[Namespace]:
        """The namespaces of live items matching ``prefix`` and ``suffix``; see ``ItemStore``."""
        check_listing(prefix, suffix, max_depth, limit, offset)
        literal = tuple(prefix or ())
        if WILDCARD in literal:
            literal = literal[:literal.index(WILDCARD)]
        with self._transaction() as conn:
            paths = conn.execute(f"SELECT DISTINCT path FROM grapharc_store_items "  # noqa: S608
                                 f"WHERE path LIKE %s AND {_LIVE}",
                                 (_under(literal), self._clock())).fetchall()
        return listed((_namespace(row["path"]) for row in paths), prefix, suffix, max_depth, limit, offset)

    def sweep(self) -> int:
        """Delete every expired item and its postings now; how many were deleted."""
        with self._transaction() as conn:
            lock_totals(conn)
            gone = conn.execute("DELETE FROM grapharc_store_items WHERE expires_at <= %s "
                                "RETURNING written, length, frequencies", (self._clock(),)).fetchall()
            self._forget(conn, gone)
        return len(gone)

    @staticmethod
    def _forget(conn: Conn, gone: list[dict[str, Any]]) -> None:
        """Take deleted items' postings out of the index and the totals."""
        for row in gone:
            unindex_item(conn, row["written"], row["frequencies"], row["length"])

    def close(self) -> None:
        """Give the database back (the last of its stores closes it); later calls are refused."""
        self._closed = True
        self._give_back()


def open_item_store(location: str, kind: str = "items", *,
                    embedder: Embedder | None = None) -> PostgresItemStore:
    """The store-hook factory behind ``postgres://`` and ``postgresql://`` for ``kind="items"``, with
    the vector channel when given an ``embedder``."""
    return PostgresItemStore(conninfo(location), embedder=embedder)
