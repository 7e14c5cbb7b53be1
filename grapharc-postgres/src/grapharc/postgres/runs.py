"""The PostgreSQL run store: the ``runs`` kind of ``postgres://``, the run queue every worker shares.

``open_store("postgresql://HOST/DB", kind="runs")`` gives core's ``RunStore`` contract
(``grapharc.runs.contracts``) over ``grapharc_runs`` (migration 3). The logic is core's
``grapharc.runs.sql_store``; this is its PostgreSQL dialect. A worker claims the next
runnable run with ``SELECT ... FOR UPDATE SKIP LOCKED``, so workers never wait on each other's
claims and never take the same run; adding a run that may not wait first takes a transaction
advisory lock on its thread, so two such requests racing on an idle thread cannot both be queued.
"""

from __future__ import annotations

from contextlib import AbstractContextManager

from grapharc.postgres.connect import conninfo
from grapharc.postgres.database import Conn, open_database
from grapharc.postgres.schema import PREFIX
from grapharc.runs.sql_store import SqlRunStore
from grapharc.session.sql_dialect import Connection


class PostgresRunStore(SqlRunStore):
    """Runs and their queue in the PostgreSQL database ``uri``."""

    PARAM = "%s"
    PREFIX = PREFIX
    LOCK = "FOR UPDATE"
    CLAIM_LOCK = "FOR UPDATE SKIP LOCKED"

    def __init__(self, uri: str) -> None:
        self.uri = uri
        self._database, self._give_back = open_database(uri, self)

    def _write(self) -> AbstractContextManager[Conn]:
        """One atomic change or consistent read: a pooled connection inside one transaction."""
        return self._database.transaction()

    def _lock_thread(self, conn: Connection, thread_id: str) -> None:
        """A transaction advisory lock on ``thread_id``: rows not yet inserted cannot be locked."""
        self._run(conn, "SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", (thread_id,))

    def close(self) -> None:
        """Give the database back (the last of its stores closes it); closing twice is harmless."""
        self._give_back()


def open_run_store(location: str, kind: str = "runs") -> PostgresRunStore:
    """The store-hook factory behind ``postgres://`` and ``postgresql://`` for ``kind="runs"``."""
    return PostgresRunStore(conninfo(location))
