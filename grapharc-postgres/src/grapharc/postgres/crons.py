"""The PostgreSQL cron store: the ``crons`` kind of ``postgres://``, over ``grapharc_crons``
(migration 8). The logic is core's ``grapharc.crons.sql_store``; this is its PostgreSQL dialect:
an update locks the schedule's row (``FOR UPDATE``), and a slot's conditional UPDATE takes the
same lock, so of the workers racing for a slot one moves it on and the others find it moved."""

from __future__ import annotations

from contextlib import AbstractContextManager

from grapharc.crons.sql_store import SqlCronStore
from grapharc.postgres.connect import conninfo
from grapharc.postgres.database import Conn, open_database
from grapharc.postgres.schema import PREFIX


class PostgresCronStore(SqlCronStore):
    """Cron schedules in the PostgreSQL database ``uri``."""

    PARAM = "%s"
    PREFIX = PREFIX
    LOCK = "FOR UPDATE"

    def __init__(self, uri: str) -> None:
        self.uri = uri
        self._database, self._give_back = open_database(uri, self)

    def _write(self) -> AbstractContextManager[Conn]:
        """One atomic change or consistent read: a pooled connection inside one transaction."""
        return self._database.transaction()

    def close(self) -> None:
        """Give the database back (the last of its stores closes it); closing twice is harmless."""
        self._give_back()


def open_cron_store(location: str, kind: str = "crons") -> PostgresCronStore:
    """The store-hook factory behind ``postgres://`` and ``postgresql://`` for ``kind="crons"``."""
    return PostgresCronStore(conninfo(location))
