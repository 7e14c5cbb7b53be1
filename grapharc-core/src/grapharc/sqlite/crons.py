"""The SQLite cron store: the ``crons`` kind of the ``sqlite:`` scheme, kept in the run store's file
(``DIR/runs.db``: the server's own records together) under a schema version of its own
(``crons_schema`` in ``meta``), its table created on first use. Each change is one
``BEGIN IMMEDIATE`` transaction, so a slot's claim is atomic across the processes sharing the file."""

from __future__ import annotations

import sqlite3
from contextlib import AbstractContextManager
from pathlib import Path

from grapharc.crons.errors import CronStoreError
from grapharc.crons.sql_store import SqlCronStore
from grapharc.crons.tables import CRON_TABLES
from grapharc.session.tables import ddl
from grapharc.sqlite.database import SQLITE, SqliteDatabase
from grapharc.sqlite.files import RUNS_FILE, database_path

SCHEMA_VERSION = "1"
SCHEMA = ddl(CRON_TABLES, SQLITE)


class SqliteCronStore(SqlCronStore):
    """Cron schedules in one SQLite file at ``path``."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        self._db = SqliteDatabase(self.path, "cron store", CronStoreError)
        self._db.prepare(SCHEMA, "crons_schema", SCHEMA_VERSION)

    def _write(self) -> AbstractContextManager[sqlite3.Connection]:
        return self._db.write()

    def _read(self) -> AbstractContextManager[sqlite3.Connection]:
        return self._db.read()

    def close(self) -> None:
        """Close every connection this store opened; closing twice is harmless."""
        self._db.close()


def open_cron_store(location: str, kind: str = "crons") -> SqliteCronStore:
    """The store-hook factory behind ``sqlite:`` for ``kind="crons"``: a directory's ``runs.db``, or
    the file named."""
    return SqliteCronStore(database_path(location, RUNS_FILE, CronStoreError))
