"""Core's SQLite webhook store (``sqlite:DIR`` keeps it in ``DIR/runs.db``, beside the runs it
joins) against the webhook-store kit."""

from __future__ import annotations

from pathlib import Path

from grapharc.runs.contracts import RunStore
from grapharc.sqlite.webhooks import SqliteWebhookStore
from grapharc.stores import open_store
from grapharc.testing.webhook_store_kit import WebhookStoreConformance


class TestSqliteWebhookStoreConformance(WebhookStoreConformance):
    durable = True

    def make_store(self, tmp_path: Path) -> SqliteWebhookStore:
        return open_store(f"sqlite:{tmp_path / 'sessions'}", kind="webhooks")

    def make_run_store(self, tmp_path: Path) -> RunStore:
        return open_store(f"sqlite:{tmp_path / 'sessions'}", kind="runs")


def test_the_deliveries_live_in_the_run_stores_file_under_their_own_schema_key(tmp_path: Path) -> None:
    import sqlite3

    open_store(f"sqlite:{tmp_path / 'sessions'}", kind="webhooks").close()
    open_store(f"sqlite:{tmp_path / 'sessions'}", kind="runs").close()
    with sqlite3.connect(tmp_path / "sessions" / "runs.db") as conn:
        keys = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    assert keys["webhooks_schema"] == "1" and keys["runs_schema"] == "4"


def test_an_idle_look_for_due_deliveries_takes_no_write_lock(tmp_path: Path) -> None:
    """The sender's look when nothing is due only reads: no ``BEGIN IMMEDIATE`` (SQLite's write
    lock, which every other writer of the file would queue behind) and no change."""
    store: SqliteWebhookStore = open_store(f"sqlite:{tmp_path / 'sessions'}", kind="webhooks")
    try:
        seen: list[str] = []
        store._db.thread_connection().set_trace_callback(seen.append)
        assert not store.has_due(100.0)
    finally:
        store.close()
    assert seen and not [s for s in seen if s.startswith(("BEGIN IMMEDIATE", "UPDATE", "INSERT", "DELETE"))]
