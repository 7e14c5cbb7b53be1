"""One webhook store over SQL: the claims and state changes SQLite and PostgreSQL share.

The table (``grapharc.webhooks.tables``) lives in the run store's database, so a delivery becomes
due by a join on its run's status: no write is needed when a run ends, and a run cannot end
without its delivery, which was recorded before the run was queued.
"""

from __future__ import annotations

import builtins  # `builtins.list` in annotations
from abc import ABC, abstractmethod
from contextlib import AbstractContextManager

from grapharc.session.sql_dialect import Connection, SqlDialect
from grapharc.webhooks.contracts import ORPHAN_SECONDS
from grapharc.webhooks.records import DELIVERED, FAILED, PENDING, Delivery, delivery_of

DUE_WHERE = """FROM {webhooks} AS w JOIN {runs} AS r ON r.run_id = w.run_id
    WHERE w.status = 'pending' AND r.status IN ('success', 'error', 'interrupted')
    AND (w.next_attempt_at IS NULL OR w.next_attempt_at <= ?)"""
DUE = f"SELECT w.run_id {DUE_WHERE} ORDER BY w.created_at LIMIT ?"
ORPHAN_WHERE = """WHERE status = 'pending' AND created_at < ?
    AND NOT EXISTS (SELECT 1 FROM {runs} AS r WHERE r.run_id = {webhooks}.run_id)"""
ORPHANED = f"""UPDATE {{webhooks}} SET status = ?, last_error = ?, worker = NULL, next_attempt_at = NULL
    {ORPHAN_WHERE}"""  # noqa: S608 -- this module's constant clauses; values are bound
ANY_DUE = f"""SELECT EXISTS (SELECT 1 {DUE_WHERE}) AS due,
    EXISTS (SELECT 1 FROM {{webhooks}} {ORPHAN_WHERE}) AS orphaned"""  # noqa: S608 -- as above
ORPHAN_ERROR = "its run no longer exists (deleted or rolled back before its hook was sent): nothing to send"


class SqlWebhookStore(SqlDialect, ABC):
    """The ``WebhookStore`` contract over a SQL ``webhooks`` table; a subclass supplies the dialect."""

    DUE_LOCK = ""
    """The clause that locks the deliveries a claim reads, skipping those another claim holds."""

    @abstractmethod
    def _write(self) -> AbstractContextManager[Connection]:
        """One atomic change or consistent read: committed on success, rolled back on any error."""

    @abstractmethod
    def _read(self) -> AbstractContextManager[Connection]:
        """One consistent read that takes no write lock."""

    @abstractmethod
    def close(self) -> None:
        """Release the store's connections; closing twice is harmless."""

    def expect(self, delivery: Delivery) -> None:
        """``WebhookStore.expect``."""
        with self._write() as conn:
            self._run(conn, "INSERT INTO {webhooks} (run_id, thread_id, url, created_at, status, attempts) "
                            "VALUES (?, ?, ?, ?, ?, 0)",
                      (delivery.run_id, delivery.thread_id, delivery.url, delivery.created_at, PENDING))

    def forget(self, run_id: str) -> None:
        """``WebhookStore.forget``."""
        with self._write() as conn:
            self._run(conn, "DELETE FROM {webhooks} WHERE run_id = ?", (run_id,))

    def has_due(self, now: float) -> bool:
        """``WebhookStore.has_due``: the claim's two conditions, only read."""
        with self._read() as conn:
            row = self._run(conn, ANY_DUE, (now, now - ORPHAN_SECONDS)).fetchone()
        return bool(row["due"] or row["orphaned"])

    def claim_due(self, worker: str, now: float, hold: float, limit: int) -> builtins.list[Delivery]:
        """``WebhookStore.claim_due``."""
        with self._write() as conn:
            self._run(conn, ORPHANED, (FAILED, ORPHAN_ERROR, now - ORPHAN_SECONDS))
            due = [row["run_id"] for row in
                   self._run(conn, f"{DUE} {self.DUE_LOCK}", (now, limit)).fetchall()]
            claimed = []
            for run_id in due:
                self._run(conn, "UPDATE {webhooks} SET worker = ?, next_attempt_at = ?, "
                                "attempts = attempts + 1 WHERE run_id = ?", (worker, now + hold, run_id))
                claimed.append(self._get(conn, run_id))
        return [delivery for delivery in claimed if delivery is not None]

    def keep_body(self, run_id: str, worker: str, body: str) -> bool:
        """``WebhookStore.keep_body``."""
        return self._held("body = ?", (body,), run_id, worker)

    def delivered(self, run_id: str, worker: str, now: float) -> bool:
        """``WebhookStore.delivered``."""
        return self._held("status = ?, delivered_at = ?, next_attempt_at = NULL, last_error = NULL",
                          (DELIVERED, now), run_id, worker)

    def retry(self, run_id: str, worker: str, error: str, at: float) -> bool:
        """``WebhookStore.retry``."""
        return self._held("last_error = ?, next_attempt_at = ?", (error, at), run_id, worker)

    def fail(self, run_id: str, worker: str, error: str) -> bool:
        """``WebhookStore.fail``."""
        return self._held("status = ?, last_error = ?, next_attempt_at = NULL", (FAILED, error),
                          run_id, worker)

    def get(self, run_id: str) -> Delivery | None:
        """``WebhookStore.get``."""
        with self._write() as conn:
            return self._get(conn, run_id)

    def _held(self, assignments: str, args: tuple[object, ...], run_id: str, worker: str) -> bool:
        """Set ``assignments`` on the delivery if it is pending and ``worker``'s claim; whether it was."""
        with self._write() as conn:
            return self._run(conn, f"UPDATE {{webhooks}} SET {assignments} WHERE run_id = ? AND worker = ? "  # noqa: S608 -- the assignments are this module's constants; values are bound
                                   "AND status = 'pending'", (*args, run_id, worker)).rowcount == 1

    def _get(self, conn: Connection, run_id: str) -> Delivery | None:
        row = self._run(conn, "SELECT * FROM {webhooks} WHERE run_id = ?", (run_id,)).fetchone()
        return None if row is None else delivery_of(row)
