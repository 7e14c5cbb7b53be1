"""The SQLite run store: the ``runs`` kind of the ``sqlite:`` scheme, ``DIR/runs.db`` beside the sessions.

The logic is ``grapharc.runs.sql_store``'s; this is its SQLite dialect. Every change is one
``BEGIN IMMEDIATE`` transaction (``grapharc.sqlite.database``), so a claim is atomic
across the worker processes sharing the file: of two workers claiming the same run one gets
it. Each thread uses a connection of its own.
"""

from __future__ import annotations

import sqlite3
from contextlib import AbstractContextManager
from pathlib import Path

from grapharc.runs.errors import RunStoreError
from grapharc.runs.sql_store import SqlRunStore
from grapharc.sqlite.database import SqliteDatabase
from grapharc.sqlite.files import RUNS_FILE, database_path

SCHEMA_VERSION = "1"  # kept under meta's key runs_schema: a file may hold the session tables too
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL UNIQUE,
    thread_id TEXT NOT NULL,
    assistant_id TEXT NOT NULL,
    request TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    after_seq INTEGER,
    stream_modes TEXT NOT NULL,
    budget TEXT,
    multitask_strategy TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'running', 'success', 'error', 'interrupted')),
    end_seq INTEGER,
    error TEXT,
    worker TEXT,
    claim_expires_at REAL,
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 0,
    metadata TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_by_thread ON runs (thread_id, status, seq);
CREATE INDEX IF NOT EXISTS runs_by_status ON runs (status, seq);
"""


class SqliteRunStore(SqlRunStore):
    """Runs and their queue in one SQLite file at ``path``."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        self._db = SqliteDatabase(self.path, "run store", RunStoreError)
        self._db.prepare(SCHEMA, "runs_schema", SCHEMA_VERSION)

    def _write(self) -> AbstractContextManager[sqlite3.Connection]:
        return self._db.write()

    def close(self) -> None:
        """Close every connection this store opened; closing twice is harmless."""
        self._db.close()


def open_run_store(location: str, kind: str = "runs") -> SqliteRunStore:
    """The store-hook factory behind ``sqlite:`` for ``kind="runs"``: a directory's ``runs.db``, or
    the file named."""
    return SqliteRunStore(database_path(location, RUNS_FILE, RunStoreError))
