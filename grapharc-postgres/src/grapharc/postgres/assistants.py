"""The PostgreSQL assistant store: the ``assistants`` kind of ``postgres://``, over
``grapharc_assistants``, ``grapharc_assistant_versions`` and ``grapharc_assistant_changes``
(migration 7). The logic is core's ``grapharc.assistants.sql_store``; this is its PostgreSQL
dialect: a change locks the assistant's row (``FOR UPDATE``), so racing updates number their
versions one after another."""

from __future__ import annotations

from grapharc.assistants.sql_store import SqlAssistantStore
from grapharc.postgres.connect import conninfo
from grapharc.postgres.pooled import PooledStore


class PostgresAssistantStore(PooledStore, SqlAssistantStore):
    """Assistants, their versions and change log in the PostgreSQL database ``uri``."""

    LOCK = "FOR UPDATE"


def open_assistant_store(location: str, kind: str = "assistants") -> PostgresAssistantStore:
    """The store-hook factory behind ``postgres://`` and ``postgresql://`` for ``kind="assistants"``."""
    return PostgresAssistantStore(conninfo(location))
