"""The item store's vectors for ``query`` search: a ``VectorIndex`` kept per store, and the scope check.

Reading every vector from the file for each search cost more than comparing them, so the
store keeps them in a ``VectorIndex`` and reads them again only when the file changed since:
``PRAGMA data_version``, read inside the search's read transaction, tells whether another
connection (another process, say) committed, and the store counts its own writes. The
index serves one snapshot exactly: it is loaded, or found current, inside the same
transaction as the search. ``admitted`` asks SQL which of the rows the index offers are in
the search's scope and gives their 8-byte vectors, so the exact comparison reads the file's.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from grapharc.memory.longterm.vector_index import VectorIndex
from grapharc.memory.longterm.vector_search import Admit
from grapharc.memory.longterm.vectors import unpacked
from grapharc.memory.sqlite.database import IN_JSON_LIST, json_list
from grapharc.memory.sqlite.item_filters import decode_namespace


class VectorCache:
    """A store's ``VectorIndex``, current as of the transaction that asks for it."""

    def __init__(self) -> None:
        self.writes = 0
        """How many writes this store committed: its own do not change ``PRAGMA data_version``."""
        self._index = VectorIndex()
        self._version: tuple[int, int] | None = None

    def index(self, cursor: sqlite3.Cursor) -> VectorIndex:
        """Every vector in the file as ``cursor``'s transaction sees it, read again if it changed."""
        version = (cursor.execute("PRAGMA data_version").fetchone()[0], self.writes)
        if version != self._version:
            self._index = VectorIndex()
            self._index.load(
                (seq, decode_namespace(namespace), vector)
                for seq, namespace, vector in cursor.execute(
                    "SELECT seq, namespace, vector FROM items WHERE vector IS NOT NULL"
                )
            )
            self._version = version
        return self._index


def admitted(cursor: sqlite3.Cursor, scope: str, parameters: Sequence[object]) -> Admit:
    """Of the rows asked about, those in ``scope`` with a vector, and their vectors."""

    def admit(seqs: list[int]) -> dict[int, Sequence[float]]:
        return {
            seq: unpacked(vector)
            for seq, vector in cursor.execute(
                f"SELECT seq, vector FROM items WHERE seq {IN_JSON_LIST} AND vector IS NOT NULL AND {scope}",  # noqa: S608 -- the scope is built by item_filters from GraphARC's own constants; values are bound
                (json_list(seqs), *parameters),
            )
        }

    return admit
