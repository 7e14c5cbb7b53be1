"""The webhook store's table, described as :mod:`grapharc.session.tables` describes the session tables.

Core's SQLite store renders it (``webhooks_schema`` 1, in the run store's file, beside the runs it
joins) and grapharc-postgres's migration 9 does in PostgreSQL.
"""

from __future__ import annotations

from grapharc.session.tables import Column, Index, Table, Type
from grapharc.webhooks.records import STATUSES

WEBHOOK_TABLES = (
    Table("webhooks", (
        Column("run_id", Type.TEXT, key=True),
        Column("thread_id", Type.TEXT, required=True),
        Column("url", Type.TEXT, required=True),
        Column("created_at", Type.REAL, required=True),
        Column("status", Type.TEXT, required=True, one_of=STATUSES),
        Column("attempts", Type.INTEGER, required=True, default=0),
        Column("next_attempt_at", Type.REAL),
        Column("last_error", Type.TEXT),
        Column("worker", Type.TEXT),
        Column("body", Type.TEXT),
        Column("delivered_at", Type.REAL),
    ), (Index("webhooks_due", ("status", "next_attempt_at")),)),
)
"""Each run's webhook delivery (``grapharc.webhooks.records.Delivery``), keyed by its run."""
