"""The SQLite assistant store: the ``assistants`` kind of the ``sqlite:`` scheme, kept in the run
store's file (``DIR/runs.db``: the server's own records together) under a schema version of its
own (``assistants_schema`` in ``meta``), its tables created on first use."""

from __future__ import annotations

import sqlite3
from contextlib import AbstractContextManager
from pathlib import Path

from grapharc.assistants.errors import AssistantStoreError
from grapharc.assistants.sql_store import SqlAssistantStore
from grapharc.assistants.tables import ASSISTANT_TABLES
from grapharc.session.tables import ddl
from grapharc.sqlite.database import SQLITE, SqliteDatabase
from grapharc.sqlite.files import RUNS_FILE, database_path

SCHEMA_VERSION = "1"
SCHEMA = ddl(ASSISTANT_TABLES, SQLITE)


class SqliteAssistantStore(SqlAssistantStore):
    """Assistants, their versions and change log in one SQLite file at ``path``."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        self._db = SqliteDatabase(self.path, "assistant store", AssistantStoreError)
        self._db.prepare(SCHEMA, "assistants_schema", SCHEMA_VERSION)

    def _write(self) -> AbstractContextManager[sqlite3.Connection]:
        return self._db.write()

    def close(self) -> None:
        """Close every connection this store opened; closing twice is harmless."""
        self._db.close()


def open_assistant_store(location: str, kind: str = "assistants") -> SqliteAssistantStore:
    """The store-hook factory behind ``sqlite:`` for ``kind="assistants"``: a directory's
    ``runs.db``, or the file named."""
    return SqliteAssistantStore(database_path(location, RUNS_FILE, AssistantStoreError))
