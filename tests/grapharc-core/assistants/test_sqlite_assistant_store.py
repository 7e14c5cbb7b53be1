"""Core's SQLite assistant store (``sqlite:DIR`` keeps it in ``DIR/runs.db``) against the
assistant-store kit, beside the run store in the same file."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from grapharc.sqlite.assistants import SqliteAssistantStore
from grapharc.stores import open_store, store_uri
from grapharc.testing.assistant_store_kit import AssistantStoreConformance, first_version


class TestSqliteAssistantStoreConformance(AssistantStoreConformance):
    durable = True

    def make_store(self, tmp_path: Path) -> SqliteAssistantStore:
        return open_store(f"sqlite:{tmp_path / 'sessions'}", kind="assistants")


def test_the_assistants_live_in_the_run_store_file_under_a_schema_version_of_their_own(
        tmp_path: Path) -> None:
    runs = open_store(store_uri(tmp_path / "sessions", "runs"), kind="runs")
    assistants = open_store(store_uri(tmp_path / "sessions", "assistants"), kind="assistants")
    try:
        assistants.create(first_version())
    finally:
        assistants.close()
        runs.close()
    with sqlite3.connect(tmp_path / "sessions" / "runs.db") as conn:
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        assert conn.execute("SELECT COUNT(*) FROM assistants").fetchone() == (1,)
    assert meta["assistants_schema"] == "1" and "runs_schema" in meta
