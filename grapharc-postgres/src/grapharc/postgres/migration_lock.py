"""One advisory lock around every migration of a database, GraphARC's and LangGraph's, so processes
upgrading one database together apply each migration once, one process after another.

The lock is a session lock (``pg_advisory_lock``'s kind) taken by trying, not by waiting in
``pg_advisory_lock``: a process blocked there holds a snapshot, and LangGraph's migrations run
``CREATE INDEX CONCURRENTLY``, which waits for every older snapshot in the database, so the holder
would wait for the waiter that waits for it ("deadlock detected"). A waiter instead listens on
``CHANNEL``, which the holder notifies as it lets go, and tries again then; it holds no snapshot
between tries. It also tries every ``RETRY_SECONDS`` (a holder whose connection died let go without
a word) and gives up, naming the store, after ``WAIT_SECONDS``.

Written here: psycopg has no lock helper, and none of the migration tools (Alembic, yoyo) runs
LangGraph's own migrations, which ``PostgresSaver.setup`` applies.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg.rows import tuple_row

from grapharc.postgres.errors import PostgresStoreError

LOCK_KEY = 0x6772_6170_6861_7263 & 0x7FFF_FFFF_FFFF_FFFF  # "grapharc", one advisory lock key
CHANNEL = "grapharc_migrations"
RETRY_SECONDS = 1.0
WAIT_SECONDS = 300.0


@contextmanager
def migrating(conn: psycopg.Connection[Any], name: str) -> Iterator[None]:
    """Hold the migration lock on ``conn`` (an autocommit connection) for the ``with`` block;
    ``name`` is the store as messages show it."""
    conn.execute(f"LISTEN {CHANNEL}")
    deadline = time.monotonic() + WAIT_SECONDS
    while not _tried(conn):
        left = deadline - time.monotonic()
        if left <= 0:
            raise PostgresStoreError(
                f"the PostgreSQL store {name}: another process has been migrating it for "
                f"{WAIT_SECONDS:g} s", hint="see who holds the lock: SELECT pid, query FROM pg_locks "
                "JOIN pg_stat_activity USING (pid) WHERE locktype = 'advisory'")
        for _ in conn.notifies(timeout=min(RETRY_SECONDS, left), stop_after=1):
            pass
    try:
        yield
    finally:
        if not conn.broken:  # a dead connection's session lock is gone with it
            conn.execute("SELECT pg_advisory_unlock(%s)", (LOCK_KEY,))
            conn.execute(f"NOTIFY {CHANNEL}")


def _tried(conn: psycopg.Connection[Any]) -> bool:
    """Whether ``conn`` now holds the lock (one short statement: it never waits)."""
    with conn.cursor(row_factory=tuple_row) as cursor:
        row = cursor.execute("SELECT pg_try_advisory_lock(%s)", (LOCK_KEY,)).fetchone()
    return row is not None and bool(row[0])
