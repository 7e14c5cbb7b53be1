"""Impact-ordered postings of the long-term store's items, kept in step with every write.

Unlike the claims' append-only runs (``postings``), items are overwritten and deleted,
so their postings are one table keyed by (term, frequency, length, seq), each group of a
term one range of the key, read oldest first; ``item_groups`` counts each group's items
and ``item_totals`` the live items and their summed length, so BM25 statistics count the
items there are. A write removes the old version's rows and adds the new one's in the
item's own transaction (the item row's ``terms`` JSON says which rows it has).
``SQLiteItemPostings`` is ``impact_walk``'s ``PostingsSource`` over one cursor, inside a
read transaction; its ``superseded`` drops the positions outside the search's scope
(namespace, expiry, filter), asked of SQL a batch at a time.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from grapharc.memory.impact_walk import Group
from grapharc.memory.sqlite.database import IN_JSON_LIST, json_list

SCHEMA = (
    """CREATE TABLE item_postings (
        term TEXT NOT NULL,
        frequency REAL NOT NULL,
        length INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        PRIMARY KEY (term, frequency, length, seq)
    ) WITHOUT ROWID""",
    """CREATE TABLE item_groups (
        term TEXT NOT NULL,
        frequency REAL NOT NULL,
        length INTEGER NOT NULL,
        items INTEGER NOT NULL,
        PRIMARY KEY (term, frequency, length)
    ) WITHOUT ROWID""",
    "CREATE TABLE item_totals (items INTEGER NOT NULL, length INTEGER NOT NULL)",
    "INSERT INTO item_totals (items, length) VALUES (0, 0)",
)


def index_item(cursor: sqlite3.Cursor, seq: int, terms: str, length: int) -> None:
    """Add the postings, groups and totals of the item stored at ``seq`` with ``terms`` (its
    term counts as a JSON object) and ``length``."""
    cursor.execute("INSERT INTO item_postings (term, frequency, length, seq) "
                   "SELECT key, value, ?, ? FROM json_each(?)", (length, seq, terms))
    cursor.execute("INSERT INTO item_groups (term, frequency, length, items) "
                   "SELECT key, value, ?, 1 FROM json_each(?) WHERE 1 "
                   "ON CONFLICT (term, frequency, length) DO UPDATE SET items = items + 1",
                   (length, terms))
    cursor.execute("UPDATE item_totals SET items = items + 1, length = length + ?", (length,))


def unindex_item(cursor: sqlite3.Cursor, seq: int, terms: str, length: int) -> None:
    """Remove what ``index_item`` added for the item at ``seq``."""
    cursor.execute("DELETE FROM item_postings WHERE (term, frequency, length, seq) IN "
                   "(SELECT key, value, ?, ? FROM json_each(?))", (length, seq, terms))
    cursor.execute("UPDATE item_groups SET items = items - 1 WHERE (term, frequency, length) IN "
                   "(SELECT key, value, ? FROM json_each(?))", (length, terms))
    cursor.execute("DELETE FROM item_groups WHERE items = 0 AND term IN "
                   "(SELECT key FROM json_each(?))", (terms,))
    cursor.execute("UPDATE item_totals SET items = items - 1, length = length - ?", (length,))


class SQLiteItemPostings:
    """``impact_walk``'s ``PostingsSource`` over the item postings; positions are ``seq``.
    Positions outside ``scope`` (a ``WHERE`` expression over ``items`` and its parameters)
    count as superseded."""

    def __init__(self, cursor: sqlite3.Cursor, scope: str, parameters: Sequence[Any]) -> None:
        self._cursor = cursor
        self._scope = scope
        self._parameters = list(parameters)
        self._rows: dict[int, dict[str, float]] = {}

    def totals(self) -> tuple[int, int]:
        """Items indexed and the sum of their lengths."""
        items, length = self._cursor.execute("SELECT items, length FROM item_totals").fetchone()
        return int(items), int(length)

    def groups(self, terms: Sequence[str]) -> list[dict[Group, int]]:
        """For each term, its groups and their sizes."""
        found: dict[str, dict[Group, int]] = {term: {} for term in terms}
        for term, frequency, length, items in self._cursor.execute(
                f"SELECT term, frequency, length, items FROM item_groups WHERE term {IN_JSON_LIST}",  # noqa: S608 -- identifiers are GraphARC's own constants; values are bound
                (json.dumps(list(found)),)):
            found[term][(float(frequency), int(length))] = int(items)
        return [found[term] for term in terms]

    def members(self, term: str, group: Group, after: int, limit: int) -> list[int]:
        """Up to ``limit`` positions in the group above ``after``, ascending."""
        return [row[0] for row in self._cursor.execute(
            "SELECT seq FROM item_postings WHERE term = ? AND frequency = ? AND length = ? "
            "AND seq > ? ORDER BY seq LIMIT ?", (term, *group, after, limit))]

    def members_holding(self, term: str, group: Group, after: int,
                        others: Sequence[str]) -> list[int]:
        """Positions in the group above ``after`` holding any of ``others``, read from the group."""
        return [row[0] for row in self._cursor.execute(
            f"SELECT p.seq FROM item_postings AS p WHERE p.term = ? AND p.frequency = ? "  # noqa: S608 -- identifiers are GraphARC's own constants; values are bound
            f"AND p.length = ? AND p.seq > ? AND EXISTS (SELECT 1 FROM items AS i, json_each(i.terms) "
            f"AS t WHERE i.seq = p.seq AND t.key {IN_JSON_LIST}) ORDER BY p.seq",
            (term, *group, after, json.dumps(list(others))))]

    def members_among(self, term: str, group: Group, after: int,
                      others: Sequence[str]) -> list[int]:
        """The same positions, read from ``others``' postings."""
        return [row[0] for row in self._cursor.execute(
            f"SELECT DISTINCT o.seq FROM item_postings AS o WHERE o.term {IN_JSON_LIST} "  # noqa: S608 -- identifiers are GraphARC's own constants; values are bound
            f"AND o.seq > ? AND EXISTS (SELECT 1 FROM item_postings AS p WHERE p.term = ? "
            f"AND p.frequency = ? AND p.length = ? AND p.seq = o.seq) ORDER BY o.seq",
            (json.dumps(list(others)), after, term, *group))]

    def frequencies(self, positions: Sequence[int],
                    terms: Sequence[str]) -> dict[int, dict[str, float]]:
        """Each position's frequency of those of ``terms`` it holds, from its item's ``terms``."""
        unread = [position for position in positions if position not in self._rows]
        if unread:
            self._rows.update((seq, json.loads(counts)) for seq, counts in self._cursor.execute(
                f"SELECT seq, terms FROM items WHERE seq {IN_JSON_LIST}", (json_list(unread),)))  # noqa: S608 -- identifiers are GraphARC's own constants; values are bound
        held: dict[int, dict[str, float]] = {}
        for position in positions:
            counts = self._rows.get(position, {})
            found = {term: float(counts[term]) for term in terms if term in counts}
            if found:
                held[position] = found
        return held

    def superseded(self, positions: Sequence[int]) -> set[int]:
        """Those of ``positions`` outside the search's scope."""
        kept = {row[0] for row in self._cursor.execute(
            f"SELECT seq FROM items WHERE seq {IN_JSON_LIST} AND {self._scope}",  # noqa: S608 -- the scope is built by item_filters from GraphARC's own constants; values are bound
            (json_list(positions), *self._parameters))}
        return set(positions) - kept
