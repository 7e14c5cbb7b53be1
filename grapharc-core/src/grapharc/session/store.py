"""The SQLite session store: status, event queue, approval holds, leases and the audit trail.

The ``SessionStore`` (``grapharc.session.contracts``) that core ships, registered as
the ``sessions`` kind of the ``sqlite:`` store scheme: ``open_store("sqlite:DIR",
kind="sessions")`` opens ``DIR/sessions.db`` (``grapharc.session.sqlite_files``). The
logic is ``grapharc.session.sql_store``'s; this is its SQLite dialect. Every change is
one short ``BEGIN IMMEDIATE`` transaction on a connection of its own, so claims and
decisions are atomic across processes and the store is safe to call from any thread.
Graph state is not kept here: it lives in LangGraph's checkpointer.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, closing, contextmanager
from pathlib import Path
from typing import Any

from grapharc.session.errors import SessionStoreError
from grapharc.session.schema import SCHEMA, SCHEMA_VERSION
from grapharc.session.sql_store import SqlSessionStore
from grapharc.session.sqlite_files import SESSIONS_FILE, database_path, footprint, prepare_database_file


class SqliteSessionStore(SqlSessionStore):
    """Sessions, approvals, events, leases and the audit trail in one SQLite file at ``path``."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        self._local = threading.local()
        self._opened: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._prepare()

    # -- connections -----------------------------------------------------------------

    def _prepare(self) -> None:
        prepare_database_file(self.path, "session store", SessionStoreError)
        try:
            with closing(self._connect()) as conn:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.executescript(f"BEGIN IMMEDIATE;\n{SCHEMA}\nCOMMIT;")
                conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('schema', ?)",
                             (SCHEMA_VERSION,))
                found = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()[0]
        except (sqlite3.DatabaseError, OSError) as exc:
            raise SessionStoreError(
                f"cannot use {self.path} as a session store: {exc}",
                hint="point at a session directory GraphARC created, or a new one") from exc
        if found != SCHEMA_VERSION:
            raise SessionStoreError(f"session store {self.path} has schema {found}; this GraphARC reads "
                                    f"schema {SCHEMA_VERSION}")

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(str(self.path), timeout=30.0, isolation_level=None, check_same_thread=False)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA synchronous=NORMAL")
        return conn

    def _thread_connection(self) -> sqlite3.Connection:
        """This thread's connection, kept open (closing the last one would checkpoint the WAL)."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self._connect()
            with self._lock:
                self._opened.append(conn)
        return conn

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One atomic change: BEGIN IMMEDIATE, commit on success, roll back on any error."""
        conn = self._thread_connection()
        try:
            conn.execute("BEGIN IMMEDIATE")
            yield conn
            conn.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise SessionStoreError(f"session store {self.path}: {exc}") from exc
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """A consistent read: one deferred transaction, so a read of several tables sees one state."""
        conn = self._thread_connection()
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            conn.execute("COMMIT")

    def _renewing(self) -> AbstractContextManager[sqlite3.Connection]:
        """A connection of its own, one autocommitted statement: renewals come from heartbeat
        threads, which should not keep a connection each."""
        return closing(self._connect())

    def _encode(self, value: Any) -> str:
        return json.dumps(value, sort_keys=True, ensure_ascii=False)

    def _decode(self, value: Any) -> Any:
        return json.loads(value)

    def _after_prune(self) -> None:
        """Give the space of removed rows back to the file system (outside any transaction)."""
        conn = self._thread_connection()
        conn.execute("VACUUM")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        """Close every connection this store opened."""
        with self._lock:
            opened, self._opened = self._opened, []
        for conn in opened:
            conn.close()
        self._local = threading.local()

    def footprint(self) -> dict[str, int]:
        """Bytes of the store's file, its WAL and shared-memory files included."""
        return footprint(self.path)


def open_session_store(location: str, kind: str = "sessions") -> SqliteSessionStore:
    """The store-hook factory behind ``sqlite:`` for ``kind="sessions"``: a directory's
    ``sessions.db``, or the file named."""
    return SqliteSessionStore(database_path(location, SESSIONS_FILE, SessionStoreError))
