"""The PostgreSQL webhook store: the ``webhooks`` kind of ``postgres://``, over ``grapharc_webhooks``
(migration 9) in the database of the runs it joins. The logic is core's
``grapharc.webhooks.sql_store``; this is its PostgreSQL dialect: a sender claims due deliveries
with ``FOR UPDATE OF w SKIP LOCKED``, so workers never wait on each other's claims and never take
the same delivery."""

from __future__ import annotations

from grapharc.postgres.connect import conninfo
from grapharc.postgres.pooled import PooledStore
from grapharc.webhooks.sql_store import SqlWebhookStore


class PostgresWebhookStore(PooledStore, SqlWebhookStore):
    """Webhook deliveries in the PostgreSQL database ``uri``."""

    DUE_LOCK = "FOR UPDATE OF w SKIP LOCKED"


def open_webhook_store(location: str, kind: str = "webhooks") -> PostgresWebhookStore:
    """The store-hook factory behind ``postgres://`` and ``postgresql://`` for ``kind="webhooks"``."""
    return PostgresWebhookStore(conninfo(location))
