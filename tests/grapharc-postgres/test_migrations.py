"""Versioned migrations: ``grapharc db upgrade --store URI`` applies them once and records each in
``grapharc_schema_versions``, and processes upgrading one database together take turns; a database
with a version this GraphARC does not know is refused, and so is one whose version table was edited
back; an unreachable server or a URI of another kind is a clear error, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import psycopg
import pytest
from langgraph.checkpoint.postgres.base import MIGRATIONS as LANGGRAPH_MIGRATIONS
from session_procs import wait_until

from grapharc.postgres.database import borrowed
from grapharc.postgres.errors import PostgresStoreError
from grapharc.postgres.schema import LATEST
from grapharc.stores import open_store


def grapharc(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "grapharc", *args], capture_output=True, text=True,
                          timeout=120)


def versions(uri: str) -> list[int]:
    with psycopg.connect(uri) as conn:
        rows = conn.execute("SELECT version FROM grapharc_schema_versions ORDER BY version")
        return [row[0] for row in rows]


def tables(uri: str) -> set[str]:
    with psycopg.connect(uri) as conn:
        return {row[0] for row in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")}


def test_db_upgrade_applies_every_migration_once_and_creates_langgraphs_tables(postgres_uri):
    first = grapharc("db", "upgrade", "--store", postgres_uri, "--json")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout) == {"ok": True, "store": postgres_uri,
                                        "applied": list(range(1, LATEST + 1)), "schema_version": LATEST}
    assert versions(postgres_uri) == list(range(1, LATEST + 1))
    assert {"grapharc_sessions", "grapharc_audit", "checkpoints", "checkpoint_writes"} <= tables(postgres_uri)

    again = grapharc("db", "upgrade", "--store", postgres_uri)
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == (f"{postgres_uri} is already at schema version {LATEST}; "
                                    "nothing to apply")
    assert versions(postgres_uri) == list(range(1, LATEST + 1))


def test_opening_a_store_applies_missing_migrations(postgres_uri):
    store = open_store(postgres_uri, kind="sessions")
    store.close()
    assert versions(postgres_uri) == list(range(1, LATEST + 1))


def test_a_database_with_a_newer_schema_is_refused_by_the_store_and_the_command(postgres_uri):
    open_store(postgres_uri, kind="sessions").close()
    with psycopg.connect(postgres_uri) as conn:
        conn.execute("INSERT INTO grapharc_schema_versions (version, description) VALUES (99, 'future')")

    with pytest.raises(PostgresStoreError, match=f"has schema version 99; this GraphARC knows versions "
                                                 f"up to {LATEST}"):
        open_store(postgres_uri, kind="sessions")
    refused = grapharc("db", "upgrade", "--store", postgres_uri, "--json")
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    error = json.loads(refused.stdout)["error"]
    assert "has schema version 99" in error["message"]
    assert error["hint"] == "upgrade grapharc-postgres on this machine"


def test_an_unreachable_server_and_a_store_of_another_kind_are_refused_plainly(tmp_path):
    gone = grapharc("db", "upgrade", "--store", "postgresql://postgres@127.0.0.1:1/none")
    assert gone.returncode != 0 and "Traceback" not in gone.stderr
    assert gone.stderr.startswith("error: cannot open the PostgreSQL store postgresql://postgres@127.0.0.1:1/none")
    assert "hint: check the server is running" in gone.stderr

    other = grapharc("db", "upgrade", "--store", f"sqlite:{tmp_path}/s")
    assert other.returncode != 0 and "Traceback" not in other.stderr
    assert "grapharc db upgrade does not know the sqlite: scheme" in other.stderr
    assert not (tmp_path / "s").exists()


UPGRADERS = 3
LINED_UP = """SELECT count(DISTINCT application_name) FROM pg_stat_activity
WHERE datname = current_database() AND application_name LIKE 'upgrade-%%'
  AND (wait_event_type = 'Lock' OR (state = 'idle' AND query LIKE '%%pg_try_advisory_lock%%'))"""
"""How many upgrading processes wait: for a lock, or (the migration lock's waiters) idle after trying it."""


def test_processes_upgrading_one_fresh_database_together_take_turns(postgres_uri):
    """Lined up where LangGraph's migrations begin (its version table, created as its first migration
    would and held locked), then let go at once: without one lock over every migration they all read
    "no version" and collide ("duplicate key", "deadlock detected")."""
    with psycopg.connect(postgres_uri) as gate:
        gate.execute(LANGGRAPH_MIGRATIONS[0])
        gate.commit()
        gate.execute("LOCK TABLE checkpoint_migrations IN ACCESS EXCLUSIVE MODE")
        upgrading = [subprocess.Popen(
            [sys.executable, "-m", "grapharc", "db", "upgrade", "--store", postgres_uri, "--json"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "PGAPPNAME": f"upgrade-{n}"}) for n in range(UPGRADERS)]
        with psycopg.connect(postgres_uri, autocommit=True) as watch:
            wait_until(lambda: watch.execute(LINED_UP).fetchone()[0] == UPGRADERS)
    outcomes = [process.communicate(timeout=120) for process in upgrading]
    assert [process.returncode for process in upgrading] == [0] * UPGRADERS, outcomes
    applied = sorted(v for stdout, _ in outcomes for v in json.loads(stdout)["applied"])
    assert applied == list(range(1, LATEST + 1))  # each migration applied by one process, once
    assert versions(postgres_uri) == list(range(1, LATEST + 1))
    with psycopg.connect(postgres_uri) as conn:
        langgraph = [row[0] for row in conn.execute("SELECT v FROM checkpoint_migrations ORDER BY v")]
    assert langgraph == list(range(len(LANGGRAPH_MIGRATIONS)))


def test_a_version_table_edited_back_under_newer_tables_is_refused_naming_the_versions(postgres_uri):
    open_store(postgres_uri, kind="sessions").close()
    with psycopg.connect(postgres_uri) as conn:
        conn.execute("DELETE FROM grapharc_schema_versions WHERE version >= 2")
    refused = grapharc("db", "upgrade", "--store", postgres_uri, "--json")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    error = json.loads(refused.stdout)["error"]
    assert error["code"] == "PostgresStoreError"
    assert error["message"] == (
        f"the PostgreSQL store {postgres_uri} records schema versions 1 (of {LATEST}), but migration 2 "
        "(trace events, and a notification on each audit or trace write) finds what it creates already "
        'there: relation "grapharc_trace_events" already exists')
    assert "edited or rolled back" in error["hint"] and "bug" not in error["hint"]
    assert versions(postgres_uri) == [1]  # nothing was applied over what was there


def test_a_statement_the_server_refuses_is_named_as_its_answer_not_as_an_unreachable_server(postgres_uri):
    with borrowed(postgres_uri) as database, psycopg.connect(postgres_uri) as holder:
        holder.execute("LOCK TABLE grapharc_sessions IN ACCESS EXCLUSIVE MODE")
        with pytest.raises(PostgresStoreError) as refused, database.transaction() as conn:
            conn.execute("SET LOCAL lock_timeout = '1ms'")
            conn.execute("SELECT count(*) FROM grapharc_sessions")
    assert str(refused.value).startswith(f"PostgreSQL store {postgres_uri}: canceling statement due to lock "
                                         "timeout")
    assert "check the server is running" not in refused.value.hint
