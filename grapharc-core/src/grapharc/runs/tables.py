"""The run store's table, described as :mod:`grapharc.session.tables` describes the session tables.

Core's SQLite run store and grapharc-postgres's migration 3 render it with ``ddl`` in their own
dialects; like the session tables, it is the table as released. Three changes came after:
``LIVE_LOG_TABLES``, the runs' live event logs (SQLite's runs schema 2, PostgreSQL's migration 6),
``NOT_BEFORE`` (SQLite's runs schema 3, PostgreSQL's migration 5) and ``WEBHOOK_FLAG`` (SQLite's
runs schema 4, PostgreSQL's migration 12).
"""

from __future__ import annotations

from grapharc.runs.records import STATUSES as RUN_STATUSES
from grapharc.session.tables import Change, Column, Index, Table, Type

RUN_TABLES = (
    Table("runs", (
        Column("seq", Type.COUNTER),
        Column("run_id", Type.TEXT, required=True, unique=True),
        Column("thread_id", Type.TEXT, required=True),
        Column("assistant_id", Type.TEXT, required=True),
        Column("request", Type.TEXT, required=True),
        Column("created_at", Type.REAL, required=True),
        Column("updated_at", Type.REAL, required=True),
        Column("after_seq", Type.SEQUENCE),
        Column("stream_modes", Type.TEXT, required=True),
        Column("budget", Type.TEXT),
        Column("multitask_strategy", Type.TEXT, required=True),
        Column("status", Type.TEXT, required=True, one_of=RUN_STATUSES),
        Column("end_seq", Type.SEQUENCE),
        Column("error", Type.TEXT),
        Column("worker", Type.TEXT),
        Column("claim_expires_at", Type.REAL),
        Column("cancel_requested", Type.FLAG, required=True, default=False),
        Column("attempts", Type.INTEGER, required=True, default=0),
        Column("metadata", Type.TEXT, required=True),
    ), (
        Index("runs_by_thread", ("thread_id", "status", "seq")),
        Index("runs_by_status", ("status", "seq")),
    )),
)
"""The run store's table: the server's run records and its queue."""

LIVE_LOG_TABLES = (
    Table("run_stream", (
        Column("run_id", Type.TEXT, required=True),
        Column("thread_id", Type.TEXT, required=True),
        Column("n", Type.SEQUENCE, required=True),
        Column("mode", Type.TEXT, required=True),
        Column("event", Type.TEXT, required=True),
        Column("data", Type.TEXT, required=True),
        Column("at", Type.REAL, required=True),
    ), (
        Index("run_stream_by_run", ("run_id", "n"), unique=True),
        Index("run_stream_by_thread", ("thread_id",)),
    )),
)
"""Each run's live events (``grapharc.runs.records.LiveEvent``), numbered ``n`` from 1 in the run:
what the stream modes the trail cannot render (tokens, custom writes, debug...) sent, as SSE events."""

NOT_BEFORE = Change(columns=(("runs", Column("not_before", Type.REAL)),))
"""When a pending run may first be claimed (epoch seconds; NULL: at once), for a run created with
``after_seconds``: SQLite's runs schema 3, PostgreSQL's migration 5."""

WEBHOOK_FLAG = Change(columns=(("runs", Column("webhook", Type.FLAG, required=True, default=False)),))
"""Whether a run was created with a webhook (its delivery waits in the webhook store), so the worker
that ends it wakes the webhook sender only for such a run: SQLite's runs schema 4, PostgreSQL's
migration 12. A run queued before reads as having none (its hook is sent at the sender's poll)."""
