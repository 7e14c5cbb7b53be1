"""The PostgreSQL assistant store: the ``assistants`` kind of ``postgres://``, over
``grapharc_assistants``, ``grapharc_assistant_versions`` and ``grapharc_assistant_changes``
(migration 7). The logic is core's ``grapharc.assistants.sql_store``; this is its PostgreSQL
dialect: a change locks the assistant's row (``FOR UPDATE``), so racing updates number their
versions one after another."""

from __future__ import annotations

from contextlib import AbstractContextManager

from grapharc.assistants.sql_store import SqlAssistantStore
from grapharc.postgres.connect import conninfo
from grapharc.postgres.database import Conn, open_database
from grapharc.postgres.schema import PREFIX


class PostgresAssistantStore(SqlAssistantStore):
    """Assistants, their versions and change log in the PostgreSQL database ``uri``."""

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


def open_assistant_store(location: str, kind: str = "assistants") -> PostgresAssistantStore:
    """The store-hook factory behind ``postgres://`` and ``postgresql://`` for ``kind="assistants"``."""
    return PostgresAssistantStore(conninfo(location))
