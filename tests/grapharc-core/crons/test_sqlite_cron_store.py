"""Core's SQLite cron store (``sqlite:DIR`` keeps it in ``DIR/runs.db``) against the cron-store kit,
beside the run store in the same file under a schema version of its own."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from grapharc.crons.manage import open_crons
from grapharc.sqlite.crons import SqliteCronStore
from grapharc.stores import open_store, store_uri
from grapharc.testing.cron_store_kit import CronStoreConformance, a_cron


class TestSqliteCronStoreConformance(CronStoreConformance):
    durable = True

    def make_store(self, tmp_path: Path) -> SqliteCronStore:
        return open_store(f"sqlite:{tmp_path / 'sessions'}", kind="crons")


def test_the_schedules_live_in_the_run_store_file_under_a_schema_version_of_their_own(tmp_path: Path) -> None:
    runs = open_store(store_uri(tmp_path / "sessions", "runs"), kind="runs")
    crons = open_crons(tmp_path / "sessions")
    try:
        crons.add(a_cron())
    finally:
        crons.close()
        runs.close()
    with sqlite3.connect(tmp_path / "sessions" / "runs.db") as conn:
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        assert conn.execute("SELECT COUNT(*) FROM crons").fetchone() == (1,)
    assert meta["crons_schema"] == "1" and "runs_schema" in meta


def statements_of(store: SqliteCronStore) -> list[str]:
    """The statements this thread's connection to ``store``'s file runs from now on."""
    seen: list[str] = []
    store._db.thread_connection().set_trace_callback(seen.append)
    return seen


def test_an_idle_look_for_due_schedules_takes_no_write_lock(tmp_path: Path) -> None:
    """The scheduler's look when nothing is due only reads: no ``BEGIN IMMEDIATE`` (SQLite's write
    lock, which every other writer of the file would queue behind) and no change."""
    crons = open_crons(tmp_path / "sessions")
    try:
        crons.add(a_cron(next_run_at=600.0))
        seen = statements_of(crons)
        assert crons.next_due() == 600.0 and crons.due(100.0) == []
    finally:
        crons.close()
    assert seen and not [s for s in seen if s.startswith(("BEGIN IMMEDIATE", "UPDATE", "INSERT", "DELETE"))]
