"""The SQLite stores' reads made on every checkpoint write and every stream wake are one statement each.

A fenced checkpoint write checks its lease (``holds``) and a stream re-reads its run's record
(``RunStore.get``) and the thread's trail (``audit``) each time it wakes: in SQLite's autocommit
mode one statement is its own snapshot, so none of them opens a transaction (a BEGIN and a COMMIT,
two thirds of the statements a lease check cost, and a write lock for the run's record).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from grapharc.session import SqliteSessionStore
from grapharc.session.errors import LeaseLostError, UnknownSessionError
from grapharc.sqlite.database import SqliteDatabase
from grapharc.sqlite.runs import SqliteRunStore
from grapharc.testing.run_store_kit import GRAPH, new_run


@contextmanager
def statements_of(db: SqliteDatabase) -> Iterator[list[str]]:
    """The statements this thread's connection to ``db`` runs within the block."""
    seen: list[str] = []
    connection = db.thread_connection()
    connection.set_trace_callback(seen.append)
    try:
        yield seen
    finally:
        connection.set_trace_callback(None)


def one_statement(db: SqliteDatabase, read: Callable[[], Any]) -> Any:
    """``read()``'s result, once it is seen to run exactly one statement, a SELECT."""
    with statements_of(db) as seen:
        result = read()
    assert len(seen) == 1 and seen[0].lstrip().upper().startswith("SELECT"), seen
    return result


@pytest.fixture
def sessions(tmp_path: Path) -> Iterator[SqliteSessionStore]:
    store = SqliteSessionStore(tmp_path / "sessions.db")
    yield store
    store.close()


def test_a_lease_check_is_one_statement_and_still_sees_a_lost_lease(sessions: SqliteSessionStore) -> None:
    sessions.create("t", "g", 1.0)
    lease = sessions.claim_start("t", runner="a", ttl=30.0, now=2.0, input={}, inbox=None)
    assert one_statement(sessions._db, lambda: sessions.holds(lease)) is True
    sessions.finish(lease, "completed", 3.0)
    assert one_statement(sessions._db, lambda: sessions.holds(lease)) is False


def test_a_read_of_the_trail_past_a_seq_is_one_statement(sessions: SqliteSessionStore) -> None:
    sessions.create("t", "g", 1.0)
    sessions.claim_start("t", runner="a", ttl=30.0, now=2.0, input={}, inbox=None)
    trail = one_statement(sessions._db, lambda: sessions.audit("t"))
    assert [entry.kind for entry in trail] == ["created", "claimed"]
    assert sessions.audit("t", trail[-1].seq) == []  # nothing past the last: the thread is there
    with pytest.raises(UnknownSessionError):
        sessions.audit("nobody")


def test_a_run_record_read_is_one_statement(tmp_path: Path) -> None:
    runs = SqliteRunStore(tmp_path / "runs.db")
    try:
        added = runs.add(new_run("t"), exclusive=True)
        assert one_statement(runs._db, lambda: runs.get("t", added.run_id)).run_id == added.run_id
    finally:
        runs.close()


def test_a_new_session_is_read_back_in_the_transaction_that_made_it(sessions: SqliteSessionStore) -> None:
    """``create`` (every ``POST /threads``) reads its row back before it commits: a new thread has
    no approval nor node to read, which a ``get`` after it read in a transaction of its own (ten
    statements in all before, five now)."""
    with statements_of(sessions._db) as seen:
        made = sessions.create("t", "g", 1.0, owner="ann", metadata={"k": "v"})
    assert [s.split()[0].upper() for s in seen] == ["BEGIN", "INSERT", "INSERT", "SELECT", "COMMIT"], seen
    assert made == sessions.get("t")
    assert (made.status, made.owner, made.metadata) == ("created", "ann", {"k": "v"})
    assert (made.holds, made.last_node) == ((), None)


def test_a_fenced_write_reads_only_the_lease_and_the_watermark_of_the_thread_s_row(
        sessions: SqliteSessionStore) -> None:
    """Every node's record, the run's record and the turn's end read the thread's row to check the
    lease: its token, status and the scan's watermark, not the whole row, whose ``turn`` holds the
    turn's input."""
    sessions.create("t", "g", 1.0)
    lease = sessions.claim_start("t", runner="a", ttl=30.0, now=2.0, input={"big": "x" * 1000}, inbox=None)
    with statements_of(sessions._db) as seen:
        sessions.record_directive(lease, {"goto": "next"}, 3.0)
    reads = [s for s in seen if s.lstrip().upper().startswith("SELECT")]
    assert reads == ["SELECT lease_token, status, audited_step FROM sessions WHERE thread_id = 't' "], seen
    sessions.finish(lease, "completed", 4.0)
    with pytest.raises(LeaseLostError):
        sessions.record_directive(lease, {"goto": "next"}, 5.0)


def test_a_turn_s_watermark_and_approvals_are_read_without_the_thread_s_whole_row(
        sessions: SqliteSessionStore) -> None:
    """A turn's start reads the scan's watermark and its settling the thread's approvals: neither
    needs the thread's row (whose turn holds the turn's input) but to know the thread is there."""
    sessions.create("t", "g", 1.0)
    sessions.claim_start("t", runner="a", ttl=30.0, now=2.0, input={"big": "x" * 1000}, inbox=None)
    with statements_of(sessions._db) as seen:
        assert sessions.audited_step("t") == -1  # a new thread's: before the input checkpoint
        assert sessions.approvals("t") == []
    assert not [s for s in seen if "SELECT *" in s and "FROM sessions" in s], seen
    assert seen[0] == "SELECT audited_step FROM sessions WHERE thread_id = 't'"
    for read in (lambda: sessions.audited_step("nobody"), lambda: sessions.approvals("nobody")):
        with pytest.raises(UnknownSessionError):
            read()


def test_a_run_queued_or_claimed_is_read_back_by_the_statement_that_wrote_it(tmp_path: Path) -> None:
    """``add`` and ``claim_next`` (each run's) return the row their INSERT or UPDATE wrote
    (``RETURNING``), with no SELECT of it after, and a claim finds its run in the UPDATE's own
    subquery: one statement for each instead of two and three."""
    runs = SqliteRunStore(tmp_path / "runs.db")
    try:
        with statements_of(runs._db) as added:
            run = runs.add(new_run("t"), exclusive=False)
        assert run == runs.get("t", run.run_id)
        with statements_of(runs._db) as claimed:
            taken = runs.claim_next("w", 1.0, 30.0, [GRAPH])
        assert taken is not None and taken == runs.get("t", run.run_id) and taken.worker == "w"
        assert [s.split()[0] for s in added] == ["BEGIN", "INSERT", "COMMIT"], added
        assert [s.split()[0] for s in claimed] == ["BEGIN", "UPDATE", "COMMIT"], claimed
    finally:
        runs.close()


def test_the_workers_look_for_stale_runs_is_one_statement(tmp_path: Path) -> None:
    """Every tick that claims a run looks for stale ones first: a SELECT alone, not a write
    transaction (or, in the worker's trip, a savepoint) around it."""
    runs = SqliteRunStore(tmp_path / "runs.db")
    try:
        run = runs.add(new_run("t"), exclusive=False)
        runs.claim_next("w", 1.0, 30.0, [GRAPH])
        assert [r.run_id for r in one_statement(runs._db, lambda: runs.stale(40.0))] == [run.run_id]
    finally:
        runs.close()
