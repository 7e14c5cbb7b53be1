"""The SQLite webhook store: the ``webhooks`` kind of the ``sqlite:`` scheme, kept in the run store's
file (``DIR/runs.db``, whose runs its deliveries join) under a schema version of its own
(``webhooks_schema`` in ``meta``), its table created on first use. Every change is one ``BEGIN
IMMEDIATE`` transaction, so a claim is atomic across the worker processes sharing the file."""

from __future__ import annotations

import sqlite3
from contextlib import AbstractContextManager
from pathlib import Path

from grapharc.runs.tables import RUN_TABLES
from grapharc.session.tables import ddl
from grapharc.sqlite.database import SQLITE, SqliteDatabase
from grapharc.sqlite.files import RUNS_FILE, database_path
from grapharc.webhooks.errors import WebhookStoreError
from grapharc.webhooks.sql_store import SqlWebhookStore
from grapharc.webhooks.tables import WEBHOOK_TABLES

SCHEMA_VERSION = "1"
SCHEMA = ddl(WEBHOOK_TABLES, SQLITE) + ddl(RUN_TABLES, SQLITE)
"""The deliveries, and the runs table they join (created as the run store creates it, if this
store opens the file first)."""


class SqliteWebhookStore(SqlWebhookStore):
    """Webhook deliveries in one SQLite file at ``path``, beside its runs."""

    READS_ON_LOOP = True
    """Its reads may run on an event loop's thread: a local file in WAL mode, whose readers never wait
    for a writer (``grapharc.stores.offload.reads_on_loop``)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        self._db = SqliteDatabase(self.path, "webhook store", WebhookStoreError)
        self._db.prepare(SCHEMA, "webhooks_schema", SCHEMA_VERSION)

    def _write(self) -> AbstractContextManager[sqlite3.Connection]:
        return self._db.write()

    def _read(self) -> AbstractContextManager[sqlite3.Connection]:
        return self._db.read()

    def close(self) -> None:
        """Close every connection this store opened; closing twice is harmless."""
        self._db.close()


def open_webhook_store(location: str, kind: str = "webhooks") -> SqliteWebhookStore:
    """The store-hook factory behind ``sqlite:`` for ``kind="webhooks"``: a directory's ``runs.db``,
    or the file named."""
    return SqliteWebhookStore(database_path(location, RUNS_FILE, WebhookStoreError))
