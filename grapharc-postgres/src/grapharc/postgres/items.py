"""The PostgreSQL ``ItemStore``: the ``items`` kind of ``postgres://``, the long-term store several
machines share (``grapharc_store_items``, ``grapharc_store_terms``, ``grapharc_store_totals``:
migration 8).

Search, filter (``grapharc.postgres.item_filters``) and expiry run in SQL. ``query`` ranks with
BM25 computed in SQL over postings this store writes (each item's terms and their counts, split
by the memory plane's ``grapharc.memory.terms`` through ``longterm.texts``), with the memory
plane's formula and constants (``grapharc.memory.bm25f``: k1 1.2, b 0.75, idf floored, statistics
over every stored item, expired or not until swept). PostgreSQL's own full text search
(``ts_rank``) was not taken: its parser, stop words and stemming split text differently from the
memory plane, so one query would find and rank other items here than in ``memory:`` or ``sqlite:``,
and ``ts_rank`` is not BM25 (no idf). The store's document count and term total are one row
(``grapharc_store_totals``) every write updates in its transaction, so a search reads them at once.

Times come from the store's ``clock`` (tests move it); a namespace is kept as its labels joined by
``.`` with a final ``.`` (labels hold no period), so a prefix is a ``LIKE 'a.b.%'`` an index serves.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from grapharc.memory.bm25f import K1, B, idf
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
from grapharc.memory.longterm.namespaces import WILDCARD, check_listing, listed
from grapharc.memory.longterm.texts import term_counts
from grapharc.memory.terms import query_terms
from grapharc.postgres.connect import conninfo
from grapharc.postgres.database import Conn, open_database
from grapharc.postgres.item_filters import where
from grapharc.stores.masking import masked

_COLUMNS = "id, path, key, value, created_at, updated_at, expires_at, ttl_minutes"
_LIVE = "(expires_at IS NULL OR expires_at > %s)"
WRITE_ATTEMPTS = 3


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

    def __init__(self, uri: str, *, clock: Clock = utc_now) -> None:
        self.uri = uri
        self._clock = clock
        self._closed = False
        self._database, self._give_back = open_database(uri, self)

    def _transaction(self) -> Any:
        if self._closed:
            raise ItemStoreClosedError(f"the PostgreSQL item store {masked(self.uri)}")
        return self._database.transaction()

    def put(self, namespace: Namespace, key: str, value: Mapping[str, Any], *,
            index: IndexFields = None, ttl_minutes: float | None = None) -> None:
        """Store ``value`` at (namespace, key), with its terms; see ``ItemStore.put``."""
        namespace, key = check_namespace(namespace, for_write=True), check_key(key)
        encoded, index, ttl_minutes = encode_value(value), check_index(index), check_ttl(ttl_minutes)
        frequencies, length = term_counts(json.loads(encoded), index)
        with self._transaction() as conn:
            now = self._clock()
            row = {"path": path_of(namespace), "key": key, "value": encoded, "now": now,
                   "expires": expiry(now, ttl_minutes), "ttl": ttl_minutes, "terms": length}
            item, change = self._written(conn, row)
            conn.execute("UPDATE grapharc_store_totals SET documents = documents + %s, terms = terms + %s",
                         change)
            if frequencies:
                conn.execute("INSERT INTO grapharc_store_terms (term, item, frequency) "
                             "SELECT unnest(%s::text[]), %s, unnest(%s::float8[])",
                             (list(frequencies), item, list(frequencies.values())))

    def _written(self, conn: Conn, row: dict[str, Any]) -> tuple[int, tuple[int, int]]:
        """Insert the item ``row`` names, or replace the one there (locked first), keeping its
        ``created_at`` unless it had expired; its id and the change to the totals. A row another
        writer deletes between the insert meeting it and the lock is inserted again."""
        for _ in range(WRITE_ATTEMPTS):
            made = conn.execute(
                "INSERT INTO grapharc_store_items (path, key, value, created_at, updated_at, expires_at, "
                "ttl_minutes, terms, written) VALUES (%(path)s, %(key)s, %(value)s::jsonb, %(now)s, %(now)s, "
                "%(expires)s, %(ttl)s, %(terms)s, nextval('grapharc_store_writes')) "
                "ON CONFLICT (path, key) DO NOTHING RETURNING id", row).fetchone()
            if made is not None:
                return made["id"], (1, row["terms"])
            old = conn.execute("SELECT id, terms, expires_at FROM grapharc_store_items "
                               "WHERE path = %(path)s AND key = %(key)s FOR UPDATE", row).fetchone()
            if old is not None:
                break
        else:
            raise ItemStoreError(f"the PostgreSQL item store {masked(self.uri)} could not write "
                                 f"{row['key']!r}: other writers kept replacing and deleting it",
                                 hint="write it again")
        alive = old["expires_at"] is None or old["expires_at"] > row["now"]
        conn.execute(
            "UPDATE grapharc_store_items SET value = %(value)s::jsonb, updated_at = %(now)s, "
            "created_at = CASE WHEN %(alive)s THEN created_at ELSE %(now)s END, expires_at = %(expires)s, "
            "ttl_minutes = %(ttl)s, terms = %(terms)s, written = nextval('grapharc_store_writes') "
            "WHERE id = %(id)s", {**row, "alive": alive, "id": old["id"]})
        conn.execute("DELETE FROM grapharc_store_terms WHERE item = %s", (old["id"],))
        return old["id"], (0, row["terms"] - old["terms"])

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
        """Remove the item at (namespace, key), if any, and its terms."""
        namespace, key = check_namespace(namespace), check_key(key)
        with self._transaction() as conn:
            gone = conn.execute("DELETE FROM grapharc_store_items WHERE path = %s AND key = %s "
                                "RETURNING terms", (path_of(namespace), key)).fetchall()
            self._forget(conn, gone)

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
        wanted = query_terms(query) if query else []
        if query and not wanted:
            return []
        with self._transaction() as conn:
            now = self._clock()
            scope = f"path LIKE %s AND {_LIVE} AND {condition}"
            params = [_under(prefix), now, *bound]
            if not wanted:
                rows = conn.execute(f"SELECT {_COLUMNS}, NULL::float8 AS score "  # noqa: S608
                                    f"FROM grapharc_store_items WHERE {scope} "
                                    "ORDER BY written DESC LIMIT %s OFFSET %s",
                                    [*params, limit, offset]).fetchall()
            else:
                rows = self._ranked(conn, wanted, scope, params, limit, offset)
            return self._returned(conn, rows, now, refresh_ttl)

    def _ranked(self, conn: Conn, wanted: list[str], scope: str, params: list[Any], limit: int,
                offset: int) -> list[dict[str, Any]]:
        """The rows in ``scope`` holding a term of ``wanted``, best BM25 score first (ties: least
        recently written first), with their ``score``."""
        totals = conn.execute("SELECT documents, terms FROM grapharc_store_totals").fetchone()
        documents, total_terms = (totals["documents"], totals["terms"]) if totals else (0, 0)
        if not documents:
            return []
        counts = {row["term"]: row["n"] for row in conn.execute(
            "SELECT term, count(*) AS n FROM grapharc_store_terms WHERE term = ANY(%s) GROUP BY term",
            (wanted,))}
        found = [term for term in wanted if counts.get(term)]
        if not found:
            return []
        idfs = [idf(documents, counts[term]) for term in found]
        average = total_terms / documents
        return conn.execute(
            f"SELECT {_COLUMNS}, ranked.score FROM ("  # noqa: S608
            "SELECT t.item, sum(asked.idf * (t.frequency * %s) / "
            "(t.frequency + %s * (1 - %s + %s * i.terms / %s))) AS score "
            "FROM unnest(%s::text[], %s::float8[]) AS asked(term, idf) "
            "JOIN grapharc_store_terms t ON t.term = asked.term "
            "JOIN grapharc_store_items i ON i.id = t.item "
            f"WHERE {scope} "
            "GROUP BY t.item) AS ranked JOIN grapharc_store_items ON id = ranked.item "
            "ORDER BY ranked.score DESC, written ASC LIMIT %s OFFSET %s",
            [K1 + 1.0, K1, B, B, average, found, idfs, *params, limit, offset]).fetchall()

    def _returned(self, conn: Conn, rows: list[dict[str, Any]], now: datetime,
                  refresh_ttl: bool) -> list[StoredItem]:
        """``rows`` as items, their time to live restarted ``now`` if ``refresh_ttl``."""
        refreshed = [row["id"] for row in rows if refresh_ttl and row["ttl_minutes"] is not None]
        if refreshed:
            conn.execute("UPDATE grapharc_store_items SET expires_at = %s + ttl_minutes * "
                         "interval '1 minute' WHERE id = ANY(%s)", (now, refreshed))
        return [StoredItem(_namespace(row["path"]), row["key"], row["value"], row["created_at"],
                           row["updated_at"],
                           expiry(now, row["ttl_minutes"]) if row["id"] in refreshed else row["expires_at"],
                           row["ttl_minutes"], row.get("score"))
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
        """Delete every expired item and its terms now; how many were deleted."""
        with self._transaction() as conn:
            gone = conn.execute("DELETE FROM grapharc_store_items WHERE expires_at <= %s RETURNING terms",
                                (self._clock(),)).fetchall()
            self._forget(conn, gone)
        return len(gone)

    @staticmethod
    def _forget(conn: Conn, gone: list[dict[str, Any]]) -> None:
        """Take deleted items (their ``terms`` rows) out of the totals."""
        if gone:
            conn.execute("UPDATE grapharc_store_totals SET documents = documents - %s, terms = terms - %s",
                         (len(gone), sum(row["terms"] for row in gone)))

    def close(self) -> None:
        """Give the database back (the last of its stores closes it); later calls are refused."""
        self._closed = True
        self._give_back()


def open_item_store(location: str, kind: str = "items") -> PostgresItemStore:
    """The store-hook factory behind ``postgres://`` and ``postgresql://`` for ``kind="items"``."""
    return PostgresItemStore(conninfo(location))
