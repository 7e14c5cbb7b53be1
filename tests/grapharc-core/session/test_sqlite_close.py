"""Closing a SQLite store while other threads run statements on their connections waits for each
statement, instead of freeing the connection under it (which crashed the interpreter: a server
stopping while its run worker's thread read the run queue); no statement runs on a closed connection
(a thread's next use opens a new one), and a close never hangs, even one made inside a statement's
block on the closing thread itself."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any, ClassVar

import pytest

from grapharc.runs.errors import RunStoreError
from grapharc.sqlite.database import SqliteDatabase
from grapharc.stores import in_place

SCRIPT = textwrap.dedent('''
    import sys
    import threading

    from grapharc.sqlite.runs import SqliteRunStore

    store = SqliteRunStore(sys.argv[1])
    running, closing, closed, said = threading.Event(), threading.Event(), threading.Event(), []

    def pause() -> int:
        running.set()
        closing.wait()
        # a close that did not wait for this statement would be done (or crash) in this time
        if closed.wait(0.2):
            said.append("closed under the statement")
        return 1

    def slow_statement() -> None:
        with store._db.write() as conn:
            conn.create_function("pause", 0, pause)
            conn.execute("SELECT pause()").fetchall()
            said.append("statement done")

    worker = threading.Thread(target=slow_statement)
    worker.start()
    running.wait()
    closing.set()
    store.close()
    closed.set()
    said.append("closed")
    worker.join()
    store.close()
    print(",".join(said))
''')


def test_close_waits_for_a_statement_another_thread_is_running(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path / "runs.db")],
                          capture_output=True, text=True, timeout=120)

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "statement done,closed"


def test_a_store_used_after_close_opens_a_new_connection(tmp_path: Path) -> None:
    from grapharc.sqlite.runs import SqliteRunStore

    store = SqliteRunStore(tmp_path / "runs.db")
    store.close()
    assert store.of_thread("t") == []
    store.close()


class _Watched(sqlite3.Connection):
    """A connection that notes being closed while one of its statements runs (``SELECT inside()``
    yields to other threads halfway through) and every one it was made."""

    made: ClassVar[list[_Watched]] = []
    closed_under_a_statement: ClassVar[list[str]] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.inside_now = 0
        self.is_closed = False
        self.create_function("inside", 0, self._inside)
        _Watched.made.append(self)

    def _inside(self) -> int:
        self.inside_now += 1
        time.sleep(0)  # let the closing thread run while the statement is inside
        self.inside_now -= 1
        return 1

    def close(self) -> None:
        if self.inside_now:
            _Watched.closed_under_a_statement.append(repr(self))
        self.is_closed = True
        super().close()


class _WatchedDatabase(SqliteDatabase):
    """A ``SqliteDatabase`` whose connections are ``_Watched``."""

    def connect(self, timeout: float = 30.0) -> sqlite3.Connection:
        conn = sqlite3.connect(str(self.path), timeout=timeout, isolation_level=None,
                               check_same_thread=False, factory=_Watched)
        conn.row_factory = sqlite3.Row
        return conn


ROUNDS = 10
WORKERS = 6
STATEMENTS = 40


def _statements(db: SqliteDatabase, errors: list[BaseException]) -> None:
    """Statements of every kind a store runs (a change, a read, one autocommitted statement, a call
    run in place), over and over."""
    try:
        for i in range(STATEMENTS):
            kind = i % 4
            if kind == 0:
                with db.write() as conn:
                    conn.execute("SELECT inside()").fetchall()
            elif kind == 1:
                with db.read() as conn:
                    conn.execute("SELECT inside()").fetchall()
            elif kind == 2:
                with db.autocommit() as conn:
                    conn.execute("SELECT inside()").fetchall()
            else:
                def change() -> None:
                    with db.write() as conn:
                        conn.execute("SELECT inside()").fetchall()
                in_place.run(change)  # refused at once (nothing written) where the file is busy
    except RunStoreError as exc:  # a busy file can time out under this load; nothing else may fail
        if "locked" not in str(exc):
            errors.append(exc)
    except BaseException as exc:
        errors.append(exc)


def test_closing_while_many_threads_run_statements_never_closes_under_one_nor_hangs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_Watched, "made", [])
    monkeypatch.setattr(_Watched, "closed_under_a_statement", [])
    db = _WatchedDatabase(tmp_path / "stress.db", "run store", RunStoreError)
    longest = 0.0
    errors: list[BaseException] = []
    for _ in range(ROUNDS):
        workers = [threading.Thread(target=_statements, args=(db, errors)) for _ in range(WORKERS)]
        for worker in workers:
            worker.start()
        while any(worker.is_alive() for worker in workers):
            began = time.monotonic()
            db.close()
            longest = max(longest, time.monotonic() - began)
        for worker in workers:
            worker.join()
    db.close()

    assert not errors, errors  # a statement on a closed connection fails with ProgrammingError
    assert not _Watched.closed_under_a_statement
    assert longest < 10.0  # far under CLOSE_WAIT_SECONDS: a close waits for statements, not for ever
    assert len(_Watched.made) > WORKERS and all(conn.is_closed for conn in _Watched.made)


def test_a_close_inside_a_statement_block_of_the_closing_thread_returns_at_once(tmp_path: Path) -> None:
    db = _WatchedDatabase(tmp_path / "own.db", "run store", RunStoreError)
    with db.write() as conn:
        began = time.monotonic()
        db.close()
        assert time.monotonic() - began < 1.0
        assert conn.execute("SELECT inside()").fetchone()[0] == 1  # left open under the block
    db.close()
    assert conn.is_closed  # type: ignore[attr-defined]
