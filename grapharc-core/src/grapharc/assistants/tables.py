"""The assistant store's tables, described as :mod:`grapharc.session.tables` describes the session
tables: core's SQLite store renders them (``assistants_schema`` 1, in the run store's file) and
grapharc-postgres's migration 7 does in PostgreSQL. JSON is kept as text in both, so rows read
back the same."""

from __future__ import annotations

from grapharc.assistants.records import ACTIONS
from grapharc.session.tables import Column, Index, Table, Type

ASSISTANT_TABLES = (
    Table("assistants", (
        Column("assistant_id", Type.TEXT, key=True),
        Column("graph_id", Type.TEXT, required=True),
        Column("version", Type.INTEGER, required=True),
        Column("created_at", Type.REAL, required=True),
        Column("updated_at", Type.REAL, required=True),
    ), (Index("assistants_by_graph", ("graph_id", "created_at")),)),
    Table("assistant_versions", (
        Column("assistant_id", Type.TEXT, required=True),
        Column("version", Type.INTEGER, required=True),
        Column("graph_id", Type.TEXT, required=True),
        Column("config", Type.TEXT, required=True),
        Column("context", Type.TEXT),
        Column("metadata", Type.TEXT, required=True),
        Column("name", Type.TEXT, required=True),
        Column("description", Type.TEXT),
        Column("created_at", Type.REAL, required=True),
        Column("created_by", Type.TEXT, required=True),
    ), (Index("assistant_versions_by_number", ("assistant_id", "version"), unique=True),)),
    Table("assistant_changes", (
        Column("seq", Type.COUNTER),
        Column("assistant_id", Type.TEXT, required=True),
        Column("action", Type.TEXT, required=True, one_of=ACTIONS),
        Column("version", Type.INTEGER, required=True),
        Column("graph_id", Type.TEXT, required=True),
        Column("changed_by", Type.TEXT, required=True),
        Column("at", Type.REAL, required=True),
        Column("keys", Type.TEXT, required=True),
    ), (Index("assistant_changes_by_assistant", ("assistant_id", "seq")),)),
)
"""Each assistant (the version runs use), every version of it, and the log of its changes, which
outlives a deleted assistant."""
