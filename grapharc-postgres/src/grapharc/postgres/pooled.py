"""What every PostgreSQL dialect of a core SQL store shares: ``%s`` parameters, the tables' prefix,
one pooled database per URI (``open_database``), a transaction per change, and closing by giving
the database back. A store class lists this first and core's SQL store after it."""

from __future__ import annotations

from contextlib import AbstractContextManager

from grapharc.postgres.database import Conn, open_database
from grapharc.postgres.schema import PREFIX


class PooledStore:
    """A core SQL store's PostgreSQL plumbing over the database ``uri``."""

    PARAM = "%s"
    PREFIX = PREFIX

    def __init__(self, uri: str) -> None:
        self.uri = uri
        self._database, self._give_back = open_database(uri, self)

    def _write(self) -> AbstractContextManager[Conn]:
        """One atomic change or consistent read: a pooled connection inside one transaction."""
        return self._database.transaction()

    def _read(self) -> AbstractContextManager[Conn]:
        """One consistent read: a transaction that only reads writes nothing in PostgreSQL."""
        return self._database.transaction()

    def close(self) -> None:
        """Give the database back (the last of its stores closes it); closing twice is harmless."""
        self._give_back()
