"""The SQLite run store: the ``runs`` kind of the ``sqlite:`` scheme, ``DIR/runs.db`` beside the sessions.

Every change is one ``BEGIN IMMEDIATE`` transaction, so a claim is atomic across the worker
processes sharing the file: of two workers claiming the same run one gets it. Each thread
uses a connection of its own.
"""

from __future__ import annotations

import builtins  # `builtins.list` in annotations: the class below has a method named `list`
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from pathlib import Path

from grapharc.runs.errors import RunStoreError, ThreadBusyError, UnknownRunError
from grapharc.runs.records import (
    ENDED,
    INSERT_COLUMNS,
    INTERRUPTED,
    PENDING,
    RUNNING,
    RunRecord,
    record_of,
    row_values,
)
from grapharc.session.sqlite_files import RUNS_FILE, database_path, prepare_database_file

SCHEMA_VERSION = "1"  # kept under meta's key runs_schema: a file may hold the session tables too
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL UNIQUE,
    thread_id TEXT NOT NULL,
    assistant_id TEXT NOT NULL,
    request TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    after_seq INTEGER,
    stream_modes TEXT NOT NULL,
    budget TEXT,
    multitask_strategy TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'running', 'success', 'error', 'interrupted')),
    end_seq INTEGER,
    error TEXT,
    worker TEXT,
    claim_expires_at REAL,
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 0,
    metadata TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_by_thread ON runs (thread_id, status, seq);
CREATE INDEX IF NOT EXISTS runs_by_status ON runs (status, seq);
"""

# The first pending run of a thread none of whose runs is running, of the graphs ``{graphs}`` lists.
RUNNABLE = """SELECT * FROM runs AS r WHERE r.status = 'pending' AND r.assistant_id IN ({graphs})
    AND NOT EXISTS (
    SELECT 1 FROM runs AS o WHERE o.thread_id = r.thread_id
    AND (o.status = 'running' OR (o.status = 'pending' AND o.seq < r.seq))) ORDER BY r.seq LIMIT 1"""


class SqliteRunStore:
    """Runs and their queue in one SQLite file at ``path``."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        self._local = threading.local()
        self._opened: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._prepare()

    def _prepare(self) -> None:
        prepare_database_file(self.path, "run store", RunStoreError)
        try:
            with closing(self._connect()) as conn:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.executescript(f"BEGIN IMMEDIATE;\n{SCHEMA}\nCOMMIT;")
                conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('runs_schema', ?)",
                             (SCHEMA_VERSION,))
                found = conn.execute("SELECT value FROM meta WHERE key = 'runs_schema'").fetchone()[0]
        except (sqlite3.DatabaseError, OSError) as exc:
            raise RunStoreError(f"cannot use {self.path} as a run store: {exc}",
                                hint="point at a session directory GraphARC created, or a new one") from exc
        if found != SCHEMA_VERSION:
            raise RunStoreError(f"run store {self.path} has schema {found}; this GraphARC reads "
                                f"schema {SCHEMA_VERSION}")

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(str(self.path), timeout=30.0, isolation_level=None, check_same_thread=False)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA synchronous=NORMAL")
        return conn

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One atomic change or consistent read: BEGIN IMMEDIATE, commit on success, roll back on error."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self._connect()
            with self._lock:
                self._opened.append(conn)
        try:
            conn.execute("BEGIN IMMEDIATE")
            yield conn
            conn.execute("COMMIT")
        except BaseException as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise RunStoreError(f"run store {self.path}: {exc}") from exc
            raise

    def close(self) -> None:
        """Close every connection this store opened; closing twice is harmless."""
        with self._lock:
            opened, self._opened = self._opened, []
        for conn in opened:
            conn.close()
        self._local = threading.local()

    def add(self, run: RunRecord, *, exclusive: bool) -> RunRecord:
        """``RunStore.add``."""
        with self._write() as conn:
            if exclusive:
                busy = conn.execute("SELECT run_id, status FROM runs WHERE thread_id = ? AND status IN "
                                    "('pending', 'running') ORDER BY seq LIMIT 1",
                                    (run.thread_id,)).fetchone()
                if busy is not None:
                    raise ThreadBusyError(run.thread_id, busy["run_id"], busy["status"])
            marks = ", ".join("?" for _ in INSERT_COLUMNS)
            conn.execute(f"INSERT INTO runs ({', '.join(INSERT_COLUMNS)}) VALUES ({marks})", row_values(run))
            return _get(conn, run.thread_id, run.run_id)

    def get(self, thread_id: str, run_id: str) -> RunRecord:
        """``RunStore.get``."""
        with self._write() as conn:
            return _get(conn, thread_id, run_id)

    def of_thread(self, thread_id: str) -> builtins.list[RunRecord]:
        """``RunStore.of_thread``."""
        with self._write() as conn:
            rows = conn.execute("SELECT * FROM runs WHERE thread_id = ? ORDER BY seq DESC", (thread_id,))
            return [record_of(dict(row)) for row in rows]

    def claim_next(self, worker: str, now: float, ttl: float, graphs: Sequence[str]) -> RunRecord | None:
        """``RunStore.claim_next``."""
        marks = ", ".join("?" for _ in graphs)
        with self._write() as conn:
            row = conn.execute(RUNNABLE.format(graphs=marks), tuple(graphs)).fetchone()
            if row is None:
                return None
            conn.execute("UPDATE runs SET status = ?, worker = ?, claim_expires_at = ?, updated_at = ?, "
                         "attempts = attempts + 1 WHERE seq = ?",
                         (RUNNING, worker, now + ttl, now, row["seq"]))
            return _get(conn, row["thread_id"], row["run_id"])

    def begin(self, run_id: str, worker: str, after_seq: int) -> bool:
        """``RunStore.begin``."""
        with self._write() as conn:
            done = conn.execute("UPDATE runs SET after_seq = ? WHERE run_id = ? AND worker = ? "
                                "AND status = ? AND after_seq IS NULL", (after_seq, run_id, worker, RUNNING))
            return done.rowcount == 1

    def heartbeat(self, worker: str, now: float, ttl: float) -> builtins.list[str]:
        """``RunStore.heartbeat``."""
        with self._write() as conn:
            conn.execute("UPDATE runs SET claim_expires_at = ? WHERE worker = ? AND status = ?",
                         (now + ttl, worker, RUNNING))
            rows = conn.execute("SELECT run_id FROM runs WHERE worker = ? AND status = ? "
                                "AND cancel_requested", (worker, RUNNING))
            return [row["run_id"] for row in rows]

    def finish(self, run_id: str, worker: str, status: str, now: float, *, end_seq: int,
               error: str | None = None) -> bool:
        """``RunStore.finish``."""
        if status not in ENDED:
            raise RunStoreError(f"a run ends success, error or interrupted, not {status!r}")
        with self._write() as conn:
            done = conn.execute("UPDATE runs SET status = ?, end_seq = ?, error = ?, updated_at = ?, "
                                "claim_expires_at = NULL WHERE run_id = ? AND worker = ? AND status = ?",
                                (status, end_seq, error, now, run_id, worker, RUNNING))
            return done.rowcount == 1

    def request_cancel(self, thread_id: str, run_id: str, now: float) -> RunRecord:
        """``RunStore.request_cancel``."""
        with self._write() as conn:
            run = _get(conn, thread_id, run_id)
            if run.status == PENDING:
                conn.execute("UPDATE runs SET status = ?, end_seq = after_seq, error = 'cancelled', "
                             "updated_at = ? WHERE run_id = ?", (INTERRUPTED, now, run_id))
            elif run.status == RUNNING:
                conn.execute("UPDATE runs SET cancel_requested = 1, updated_at = ? WHERE run_id = ?",
                             (now, run_id))
            return _get(conn, thread_id, run_id)

    def stale(self, now: float) -> builtins.list[RunRecord]:
        """``RunStore.stale``."""
        with self._write() as conn:
            rows = conn.execute("SELECT * FROM runs WHERE status = ? AND claim_expires_at < ? ORDER BY seq",
                                (RUNNING, now))
            return [record_of(dict(row)) for row in rows]

    def reclaim(self, run_id: str, worker: str, now: float, ttl: float) -> RunRecord | None:
        """``RunStore.reclaim``."""
        with self._write() as conn:
            taken = conn.execute("UPDATE runs SET worker = ?, claim_expires_at = ?, updated_at = ?, "
                                 "attempts = attempts + 1 WHERE run_id = ? AND status = ? "
                                 "AND claim_expires_at < ?", (worker, now + ttl, now, run_id, RUNNING, now))
            if taken.rowcount != 1:
                return None
            row = conn.execute("SELECT * FROM runs WHERE run_id = ?", (run_id,)).fetchone()
            return record_of(dict(row))


def _get(conn: sqlite3.Connection, thread_id: str, run_id: str) -> RunRecord:
    row = conn.execute("SELECT * FROM runs WHERE run_id = ? AND thread_id = ?",
                       (run_id, thread_id)).fetchone()
    if row is None:
        raise UnknownRunError(thread_id, run_id)
    return record_of(dict(row))


def open_run_store(location: str, kind: str = "runs") -> SqliteRunStore:
    """The store-hook factory behind ``sqlite:`` for ``kind="runs"``: a directory's ``runs.db``, or
    the file named."""
    return SqliteRunStore(database_path(location, RUNS_FILE, RunStoreError))

