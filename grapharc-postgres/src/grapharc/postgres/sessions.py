"""The PostgreSQL session store: status, event queue, approval holds, leases and the audit trail.

Core's ``SessionStore`` contract (``grapharc.session.contracts``) over tables shared by
every worker: ``open_store("postgresql://HOST/DB", kind="sessions")``. The logic is
core's ``grapharc.session.sql_store``; this is its PostgreSQL dialect. Every change is
one transaction on a connection of the process's pool for the database
(``grapharc.postgres.database``) that first locks the thread's row. A claim takes
it with ``FOR UPDATE SKIP LOCKED``: a worker never waits on another's claim, it is told
the thread is busy. A decision waits for the lock (``FOR UPDATE``), so the loser of two
decisions sees what the winner decided; a write fenced by a lease checks its token
under that lock, in the transaction that writes.
"""

from __future__ import annotations

import json
from contextlib import AbstractContextManager
from typing import Any

from psycopg.types.json import Jsonb

from grapharc.postgres.connect import conninfo
from grapharc.postgres.database import Conn, open_database
from grapharc.postgres.schema import PREFIX
from grapharc.session.sql_dialect import TABLES as STORE_TABLES
from grapharc.session.sql_dialect import Connection
from grapharc.session.sql_store import SqlSessionStore

TRACE_EVENTS = PREFIX + "trace_events"
TABLES = (*(PREFIX + table for table in STORE_TABLES), TRACE_EVENTS)


def _json_text(value: Any) -> str:
    """A JSON column's text, characters as they are (escapes only where JSON needs them)."""
    return json.dumps(value, ensure_ascii=False)


class PostgresSessionStore(SqlSessionStore):
    """Sessions, approvals, events, leases and the audit trail in the PostgreSQL database ``uri``."""

    PARAM = "%s"
    PREFIX = PREFIX
    LOCK = "FOR UPDATE"
    CLAIM_LOCK = "FOR UPDATE SKIP LOCKED"
    APPROVAL_ORDER = "seq"

    def __init__(self, uri: str) -> None:
        self.uri = uri
        self._database, self._give_back = open_database(uri, self)

    # -- the dialect -----------------------------------------------------------------

    def _tx(self) -> AbstractContextManager[Conn]:
        """One atomic change or consistent read: a pooled connection inside one transaction."""
        return self._database.transaction()

    _write = _read = _tx

    def _encode(self, value: Any) -> Jsonb:
        # characters unescaped: a lone surrogate then fails to encode here, refused naming it, rather
        # than reaching the server as an escape it rejects with a driver error
        return Jsonb(value, dumps=_json_text)

    def _decode(self, value: Any) -> Any:
        return value  # psycopg reads JSONB back as Python values

    def _after_prune(self) -> None:
        """Nothing: autovacuum gives the space of removed rows back."""

    def _delete_records(self, conn: Connection, thread_id: str) -> None:
        """The thread's session records, then its trace events (kept in this database too)."""
        super()._delete_records(conn, thread_id)
        conn.execute(f"DELETE FROM {TRACE_EVENTS} WHERE thread_id = %s", (thread_id,))  # noqa: S608 -- identifiers are GraphARC's own constants; values are bound

    async def wait_for_change(self, thread_id: str, timeout: float) -> bool:
        """Wait for a NOTIFY that ``thread_id``'s audit trail or trace grew: True if one did within
        ``timeout`` seconds, else False. The database listens on one connection per event loop."""
        return await self._database.listener().wait(thread_id, timeout)

    async def wait_for_any_change(self, timeout: float) -> bool:
        """Wait for a NOTIFY that any thread's audit trail or trace grew: True if one did within
        ``timeout`` seconds, else False."""
        return await self._database.listener().wait(None, timeout)

    def close(self) -> None:
        """Give the database back (the last of its stores closes it); closing twice is harmless."""
        self._give_back()

    def footprint(self) -> dict[str, int]:
        """Bytes of each session table, indexes included, keyed ``DATABASE/TABLE``."""
        return self._database.footprint(TABLES)


def open_session_store(location: str, kind: str = "sessions") -> PostgresSessionStore:
    """The store-hook factory behind ``postgres://`` and ``postgresql://`` for ``kind="sessions"``."""
    return PostgresSessionStore(conninfo(location))
