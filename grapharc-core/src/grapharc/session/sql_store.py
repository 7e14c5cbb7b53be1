"""One session store over SQL: the decisions, leases, approvals and audit every SQL backend shares.

``SqliteSessionStore`` (core) and ``PostgresSessionStore`` (grapharc-postgres) keep the
``SessionStore`` contract (``grapharc.session.contracts``) with the logic here; each
supplies only its dialect: how a transaction is opened, how a parameter and a row lock
are written, its table names, and how a JSON column is written and read. Statements are
written with ``?`` parameters and ``{sessions}``-style table names, which ``_run`` turns
into the dialect's (``grapharc.session.sql_dialect``); the reads and writes of single rows are
``grapharc.session.sql_rows``'. Every change runs in one
transaction that reads the thread's row first (locked where the dialect locks rows),
so a write fenced by a lease checks its token in the transaction that writes.
"""

from __future__ import annotations

import builtins  # `builtins.list` in annotations: the class below has a method named `list`
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from uuid import uuid4

from grapharc.session.approvals import Hold, check_decision, request
from grapharc.session.audit import NodeRun
from grapharc.session.errors import (
    ApprovalExpiredError,
    NothingToRecoverError,
    SessionBusyError,
    SessionError,
    SessionExistsError,
    StaleApprovalError,
    ThreadNotPausedError,
    ThreadPausedError,
    UnknownApprovalError,
)
from grapharc.session.lease import Lease
from grapharc.session.records import (
    ANSWER_KEY,
    COMPLETED,
    CREATED,
    DECISIONS,
    DECLINED,
    EXPIRED,
    FAILED,
    FINISHED,
    GATE,
    LAPSED,
    OPEN,
    PAUSED,
    REJECTED,
    RUNNING,
    SUPERSEDED,
    Answer,
    Approval,
    AuditEntry,
    AuditKind,
    DecisionMark,
    Event,
    Session,
    iso,
    unreadable_times,
)
from grapharc.session.sql_dialect import Connection, Row
from grapharc.session.sql_rows import held, refuse_live
from grapharc.session.sql_time_travel import SqlTimeTravel

_FINISHED = tuple(sorted(FINISHED))
# A new turn may start on these; a rejected or expired thread has ended for good.
STARTABLE = (CREATED, COMPLETED, FAILED)


class SqlSessionStore(SqlTimeTravel):
    """The ``SessionStore`` contract (and ``SignInRecords``) over SQL tables; a subclass supplies the
    dialect (``SqlSessionRows``). Edits, forks and copies are ``SqlTimeTravel``'s."""

    # -- sessions --------------------------------------------------------------------

    def create(self, thread_id: str, graph: str, now: float, *, owner: str | None = None,
               tenant: str | None = None, metadata: Mapping[str, Any] | None = None) -> Session:
        """A new session in status ``created``, of ``owner`` (and their ``tenant``) if given, with
        its own ``metadata``; read back in the transaction that made it."""
        with self._write() as conn:
            created = self._run(
                conn, "INSERT INTO {sessions} (thread_id, graph, status, created_at, updated_at, owner, "
                "tenant, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (thread_id, graph, CREATED, now, now, owner, tenant, self._encode(dict(metadata or {}))))
            if created.rowcount != 1:
                raise SessionExistsError(f"a session with thread id {thread_id!r} already exists",
                                         hint="leave out the thread id to get a fresh one")
            whose = {key: value for key, value in (("owner", owner), ("tenant", tenant)) if value is not None}
            self._audit(conn, thread_id, now, AuditKind.CREATED, {"graph": graph, **whose})
            row = self._row(conn, thread_id)  # new: no approval nor node of it to read, unlike ``get``
        return _session(row, [], None, self._decode)

    def get(self, thread_id: str) -> Session:
        """The session, with its open holds and its last recorded node."""
        with self._read() as conn:
            row = self._row(conn, thread_id)
            holds = self._open_approvals(conn, thread_id)
            last = self._last_node(conn, thread_id)
        return _session(row, holds, last, self._decode)

    def _last_node(self, conn: Connection, thread_id: str) -> Any:
        """The thread's last recorded node's row (``node``, ``step``), or None."""
        return self._run(conn, "SELECT node, step FROM {audit} WHERE thread_id = ? AND kind = 'node' "
                               "ORDER BY step DESC, seq DESC LIMIT 1", (thread_id,)).fetchone()

    def graph_of(self, thread_id: str) -> str:
        """The graph the thread runs (``grapharc.session.contracts.graph_of``): one statement, where
        ``get`` reads the thread, its open approvals and its last node (a turn's start needs only this)."""
        with self._read_one() as conn:
            return str(self._column(conn, thread_id, "graph"))

    def update_metadata(self, thread_id: str, metadata: Mapping[str, Any], now: float, *, by: str) -> Session:
        """Merge ``metadata`` into the thread's own (its keys replace those of the same name); the
        trail records who changed which keys."""
        with self._write() as conn:
            row = self._row(conn, thread_id, self.LOCK)
            merged = {**_own_metadata(row, self._decode), **metadata}
            self._run(conn, "UPDATE {sessions} SET metadata = ?, updated_at = ? WHERE thread_id = ?",
                      (self._encode(merged), now, thread_id))
            self._audit(conn, thread_id, now, AuditKind.METADATA, {"by": by, "keys": sorted(metadata)})
        return self.get(thread_id)

    def list(self, status: str | None = None) -> builtins.list[Session]:
        """Every session (or those in ``status``), most recently changed first."""
        where, args = ("WHERE status = ?", (status,)) if status else ("", ())
        with self._read() as conn:
            rows = self._run(conn, f"SELECT * FROM {{sessions}} {where} ORDER BY updated_at DESC, thread_id",  # noqa: S608 -- identifiers are GraphARC's own constants; values are bound
                             args).fetchall()
            holds: dict[str, builtins.list[Approval]] = {}
            for approval in self._approvals(conn, "WHERE state = ?", (OPEN,)):
                holds.setdefault(approval.thread_id, []).append(approval)
            last = {r["thread_id"]: r for r in self._run(
                conn, "SELECT a.thread_id, a.node, a.step FROM {audit} AS a JOIN (SELECT thread_id, "
                "MAX(step) AS step FROM {audit} WHERE kind = 'node' GROUP BY thread_id) AS m "
                "ON a.thread_id = m.thread_id AND a.step = m.step WHERE a.kind = 'node' ORDER BY a.seq")}
        return [_session(row, holds.get(row["thread_id"], []), last.get(row["thread_id"]), self._decode)
                for row in rows]

    # -- leases ----------------------------------------------------------------------

    def claim_start(self, thread_id: str, *, runner: str, ttl: float, now: float,
                    input: Mapping[str, Any], inbox: str | None) -> Lease:
        """Take a created, completed or failed thread for a new turn (a failed one starts from its
        last good checkpoint, as LangGraph's server does); queued events join ``inbox``."""
        with self._write() as conn:
            row = self._claimed(conn, thread_id)
            refuse_live(row, now)
            if row["status"] == PAUSED:
                raise ThreadPausedError(f"thread {thread_id} is paused waiting on a decision",
                                        hint="resume it by naming the approval it waits on")
            if row["status"] == RUNNING:
                raise SessionBusyError(
                    f"thread {thread_id} was left running by runner {row['runner']}, whose lease "
                    f"expired at {iso(row['lease_expires_at'])}", hint=f"recover thread {thread_id}")
            if row["status"] not in STARTABLE:
                raise SessionError(f"thread {thread_id} has ended ({row['status']}); start a new session")
            turn_id = uuid4().hex
            values = dict(input)
            if inbox is not None:
                values[inbox] = [*values.get(inbox, []), *self._take_events(conn, thread_id, now, turn_id)]
            turn = {"kind": "start", "id": turn_id, "input": values}
            lease = self._lease(conn, thread_id, runner, ttl, now, turn)
            self._audit(conn, thread_id, now, AuditKind.CLAIMED, {"runner": runner, "turn": "start"})
        return lease

    def claim_continue(self, thread_id: str, *, runner: str, ttl: float, now: float) -> Lease:
        """Take a thread paused on no open approval (a run's breakpoint stopped it) to carry it on."""
        with self._write() as conn:
            row = self._row(conn, thread_id, self.LOCK)
            waiting = self._run(conn, "SELECT COUNT(*) AS n FROM {approvals} "
                                      "WHERE thread_id = ? AND state = ?", (thread_id, OPEN)).fetchone()["n"]
            if row["status"] != PAUSED or waiting:
                raise ThreadPausedError(
                    f"thread {thread_id} is {row['status']}"
                    + (f", waiting on {waiting} approval(s)" if waiting else "")
                    + "; only a thread a breakpoint stopped is carried on without an answer",
                    hint="answer its approvals, or start a turn with input")
            lease = self._lease(conn, thread_id, runner, ttl, now, {"kind": "continue", "id": uuid4().hex})
            self._audit(conn, thread_id, now, AuditKind.CLAIMED, {"runner": runner, "turn": "continue"})
        return lease

    def claim_recovery(self, thread_id: str, *, runner: str, ttl: float, now: float) -> Lease:
        """Take over a thread whose runner died (lease expired) or whose turn failed."""
        with self._write() as conn:
            row = self._claimed(conn, thread_id)
            refuse_live(row, now)
            if row["status"] not in (RUNNING, FAILED):
                raise NothingToRecoverError(
                    f"thread {thread_id} is {row['status']}; only a thread whose runner died "
                    "(its lease expired) or whose turn failed can be recovered")
            turn = self._decode(row["turn"]) if row["turn"] else {"kind": "continue", "id": uuid4().hex}
            lease = self._lease(conn, thread_id, runner, ttl, now, turn)
            self._audit(conn, thread_id, now, AuditKind.RECLAIMED,
                        {"runner": runner, "from": row["runner"], "status": row["status"]})
        return lease

    def renew(self, lease: Lease, now: float) -> bool:
        """Extend ``lease``; False if it is no longer this runner's."""
        with self._renewing() as conn:
            cursor = self._run(conn, "UPDATE {sessions} SET lease_expires_at = ? WHERE thread_id = ? "
                                     "AND lease_token = ? AND status = ?",
                               (now + lease.ttl, lease.thread_id, lease.token, RUNNING))
        return cursor.rowcount == 1

    def holds(self, lease: Lease) -> bool:
        """True while ``lease`` is still its thread's current lease."""
        with self._read_one() as conn:
            row = self._run(conn, "SELECT lease_token, status FROM {sessions} WHERE thread_id = ?",
                            (lease.thread_id,)).fetchone()
        return row is not None and held(row, lease)

    def finish(self, lease: Lease, status: str, now: float, *, requests: Iterable[Approval] = (),
               outcome: str | None = None, error: str | None = None,
               cancel: Mapping[str, Any] | None = None, audited_step: int | None = None,
               reopened: Iterable[str] = ()) -> Session:
        """End a turn: set ``status``, release the lease, open ``requests``; fenced by the token.
        A failed turn keeps its turn, so a recovery can send its input again. ``cancel``: the turn
        was cancelled on request (recorded ``cancelled`` with that detail); ``audited_step``: the
        node scan's watermark moves there (back, after a rollback discarded checkpoints);
        ``reopened``: decided approvals of the thread a rollback undid, open and undecided again.
        The session as it is left: the row the UPDATE returns, the open approvals read only where
        some can be left (a pause, or ``requests``: the others supersede them all)."""
        asked = list(requests)
        with self._write() as conn:
            self._fenced_row(conn, lease, "its turn ends without writing a status")
            row = self._run(conn, "UPDATE {sessions} SET status = ?, updated_at = ?, runner = NULL, "
                                  "lease_token = NULL, lease_expires_at = NULL, "
                                  "turn = CASE WHEN ? THEN turn END, outcome = COALESCE(?, outcome), "
                                  "error = ?, audited_step = COALESCE(?, audited_step) "
                                  "WHERE thread_id = ? RETURNING *",
                            (status, now, status == FAILED, outcome, error, audited_step,
                             lease.thread_id)).fetchone()
            undone = self._reopen(conn, lease.thread_id, reopened)
            if status != PAUSED:
                self._supersede_open(conn, lease.thread_id)
            for approval in asked:
                self._insert_approval(conn, approval)
            holds = self._open_approvals(conn, lease.thread_id) if status == PAUSED or asked else []
            detail: dict[str, Any] = {"runner": lease.runner}
            if status == PAUSED:
                detail["holds"] = [a.approval_id for a in holds]
            if error:
                detail["error"] = error
            if undone:
                detail["reopened"] = undone
            kind = AuditKind(status)
            if cancel is not None:
                kind = AuditKind.CANCELLED
                detail.update(cancel, status=status)
            self._audit(conn, lease.thread_id, now, kind, detail)
            last = self._last_node(conn, lease.thread_id)
        return _session(row, holds, last, self._decode)

    def _reopen(self, conn: Connection, thread_id: str, approval_ids: Iterable[str]) -> builtins.list[str]:
        """Set the thread's decided approvals ``approval_ids`` open and undecided again; the ids reopened."""
        undone: builtins.list[str] = []
        for approval_id in approval_ids:
            changed = self._run(conn, "UPDATE {approvals} SET state = ?, decided_by = NULL, "
                                      "decided_at = NULL WHERE approval_id = ? AND thread_id = ? "
                                      "AND state IN (?, ?)",
                                (OPEN, approval_id, thread_id, *DECISIONS))
            if changed.rowcount == 1:
                undone.append(approval_id)
        return undone

    # -- approvals -------------------------------------------------------------------

    def approvals(self, thread_id: str) -> builtins.list[Approval]:
        """Every approval the thread has asked for, oldest first."""
        with self._read() as conn:
            self._known(conn, thread_id)
            return self._approvals(conn, "WHERE thread_id = ?", (thread_id,))

    def approval(self, approval_id: str) -> Approval:
        """One approval by id."""
        with self._read() as conn:
            found = self._approvals(conn, "WHERE approval_id = ?", (approval_id,))
        if not found:
            raise UnknownApprovalError(f"no approval has id {approval_id!r}",
                                       hint="grapharc session status THREAD shows a thread's open approvals")
        return found[0]

    def decided(self, limit: int, *, before: DecisionMark | None = None,
                after: DecisionMark | None = None) -> builtins.list[Approval]:
        """Up to ``limit`` decided approvals, newest decision first (before or after a mark)."""
        where = "WHERE state IN (?, ?)"
        args: builtins.list[Any] = [*DECISIONS]
        order = "decided_at DESC, approval_id DESC"
        if before is not None:
            where += " AND (decided_at < ? OR (decided_at = ? AND approval_id < ?))"
            args += [before[0], before[0], before[1]]
        if after is not None:
            where += " AND (decided_at > ? OR (decided_at = ? AND approval_id > ?))"
            args += [after[0], after[0], after[1]]
            order = "decided_at, approval_id"
        with self._read() as conn:
            found = self._approvals(conn, f"{where} ORDER BY {order} LIMIT ?", (*args, max(0, limit)),
                                    ordered=True)
        return found[::-1] if after is not None else found

    def decide(self, thread_id: str, approval_id: str, decision: str, *, decider: str, now: float,
               current: Hold | None, runner: str, ttl: float, answer: Answer | None = None) -> Lease | None:
        """Record a decision; returns a lease when it was the thread's last open hold.

        ``current`` is the hold the thread is paused on now for the approval's node, read
        from the checkpoint; if it is another hold or has another digest (or there is
        none) the approval is superseded and a new one asked for. A rejected gate ends
        the thread as ``rejected``. The loser of two decisions sees what the winner decided.
        """
        refusal: Exception | None = None
        lease: Lease | None = None
        with self._write() as conn:
            approval = self._decidable(conn, thread_id, approval_id)
            check_decision(approval, thread_id, decision, decider)
            if approval.expired(now):
                refusal = self._lapse(conn, approval, decider, now)
            elif current is None or (current.key, current.digest) != (approval.hold_key, approval.digest):
                refusal = self._supersede(conn, approval, current, now)
            else:
                self._run(conn, "UPDATE {approvals} SET state = ?, decided_by = ?, decided_at = ? "
                                "WHERE approval_id = ? AND state = ?",
                          (decision, decider, now, approval_id, OPEN))
                detail: dict[str, Any] = {"approval": approval_id, "decision": decision, "by": decider,
                                          "node": approval.node}
                if answer is not None:
                    detail[ANSWER_KEY] = answer.value
                self._audit(conn, thread_id, now, AuditKind.DECIDED, detail)
                lease = self._after_decision(conn, approval, decision, runner, ttl, now)
        if refusal is not None:
            raise refusal
        return lease

    def _decidable(self, conn: Connection, thread_id: str, approval_id: str) -> Approval:
        """The approval, under the thread's locked row, refused unless the thread is paused."""
        row = self._row(conn, thread_id, self.LOCK)
        found = self._approvals(conn, "WHERE approval_id = ?", (approval_id,))
        if not found:
            raise UnknownApprovalError(f"no approval has id {approval_id!r} (thread {thread_id})")
        approval = found[0]
        if row["status"] != PAUSED and approval.thread_id == thread_id:
            said = "" if approval.state == OPEN else (
                f"; approval {approval_id} was already {approval.state}"
                + (f" by {approval.decided_by}" if approval.decided_by else ""))
            raise ThreadNotPausedError(f"thread {thread_id} is not paused (it is {row['status']}){said}")
        return approval

    def _lapse(self, conn: Connection, approval: Approval, decider: str, now: float) -> Exception:
        """A decision came too late: the thread ends as expired; the refusal to raise after commit."""
        thread_id, approval_id = approval.thread_id, approval.approval_id
        self._set_state(conn, approval_id, LAPSED)
        self._supersede_open(conn, thread_id)
        self._set_status(conn, thread_id, EXPIRED, now)
        self._audit(conn, thread_id, now, AuditKind.EXPIRED, {"approval": approval_id, "by": decider})
        return ApprovalExpiredError(
            f"approval {approval_id} on thread {thread_id} expired at {iso(approval.expires_at)}; "
            "the thread ends as expired")

    def _supersede(self, conn: Connection, approval: Approval, current: Hold | None, now: float) -> Exception:
        """The approval asked about what has since changed: superseded, a fresh one asked for
        ``current`` (if any); the refusal to raise after commit."""
        thread_id, approval_id = approval.thread_id, approval.approval_id
        self._set_state(conn, approval_id, SUPERSEDED)
        detail: dict[str, Any] = {"approval": approval_id}
        hint = f"grapharc session status {thread_id} shows where it stands"
        if current is not None:
            fresh = request(current, thread_id, now)
            self._insert_approval(conn, fresh)
            detail["replaced_by"] = fresh.approval_id
            hint = f"decide the new approval {fresh.approval_id}"
        self._audit(conn, thread_id, now, AuditKind.SUPERSEDED, detail)
        return StaleApprovalError(
            f"approval {approval_id} on thread {thread_id} is stale: what it asked about has "
            "changed since it was asked", hint=hint)

    def _after_decision(self, conn: Connection, approval: Approval, decision: str, runner: str,
                        ttl: float, now: float) -> Lease | None:
        """End a thread whose gate was declined, else claim it once no hold is left open."""
        thread_id = approval.thread_id
        if approval.kind == GATE and decision == DECLINED:
            self._supersede_open(conn, thread_id)
            self._set_status(conn, thread_id, REJECTED, now)
            self._audit(conn, thread_id, now, AuditKind.REJECTED,
                        {"approval": approval.approval_id, "node": approval.node})
            return None
        still_open = self._run(conn, "SELECT COUNT(*) AS n FROM {approvals} "
                                     "WHERE thread_id = ? AND state = ?", (thread_id, OPEN)).fetchone()
        if still_open["n"]:
            self._run(conn, "UPDATE {sessions} SET updated_at = ? WHERE thread_id = ?", (now, thread_id))
            return None
        lease = self._lease(conn, thread_id, runner, ttl, now, {"kind": "continue", "id": uuid4().hex})
        self._audit(conn, thread_id, now, AuditKind.CLAIMED, {"runner": runner, "turn": "continue"})
        return lease

    # -- events ----------------------------------------------------------------------

    def post_event(self, thread_id: str, kind: str, payload: Mapping[str, Any], now: float) -> Event:
        """Queue an event for the thread's next turn."""
        with self._write() as conn:
            self._known(conn, thread_id)
            posted = self._run(conn, "INSERT INTO {events} (thread_id, kind, payload, posted_at) "
                                     "VALUES (?, ?, ?, ?) RETURNING event_id",
                               (thread_id, kind, self._encode(dict(payload)), now)).fetchone()
            event_id = int(posted["event_id"])
            self._audit(conn, thread_id, now, AuditKind.EVENT, {"event": event_id, "kind": kind})
        return Event(event_id, thread_id, kind, dict(payload), now, None)

    def events(self, thread_id: str) -> builtins.list[Event]:
        """Every event posted to the thread, oldest first."""
        with self._read() as conn:
            self._known(conn, thread_id)
            rows = self._run(conn, "SELECT * FROM {events} WHERE thread_id = ? ORDER BY event_id",
                             (thread_id,))
            return [Event(r["event_id"], r["thread_id"], r["kind"], self._decode(r["payload"]),
                          r["posted_at"], r["delivered_at"]) for r in rows]

    # -- audit -----------------------------------------------------------------------

    def audited_step(self, thread_id: str) -> int:
        """The checkpoint step the next scan for completed nodes starts from."""
        with self._read_one() as conn:
            return int(self._column(conn, thread_id, "audited_step"))

    def record_nodes(self, lease: Lease, runs: Iterable[NodeRun], audited_step: int, now: float) -> int:
        """Record completed nodes, each (thread, step, node, task) once however often it is seen;
        fenced by the lease's token. Returns how many were new."""
        thread_id = lease.thread_id
        new = 0
        with self._write() as conn:
            self._fenced_row(conn, lease, "its completed nodes are not recorded")
            for run in runs:
                inserted = self._run(conn, "INSERT INTO {audit} (thread_id, at, kind, node, step, task_id, "
                                           "detail) VALUES (?, ?, 'node', ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                                     (thread_id, now, run.node, run.step, run.task_id,
                                      self._encode({"writes": run.writes})))
                new += inserted.rowcount
            self._run(conn, "UPDATE {sessions} SET audited_step = ? WHERE thread_id = ?",
                      (audited_step, thread_id))
        return new

    def record_directive(self, lease: Lease, detail: Mapping[str, Any], now: float) -> None:
        """Record a client's goto and update for the turn; fenced by the lease's token."""
        with self._write() as conn:
            self._fenced_row(conn, lease, "its goto and update are not applied")
            self._audit(conn, lease.thread_id, now, AuditKind.DIRECTED, dict(detail))

    def record_run(self, lease: Lease, run: Mapping[str, Any], now: float) -> None:
        """Record one run a turn made (its id, status, stop reason, steps and spend), once per
        run id; fenced by the lease's token."""
        with self._write() as conn:
            self._fenced_row(conn, lease, "its run is not recorded")
            self._run(conn, "INSERT INTO {audit} (thread_id, at, kind, node, step, task_id, detail) "
                            "VALUES (?, ?, 'run', NULL, NULL, ?, ?) ON CONFLICT DO NOTHING",
                      (lease.thread_id, now, str(run["run_id"]), self._encode(dict(run))))

    def audit(self, thread_id: str, after: int = 0) -> builtins.list[AuditEntry]:
        """The thread's audit trail after seq ``after``, in the order it was written (a stream reads
        it on every wake: one statement, and the thread's row only read when no entry is found)."""
        with self._read_one() as conn:
            rows = self._run(conn, "SELECT * FROM {audit} WHERE thread_id = ? AND seq > ? ORDER BY seq",
                             (thread_id, after)).fetchall()
            if not rows:  # none: the thread has no entry past ``after``, or is not there at all
                self._known(conn, thread_id)
            return [AuditEntry(r["seq"], r["thread_id"], r["at"], r["kind"], r["node"], r["step"],
                               self._decode(r["detail"])) for r in rows]

    def last_seq(self, thread_id: str, after: int = 0) -> int:
        """Where the thread's audit trail ends: its newest entry's seq, or ``after`` if none is past it."""
        with self._read_one() as conn:
            row = self._run(conn, "SELECT MAX(seq) AS seq FROM {audit} WHERE thread_id = ? AND seq > ?",
                            (thread_id, after)).fetchone()
            if row is None or row["seq"] is None:
                self._known(conn, thread_id)
                return after
            return int(row["seq"])

    # -- retention -------------------------------------------------------------------

    def record_pruned(self, thread_id: str, detail: Mapping[str, Any], now: float) -> None:
        """Append a ``pruned`` entry saying who dropped all but the thread's latest checkpoints."""
        with self._write() as conn:
            self._row(conn, thread_id, self.LOCK)
            self._audit(conn, thread_id, now, AuditKind.PRUNED, dict(detail))

    def prune(self, before: float) -> builtins.list[str]:
        """Remove finished sessions last changed before ``before``, with their holds, events and audit."""
        marks = ", ".join("?" * len(_FINISHED))
        with self._write() as conn:
            gone = [r["thread_id"] for r in self._run(
                conn, f"DELETE FROM {{sessions}} WHERE status IN ({marks}) AND updated_at < ? "  # noqa: S608 -- identifiers are GraphARC's own constants; values are bound
                "RETURNING thread_id", (*_FINISHED, before)).fetchall()]
            for thread_id in gone:
                self._delete_records(conn, thread_id)
        if gone:
            self._after_prune()
        return gone

    def delete(self, thread_id: str, now: float) -> None:
        """Remove one session with its holds, events and audit, unless its lease is live."""
        with self._write() as conn:
            refuse_live(self._row(conn, thread_id, self.LOCK), now)
            self._run(conn, "DELETE FROM {sessions} WHERE thread_id = ?", (thread_id,))
            self._delete_records(conn, thread_id)

    def _delete_records(self, conn: Connection, thread_id: str) -> None:
        """Remove the holds, events and audit of a session whose row is already gone (the audit
        trail refuses to outlive nothing else)."""
        for table in ("{approvals}", "{events}", "{audit}"):
            self._run(conn, f"DELETE FROM {table} WHERE thread_id = ?", (thread_id,))  # noqa: S608 -- identifiers are GraphARC's own constants; values are bound

def _session(row: Row, holds: builtins.list[Approval], last: Row | None,
             decode: Callable[[Any], Any]) -> Session:
    """A session from its row (``decode`` reads its JSON metadata); times no calendar holds are
    flagged in ``damaged``, not raised."""
    return Session(
        damaged=unreadable_times(created_at=row["created_at"], updated_at=row["updated_at"],
                                 lease_expires_at=row["lease_expires_at"]),
        thread_id=row["thread_id"], graph=row["graph"], status=row["status"],
        created_at=row["created_at"], updated_at=row["updated_at"], runner=row["runner"],
        lease_expires_at=row["lease_expires_at"], outcome=row["outcome"], error=row["error"],
        last_node=last["node"] if last else None, last_step=last["step"] if last else None,
        holds=tuple(holds), owner=row["owner"], tenant=row["tenant"],
        metadata=_own_metadata(row, decode),
    )


def _own_metadata(row: Row, decode: Callable[[Any], Any]) -> dict[str, Any]:
    """The thread's own metadata in its row (none for a thread made before threads kept it)."""
    return dict(decode(row["metadata"])) if row["metadata"] is not None else {}
