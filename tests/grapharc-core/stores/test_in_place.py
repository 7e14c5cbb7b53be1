"""Store calls run in place on the event loop (``grapharc.stores.in_place``, ``offload.nearby``): all of a
call or none of it, never waiting there, over core's SQLite stores; other stores keep their trip."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import pytest

from grapharc.runs.records import RunRecord
from grapharc.session.errors import SessionExistsError, UnknownSessionError
from grapharc.sqlite.checkpoints import SqliteCheckpoints
from grapharc.sqlite.files import CHECKPOINTS_FILE, RUNS_FILE, SESSIONS_FILE
from grapharc.sqlite.runs import SqliteRunStore
from grapharc.sqlite.sessions import SqliteSessionStore
from grapharc.stores import in_place, offload
from grapharc.testing.thread_trips import thread_trips


@pytest.fixture
def stores(tmp_path: Path) -> Iterator[tuple[SqliteSessionStore, SqliteRunStore]]:
    sessions, runs = SqliteSessionStore(tmp_path / SESSIONS_FILE), SqliteRunStore(tmp_path / RUNS_FILE)
    yield sessions, runs
    sessions.close()
    runs.close()


@contextmanager
def write_locked(path: Path) -> Iterator[sqlite3.Connection]:
    """Another connection (as another process's) holding ``path``'s write lock in the block."""
    with closing(sqlite3.connect(path, isolation_level=None)) as other:
        other.execute("BEGIN IMMEDIATE")
        try:
            yield other
        finally:
            if other.in_transaction:
                other.execute("ROLLBACK")


def _run(thread: str) -> RunRecord:
    now = time.time()
    return RunRecord(run_id=uuid.uuid4().hex, thread_id=thread, assistant_id="g",
                     request={"kind": "start", "input": {}}, created_at=now, updated_at=now)


def _create_and_queue(sessions: SqliteSessionStore, runs: SqliteRunStore, thread: str) -> str:
    """A session created (read back in the call) and a run queued on it: a change to each file."""
    created = sessions.create(thread, "g", time.time())
    runs.add(_run(created.thread_id), exclusive=True)
    return created.thread_id


def test_a_call_in_place_changes_both_files_and_reads_back_what_it_wrote(
        stores: tuple[SqliteSessionStore, SqliteRunStore], tmp_path: Path) -> None:
    sessions, runs = stores
    ran, thread = in_place.run(_create_and_queue, sessions, runs, "t1")
    assert (ran, thread) == (True, "t1")  # create read the session it wrote, in the call's transaction
    with closing(sqlite3.connect(tmp_path / SESSIONS_FILE)) as other:  # committed: seen from outside
        found = other.execute("SELECT status FROM sessions WHERE thread_id = 't1'").fetchall()
    assert found == [("created",)]
    assert [run.thread_id for run in runs.of_thread("t1")] == ["t1"]


def test_a_call_meeting_a_busy_file_is_undone_whole(
        stores: tuple[SqliteSessionStore, SqliteRunStore], tmp_path: Path) -> None:
    """The session was written before the run file answered busy: it is rolled back too, and the call
    did not wait for the lock."""
    sessions, runs = stores
    with write_locked(tmp_path / RUNS_FILE):
        assert in_place.run(_create_and_queue, sessions, runs, "t2") == (False, None)
    with pytest.raises(UnknownSessionError):
        sessions.get("t2")
    assert runs.of_thread("t2") == []


def test_a_call_that_catches_the_busy_error_is_undone_all_the_same(
        stores: tuple[SqliteSessionStore, SqliteRunStore], tmp_path: Path) -> None:
    sessions, runs = stores

    def swallowing() -> str:
        sessions.create("t3", "g", time.time())
        try:
            runs.add(_run("t3"), exclusive=True)
        except Exception:
            return "went on"
        return "queued"

    with write_locked(tmp_path / RUNS_FILE):
        assert in_place.run(swallowing) == (False, None)
    with pytest.raises(UnknownSessionError):
        sessions.get("t3")


def test_a_change_refused_in_place_raises_as_it_would_keeping_what_came_before(
        stores: tuple[SqliteSessionStore, SqliteRunStore]) -> None:
    """A store's own refusal is no wait: the call raises it, as off the loop, and keeps its earlier
    changes, as when each committed on its own."""
    sessions, _runs = stores

    def twice() -> None:
        sessions.create("t4", "g", time.time())
        sessions.create("t4", "g", time.time())

    with pytest.raises(SessionExistsError):
        in_place.run(twice)
    assert sessions.get("t4").status == "created"
    assert in_place.run(sessions.create, "t5", "g", time.time())[0]  # the next call in place runs


def test_nearby_sends_a_call_meeting_a_busy_file_to_the_pool_where_it_waits_and_the_loop_runs_on(
        stores: tuple[SqliteSessionStore, SqliteRunStore], tmp_path: Path) -> None:
    sessions, runs = stores

    async def main() -> tuple[list[str], str]:
        with thread_trips() as trips, write_locked(tmp_path / SESSIONS_FILE) as other:
            call = asyncio.create_task(
                offload.nearby((sessions, runs), _create_and_queue, sessions, runs, "t6"))
            while trips.names() != ["_create_and_queue"]:  # the loop is not held: this task runs on
                await asyncio.sleep(0)
            assert not call.done()
            other.execute("COMMIT")
            return trips.names(), await call

    assert asyncio.run(main()) == (["_create_and_queue"], "t6")
    assert sessions.get("t6").status == "created" and len(runs.of_thread("t6")) == 1


def test_nearby_keeps_the_trip_of_a_store_that_does_not_write_on_the_loop(
        stores: tuple[SqliteSessionStore, SqliteRunStore]) -> None:
    """A PostgreSQL store (any store not declaring ``WRITES_ON_LOOP``) waits for locks: its calls stay
    off the loop."""
    sessions, runs = stores
    on: list[int] = []

    def where() -> None:
        on.append(threading.get_ident())

    async def main() -> list[str]:
        with thread_trips() as trips:
            await offload.nearby((sessions, object()), where)
            await offload.nearby((sessions, runs), where)
        return trips.names()

    assert asyncio.run(main()) == ["where"]
    assert on[0] != on[1] == threading.get_ident()


def test_the_sync_checkpointer_reads_in_place_but_refuses_to_write_or_wait_there(tmp_path: Path) -> None:
    """Through the sync saver a call in place reads; a write, or its connection held by another
    thread, undoes the call instead (a write of its own could not be rolled back with the call's)."""
    checkpoints = SqliteCheckpoints(tmp_path / CHECKPOINTS_FILE)
    saver = checkpoints.saver()
    config: Any = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    try:
        assert in_place.run(saver.get_tuple, config) == (True, None)
        assert in_place.run(saver.delete_thread, "t") == (False, None)
        with saver.lock:
            assert in_place.run(saver.get_tuple, config) == (False, None)
        assert in_place.run(saver.get_tuple, config) == (True, None)  # left read-only for no one
        saver.delete_thread("t")  # off a call in place, it writes
    finally:
        checkpoints.close()


def test_a_task_made_by_a_call_in_place_calls_its_stores_outside_the_ended_scope(
        stores: tuple[SqliteSessionStore, SqliteRunStore], tmp_path: Path) -> None:
    """A task copies its maker's context, the scope with it: once the call has returned, the task's
    changes commit on their own, as any other's, not into a transaction no one would end."""
    sessions, _runs = stores

    async def main() -> None:
        made: list[asyncio.Task[Any]] = []

        def making() -> None:
            async def later() -> None:
                sessions.create("t7", "g", time.time())
            made.append(asyncio.get_running_loop().create_task(later()))

        assert in_place.run(making) == (True, None)
        await made[0]

    asyncio.run(main())
    with closing(sqlite3.connect(tmp_path / SESSIONS_FILE)) as other:  # committed: seen from outside
        assert other.execute("SELECT count(*) FROM sessions WHERE thread_id = 't7'").fetchone() == (1,)
