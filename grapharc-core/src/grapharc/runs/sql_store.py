"""One run store over SQL: the queue, claims, heartbeats and cancellations every SQL backend shares.

``SqliteRunStore`` (core) and ``PostgresRunStore`` (grapharc-postgres) keep the ``RunStore``
contract (``grapharc.runs.contracts``) with the logic here; each supplies only its dialect
(``grapharc.session.sql_dialect.SqlDialect``): how a transaction is opened, how a parameter
and a row lock are written, its table names, and how an exclusive add keeps a racing add of
the same thread out. Run columns are plain text, numbers and a boolean in every dialect, so
rows read back the same (``grapharc.runs.records``).
"""

from __future__ import annotations

import builtins  # `builtins.list` in annotations: the class below has a method named `list`
import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Sequence
from contextlib import AbstractContextManager

from grapharc.runs.contracts import check_page
from grapharc.runs.errors import RunInFlightError, RunStoreError, ThreadBusyError, UnknownRunError
from grapharc.runs.records import (
    CANCEL,
    ENDED,
    INSERT_COLUMNS,
    INTERRUPT,
    INTERRUPTED,
    PENDING,
    ROLLBACK,
    RUNNING,
    LiveEvent,
    RunRecord,
    json_text,
    record_of,
    row_values,
)
from grapharc.session.sql_dialect import Connection, Cursor, SqlDialect

# The first pending run of a thread none of whose runs is running, of the graphs ``{graphs}`` lists,
# once its not-before time (the first parameter: now) has come; ``{claim_lock}`` skips a run another
# worker is claiming right now rather than waiting for it.
RUNNABLE = """SELECT r.seq FROM {{runs}} AS r WHERE r.status = 'pending'
    AND (r.not_before IS NULL OR r.not_before <= ?)
    AND r.assistant_id IN ({graphs}) AND NOT EXISTS (
    SELECT 1 FROM {{runs}} AS o WHERE o.thread_id = r.thread_id
    AND (o.status = 'running' OR (o.status = 'pending' AND o.seq < r.seq)))
    ORDER BY r.seq LIMIT 1 {claim_lock}"""
# Whether a tick of worker ``?`` (the first parameter) has work (``RunStore.has_work``): a cancel asked of
# one of its running runs, a stale run (its claim ended before now, the second) of the graphs
# ``{graphs}`` lists, or a runnable run of them (now and the graphs again).
HAS_WORK = """SELECT EXISTS (SELECT 1 FROM {{runs}} WHERE worker = ? AND status = 'running'
               AND cancel_requested)
    OR EXISTS (SELECT 1 FROM {{runs}} WHERE status = 'running' AND claim_expires_at < ?
               AND assistant_id IN ({graphs}))
    OR EXISTS ({runnable}) AS has_work"""
PROGRESS_COLUMNS = ("status", "after_seq", "end_seq", "error", "worker", "claim_expires_at", "attempts",
                    "updated_at")
"""The columns of a run that change as it is claimed, begins, runs and ends; the JSON ones do not
(but the request, which a cancel asked of a running run rewrites beside ``cancel_requested``)."""
PROGRESS = (f"SELECT {', '.join(PROGRESS_COLUMNS)}, cancel_requested FROM {{runs}} "  # noqa: S608 -- identifiers are GraphARC's own constants; values are bound
            "WHERE run_id = ? AND thread_id = ?")
"""What ``SqlRunStore.refreshed`` reads of a run."""
LIVE_ROWS_PER_INSERT = 200
"""Live events inserted by one statement (7 parameters each: within every driver's limit)."""


class SqlRunStore(SqlDialect, ABC):
    """The ``RunStore`` contract over a SQL ``runs`` table; a subclass supplies the dialect below."""

    # -- the dialect -----------------------------------------------------------------

    @abstractmethod
    def _write(self) -> AbstractContextManager[Connection]:
        """One atomic change or consistent read: committed on success, rolled back on any error."""

    def _read_one(self) -> AbstractContextManager[Connection]:
        """Where a read of a single statement runs (a stream reads its run's record on every wake):
        ``_write`` by default; SQLite's autocommit connection, where one statement is its own
        snapshot, needs no transaction (and takes no write lock) for it."""
        return self._write()

    def _lock_thread(self, conn: Connection, thread_id: str) -> None:
        """Keep another exclusive add of ``thread_id`` out until this transaction ends: nothing by
        default, for a database whose write transaction locks it whole."""

    @abstractmethod
    def close(self) -> None:
        """Release the store's connections; closing twice is harmless."""

    # -- the contract ----------------------------------------------------------------

    def add(self, run: RunRecord, *, exclusive: bool) -> RunRecord:
        """``RunStore.add``."""
        with self._write() as conn:
            if exclusive:
                self._lock_thread(conn, run.thread_id)
                busy = self._run(conn, "SELECT run_id, status FROM {runs} WHERE thread_id = ? "
                                       "AND status IN ('pending', 'running') ORDER BY seq LIMIT 1",
                                 (run.thread_id,)).fetchone()
                if busy is not None:
                    raise ThreadBusyError(run.thread_id, busy["run_id"], busy["status"])
            return record_of(self._insert(conn, run, " RETURNING *").fetchone())

    def add_claimed(self, run: RunRecord, worker: str, now: float, ttl: float) -> RunRecord:
        """``RunStore.add_claimed``."""
        with self._write() as conn:
            self._insert(conn, run)
            claimed = self._run(conn, "UPDATE {runs} SET status = ?, worker = ?, claim_expires_at = ?, "
                                      "attempts = 1 WHERE run_id = ? RETURNING *",
                                (RUNNING, worker, now + ttl, run.run_id))
            return record_of(claimed.fetchone())

    def _insert(self, conn: Connection, run: RunRecord, returning: str = "") -> Cursor:
        """Insert ``run``; the driver's cursor, holding the row as written when ``returning`` is
        ``" RETURNING *"`` (read back in the statement that wrote it: one statement fewer a run)."""
        marks = ", ".join("?" for _ in INSERT_COLUMNS)
        sql = f"INSERT INTO {{runs}} ({', '.join(INSERT_COLUMNS)}) VALUES ({marks}){returning}"  # noqa: S608 -- identifiers are GraphARC's own constants; values are bound
        return self._run(conn, sql, row_values(run))

    def get(self, thread_id: str, run_id: str) -> RunRecord:
        """``RunStore.get``."""
        with self._read_one() as conn:
            return self._get(conn, thread_id, run_id)

    def refreshed(self, run: RunRecord) -> RunRecord:
        """``run`` as it stands now (``grapharc.runs.contracts.refreshed``): one read of the columns
        that change as it runs, its JSON decoded again only once a cancel has rewritten its request
        (a stream reads its run on every wake, and decoding the whole row was most of that read);
        ``run`` itself where none of them changed (most wakes: a node ended, the run did not)."""
        with self._read_one() as conn:
            row = self._run(conn, PROGRESS, (run.run_id, run.thread_id)).fetchone()
            if row is None:
                raise UnknownRunError(run.thread_id, run.run_id)
            if bool(row["cancel_requested"]) != run.cancel_requested:
                return self._get(conn, run.thread_id, run.run_id)
        progress = {name: row[name] for name in PROGRESS_COLUMNS}
        if all(getattr(run, name) == value for name, value in progress.items()):
            return run
        return dataclasses.replace(run, **progress)

    def of_thread(self, thread_id: str, *, status: str | None = None, limit: int | None = None,
                  offset: int = 0) -> builtins.list[RunRecord]:
        """``RunStore.of_thread``: the filter and the page are the query's, so a thread with many
        runs is never read whole for one page."""
        check_page(limit, offset)
        sql = "SELECT * FROM {runs} WHERE thread_id = ?"
        args: list[object] = [thread_id]
        if status is not None:
            sql, args = sql + " AND status = ?", [*args, status]
        sql += " ORDER BY seq DESC"
        if limit is not None:
            sql, args = sql + " LIMIT ? OFFSET ?", [*args, limit, offset]
        with self._write() as conn:
            rows = self._run(conn, sql, tuple(args)).fetchall()
        return [record_of(row) for row in rows]

    def claim_next(self, worker: str, now: float, ttl: float, graphs: Sequence[str]) -> RunRecord | None:
        """``RunStore.claim_next``."""
        if not graphs:
            return None  # no run is of a graph in an empty list
        runnable = RUNNABLE.format(graphs=", ".join("?" for _ in graphs), claim_lock=self.CLAIM_LOCK)
        with self._write() as conn:  # found and taken in one statement, the row it wrote returned
            claimed = self._run(conn, "UPDATE {runs} SET status = ?, worker = ?, claim_expires_at = ?, "  # noqa: S608 -- identifiers are GraphARC's own constants; values are bound
                                      f"updated_at = ?, attempts = attempts + 1 WHERE seq = ({runnable}) "
                                      "RETURNING *", (RUNNING, worker, now + ttl, now, now, *graphs))
            row = claimed.fetchone()
        return None if row is None else record_of(row)

    def has_work(self, worker: str, now: float, graphs: Sequence[str]) -> bool:
        """``RunStore.has_work``: one statement (``IN (NULL)`` matches no graph when none is given)."""
        marks = ", ".join("?" for _ in graphs) or "NULL"
        sql = HAS_WORK.format(graphs=marks, runnable=RUNNABLE.format(graphs=marks, claim_lock=""))
        with self._read_one() as conn:
            return bool(self._run(conn, sql, (worker, now, *graphs, now, *graphs)).fetchone()["has_work"])

    def begin(self, run_id: str, worker: str, after_seq: int) -> bool:
        """``RunStore.begin``."""
        with self._write() as conn:
            done = self._run(conn, "UPDATE {runs} SET after_seq = ? WHERE run_id = ? AND worker = ? "
                                   "AND status = ? AND after_seq IS NULL",
                             (after_seq, run_id, worker, RUNNING))
            return done.rowcount == 1

    def heartbeat(self, worker: str, now: float, ttl: float) -> builtins.list[str]:
        """``RunStore.heartbeat``."""
        with self._write() as conn:
            self._run(conn, "UPDATE {runs} SET claim_expires_at = ? WHERE worker = ? AND status = ?",
                      (now + ttl, worker, RUNNING))
            rows = self._run(conn, "SELECT run_id FROM {runs} WHERE worker = ? AND status = ? "
                                   "AND cancel_requested", (worker, RUNNING)).fetchall()
        return [row["run_id"] for row in rows]

    def finish(self, run_id: str, worker: str, status: str, now: float, *, end_seq: int,
               error: str | None = None) -> bool:
        """``RunStore.finish``."""
        if status not in ENDED:
            raise RunStoreError(f"a run ends success, error or interrupted, not {status!r}")
        with self._write() as conn:
            done = self._run(conn, "UPDATE {runs} SET status = ?, end_seq = ?, error = ?, updated_at = ?, "
                                   "claim_expires_at = NULL WHERE run_id = ? AND worker = ? AND status = ?",
                             (status, end_seq, error, now, run_id, worker, RUNNING))
            return done.rowcount == 1

    def request_cancel(self, thread_id: str, run_id: str, now: float, *, by: str = "api",
                       action: str = INTERRUPT) -> RunRecord:
        """``RunStore.request_cancel``."""
        with self._write() as conn:
            run = self._get(conn, thread_id, run_id, self.LOCK)
            if run.status == PENDING and action == ROLLBACK:
                self._run(conn, "DELETE FROM {runs} WHERE run_id = ?", (run_id,))
                return run
            if run.status == PENDING:
                self._run(conn, "UPDATE {runs} SET status = ?, end_seq = after_seq, error = 'cancelled', "
                                "updated_at = ? WHERE run_id = ?", (INTERRUPTED, now, run_id))
            elif run.status == RUNNING:
                request = {**run.request, CANCEL: {"by": by, "action": action}}
                self._run(conn, "UPDATE {runs} SET cancel_requested = TRUE, request = ?, updated_at = ? "
                                "WHERE run_id = ?", (json_text(request), now, run_id))
            return self._get(conn, thread_id, run_id)

    def unended(self, statuses: Sequence[str] = (PENDING, RUNNING)) -> builtins.list[RunRecord]:
        """``RunStore.unended``."""
        if not set(statuses) <= {PENDING, RUNNING}:
            raise RunStoreError(f"a run not ended is pending or running, not {', '.join(statuses)}")
        marks = ", ".join("?" for _ in statuses)
        with self._write() as conn:
            rows = self._run(conn, f"SELECT * FROM {{runs}} WHERE status IN ({marks}) ORDER BY seq",  # noqa: S608 -- identifiers are GraphARC's own constants; values are bound
                             tuple(statuses)).fetchall()
        return [record_of(row) for row in rows]

    def delete(self, thread_id: str, run_id: str, *, rolled_back: bool = False) -> None:
        """``RunStore.delete``."""
        with self._write() as conn:
            run = self._get(conn, thread_id, run_id, self.LOCK)
            if not run.ended and not rolled_back:
                raise RunInFlightError(thread_id, run_id, run.status)
            self._run(conn, "DELETE FROM {runs} WHERE run_id = ?", (run_id,))
            self._run(conn, "DELETE FROM {run_stream} WHERE run_id = ?", (run_id,))

    def stale(self, now: float) -> builtins.list[RunRecord]:
        """``RunStore.stale``: one statement, so no transaction (nor SQLite's write lock, nor a
        savepoint in the worker's trip that claims runs)."""
        with self._read_one() as conn:
            rows = self._run(conn, "SELECT * FROM {runs} WHERE status = ? AND claim_expires_at < ? "
                                   "ORDER BY seq", (RUNNING, now)).fetchall()
        return [record_of(row) for row in rows]

    def reclaim(self, run_id: str, worker: str, now: float, ttl: float) -> RunRecord | None:
        """``RunStore.reclaim``."""
        with self._write() as conn:
            taken = self._run(conn, "UPDATE {runs} SET worker = ?, claim_expires_at = ?, updated_at = ?, "
                                    "attempts = attempts + 1 WHERE run_id = ? AND status = ? "
                                    "AND claim_expires_at < ?",
                              (worker, now + ttl, now, run_id, RUNNING, now))
            if taken.rowcount != 1:
                return None
            row = self._run(conn, "SELECT * FROM {runs} WHERE run_id = ?", (run_id,)).fetchone()
        return record_of(row)

    def append_live(self, run_id: str, thread_id: str, events: Sequence[LiveEvent]) -> None:
        """``RunStore.append_live``: a batch in one transaction, a few hundred rows a statement."""
        with self._write() as conn:
            for start in range(0, len(events), LIVE_ROWS_PER_INSERT):
                batch = events[start:start + LIVE_ROWS_PER_INSERT]
                marks = ", ".join("(?, ?, ?, ?, ?, ?, ?)" for _ in batch)
                args = tuple(value for e in batch
                             for value in (run_id, thread_id, e.n, e.mode, e.event, e.data, e.at))
                self._run(conn, f"INSERT INTO {{run_stream}} (run_id, thread_id, n, mode, event, data, at) "  # noqa: S608 -- only placeholders are formatted in; values are bound
                                f"VALUES {marks}", args)

    def live_after(self, run_id: str, after: int) -> builtins.list[LiveEvent]:
        """``RunStore.live_after``: one statement, so no transaction (nor SQLite's write lock)."""
        with self._read_one() as conn:
            rows = self._run(conn, "SELECT n, mode, event, data, at FROM {run_stream} WHERE run_id = ? "
                                   "AND n > ? ORDER BY n", (run_id, after)).fetchall()
        return [LiveEvent(n=row["n"], mode=row["mode"], event=row["event"], data=row["data"], at=row["at"])
                for row in rows]

    def last_live(self, run_id: str) -> int:
        """``RunStore.last_live``."""
        with self._write() as conn:
            row = self._run(conn, "SELECT MAX(n) AS n FROM {run_stream} WHERE run_id = ?",
                            (run_id,)).fetchone()
        return int(row["n"] or 0)

    def forget_live(self, thread_id: str) -> None:
        """``RunStore.forget_live``."""
        with self._write() as conn:
            self._run(conn, "DELETE FROM {run_stream} WHERE thread_id = ?", (thread_id,))

    def _get(self, conn: Connection, thread_id: str, run_id: str, lock: str = "") -> RunRecord:
        """The run, locked with ``lock`` (a dialect's ``LOCK``, or none), or ``UnknownRunError``."""
        row = self._run(conn, f"SELECT * FROM {{runs}} WHERE run_id = ? AND thread_id = ? {lock}",  # noqa: S608 -- identifiers are GraphARC's own constants; values are bound
                        (run_id, thread_id)).fetchone()
        if row is None:
            raise UnknownRunError(thread_id, run_id)
        return record_of(row)
