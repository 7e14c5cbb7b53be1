"""Core's SQLite run store (``sqlite:DIR`` keeps ``DIR/runs.db``) against the run-store kit."""

from __future__ import annotations

from pathlib import Path

import pytest

from grapharc.runs.errors import RunStoreError
from grapharc.sqlite.runs import SqliteRunStore
from grapharc.stores import open_store, store_uri
from grapharc.testing.run_store_kit import RunStoreConformance, new_run


class TestSqliteRunStoreConformance(RunStoreConformance):
    durable = True

    def make_store(self, tmp_path: Path) -> SqliteRunStore:
        return open_store(f"sqlite:{tmp_path / 'sessions'}", kind="runs")


def test_a_session_directory_keeps_its_runs_beside_the_sessions(tmp_path: Path) -> None:
    store = open_store(store_uri(tmp_path / "sessions", "runs"), kind="runs")
    store.close()
    assert (tmp_path / "sessions" / "runs.db").is_file()


def test_a_file_that_is_not_a_run_store_is_refused_by_name(tmp_path: Path) -> None:
    junk = tmp_path / "junk.db"
    junk.write_text("not sqlite " * 100)
    with pytest.raises(RunStoreError, match=r"junk\.db"):
        open_store(f"sqlite:{junk}", kind="runs")


def test_one_file_may_hold_the_session_tables_and_the_runs(tmp_path: Path) -> None:
    both = f"sqlite:{tmp_path / 'all.db'}"
    sessions = open_store(both, kind="sessions")
    runs = open_store(both, kind="runs")
    try:
        sessions.create("t1", "kit-graph", 1.0)
        assert runs.add(new_run("t1"), exclusive=True).seq == 1
    finally:
        runs.close()
        sessions.close()
    reopened = open_store(both, kind="sessions")
    try:
        assert reopened.get("t1").graph == "kit-graph"
    finally:
        reopened.close()
