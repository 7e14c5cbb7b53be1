"""The PostgreSQL cron store: the ``crons`` kind of ``postgres://``, over ``grapharc_crons``
(migration 8). The logic is core's ``grapharc.crons.sql_store``; this is its PostgreSQL dialect:
an update locks the schedule's row (``FOR UPDATE``), and a slot's conditional UPDATE takes the
same lock, so of the workers racing for a slot one moves it on and the others find it moved."""

from __future__ import annotations

from grapharc.crons.sql_store import SqlCronStore
from grapharc.postgres.connect import conninfo
from grapharc.postgres.pooled import PooledStore


class PostgresCronStore(PooledStore, SqlCronStore):
    """Cron schedules in the PostgreSQL database ``uri``."""

    LOCK = "FOR UPDATE"


def open_cron_store(location: str, kind: str = "crons") -> PostgresCronStore:
    """The store-hook factory behind ``postgres://`` and ``postgresql://`` for ``kind="crons"``."""
    return PostgresCronStore(conninfo(location))
