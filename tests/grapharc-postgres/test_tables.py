"""The session and run tables come from core's one description (``grapharc.session.tables``), and
the migrations written from it make the schema the released, hand-written migrations made, which
existing databases hold: the same columns, types, defaults, constraints, indexes, sequences,
triggers and trigger functions, compared as PostgreSQL's catalogs write them back."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from postgres_released import RELEASED_MIGRATIONS

from grapharc.postgres import schema
from grapharc.runs.records import RunRecord
from grapharc.stores import open_store

CATALOG = {
    "columns": "SELECT table_name, column_name, ordinal_position, data_type, is_nullable, column_default "
               "FROM information_schema.columns WHERE table_schema = current_schema()",
    "indexes": "SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema()",
    "constraints": "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) FROM pg_constraint "
                   "WHERE connamespace = current_schema()::regnamespace",
    "sequences": "SELECT sequence_name, data_type FROM information_schema.sequences "
                 "WHERE sequence_schema = current_schema()",
    "triggers": "SELECT tgrelid::regclass::text, tgname, pg_get_triggerdef(oid) FROM pg_trigger "
                "WHERE NOT tgisinternal",
    "functions": "SELECT proname, regexp_replace(prosrc, '\\s+', ' ', 'g') FROM pg_proc "
                 "WHERE pronamespace = current_schema()::regnamespace",
    "versions": "SELECT version, description FROM grapharc_schema_versions",
}
"""What the database says of its schema, each in PostgreSQL's own words (a function's source with
its layout taken out)."""


def catalog(uri: str) -> dict[str, list[tuple[Any, ...]]]:
    with psycopg.connect(uri) as conn:
        return {what: sorted(conn.execute(query).fetchall()) for what, query in CATALOG.items()}


def migrated_as_released(uri: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """``uri`` brought up to date by the released migrations, as an existing database was."""
    with monkeypatch.context() as patched, psycopg.connect(uri, autocommit=True) as conn:
        patched.setattr(schema, "MIGRATIONS", RELEASED_MIGRATIONS)
        schema.upgrade(conn, uri)
    return uri


def test_a_new_database_gets_the_schema_the_released_migrations_made_brought_up_to_date(
        new_database, monkeypatch):
    fresh = new_database()
    open_store(fresh, kind="sessions").close()
    existing = migrated_as_released(new_database(), monkeypatch)
    open_store(existing, kind="sessions").close()  # the migrations since (4: owners, sign-ins; 5: metadata)
    assert catalog(fresh) == catalog(existing)


def test_a_database_the_released_migrations_made_opens_and_works(new_database, monkeypatch):
    existing = migrated_as_released(new_database(), monkeypatch)
    with psycopg.connect(existing) as conn:
        conn.execute("INSERT INTO grapharc_sessions (thread_id, graph, status, created_at, updated_at) "
                     "VALUES ('old', 'g', 'created', 1.0, 1.0)")
        conn.execute("INSERT INTO grapharc_runs (run_id, thread_id, assistant_id, request, created_at, "
                     "updated_at, stream_modes, multitask_strategy, status, metadata) VALUES ('r0', 'old', "
                     "'g', '{}', 1.0, 1.0, '[\"values\"]', 'reject', 'pending', '{}')")
    sessions, runs = open_store(existing, kind="sessions"), open_store(existing, kind="runs")
    try:
        sessions.create("t1", "g", 1.0, owner="alice", tenant="acme", metadata={"team": "credit"})
        assert [entry.kind for entry in sessions.audit("t1")] == ["created"]
        assert (sessions.get("t1").owner, sessions.get("t1").tenant) == ("alice", "acme")
        assert sessions.get("t1").metadata == {"team": "credit"}
        assert (sessions.get("old").owner, sessions.get("old").tenant) == (None, None)  # made before
        assert sessions.get("old").metadata == {}
        assert sessions.update_metadata("old", {"team": "desk"}, 2.0, by="ana").metadata == {"team": "desk"}
        assert runs.get("old", "r0").not_before is None  # kept, claimable at once
        runs.add(RunRecord("r1", "t1", "g", {}, 1.0, 1.0, not_before=5.0), exclusive=True)
        assert [run.run_id for run in runs.of_thread("t1")] == ["r1"]
        assert runs.claim_next("w", 2.0, 10.0, ("g",)).run_id == "r0"
        assert runs.claim_next("w", 2.0, 10.0, ("g",)) is None  # r1 waits until 5.0
    finally:
        sessions.close()
        runs.close()
    applied = [version for version, _ in catalog(existing)["versions"]]
    assert applied == list(range(1, schema.LATEST + 1))  # those since the released ones, once
