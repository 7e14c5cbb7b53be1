"""The PostgreSQL webhook store: the ``webhooks`` kind of ``postgres://``, over ``grapharc_webhooks``
(migration 9) in the database of the runs it joins. The logic is core's
``grapharc.webhooks.sql_store``; this is its PostgreSQL dialect: a sender claims due deliveries
with ``FOR UPDATE OF w SKIP LOCKED``, so workers never wait on each other's claims and never take
the same delivery."""

from __future__ import annotations

from contextlib import AbstractContextManager

from grapharc.postgres.connect import conninfo
from grapharc.postgres.database import Conn, open_database
from grapharc.postgres.schema import PREFIX
from grapharc.webhooks.sql_store import SqlWebhookStore


class PostgresWebhookStore(SqlWebhookStore):
    """Webhook deliveries in the PostgreSQL database ``uri``."""

    PARAM = "%s"
    PREFIX = PREFIX
    DUE_LOCK = "FOR UPDATE OF w SKIP LOCKED"

    def __init__(self, uri: str) -> None:
        self.uri = uri
        self._database, self._give_back = open_database(uri, self)

    def _write(self) -> AbstractContextManager[Conn]:
        """One atomic change or consistent read: a pooled connection inside one transaction."""
        return self._database.transaction()

    def close(self) -> None:
        """Give the database back (the last of its stores closes it); closing twice is harmless."""
        self._give_back()


def open_webhook_store(location: str, kind: str = "webhooks") -> PostgresWebhookStore:
    """The store-hook factory behind ``postgres://`` and ``postgresql://`` for ``kind="webhooks"``."""
    return PostgresWebhookStore(conninfo(location))
