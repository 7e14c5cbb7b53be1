"""Versioned migrations: ``grapharc db upgrade --store URI`` applies them once and records each in
``grapharc_schema_versions``; a database with a version this GraphARC does not know is refused;
an unreachable server or a URI of another kind is a clear error, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys

import psycopg
import pytest

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
