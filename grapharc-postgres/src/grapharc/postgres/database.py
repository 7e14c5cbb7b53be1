"""One PostgreSQL database per process and URI: the connections every store opened on it shares.

The sessions, runs, checkpoints and traces stores opened on one URI in one process borrow one
``PostgresDatabase`` (``open_database``). The first borrow opens it: the session, trace and run
tables are migrated (``grapharc.postgres.schema.upgrade``), on a connection of its own so a
server that cannot be reached is named with libpq's own reason, and then a pool of
``POOL_SIZE`` connections is opened that serves every store's statements, LangGraph's sync
saver's included. Each event loop that waits for another process's writes gets one
LISTENing connection (``grapharc.postgres.listen``); LangGraph's async saver, bound to its
loop, gets a pool of one connection for as long as it is open (``async_pool``). When the last
borrower is closed (or collected without being closed) the database closes its connections;
a later borrow opens it again. LangGraph's migrations run on first use of the checkpoints, on a
connection of their own too, under the same migration lock (``grapharc.postgres.migration_lock``).

A forked child (``grapharc serve --workers``) has none of its parent's pool threads and must not
talk on its parent's sockets: two processes on one connection corrupt its protocol, and closing
one would end the parent's session. So after a fork every database the child inherited forgets
its connections without closing them (psycopg closes a connection only in the process that
opened it, ``os.register_at_fork`` as ``grapharc.stores.offload`` does for its threads) and
opens a pool of its own on first use; its tables stay migrated.

Written here rather than taken from a library: psycopg_pool pools connections but neither shares
one pool among independent owners nor knows about fork.
"""

from __future__ import annotations

import asyncio
import os
import threading
import weakref
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import psycopg
from langgraph.checkpoint.postgres import PostgresSaver
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool, ConnectionPool, PoolTimeout

from grapharc.postgres.connect import connect, connect_timeout
from grapharc.postgres.errors import PostgresStoreError, store_failure, unreachable
from grapharc.postgres.listen import ChangeListener
from grapharc.postgres.migration_lock import migrating
from grapharc.postgres.schema import upgrade
from grapharc.stores.masking import masked
from grapharc.stores.offload import STORE_THREADS

Conn = psycopg.Connection[dict[str, Any]]

POOL_SIZE = STORE_THREADS + 2
"""Connections the pool holds from opening to closing (psycopg_pool's fixed-size pool): one for
each store thread (``grapharc.stores.offload``), one for LangGraph's sync saver (one call at a
time, behind its lock), and one for a lease's heartbeat or a trace sink, so neither waits behind
the store threads."""

CONNECTION = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
"""Every pooled connection: what LangGraph's Postgres savers require (autocommit, statements
prepared on first use, dict rows), which the stores' own statements run with too."""

OPEN_TIMEOUT_SECONDS = 10.0
"""How long opening a pool may wait for its connections."""


class PostgresDatabase:
    """The PostgreSQL database ``uri`` as this process uses it: migrated once, one pool, one
    listening connection per event loop. Borrow it with ``open_database``; ``applied`` is the
    migrations opening it applied (none if its tables were current)."""

    def __init__(self, uri: str) -> None:
        self.uri = uri
        self.name = masked(uri)
        self.borrowers = 0
        self._kwargs = {**CONNECTION, **connect_timeout(uri)}
        self._lock = threading.Lock()
        self._closed = False
        self._listeners: dict[asyncio.AbstractEventLoop, ChangeListener] = {}
        self._langgraph_migrated = False
        self._migrating = threading.Lock()
        with connect(uri, autocommit=True) as conn:
            self.applied = upgrade(conn, uri)
        self._pool: ConnectionPool[Conn] | None = self._open_pool()

    @property
    def pool(self) -> ConnectionPool[Conn]:
        """The pool (opened anew in a forked child on first use); refused once the database is closed."""
        pool = self._pool
        if pool is None:
            with self._lock:
                self._refuse_if_closed()
                if self._pool is None:
                    self._pool = self._open_pool()
                pool = self._pool
        return pool

    def _refuse_if_closed(self) -> None:
        if self._closed:
            raise PostgresStoreError(f"the PostgreSQL store {self.name} is closed",
                                     hint="open the store again")

    def _open_pool(self) -> ConnectionPool[Conn]:
        pool: ConnectionPool[Conn] = ConnectionPool(self.uri, min_size=POOL_SIZE, kwargs=self._kwargs,
                                                    name="grapharc", open=False)
        try:
            pool.open(wait=True, timeout=OPEN_TIMEOUT_SECONDS)
        except (psycopg.Error, PoolTimeout) as exc:
            pool.close()
            raise unreachable(self.uri, exc) from exc
        return pool

    @contextmanager
    def transaction(self) -> Iterator[Conn]:
        """One atomic change or consistent read: a pooled connection inside one transaction; every
        failure a ``PostgresStoreError`` naming the (masked) store."""
        try:
            with self.pool.connection() as conn, conn.transaction():
                yield conn
        except psycopg.Error as exc:  # PoolTimeout too
            raise store_failure(self.uri, exc) from exc

    def listener(self) -> ChangeListener:
        """The running event loop's listening connection, opened on first use (and again if it failed)."""
        self._refuse_if_closed()
        loop = asyncio.get_running_loop()
        listener = self._listeners.get(loop)
        if listener is None or not listener.alive:
            listener = self._listeners[loop] = ChangeListener(self.uri)
        return listener

    @asynccontextmanager
    async def async_pool(self) -> AsyncIterator[AsyncConnectionPool[Any]]:
        """A pool of one connection on the running loop (an async pool is bound to the loop that
        opened it), closed on exit: LangGraph's async saver makes one call at a time, behind its lock."""
        pool: AsyncConnectionPool[Any] = AsyncConnectionPool(self.uri, min_size=1, kwargs=self._kwargs,
                                                             name="grapharc-async", open=False)
        try:
            await pool.open(wait=True, timeout=OPEN_TIMEOUT_SECONDS)
        except (psycopg.Error, PoolTimeout) as exc:
            await pool.close()
            raise unreachable(self.uri, exc) from exc
        try:
            yield pool
        finally:
            await pool.close()

    def migrate_checkpoints(self) -> None:
        """LangGraph's own migrations of its checkpoint tables (``PostgresSaver.setup``), once, on a
        connection of their own under the migration lock (their ``CREATE INDEX CONCURRENTLY`` runs
        outside a transaction, so other processes' setups must wait for the lock, not race it)."""
        with self._migrating:
            if self._langgraph_migrated:
                return
            try:
                with connect(self.uri, autocommit=True, prepare_threshold=0) as conn, \
                        migrating(conn, self.name):
                    PostgresSaver(conn).setup()
            except psycopg.Error as exc:
                raise store_failure(self.uri, exc) from exc
            self._langgraph_migrated = True

    def footprint(self, tables: Iterable[str]) -> dict[str, int]:
        """``pg_total_relation_size`` of each of ``tables`` that exists, keyed ``DATABASE/TABLE``."""
        with self.transaction() as conn:
            rows = conn.execute(
                "SELECT current_database() || '/' || t AS place, "
                "pg_total_relation_size(to_regclass(t)) AS size "
                "FROM unnest(%s::text[]) AS t WHERE to_regclass(t) IS NOT NULL", ([*tables],)).fetchall()
        return {str(row["place"]): int(row["size"]) for row in rows}

    def close(self) -> None:
        """Close the pool and stop listening; closing twice is harmless."""
        with self._lock:
            self._closed = True
            pool, self._pool = self._pool, None
            listeners, self._listeners = self._listeners, {}
        for listener in listeners.values():
            listener.close()
        if pool is not None:
            pool.close()

    def _forget_connections(self) -> None:
        """In a forked child: drop the parent's pool and listeners unclosed (they are the parent's)."""
        self._lock, self._migrating = threading.Lock(), threading.Lock()
        self._pool = None
        self._listeners = {}


_open: dict[str, PostgresDatabase] = {}
"""The databases open in this process, by URI."""
_open_lock = threading.Lock()


def open_database(uri: str, owner: object) -> tuple[PostgresDatabase, Callable[[], None]]:
    """The process's database at ``uri`` lent to ``owner`` (a store), and the call that gives it
    back: it runs by itself if ``owner`` is collected first, and does nothing the second time."""
    database = _borrow(uri)
    return database, weakref.finalize(owner, _give_back, database)


@contextmanager
def borrowed(uri: str) -> Iterator[PostgresDatabase]:
    """The process's database at ``uri`` for the ``with`` block."""
    database = _borrow(uri)
    try:
        yield database
    finally:
        _give_back(database)


def _borrow(uri: str) -> PostgresDatabase:
    """The database at ``uri``, opened (and migrated) unless a store has it open; one borrower more.
    It is opened under the lock, so a second store on the URI waits for the first's migrations
    instead of running them again."""
    with _open_lock:
        database = _open.get(uri)
        if database is None:
            database = _open[uri] = PostgresDatabase(uri)
        database.borrowers += 1
    return database


def _give_back(database: PostgresDatabase) -> None:
    """One borrower fewer; the last one closes the database."""
    with _open_lock:
        database.borrowers -= 1
        if database.borrowers:
            return
        if _open.get(database.uri) is database:
            del _open[database.uri]
    database.close()


def _forget_connections_in_child() -> None:
    """A forked child keeps its databases but none of their connections (see the module docstring)."""
    global _open_lock
    _open_lock = threading.Lock()
    for database in _open.values():
        database._forget_connections()


if hasattr(os, "register_at_fork"):  # not on Windows, which cannot fork
    os.register_at_fork(after_in_child=_forget_connections_in_child)
