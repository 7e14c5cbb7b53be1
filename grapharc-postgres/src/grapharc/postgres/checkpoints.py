"""Durable graph state on PostgreSQL: LangGraph's Postgres savers behind ``postgres://``.

``open_store("postgresql://HOST/DB", kind="checkpoints")`` gives a ``PostgresCheckpoints``,
core's ``CheckpointerProvider`` contract: one sync ``PostgresSaver`` over the pool of the
process's database (``grapharc.postgres.database``), and per event loop an
``AsyncPostgresSaver`` over an async pool the database opens for it (an async pool is bound to
the loop that opened it). LangGraph's own migrations create its tables once per opened database.
Both savers fence a leased thread's writes inside the write's transaction
(``grapharc.postgres.fencing``).
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from grapharc.postgres.connect import conninfo
from grapharc.postgres.database import PostgresDatabase, open_database
from grapharc.postgres.fencing import FencingAsyncPostgresSaver, FencingPostgresSaver
from grapharc.stores import offload

TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes", "checkpoint_migrations")


class PostgresCheckpoints:
    """LangGraph's Postgres savers over the database ``uri``, borrowed on first use until ``close``."""

    def __init__(self, uri: str) -> None:
        self.uri = uri
        self._borrowed: tuple[PostgresDatabase, FencingPostgresSaver, Callable[[], None]] | None = None
        self._lock = threading.Lock()

    def _opened(self) -> tuple[PostgresDatabase, FencingPostgresSaver]:
        """The database, borrowed on first call, with LangGraph's tables migrated; and the sync saver."""
        with self._lock:
            if self._borrowed is None:
                database, give_back = open_database(self.uri, self)
                self._borrowed = (database, FencingPostgresSaver(database), give_back)
            database, saver, _ = self._borrowed
        database.migrate_checkpoints()
        return database, saver

    def saver(self) -> FencingPostgresSaver:
        """The sync ``PostgresSaver``, over the database's pool."""
        return self._opened()[1]

    @asynccontextmanager
    async def async_saver(self) -> AsyncIterator[FencingAsyncPostgresSaver]:
        """An ``AsyncPostgresSaver`` on the running loop, its pool closed on exit."""
        database, _ = await offload.to_thread(self._opened)  # opening may connect and migrate
        async with database.async_pool() as pool:
            yield FencingAsyncPostgresSaver(pool)

    def compact(self) -> None:
        """Nothing to do: PostgreSQL's autovacuum reuses the space of deleted rows."""

    def footprint(self) -> dict[str, int]:
        """Bytes of each of LangGraph's checkpoint tables, keyed ``DATABASE/TABLE``."""
        return self._opened()[0].footprint(TABLES)

    def close(self) -> None:
        """Give the database back (it is borrowed again on the next ``saver()``); twice is harmless."""
        with self._lock:
            borrowed, self._borrowed = self._borrowed, None
        if borrowed is not None:
            borrowed[2]()


def open_checkpointer(location: str, kind: str = "checkpoints") -> PostgresCheckpoints:
    """The store-hook factory behind ``postgres://`` and ``postgresql://`` for ``kind="checkpoints"``."""
    return PostgresCheckpoints(conninfo(location))
