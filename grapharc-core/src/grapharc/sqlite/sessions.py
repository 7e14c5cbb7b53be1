"""The SQLite session store: status, event queue, approval holds, leases and the audit trail.

The ``SessionStore`` (``grapharc.session.contracts``) that core ships, registered as
the ``sessions`` kind of the ``sqlite:`` store scheme: ``open_store("sqlite:DIR",
kind="sessions")`` opens ``DIR/sessions.db`` (``grapharc.sqlite.files``). The
logic is ``grapharc.session.sql_store``'s; this is its SQLite dialect. Every change is
one short ``BEGIN IMMEDIATE`` transaction on a connection of its own, so claims and
decisions are atomic across processes and the store is safe to call from any thread.
Graph state is not kept here: it lives in LangGraph's checkpointer.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import AbstractContextManager, closing
from pathlib import Path
from typing import Any

from grapharc.session.errors import SessionStoreError
from grapharc.session.sql_store import SqlSessionStore
from grapharc.sqlite.database import SqliteDatabase
from grapharc.sqlite.files import SESSIONS_FILE, database_path, footprint
from grapharc.sqlite.sessions_schema import MIGRATIONS, SCHEMA, SCHEMA_VERSION

_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False)
"""How a JSON column is written (``json.dumps``' output with these options, by one encoder built once
rather than one a call: a streamed run writes about nine)."""


class SqliteSessionStore(SqlSessionStore):
    """Sessions, approvals, events, leases and the audit trail in one SQLite file at ``path``."""

    READS_ON_LOOP = True
    """Its reads may run on an event loop's thread: a local file in WAL mode, whose readers never wait
    for a writer (``grapharc.stores.offload.reads_on_loop``)."""
    WRITES_ON_LOOP = True
    """A call run in place on an event loop may change it: a change that would wait for a busy file
    refuses at once instead (``grapharc.sqlite.database``, ``grapharc.stores.in_place``)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        self._db = SqliteDatabase(self.path, "session store", SessionStoreError)
        self._db.prepare(SCHEMA, "schema", SCHEMA_VERSION, MIGRATIONS)

    # -- the dialect -----------------------------------------------------------------

    def _write(self) -> AbstractContextManager[sqlite3.Connection]:
        return self._db.write()

    def _read(self) -> AbstractContextManager[sqlite3.Connection]:
        return self._db.read()

    def _read_one(self) -> AbstractContextManager[sqlite3.Connection]:
        return self._db.autocommit()

    def _renewing(self) -> AbstractContextManager[sqlite3.Connection]:
        """A connection of its own, one autocommitted statement: renewals come from heartbeat
        threads, which should not keep a connection each."""
        return closing(self._db.connect())

    def _encode(self, value: Any) -> str:
        return _JSON.encode(value)

    def _decode(self, value: Any) -> Any:
        return json.loads(value)

    def _after_prune(self) -> None:
        """Give the space of removed rows back to the file system (outside any transaction)."""
        with self._db.borrowed() as conn:
            conn.execute("VACUUM")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        """Close every connection this store opened."""
        self._db.close()

    def footprint(self) -> dict[str, int]:
        """Bytes of the store's file, its WAL and shared-memory files included."""
        return footprint(self.path)


def open_session_store(location: str, kind: str = "sessions") -> SqliteSessionStore:
    """The store-hook factory behind ``sqlite:`` for ``kind="sessions"``: a directory's
    ``sessions.db``, or the file named."""
    return SqliteSessionStore(database_path(location, SESSIONS_FILE, SessionStoreError))
