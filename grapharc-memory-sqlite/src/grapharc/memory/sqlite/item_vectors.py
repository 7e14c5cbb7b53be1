"""The item store's vectors for ``query`` search: a ``GrowingIndex`` per store, and the scope check.

Reading every vector from the file for each search cost more than comparing them, so the
store keeps them in a ``GrowingIndex`` and reads only the rows written since. That is exact
because a write deletes the item's old row and inserts one whose ``seq`` is above every
``seq`` ever given (``AUTOINCREMENT``, schema version 3), and writes to the file take turns,
so they commit in ``seq`` order. ``PRAGMA data_version``, read inside the search's read
transaction, tells whether another connection (another process, say) committed since the
last look, and the store counts its own writes: while neither changed the index is current
without a statement. ``admitted`` asks SQL which rows the index offers are still there and
in the search's scope, and gives their 8-byte vectors for the exact comparison.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from grapharc.memory.longterm.contracts import Namespace
from grapharc.memory.longterm.vector_index import GrowingIndex, VectorIndex
from grapharc.memory.longterm.vector_search import Admit
from grapharc.memory.longterm.vectors import unpacked
from grapharc.memory.sqlite.database import IN_JSON_LIST, json_list
from grapharc.memory.sqlite.item_filters import decode_namespace


class VectorCache:
    """A store's ``GrowingIndex``, current as of the transaction that asks for it."""

    def __init__(self) -> None:
        self.writes = 0
        """How many writes this store committed: its own do not change ``PRAGMA data_version``."""
        self._growing = GrowingIndex()
        self._version: tuple[int, int] | None = None

    def index(self, cursor: sqlite3.Cursor) -> VectorIndex:
        """Every vector in the file as ``cursor``'s transaction sees it."""
        version = (cursor.execute("PRAGMA data_version").fetchone()[0], self.writes)
        if version != self._version:
            (count,) = cursor.execute("SELECT count(*) FROM items").fetchone()

            def read_since(last: int) -> list[tuple[int, Namespace, bytes]]:
                return [
                    (seq, decode_namespace(namespace), vector)
                    for seq, namespace, vector in cursor.execute(
                        "SELECT seq, namespace, vector FROM items "
                        "WHERE seq > ? AND vector IS NOT NULL ORDER BY seq",
                        (last,),
                    )
                ]

            self._growing.refresh(count, read_since)
            self._version = version
        return self._growing.index


def admitted(cursor: sqlite3.Cursor, scope: str, parameters: Sequence[object]) -> Admit:
    """Of the rows asked about, those still there, in ``scope`` and with a vector, and their vectors."""

    def admit(seqs: list[int]) -> dict[int, Sequence[float]]:
        return {
            seq: unpacked(vector)
            for seq, vector in cursor.execute(
                f"SELECT seq, vector FROM items WHERE seq {IN_JSON_LIST} AND vector IS NOT NULL AND {scope}",  # noqa: S608 -- the scope is built by item_filters from GraphARC's own constants; values are bound
                (json_list(seqs), *parameters),
            )
        }

    return admit
