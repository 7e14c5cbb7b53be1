"""Retention on PostgreSQL: pruning removes finished threads with their checkpoints and writes (which
LangGraph's Postgres saver would keep forever), and never a paused thread."""

from __future__ import annotations

import psycopg


def rows(uri: str, table: str, thread_id: str) -> int:
    with psycopg.connect(uri) as conn:
        found = conn.execute(f"SELECT COUNT(*) FROM {table} WHERE thread_id = %s", (thread_id,)).fetchone()
    return found[0] if found else 0


def test_prune_removes_finished_threads_with_their_checkpoints_and_keeps_paused_ones(postgres_uri, manager):
    assert manager.start("chain", thread_id="done").status == "completed"
    assert manager.start("interview", thread_id="held").status == "paused"
    held_before = rows(postgres_uri, "checkpoints", "held")
    done_before = rows(postgres_uri, "checkpoints", "done")
    assert done_before > 0

    report = manager.prune(0)

    assert report.removed == ("done",) and report.checkpoints == done_before
    for table in ("checkpoints", "checkpoint_writes", "checkpoint_blobs", "grapharc_sessions",
                  "grapharc_audit"):
        assert rows(postgres_uri, table, "done") == 0, table
    assert [s.thread_id for s in manager.list()] == ["held"]
    assert rows(postgres_uri, "checkpoints", "held") == held_before and manager.get("held").status == "paused"
