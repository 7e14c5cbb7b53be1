"""The row-level reads and writes the SQL session store is built of, and the dialect hooks they need.

``SqlSessionStore`` (``grapharc.session.sql_store``) keeps the ``SessionStore`` contract with
these: a thread's row read (locked, claimed, or fenced by a lease), a lease, a status or an
approval's state written, queued events taken, approvals and audit entries inserted and read.
An approval's question and an audit entry's detail are written with every configured secret
redacted (:mod:`grapharc.redaction`): they quote a tool call's arguments.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from contextlib import AbstractContextManager
from typing import Any
from uuid import uuid4

from grapharc.redaction import current_redactor
from grapharc.session.errors import LeaseLostError, SessionBusyError, UnknownSessionError
from grapharc.session.lease import Lease
from grapharc.session.records import OPEN, RUNNING, SUPERSEDED, Approval, AuditKind, iso
from grapharc.session.sql_dialect import Connection, Row, SqlDialect

FENCE_COLUMNS = "lease_token, status, audited_step"
"""The columns of a thread's row a fenced write reads: the lease's, and the scan's watermark (an edit's
end moves it); not the whole row, whose turn holds the turn's input (read on every node's record)."""


class SqlSessionRows(SqlDialect, ABC):
    """The row-level reads and writes of the SQL session store; a subclass supplies the dialect."""

    APPROVAL_ORDER = "rowid"
    """The approvals column that orders them oldest first."""

    # -- the dialect -----------------------------------------------------------------

    @abstractmethod
    def _write(self) -> AbstractContextManager[Connection]:
        """One atomic change: committed on success, rolled back on any error."""

    @abstractmethod
    def _read(self) -> AbstractContextManager[Connection]:
        """One consistent read of several tables."""

    def _read_one(self) -> AbstractContextManager[Connection]:
        """Where a read of a single statement runs: ``_read`` by default; a dialect where one
        statement outside a transaction is its own consistent snapshot (SQLite in autocommit) spares
        the read its BEGIN and COMMIT (two of the three statements of a lease check)."""
        return self._read()

    def _renewing(self) -> AbstractContextManager[Connection]:
        """Where a heartbeat renews a lease (from threads of its own): a write by default."""
        return self._write()

    @abstractmethod
    def _encode(self, value: Any) -> Any:
        """``value`` as the parameter a JSON column is written with."""

    @abstractmethod
    def _decode(self, value: Any) -> Any:
        """A JSON column's value as read back."""

    @abstractmethod
    def _after_prune(self) -> None:
        """Runs after a prune removed sessions, outside its transaction (to give space back)."""

    # -- rows ------------------------------------------------------------------------

    def _row(self, conn: Connection, thread_id: str, lock: str = "") -> Row:
        """The thread's row (locked by ``lock``), or ``UnknownSessionError``."""
        row: Row | None = self._run(conn, f"SELECT * FROM {{sessions}} WHERE thread_id = ? {lock}",  # noqa: S608 -- identifiers are GraphARC's own constants; values are bound
                                    (thread_id,)).fetchone()
        if row is None:
            raise UnknownSessionError(thread_id)
        return row

    def _column(self, conn: Connection, thread_id: str, column: str) -> Any:
        """One column of the thread's row (``column`` is GraphARC's own name), or
        ``UnknownSessionError``: a read of that column alone, not the whole row with its turn's input."""
        row = self._run(conn, f"SELECT {column} FROM {{sessions}} WHERE thread_id = ?",  # noqa: S608 -- column is a constant of ours; values are bound
                        (thread_id,)).fetchone()
        if row is None:
            raise UnknownSessionError(thread_id)
        return row[column]

    def _known(self, conn: Connection, thread_id: str) -> None:
        """``UnknownSessionError`` unless the thread is there (its id read, not its whole row)."""
        self._column(conn, thread_id, "thread_id")

    def _claimed(self, conn: Connection, thread_id: str) -> Row:
        """The thread's row locked for a claim, or ``SessionBusyError`` if another runner is claiming
        it right now (its row is locked: skipped rather than waited for)."""
        row: Row | None = self._run(conn, f"SELECT * FROM {{sessions}} WHERE thread_id = ? {self.CLAIM_LOCK}",  # noqa: S608 -- identifiers are GraphARC's own constants; values are bound
                                    (thread_id,)).fetchone()
        if row is not None:
            return row
        self._known(conn, thread_id)  # UnknownSessionError if there is no such thread at all
        raise SessionBusyError(f"thread {thread_id} is being claimed by another runner right now",
                               hint="look again in a moment: grapharc session status shows who holds it")

    def _fenced_row(self, conn: Connection, lease: Lease, consequence: str) -> Row:
        """What a fenced write reads of the lease's thread row (``FENCE_COLUMNS``), locked, or
        ``LeaseLostError`` if the lease is no longer its current one."""
        sql = f"SELECT {FENCE_COLUMNS} FROM {{sessions}} WHERE thread_id = ? {self.LOCK}"  # noqa: S608 -- identifiers are GraphARC's own constants; values are bound
        row: Row | None = self._run(conn, sql, (lease.thread_id,)).fetchone()
        if row is None:
            raise UnknownSessionError(lease.thread_id)
        if not held(row, lease):
            raise LeaseLostError(
                f"runner {lease.runner} no longer holds thread {lease.thread_id}; {consequence}")
        return row

    def _lease(self, conn: Connection, thread_id: str, runner: str, ttl: float, now: float,
               turn: dict[str, Any]) -> Lease:
        """A new lease on the thread for ``runner``, written to its row."""
        lease = Lease(thread_id, runner, uuid4().hex, ttl, turn)
        self._run(conn, "UPDATE {sessions} SET status = ?, updated_at = ?, runner = ?, lease_token = ?, "
                        "lease_expires_at = ?, turn = ?, error = NULL WHERE thread_id = ?",
                  (RUNNING, now, runner, lease.token, now + ttl, self._encode(turn), thread_id))
        return lease

    def _set_status(self, conn: Connection, thread_id: str, status: str, now: float) -> None:
        self._run(conn, "UPDATE {sessions} SET status = ?, updated_at = ?, turn = NULL WHERE thread_id = ?",
                  (status, now, thread_id))

    def _set_state(self, conn: Connection, approval_id: str, state: str) -> None:
        self._run(conn, "UPDATE {approvals} SET state = ? WHERE approval_id = ?", (state, approval_id))

    def _supersede_open(self, conn: Connection, thread_id: str) -> None:
        self._run(conn, "UPDATE {approvals} SET state = ? WHERE thread_id = ? AND state = ?",
                  (SUPERSEDED, thread_id, OPEN))

    def _take_events(self, conn: Connection, thread_id: str, now: float,
                     turn_id: str) -> list[dict[str, Any]]:
        """Mark the thread's undelivered events delivered to ``turn_id``; them, oldest first."""
        rows = self._run(conn, "UPDATE {events} SET delivered_at = ?, turn_id = ? WHERE thread_id = ? "
                               "AND delivered_at IS NULL RETURNING event_id, kind, payload",
                         (now, turn_id, thread_id)).fetchall()
        return [{"event_id": r["event_id"], "kind": r["kind"], "payload": self._decode(r["payload"])}
                for r in sorted(rows, key=lambda r: r["event_id"])]

    def _insert_approval(self, conn: Connection, a: Approval) -> None:
        a = dataclasses.replace(a, question=current_redactor().redact(a.question))
        self._run(conn, "INSERT INTO {approvals} (approval_id, thread_id, kind, node, hold_key, question, "
                        "digest, deciders, created_at, expires_at, state) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                  (a.approval_id, a.thread_id, a.kind, a.node, a.hold_key, a.question, a.digest,
                   self._encode(list(a.deciders)), a.created_at, a.expires_at, a.state))
        self._audit(conn, a.thread_id, a.created_at, AuditKind.ASKED,
                    {"approval": a.approval_id, "node": a.node, "kind": a.kind, "question": a.question})

    def _open_approvals(self, conn: Connection, thread_id: str) -> list[Approval]:
        """The thread's open approvals, in the order they were asked."""
        return self._approvals(conn, "WHERE thread_id = ? AND state = ?", (thread_id, OPEN))

    def _approvals(self, conn: Connection, where: str, args: tuple[Any, ...], *,
                   ordered: bool = False) -> list[Approval]:
        """The approvals ``where`` selects, in the order they were asked (or ``where``'s own, ``ordered``)."""
        order = "" if ordered else f" ORDER BY {self.APPROVAL_ORDER}"
        rows = self._run(conn, f"SELECT * FROM {{approvals}} {where}{order}", args)  # noqa: S608 -- identifiers are GraphARC's own constants; values are bound
        return [Approval(r["approval_id"], r["thread_id"], r["kind"], r["node"], r["hold_key"], r["question"],
                         r["digest"], tuple(self._decode(r["deciders"])), r["created_at"], r["expires_at"],
                         r["state"], r["decided_by"], r["decided_at"]) for r in rows]

    def _audit(self, conn: Connection, thread_id: str, now: float, kind: AuditKind,
               detail: dict[str, Any]) -> None:
        self._run(conn, "INSERT INTO {audit} (thread_id, at, kind, detail) VALUES (?, ?, ?, ?)",
                  (thread_id, now, kind.value, self._encode(current_redactor().scrub(detail))))


def held(row: Row, lease: Lease) -> bool:
    """True when ``row`` says ``lease`` is its thread's current lease."""
    return bool(row["lease_token"] == lease.token and row["status"] == RUNNING)


def refuse_live(row: Row, now: float) -> None:
    expires = row["lease_expires_at"]
    if row["status"] == RUNNING and expires is not None and now < expires:
        raise SessionBusyError(
            f"thread {row['thread_id']} is being run by runner {row['runner']} "
            f"(lease until {iso(expires)})",
            hint="wait for that turn to end; if its runner died, recover the thread once the lease expires")
