"""Durable graph state on PostgreSQL: LangGraph's Postgres savers behind ``postgres://``.

``open_store("postgresql://HOST/DB", kind="checkpoints")`` gives a ``PostgresCheckpoints``,
core's ``CheckpointerProvider`` contract: one sync ``PostgresSaver`` over a connection
pool shared by the process, and per event loop an ``AsyncPostgresSaver`` over a pool of
its own (an async pool is bound to the loop that opened it). LangGraph's own migrations
create its tables on first use. Both savers fence a leased thread's writes inside the
write's transaction (``grapharc.postgres.fencing``).
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import psycopg
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool, ConnectionPool, PoolTimeout

from grapharc.postgres.connect import connect_timeout, conninfo
from grapharc.postgres.errors import unreachable
from grapharc.postgres.fencing import FencingAsyncPostgresSaver, FencingPostgresSaver
from grapharc.postgres.sessions import table_footprint

TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes", "checkpoint_migrations")
# what LangGraph's Postgres savers require of their connections
CONNECTION = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}


class PostgresCheckpoints:
    """LangGraph's Postgres savers over the database ``uri``."""

    def __init__(self, uri: str, *, max_size: int = 8) -> None:
        self.uri = uri
        self.max_size = max_size
        self._connection = {**CONNECTION, **connect_timeout(uri)}
        self._sync: tuple[ConnectionPool[Any], FencingPostgresSaver] | None = None
        self._lock = threading.Lock()

    def saver(self) -> FencingPostgresSaver:
        """The sync ``PostgresSaver``, opened (and its tables migrated) on first call."""
        return self._opened()[1]

    def _opened(self) -> tuple[ConnectionPool[Any], FencingPostgresSaver]:
        """The sync pool and the saver over it, opened on first call."""
        with self._lock:
            if self._sync is None:
                pool: ConnectionPool[Any] = ConnectionPool(self.uri, min_size=1, max_size=self.max_size,
                                                           kwargs=self._connection, open=False)
                try:
                    pool.open(wait=True, timeout=10)
                    saver = FencingPostgresSaver(pool)
                    saver.setup()
                except (psycopg.Error, PoolTimeout) as exc:
                    pool.close()
                    raise unreachable(self.uri, exc) from exc
                self._sync = (pool, saver)
            return self._sync

    @asynccontextmanager
    async def async_saver(self) -> AsyncIterator[FencingAsyncPostgresSaver]:
        """An ``AsyncPostgresSaver`` on the running loop, its pool closed on exit."""
        pool: AsyncConnectionPool[Any] = AsyncConnectionPool(self.uri, min_size=1, max_size=self.max_size,
                                                             kwargs=self._connection, open=False)
        try:
            await pool.open(wait=True, timeout=10)
            saver = FencingAsyncPostgresSaver(pool)
            await saver.setup()
        except (psycopg.Error, PoolTimeout) as exc:
            await pool.close()
            raise unreachable(self.uri, exc) from exc
        try:
            yield saver
        finally:
            await pool.close()

    def compact(self) -> None:
        """Nothing to do: PostgreSQL's autovacuum reuses the space of deleted rows."""

    def footprint(self) -> dict[str, int]:
        """Bytes of each of LangGraph's checkpoint tables, keyed ``DATABASE/TABLE``."""
        return table_footprint(self._opened()[0], TABLES)

    def close(self) -> None:
        """Close the sync saver's pool (it reopens on the next ``saver()``)."""
        with self._lock:
            opened, self._sync = self._sync, None
        if opened is not None:
            opened[0].close()


def open_checkpointer(location: str, kind: str = "checkpoints") -> PostgresCheckpoints:
    """The store-hook factory behind ``postgres://`` and ``postgresql://`` for ``kind="checkpoints"``."""
    return PostgresCheckpoints(conninfo(location))
