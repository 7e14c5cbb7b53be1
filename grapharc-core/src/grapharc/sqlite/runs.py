"""The SQLite run store: the ``runs`` kind of the ``sqlite:`` scheme, ``DIR/runs.db`` beside the sessions.

The logic is ``grapharc.runs.sql_store``'s and the table ``grapharc.session.tables``'s; this is
their SQLite dialect. Every change is one ``BEGIN IMMEDIATE`` transaction
(``grapharc.sqlite.database``), so a claim is atomic across the worker processes sharing the
file: of two workers claiming the same run one gets it. Each thread uses a connection of its own.
"""

from __future__ import annotations

import sqlite3
from contextlib import AbstractContextManager
from pathlib import Path

from grapharc.runs.errors import RunStoreError
from grapharc.runs.sql_store import SqlRunStore
from grapharc.runs.tables import LIVE_LOG_TABLES, NOT_BEFORE, RUN_TABLES, WEBHOOK_FLAG
from grapharc.session.tables import ddl, ddl_statements
from grapharc.sqlite.database import SQLITE, SqliteDatabase
from grapharc.sqlite.files import RUNS_FILE, database_path

SCHEMA_VERSION = "1"  # kept under meta's key runs_schema: a file may hold the session tables too
SCHEMA = ddl(RUN_TABLES, SQLITE)
MIGRATIONS = (("2", ddl_statements(LIVE_LOG_TABLES, SQLITE)), ("3", NOT_BEFORE.statements(SQLITE)),
              ("4", WEBHOOK_FLAG.statements(SQLITE)))
"""Each later version of the run store's schema (2: the runs' live event logs; 3: a run's not-before
time; 4: whether a run has a webhook), with its statements."""


class SqliteRunStore(SqlRunStore):
    """Runs and their queue in one SQLite file at ``path``."""

    READS_ON_LOOP = True
    """Its reads may run on an event loop's thread: a local file in WAL mode, whose readers never wait
    for a writer (``grapharc.stores.offload.reads_on_loop``)."""
    WRITES_ON_LOOP = True
    """A call run in place on an event loop may change it: a change that would wait for a busy file
    refuses at once instead (``grapharc.sqlite.database``, ``grapharc.stores.in_place``)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        self._db = SqliteDatabase(self.path, "run store", RunStoreError)
        self._db.prepare(SCHEMA, "runs_schema", SCHEMA_VERSION, MIGRATIONS)

    def _write(self) -> AbstractContextManager[sqlite3.Connection]:
        return self._db.write()

    def _read_one(self) -> AbstractContextManager[sqlite3.Connection]:
        return self._db.autocommit()

    def close(self) -> None:
        """Close every connection this store opened; closing twice is harmless."""
        self._db.close()


def open_run_store(location: str, kind: str = "runs") -> SqliteRunStore:
    """The store-hook factory behind ``sqlite:`` for ``kind="runs"``: a directory's ``runs.db``, or
    the file named."""
    return SqliteRunStore(database_path(location, RUNS_FILE, RunStoreError))
