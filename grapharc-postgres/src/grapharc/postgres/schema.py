"""Versioned migrations of the session, trace and run tables, recorded in ``grapharc_schema_versions``.

Each migration runs once, in order, in one transaction holding an advisory lock, so
workers starting together apply it once. A store refuses a database that has a version
this code does not know (a newer GraphARC upgraded it). The session and run tables are
core's (``grapharc.session.tables``), written in PostgreSQL's DDL by ``POSTGRES``; the audit
trail refuses UPDATE always and DELETE while its session exists (``AUDIT_TRAIL``), enforced
here by a trigger function as SQLite's store does with its own triggers.
"""

from __future__ import annotations

from typing import Any

import psycopg

from grapharc.postgres.errors import PostgresStoreError, redacted
from grapharc.runs.tables import RUN_TABLES
from grapharc.session.tables import (
    AUDIT_TRAIL,
    OWNERS_AND_SIGN_INS,
    SESSION_TABLES,
    AppendOnly,
    DdlDialect,
    Type,
    ddl,
)

_LOCK = 0x6772_6170_6861_7263 & 0x7FFF_FFFF_FFFF_FFFF  # "grapharc", one advisory lock key

PREFIX = "grapharc_"
"""What every GraphARC table's name starts with here, beside other applications' tables."""

POSTGRES = DdlDialect({
    Type.TEXT: "TEXT", Type.INTEGER: "INTEGER", Type.SEQUENCE: "BIGINT", Type.REAL: "DOUBLE PRECISION",
    Type.JSON: "JSONB", Type.FLAG: "BOOLEAN", Type.COUNTER: "BIGSERIAL PRIMARY KEY",
    Type.INSERTION_ORDER: "BIGSERIAL UNIQUE",
}, prefix=PREFIX)
"""Core's tables in PostgreSQL: JSON as JSONB, a counter and the insertion order as BIGSERIAL."""


def append_only(rule: AppendOnly) -> str:
    """A trigger function refusing every UPDATE of ``rule.table`` and a DELETE while its owner row
    exists, and the trigger that calls it."""
    table, owner = PREFIX + rule.table, PREFIX + rule.owner
    return f"""\
CREATE FUNCTION {table}_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        RAISE EXCEPTION '{rule.update_refused}';
    END IF;
    IF EXISTS (SELECT 1 FROM {owner} WHERE {rule.key} = OLD.{rule.key}) THEN
        RAISE EXCEPTION '{rule.delete_refused}';
    END IF;
    RETURN OLD;
END $$;
CREATE TRIGGER {table}_is_append_only BEFORE UPDATE OR DELETE ON {table}
    FOR EACH ROW EXECUTE FUNCTION {table}_guard();
"""


MIGRATIONS: tuple[tuple[int, str, str], ...] = (
    (1, "sessions, approvals, events and audit",
     ddl(SESSION_TABLES, POSTGRES) + append_only(AUDIT_TRAIL)),
    (2, "trace events, and a notification on each audit or trace write", """
CREATE TABLE grapharc_trace_events (
    seq BIGSERIAL PRIMARY KEY,
    run_id TEXT,
    thread_id TEXT,
    line TEXT NOT NULL,
    written_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX grapharc_trace_events_by_run ON grapharc_trace_events (run_id, seq);
CREATE INDEX grapharc_trace_events_by_thread ON grapharc_trace_events (thread_id, seq);
CREATE FUNCTION grapharc_notify_write() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify(TG_ARGV[0], thread) FROM (SELECT DISTINCT COALESCE(thread_id, '') AS thread
                                               FROM written) AS threads;
    RETURN NULL;
END $$;
CREATE TRIGGER grapharc_audit_notifies AFTER INSERT ON grapharc_audit REFERENCING NEW TABLE AS written
    FOR EACH STATEMENT EXECUTE FUNCTION grapharc_notify_write('grapharc_audit');
CREATE TRIGGER grapharc_trace_notifies AFTER INSERT ON grapharc_trace_events REFERENCING NEW TABLE AS written
    FOR EACH STATEMENT EXECUTE FUNCTION grapharc_notify_write('grapharc_trace');
"""),
    (3, "runs and the run queue", ddl(RUN_TABLES, POSTGRES)),
    (4, "who created each thread, and the server's sign-in records",
     "\n".join(OWNERS_AND_SIGN_INS.statements(POSTGRES)) + "\n"),
)
"""Each migration: its version, what it adds, its SQL. The session tables (1), the run table (3) and
the thread owners with the sign-in records (4) are core's descriptions; the trace events and the
notifications (2) are PostgreSQL's alone."""

CHANNELS = ("grapharc_audit", "grapharc_trace")
"""What the triggers notify after each INSERT statement into the audit trail and the trace events:
once per thread id written (the payload), so a batch of a thousand trace events is one notification."""

LATEST = MIGRATIONS[-1][0]

_VERSIONS = """CREATE TABLE IF NOT EXISTS grapharc_schema_versions (
    version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"""


def applied(conn: psycopg.Connection[Any]) -> list[int]:
    """The versions applied to the database, oldest first (none on a fresh database)."""
    found = conn.execute("SELECT to_regclass('grapharc_schema_versions') AS t").fetchone()
    if found is None or _first(found) is None:
        return []
    return [_first(r) for r in conn.execute("SELECT version FROM grapharc_schema_versions ORDER BY version")]


def upgrade(conn: psycopg.Connection[Any], uri: str) -> list[int]:
    """Apply every migration the database lacks, in one transaction; the versions applied now."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK,))
        conn.execute(_VERSIONS)
        done = applied(conn)
        refuse_unknown(done, uri)
        fresh = [(v, what, sql) for v, what, sql in MIGRATIONS if v not in done]
        for version, description, sql in fresh:
            conn.execute(sql.encode())  # several statements, no parameters: sent as one script
            conn.execute("INSERT INTO grapharc_schema_versions (version, description) VALUES (%s, %s)",
                         (version, description))
    return [version for version, _, _ in fresh]


def refuse_unknown(done: list[int], uri: str) -> None:
    """Refuse a database carrying a migration this GraphARC does not have."""
    unknown = sorted(set(done) - {version for version, _, _ in MIGRATIONS})
    if unknown:
        raise PostgresStoreError(
            f"the PostgreSQL store {redacted(uri)} has schema version {unknown[-1]}; this GraphARC "
            f"knows versions up to {LATEST}", hint="upgrade grapharc-postgres on this machine")


def _first(row: Any) -> Any:
    return next(iter(row.values())) if isinstance(row, dict) else row[0]
