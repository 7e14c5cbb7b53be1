"""The PostgreSQL item store's vectors for ``query`` search: a ``GrowingIndex`` per store.

Reading every vector in scope for each search cost more than comparing them, so the store
keeps them in a ``GrowingIndex`` and reads only rows written since. That is exact because a
write deletes the item's old row and inserts one under the next ``written``, and every write
takes the totals row's lock before it draws ``written`` and keeps it until it commits, so
writes commit in ``written`` order: once a statement sees row ``w``, no row below ``w`` can
appear later. ``admitted`` asks SQL which rows the index offers are still there and in the
search's scope, and gives their 8-byte vectors for the exact comparison. One lock per store
keeps a search's use of the index apart from another thread's reading of new rows.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from grapharc.memory.longterm.contracts import Namespace
from grapharc.memory.longterm.vector_index import GrowingIndex, VectorIndex
from grapharc.memory.longterm.vector_search import Admit
from grapharc.memory.longterm.vectors import unpacked
from grapharc.postgres.database import Conn


class VectorCache:
    """A store's ``GrowingIndex``; hold ``lock`` while using it. ``namespace_of`` reads a ``path``."""

    def __init__(self, namespace_of: Callable[[str], Namespace]) -> None:
        self._namespace_of = namespace_of
        self.lock = threading.Lock()
        self._growing = GrowingIndex()

    def index(self, conn: Conn) -> VectorIndex:
        """The index with every row ``conn`` sees (under ``lock``)."""
        count = conn.execute("SELECT items FROM grapharc_store_totals").fetchall()[0]["items"]

        def read_since(last: int) -> list[tuple[int, Namespace, bytes]]:
            # apart from the totals: one statement joining both cost the planner a JIT compile (0.4 s)
            return [
                (row["written"], self._namespace_of(row["path"]), row["vector"])
                for row in conn.execute(
                    "SELECT written, path, vector FROM grapharc_store_items "
                    "WHERE written > %s AND vector IS NOT NULL ORDER BY written",
                    (last,),
                )
            ]

        return self._growing.refresh(count, read_since)


def admitted(conn: Conn, scope: str, parameters: Sequence[Any]) -> Admit:
    """Of the rows asked about, those still there, in ``scope`` and with a vector, and their vectors."""

    def admit(written: list[int]) -> dict[int, Sequence[float]]:
        return {
            row["written"]: unpacked(row["vector"])
            for row in conn.execute(
                f"SELECT written, vector FROM grapharc_store_items "  # noqa: S608 -- the scope is built by item_filters from GraphARC's own constants; values are bound
                f"WHERE written = ANY(%s) AND vector IS NOT NULL AND {scope}",
                [written, *parameters],
            )
        }

    return admit
