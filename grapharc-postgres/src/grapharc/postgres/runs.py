"""The PostgreSQL run store: the ``runs`` kind of ``postgres://``, the run queue every worker shares.

``open_store("postgresql://HOST/DB", kind="runs")`` gives core's ``RunStore`` contract
(``grapharc.runs.contracts``) over ``grapharc_runs`` (migration 2). A worker claims the next
runnable run with ``SELECT ... FOR UPDATE SKIP LOCKED``, so workers never wait on each other's
claims and never take the same run; adding a run that may not wait first takes a transaction
advisory lock on its thread, so two such requests racing on an idle thread cannot both be queued.
"""

from __future__ import annotations

import builtins  # `builtins.list` in annotations
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

import psycopg

from grapharc.postgres.connect import conninfo, open_pool, transaction
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

Conn = psycopg.Connection[dict[str, Any]]

# The first pending run of a thread none of whose runs is running, of the graphs given; runs other workers are
# claiming right now are skipped, not waited for.
RUNNABLE = """SELECT * FROM grapharc_runs AS r WHERE r.status = 'pending' AND r.assistant_id = ANY(%s)
    AND NOT EXISTS (
    SELECT 1 FROM grapharc_runs AS o WHERE o.thread_id = r.thread_id
    AND (o.status = 'running' OR (o.status = 'pending' AND o.seq < r.seq)))
    ORDER BY r.seq LIMIT 1 FOR UPDATE SKIP LOCKED"""


class PostgresRunStore:
    """Runs and their queue in the PostgreSQL database ``uri``."""

    def __init__(self, uri: str, *, max_size: int = 4) -> None:
        self.uri = uri
        self._pool = open_pool(uri, max_size)

    def _tx(self) -> AbstractContextManager[Conn]:
        return transaction(self._pool, self.uri)

    def close(self) -> None:
        """Close the pool; closing twice is harmless."""
        self._pool.close()

    def add(self, run: RunRecord, *, exclusive: bool) -> RunRecord:
        """``RunStore.add``."""
        with self._tx() as conn:
            if exclusive:
                conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (run.thread_id,))
                busy = conn.execute("SELECT run_id, status FROM grapharc_runs WHERE thread_id = %s "
                                    "AND status IN ('pending', 'running') ORDER BY seq LIMIT 1",
                                    (run.thread_id,)).fetchone()
                if busy is not None:
                    raise ThreadBusyError(run.thread_id, busy["run_id"], busy["status"])
            marks = ", ".join("%s" for _ in INSERT_COLUMNS)
            row = conn.execute(f"INSERT INTO grapharc_runs ({', '.join(INSERT_COLUMNS)}) VALUES ({marks}) "
                               "RETURNING *", row_values(run)).fetchone()
        return record_of(_present(row, run.thread_id, run.run_id))

    def get(self, thread_id: str, run_id: str) -> RunRecord:
        """``RunStore.get``."""
        with self._tx() as conn:
            return _get(conn, thread_id, run_id)

    def of_thread(self, thread_id: str) -> builtins.list[RunRecord]:
        """``RunStore.of_thread``."""
        with self._tx() as conn:
            rows = conn.execute("SELECT * FROM grapharc_runs WHERE thread_id = %s ORDER BY seq DESC",
                                (thread_id,)).fetchall()
        return [record_of(row) for row in rows]

    def claim_next(self, worker: str, now: float, ttl: float, graphs: Sequence[str]) -> RunRecord | None:
        """``RunStore.claim_next``."""
        with self._tx() as conn:
            found = conn.execute(RUNNABLE, (list(graphs),)).fetchone()
            if found is None:
                return None
            row = conn.execute("UPDATE grapharc_runs SET status = %s, worker = %s, claim_expires_at = %s, "
                               "updated_at = %s, attempts = attempts + 1 WHERE seq = %s RETURNING *",
                               (RUNNING, worker, now + ttl, now, found["seq"])).fetchone()
        return record_of(_present(row, found["thread_id"], found["run_id"]))

    def begin(self, run_id: str, worker: str, after_seq: int) -> bool:
        """``RunStore.begin``."""
        with self._tx() as conn:
            done = conn.execute("UPDATE grapharc_runs SET after_seq = %s WHERE run_id = %s AND worker = %s "
                                "AND status = %s AND after_seq IS NULL", (after_seq, run_id, worker, RUNNING))
            return done.rowcount == 1

    def heartbeat(self, worker: str, now: float, ttl: float) -> builtins.list[str]:
        """``RunStore.heartbeat``."""
        with self._tx() as conn:
            rows = conn.execute("UPDATE grapharc_runs SET claim_expires_at = %s WHERE worker = %s "
                                "AND status = %s RETURNING run_id, cancel_requested",
                                (now + ttl, worker, RUNNING)).fetchall()
        return [row["run_id"] for row in rows if row["cancel_requested"]]

    def finish(self, run_id: str, worker: str, status: str, now: float, *, end_seq: int,
               error: str | None = None) -> bool:
        """``RunStore.finish``."""
        if status not in ENDED:
            raise RunStoreError(f"a run ends success, error or interrupted, not {status!r}")
        with self._tx() as conn:
            done = conn.execute("UPDATE grapharc_runs SET status = %s, end_seq = %s, error = %s, "
                                "updated_at = %s, claim_expires_at = NULL "
                                "WHERE run_id = %s AND worker = %s AND status = %s",
                                (status, end_seq, error, now, run_id, worker, RUNNING))
            return done.rowcount == 1

    def request_cancel(self, thread_id: str, run_id: str, now: float) -> RunRecord:
        """``RunStore.request_cancel``."""
        with self._tx() as conn:
            run = _get(conn, thread_id, run_id, lock=True)
            if run.status == PENDING:
                conn.execute("UPDATE grapharc_runs SET status = %s, end_seq = after_seq, "
                             "error = 'cancelled', updated_at = %s WHERE run_id = %s",
                             (INTERRUPTED, now, run_id))
            elif run.status == RUNNING:
                conn.execute("UPDATE grapharc_runs SET cancel_requested = true, updated_at = %s "
                             "WHERE run_id = %s", (now, run_id))
            return _get(conn, thread_id, run_id)

    def stale(self, now: float) -> builtins.list[RunRecord]:
        """``RunStore.stale``."""
        with self._tx() as conn:
            rows = conn.execute("SELECT * FROM grapharc_runs WHERE status = %s AND claim_expires_at < %s "
                                "ORDER BY seq", (RUNNING, now)).fetchall()
        return [record_of(row) for row in rows]

    def reclaim(self, run_id: str, worker: str, now: float, ttl: float) -> RunRecord | None:
        """``RunStore.reclaim``."""
        with self._tx() as conn:
            row = conn.execute("UPDATE grapharc_runs SET worker = %s, claim_expires_at = %s, "
                               "updated_at = %s, attempts = attempts + 1 WHERE run_id = %s AND status = %s "
                               "AND claim_expires_at < %s RETURNING *",
                               (worker, now + ttl, now, run_id, RUNNING, now)).fetchone()
        return None if row is None else record_of(row)


def _get(conn: Conn, thread_id: str, run_id: str, *, lock: bool = False) -> RunRecord:
    row = conn.execute("SELECT * FROM grapharc_runs WHERE run_id = %s AND thread_id = %s"
                       + (" FOR UPDATE" if lock else ""), (run_id, thread_id)).fetchone()
    return record_of(_present(row, thread_id, run_id))


def _present(row: dict[str, Any] | None, thread_id: str, run_id: str) -> dict[str, Any]:
    if row is None:
        raise UnknownRunError(thread_id, run_id)
    return row


def open_run_store(location: str, kind: str = "runs") -> PostgresRunStore:
    """The store-hook factory behind ``postgres://`` and ``postgresql://`` for ``kind="runs"``."""
    return PostgresRunStore(conninfo(location))
