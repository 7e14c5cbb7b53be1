"""Versioned migrations of the session, trace, run and long-term store tables, recorded in
``grapharc_schema_versions``.

Each migration runs once, in order, in one transaction under the migration lock
(``grapharc.postgres.migration_lock``), so workers starting together apply it once. A store
refuses a database that has a version this code does not know (a newer GraphARC upgraded it), and
one whose version table was edited back while the newer tables stay (a migration finds what it
creates already there), naming the versions. The session and run tables are
core's (``grapharc.session.tables``), written in PostgreSQL's DDL by ``POSTGRES``; the audit
trail refuses UPDATE always and DELETE while its session exists (``AUDIT_TRAIL``), enforced
here by a trigger function as SQLite's store does with its own triggers.
"""

from __future__ import annotations

from typing import Any

import psycopg

from grapharc.assistants.tables import ASSISTANT_TABLES
from grapharc.crons.tables import CRON_TABLES
from grapharc.postgres.errors import PostgresStoreError, said
from grapharc.postgres.migration_lock import migrating
from grapharc.runs.tables import LIVE_LOG_TABLES, NOT_BEFORE, RUN_TABLES, WEBHOOK_FLAG
from grapharc.session.tables import (
    AUDIT_TRAIL,
    OWNERS_AND_SIGN_INS,
    SESSION_TABLES,
    THREAD_METADATA,
    AppendOnly,
    DdlDialect,
    Type,
    ddl,
)
from grapharc.stores.masking import masked
from grapharc.webhooks.tables import WEBHOOK_TABLES

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
"""  # noqa: S608 -- identifiers are GraphARC's own constants; values are bound


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
    (5, "each thread's own metadata, and a run's not-before time",
     "\n".join([*THREAD_METADATA.statements(POSTGRES), *NOT_BEFORE.statements(POSTGRES)]) + "\n"),
    (6, "the runs' live event logs", ddl(LIVE_LOG_TABLES, POSTGRES)),
    (7, "assistants created over the API, their versions and change log", ddl(ASSISTANT_TABLES, POSTGRES)),
    (8, "cron schedules of runs", ddl(CRON_TABLES, POSTGRES)),
    (9, "run webhooks' delivery state", ddl(WEBHOOK_TABLES, POSTGRES)),
    (10, "the long-term store's items, their impact-ordered postings and BM25 totals", """
CREATE SEQUENCE grapharc_store_writes;
CREATE TABLE grapharc_store_items (
    written BIGINT PRIMARY KEY,
    path TEXT COLLATE "C" NOT NULL,
    key TEXT NOT NULL,
    value JSONB NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ,
    ttl_minutes DOUBLE PRECISION,
    length INTEGER NOT NULL,
    frequencies JSONB NOT NULL,
    UNIQUE (path, key)
);
CREATE INDEX grapharc_store_items_expiring ON grapharc_store_items (expires_at) WHERE expires_at IS NOT NULL;
CREATE TABLE grapharc_store_postings (
    term TEXT NOT NULL,
    frequency DOUBLE PRECISION NOT NULL,
    length INTEGER NOT NULL,
    written BIGINT NOT NULL,
    PRIMARY KEY (term, frequency, length, written)
);
CREATE INDEX grapharc_store_postings_of_item ON grapharc_store_postings (written, term);
CREATE TABLE grapharc_store_groups (
    term TEXT NOT NULL,
    frequency DOUBLE PRECISION NOT NULL,
    length INTEGER NOT NULL,
    items INTEGER NOT NULL,
    PRIMARY KEY (term, frequency, length)
);
CREATE TABLE grapharc_store_totals (
    one BOOLEAN PRIMARY KEY DEFAULT true CHECK (one),
    items BIGINT NOT NULL,
    length BIGINT NOT NULL
);
INSERT INTO grapharc_store_totals (items, length) VALUES (0, 0);
"""),
    (11, "the long-term store items' vectors, for a store given an embedder",
     "ALTER TABLE grapharc_store_items ADD COLUMN vector BYTEA;\n"),
    (12, "whether each run has a webhook", "\n".join(WEBHOOK_FLAG.statements(POSTGRES)) + "\n"),
)
"""Each migration: its version, what it adds, its SQL. The session tables (1), the run table (3),
the thread owners with the sign-in records (4), the threads' metadata with the runs' not-before
times (5), the runs' live event logs (6), the assistants created over the API (7), the cron
schedules (8), the run webhooks' deliveries (9) and whether each run has a webhook (14) are
core's descriptions; the trace events and
the notifications (2) and the long-term store's items (10, ``grapharc.postgres.items``) with their
vectors (11) are PostgreSQL's alone."""

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
    """Apply every migration the database lacks, in one transaction under the migration lock; the
    versions applied now. ``conn`` is an autocommit connection of its own."""
    name = masked(uri)
    try:
        with migrating(conn, name), conn.transaction():
            conn.execute(_VERSIONS)
            done = applied(conn)
            refuse_unknown(done, uri)
            fresh = [(v, what, sql) for v, what, sql in MIGRATIONS if v not in done]
            for version, description, sql in fresh:
                _apply(conn, (version, description, sql), done, uri)
    except psycopg.Error as exc:  # before any migration: the version table cannot be made or read
        raise PostgresStoreError(f"cannot migrate the PostgreSQL store {name}: {said(uri, exc)}",
                                 hint=PRIVILEGES) from exc
    return [version for version, _, _ in fresh]


PRIVILEGES = ("the URI's user must be able to create tables in the database (or run grapharc db "
              "upgrade once as a user who can)")

ALREADY_THERE = (psycopg.errors.DuplicateTable, psycopg.errors.DuplicateObject,
                 psycopg.errors.DuplicateFunction)
"""What a migration meets when what it creates is already there: a table or index, a trigger, a
function."""


def _apply(conn: psycopg.Connection[Any], migration: tuple[int, str, str], done: list[int], uri: str) -> None:
    """Run one migration and record it; a failure names the migration, and a migration that finds its
    tables already there names the versions the table records (it was edited back)."""
    version, description, sql = migration
    try:
        conn.execute(sql.encode())  # several statements, no parameters: sent as one script
    except ALREADY_THERE as exc:
        recorded = ", ".join(map(str, done)) or "none"
        raise PostgresStoreError(
            f"the PostgreSQL store {masked(uri)} records schema versions {recorded} (of {LATEST}), but "
            f"migration {version} ({description}) finds what it creates already there: {said(uri, exc)}",
            hint="grapharc_schema_versions was edited or rolled back by hand: restore its rows, or the "
                 "database from a backup (a migration is never applied over tables it finds)") from exc
    except psycopg.Error as exc:
        raise PostgresStoreError(f"migration {version} ({description}) of the PostgreSQL store {masked(uri)} "
                                 f"failed: {said(uri, exc)}", hint=PRIVILEGES) from exc
    conn.execute("INSERT INTO grapharc_schema_versions (version, description) VALUES (%s, %s)",
                  (version, description))


def refuse_unknown(done: list[int], uri: str) -> None:
    """Refuse a database carrying a migration this GraphARC does not have."""
    unknown = sorted(set(done) - {version for version, _, _ in MIGRATIONS})
    if unknown:
        raise PostgresStoreError(
            f"the PostgreSQL store {masked(uri)} has schema version {unknown[-1]}; this GraphARC "
            f"knows versions up to {LATEST}", hint="upgrade grapharc-postgres on this machine")


def _first(row: Any) -> Any:
    return next(iter(row.values())) if isinstance(row, dict) else row[0]
