"""The cron store's table, described as :mod:`grapharc.session.tables` describes the session tables:
core's SQLite store renders it (``crons_schema`` 1, in the run store's file) and grapharc-postgres's
migration 8 does in PostgreSQL. JSON is kept as text in both, so rows read back the same."""

from __future__ import annotations

from grapharc.session.tables import Column, Index, Table, Type

CRON_TABLES = (
    Table("crons", (
        Column("cron_id", Type.TEXT, key=True),
        Column("assistant_id", Type.TEXT, required=True),
        Column("thread_id", Type.TEXT),
        Column("schedule", Type.TEXT, required=True),
        Column("timezone", Type.TEXT),
        Column("payload", Type.TEXT, required=True),
        Column("metadata", Type.TEXT, required=True),
        Column("enabled", Type.FLAG, required=True, default=True),
        Column("end_time", Type.REAL),
        Column("next_run_at", Type.REAL),
        Column("created_at", Type.REAL, required=True),
        Column("updated_at", Type.REAL, required=True),
        Column("user_id", Type.TEXT),
        Column("on_run_completed", Type.TEXT),
    ), (
        Index("crons_due", ("next_run_at",), where="enabled AND next_run_at IS NOT NULL"),
        Index("crons_by_thread", ("thread_id",)),
        Index("crons_by_assistant", ("assistant_id", "created_at")),
    )),
)
"""Each schedule: what it runs (``payload``), when (``schedule``, ``timezone``, ``end_time``) and the
slot it fires at next (``next_run_at``, which the schedulers move on to claim a slot)."""
