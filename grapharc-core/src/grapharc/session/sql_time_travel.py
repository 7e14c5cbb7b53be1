"""The SQL session store's part of time travel: a state edit under a lease, a fork's claim, a copy.

An edit (``update_state`` from outside a turn) leases the thread as a turn does, so no turn runs
while its checkpoint is written, and gives the thread back in the status it had, with an
``updated`` entry on its trail saying who wrote what (or, when the edit was refused, with the row
as it was: nothing stored). A fork is a turn claimed from a past checkpoint: its ``claimed`` entry
says ``turn: fork``, the checkpoint and who asked, and the audit scan's watermark goes back to that
checkpoint's step, since the fork's new checkpoints are numbered from there. A copy is a new
thread of the same graph whose trail begins with ``copied`` (the source's trail stays with it).

A thread paused on plain ``interrupt()`` calls only may be edited and copied too (the caller names
those approvals, ``plain``: which ones ask for a decision is the graph's to say); one waiting on a
decision may not, since a write from outside must not go around a durable approval. A copy of such a
thread asks the same questions again, as approvals of its own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping
from typing import Any
from uuid import uuid4

from grapharc.session.errors import SessionBusyError, SessionExistsError, ThreadEndedError, ThreadPausedError
from grapharc.session.lease import Lease
from grapharc.session.records import (
    COMPLETED,
    CREATED,
    EDIT,
    FAILED,
    FORK,
    PAUSED,
    RUNNING,
    SUPERSEDED,
    Approval,
    AuditKind,
)
from grapharc.session.sql_dialect import Connection, Row
from grapharc.session.sql_rows import refuse_live
from grapharc.session.sql_sign_ins import SqlSignIns

EDITABLE = (CREATED, COMPLETED)
"""A thread's state is edited only while it is idle: not mid-turn, not waiting on a person, not ended."""
FORKABLE = (CREATED, COMPLETED, PAUSED, FAILED)
"""A fork may leave a pause (its open approvals are superseded) or a failure behind; a thread a
decision ended (rejected, expired) stays ended."""
COPYABLE = EDITABLE


def refuse_unless(row: Row, statuses: tuple[str, ...], change: str, deciding: Collection[str] = ()) -> None:
    """Refuse ``change`` (``"edited"``, ``"forked"``...) of a thread whose status is not in ``statuses``,
    saying why: left running, waiting on a decision (``deciding``: the open approvals that ask for
    one, named), or ended."""
    status, thread_id = row["status"], row["thread_id"]
    if status in statuses:
        return
    if status == RUNNING:
        raise SessionBusyError(f"thread {thread_id} was left running by runner {row['runner']}",
                               hint=f"recover thread {thread_id} first")
    if status == PAUSED:
        named = f" (approval {', '.join(deciding)})" if deciding else ""
        raise ThreadPausedError(f"thread {thread_id} waits on a decision{named}, so it cannot be {change} "
                                "now: a decision is a durable record that no write from outside goes around",
                                hint="answer its open approval first")
    raise ThreadEndedError(f"thread {thread_id} has ended ({status}), so it cannot be {change}",
                           hint="a thread that completed can be; start a new thread otherwise")


class SqlTimeTravel(SqlSignIns):
    """Edits, forks and copies over the SQL session tables (``SqlSessionStore`` keeps the rest)."""

    def claim_edit(self, thread_id: str, *, runner: str, ttl: float, now: float,
                   plain: Collection[str] = ()) -> Lease:
        """Lease an idle thread (created or completed), or one paused on the plain interrupts
        ``plain`` (approval ids) alone, for a state edit; refused as ``claim_start`` refuses a busy
        thread, and one waiting on a decision or ended."""
        with self._write() as conn:
            row = self._claimed(conn, thread_id)
            refuse_live(row, now)
            self._refuse_unless_plain(conn, row, EDITABLE, "edited", plain)
            turn = {"kind": EDIT, "id": uuid4().hex, "status": row["status"], "updated_at": row["updated_at"]}
            return self._lease(conn, thread_id, runner, ttl, now, turn)

    def finish_edit(self, lease: Lease, now: float, *, detail: Mapping[str, Any] | None,
                    audited_step: int | None = None, status: str | None = None,
                    carried: Mapping[str, str] | None = None) -> None:
        """Give the edited thread back in the status it had (or ``status``). ``detail``: what was
        written (an ``updated`` entry); None: nothing was, and the row is left as it was before the
        claim. ``audited_step``: the step of the checkpoint the edit wrote after, if the audit scan
        must go back to it (an edit of a past checkpoint starts a branch). ``carried``: for an edit
        of a paused thread, the interrupts carried onto the new checkpoint (old hold key to new):
        their open approvals follow them, the others are superseded."""
        with self._write() as conn:
            row = self._fenced_row(conn, lease, "its edit is not recorded")
            audited = row["audited_step"] if audited_step is None else min(row["audited_step"], audited_step)
            written = detail is not None
            left = (status if written and status else lease.turn["status"],
                    now if written else lease.turn["updated_at"])
            self._run(conn, "UPDATE {sessions} SET status = ?, updated_at = ?, runner = NULL, "
                            "lease_token = NULL, lease_expires_at = NULL, turn = NULL, audited_step = ? "
                            "WHERE thread_id = ?",
                      (*left, audited, lease.thread_id))
            if detail is not None:
                dropped = [] if carried is None else self._follow(conn, lease.thread_id, carried)
                self._audit(conn, lease.thread_id, now, AuditKind.UPDATED,
                            {**detail, **({"superseded": dropped} if dropped else {})})

    def _follow(self, conn: Connection, thread_id: str, carried: Mapping[str, str]) -> list[str]:
        """Move the thread's open approvals onto their interrupts' new hold keys (``carried``) and
        supersede those whose interrupt was not carried; the ids superseded."""
        dropped = []
        for approval in self._open_approvals(conn, thread_id):
            if approval.hold_key in carried:
                self._run(conn, "UPDATE {approvals} SET hold_key = ? WHERE approval_id = ?",
                          (carried[approval.hold_key], approval.approval_id))
            else:
                self._run(conn, "UPDATE {approvals} SET state = ? WHERE approval_id = ?",
                          (SUPERSEDED, approval.approval_id))
                dropped.append(approval.approval_id)
        return dropped

    def claim_fork(self, thread_id: str, *, runner: str, ttl: float, now: float, checkpoint_id: str,
                   step: int, input: Mapping[str, Any] | None, by: str) -> Lease:
        """Lease the thread for a turn from its checkpoint ``checkpoint_id`` (saved at superstep
        ``step``), with ``input`` (None: carry on from that checkpoint as it stands), asked by
        ``by``. A paused thread's open approvals are superseded; a busy or ended thread refused."""
        with self._write() as conn:
            row = self._claimed(conn, thread_id)
            refuse_live(row, now)
            refuse_unless(row, FORKABLE, "forked")
            superseded = [a.approval_id for a in self._open_approvals(conn, thread_id)]
            self._supersede_open(conn, thread_id)
            turn = {"kind": FORK, "id": uuid4().hex, "input": None if input is None else dict(input),
                    "checkpoint_id": checkpoint_id}
            lease = self._lease(conn, thread_id, runner, ttl, now, turn)
            self._run(conn, "UPDATE {sessions} SET audited_step = ? WHERE thread_id = ? AND audited_step > ?",
                      (step, thread_id, step))
            self._audit(conn, thread_id, now, AuditKind.CLAIMED,
                        {"runner": runner, "turn": FORK, "checkpoint_id": checkpoint_id, "by": by,
                         **({"superseded": superseded} if superseded else {})})
        return lease

    def copy(self, source_id: str, target_id: str, now: float, *, by: str, owner: str | None = None,
             tenant: str | None = None, plain: Collection[str] = ()) -> None:
        """Create session ``target_id`` of the idle thread ``source_id``'s graph, status, outcome and
        audit watermark, owned by ``owner`` (their ``tenant``); its trail begins with ``copied``
        (from whom, asked by ``by``). A source paused on the plain interrupts ``plain`` alone may be
        copied: the copy asks them again (approvals of its own, same questions and interrupt ids).
        The checkpoints are the caller's to copy."""
        with self._write() as conn:
            row = self._row(conn, source_id, self.LOCK)
            refuse_live(row, now)
            asked = self._refuse_unless_plain(conn, row, COPYABLE, "copied", plain)
            created = self._run(
                conn, "INSERT INTO {sessions} (thread_id, graph, status, created_at, updated_at, owner, "
                "tenant, outcome, audited_step) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (target_id, row["graph"], row["status"], now, now, owner, tenant, row["outcome"],
                 row["audited_step"]))
            if created.rowcount != 1:
                raise SessionExistsError(f"a session with thread id {target_id!r} already exists",
                                         hint="leave out the thread id to get a fresh one")
            whose = {key: value for key, value in (("owner", owner), ("tenant", tenant)) if value is not None}
            self._audit(conn, target_id, now, AuditKind.COPIED,
                        {"from": source_id, "graph": row["graph"], "by": by, **whose})
            for approval in asked:
                self._insert_approval(conn, dataclasses.replace(
                    approval, approval_id=f"ap-{uuid4().hex[:12]}", thread_id=target_id, created_at=now))

    def _refuse_unless_plain(self, conn: Connection, row: Row, statuses: tuple[str, ...], change: str,
                             plain: Collection[str]) -> list[Approval]:
        """``refuse_unless``, but a paused thread whose open approvals are all in ``plain`` (or that a
        breakpoint stopped, on none) passes; its open approvals (none unless paused)."""
        if row["status"] != PAUSED:
            refuse_unless(row, statuses, change)
            return []
        opened = self._open_approvals(conn, row["thread_id"])
        deciding = [a.approval_id for a in opened if a.approval_id not in plain]
        refuse_unless(row, statuses if deciding else (PAUSED,), change, deciding)
        return opened
