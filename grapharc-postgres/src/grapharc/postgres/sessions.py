"""The PostgreSQL session store: status, event queue, approval holds, leases and the audit trail.

Core's ``SessionStore`` contract (``grapharc.session.contracts``) over tables shared by
every worker: ``open_store("postgresql://HOST/DB", kind="sessions")``. Every change is
one transaction on a pooled connection that first locks the thread's row. A claim takes
it with ``FOR UPDATE SKIP LOCKED``: a worker never waits on another's claim, it is told
the thread is busy. A decision waits for the lock (``FOR UPDATE``), so the loser of two
decisions sees what the winner decided; a write fenced by a lease checks its token
under that lock, in the transaction that writes.
"""

from __future__ import annotations

import builtins  # `builtins.list` in annotations: the class below has a method named `list`
from collections.abc import Iterable, Mapping
from contextlib import AbstractContextManager
from typing import Any
from uuid import uuid4

import psycopg
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from grapharc.postgres.connect import conninfo, open_pool, transaction
from grapharc.session.approvals import Hold, check_decision, request
from grapharc.session.audit import NodeRun
from grapharc.session.errors import (
    ApprovalExpiredError,
    LeaseLostError,
    NothingToRecoverError,
    SessionBusyError,
    SessionError,
    SessionExistsError,
    StaleApprovalError,
    ThreadNotPausedError,
    ThreadPausedError,
    UnknownApprovalError,
    UnknownSessionError,
)
from grapharc.session.lease import Lease
from grapharc.session.records import (
    COMPLETED,
    CREATED,
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
    Approval,
    AuditEntry,
    Event,
    Session,
    iso,
    unreadable_times,
)

Conn = psycopg.Connection[dict[str, Any]]
Row = dict[str, Any]

TABLES = ("grapharc_sessions", "grapharc_approvals", "grapharc_events", "grapharc_audit")
_FINISHED = sorted(FINISHED)


class PostgresSessionStore:
    """Sessions, approvals, events, leases and the audit trail in the PostgreSQL database ``uri``."""

    def __init__(self, uri: str, *, max_size: int = 8) -> None:
        self.uri = uri
        self._pool = open_pool(uri, max_size)

    # -- connections -----------------------------------------------------------------

    def _tx(self) -> AbstractContextManager[Conn]:
        """One atomic change or consistent read: a pooled connection inside one transaction."""
        return transaction(self._pool, self.uri)

    def close(self) -> None:
        """Close the pool; closing twice is harmless."""
        self._pool.close()

    # -- sessions --------------------------------------------------------------------

    def create(self, thread_id: str, graph: str, now: float) -> Session:
        """A new session in status ``created``."""
        with self._tx() as conn:
            created = conn.execute(
                "INSERT INTO grapharc_sessions (thread_id, graph, status, created_at, updated_at) "
                "VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING", (thread_id, graph, CREATED, now, now))
            if created.rowcount != 1:
                raise SessionExistsError(f"a session with thread id {thread_id!r} already exists",
                                         hint="leave out the thread id to get a fresh one")
            _audit(conn, thread_id, now, "created", {"graph": graph})
        return self.get(thread_id)

    def get(self, thread_id: str) -> Session:
        """The session, with its open holds and its last recorded node."""
        with self._tx() as conn:
            row = _row(conn, thread_id)
            holds = _approvals(conn, "WHERE thread_id = %s AND state = %s", (thread_id, OPEN))
            last = conn.execute("SELECT node, step FROM grapharc_audit WHERE thread_id = %s "
                                "AND kind = 'node' ORDER BY step DESC, seq DESC LIMIT 1",
                                (thread_id,)).fetchone()
        return _session(row, holds, last)

    def list(self, status: str | None = None) -> list[Session]:
        """Every session (or those in ``status``), most recently changed first."""
        where, args = ("WHERE status = %s", (status,)) if status else ("", ())
        with self._tx() as conn:
            rows = conn.execute(f"SELECT * FROM grapharc_sessions {where} "
                                "ORDER BY updated_at DESC, thread_id", args).fetchall()
            holds: dict[str, list[Approval]] = {}
            for approval in _approvals(conn, "WHERE state = %s", (OPEN,)):
                holds.setdefault(approval.thread_id, []).append(approval)
            last = {r["thread_id"]: r for r in conn.execute(
                "SELECT DISTINCT ON (thread_id) thread_id, node, step FROM grapharc_audit "
                "WHERE kind = 'node' ORDER BY thread_id, step DESC, seq DESC")}
        return [_session(row, holds.get(row["thread_id"], []), last.get(row["thread_id"])) for row in rows]

    # -- leases ----------------------------------------------------------------------

    def claim_start(self, thread_id: str, *, runner: str, ttl: float, now: float,
                    input: Mapping[str, Any], inbox: str | None) -> Lease:
        """Take a created or completed thread for a new turn; queued events join ``inbox``."""
        with self._tx() as conn:
            row = _claimed(conn, thread_id)
            _refuse_live(row, now)
            if row["status"] == PAUSED:
                raise ThreadPausedError(f"thread {thread_id} is paused waiting on a decision",
                                        hint="resume it by naming the approval it waits on")
            if row["status"] == RUNNING:
                raise SessionBusyError(
                    f"thread {thread_id} was left running by runner {row['runner']}, whose lease "
                    f"expired at {iso(row['lease_expires_at'])}", hint=f"recover thread {thread_id}")
            if row["status"] not in (CREATED, COMPLETED):
                raise SessionError(f"thread {thread_id} has ended ({row['status']}); start a new session",
                                   hint="a failed thread can be recovered instead")
            turn_id = uuid4().hex
            values = dict(input)
            if inbox is not None:
                values[inbox] = [*values.get(inbox, []), *_take_events(conn, thread_id, now, turn_id)]
            turn = {"kind": "start", "id": turn_id, "input": values}
            lease = _lease(conn, thread_id, runner, ttl, now, turn)
            _audit(conn, thread_id, now, "claimed", {"runner": runner, "turn": "start"})
        return lease

    def claim_recovery(self, thread_id: str, *, runner: str, ttl: float, now: float) -> Lease:
        """Take over a thread whose runner died (lease expired) or whose turn failed."""
        with self._tx() as conn:
            row = _claimed(conn, thread_id)
            _refuse_live(row, now)
            if row["status"] not in (RUNNING, FAILED):
                raise NothingToRecoverError(
                    f"thread {thread_id} is {row['status']}; only a thread whose runner died "
                    "(its lease expired) or whose turn failed can be recovered")
            turn = row["turn"] or {"kind": "continue", "id": uuid4().hex}
            lease = _lease(conn, thread_id, runner, ttl, now, turn)
            _audit(conn, thread_id, now, "reclaimed",
                   {"runner": runner, "from": row["runner"], "status": row["status"]})
        return lease

    def renew(self, lease: Lease, now: float) -> bool:
        """Extend ``lease``; False if it is no longer this runner's."""
        with self._tx() as conn:
            cursor = conn.execute(
                "UPDATE grapharc_sessions SET lease_expires_at = %s "
                "WHERE thread_id = %s AND lease_token = %s AND status = %s",
                (now + lease.ttl, lease.thread_id, lease.token, RUNNING))
        return cursor.rowcount == 1

    def holds(self, lease: Lease) -> bool:
        """True while ``lease`` is still its thread's current lease."""
        with self._tx() as conn:
            row = conn.execute("SELECT lease_token, status FROM grapharc_sessions WHERE thread_id = %s",
                               (lease.thread_id,)).fetchone()
        return row is not None and row["lease_token"] == lease.token and row["status"] == RUNNING

    def finish(self, lease: Lease, status: str, now: float, *, requests: Iterable[Approval] = (),
               outcome: str | None = None, error: str | None = None) -> None:
        """End a turn: set ``status``, release the lease, open ``requests``; fenced by the token."""
        with self._tx() as conn:
            row = _fenced_row(conn, lease, "its turn ends without writing a status")
            keep_turn = _json(row["turn"]) if status == FAILED else None
            conn.execute(
                "UPDATE grapharc_sessions SET status = %s, updated_at = %s, runner = NULL, "
                "lease_token = NULL, lease_expires_at = NULL, turn = %s, outcome = COALESCE(%s, outcome), "
                "error = %s "
                "WHERE thread_id = %s", (status, now, keep_turn, outcome, error, lease.thread_id))
            if status != PAUSED:
                _supersede_open(conn, lease.thread_id)
            for approval in requests:
                _insert_approval(conn, approval)
            detail: dict[str, Any] = {"runner": lease.runner}
            if status == PAUSED:
                detail["holds"] = [a.approval_id for a in _approvals(
                    conn, "WHERE thread_id = %s AND state = %s", (lease.thread_id, OPEN))]
            if error:
                detail["error"] = error
            _audit(conn, lease.thread_id, now, status, detail)

    # -- approvals -------------------------------------------------------------------

    def approvals(self, thread_id: str) -> builtins.list[Approval]:
        """Every approval the thread has asked for, oldest first."""
        with self._tx() as conn:
            _row(conn, thread_id)
            return _approvals(conn, "WHERE thread_id = %s", (thread_id,))

    def approval(self, approval_id: str) -> Approval:
        """One approval by id."""
        with self._tx() as conn:
            found = _approvals(conn, "WHERE approval_id = %s", (approval_id,))
        if not found:
            raise UnknownApprovalError(f"no approval has id {approval_id!r}",
                                       hint="grapharc session status THREAD shows a thread's open approvals")
        return found[0]

    def decide(self, thread_id: str, approval_id: str, decision: str, *, decider: str, now: float,
               current: Hold | None, runner: str, ttl: float) -> Lease | None:
        """Record a decision; a lease when it was the thread's last open hold (see the contract)."""
        refusal: Exception | None = None
        lease: Lease | None = None
        with self._tx() as conn:
            row = _locked(conn, thread_id)
            found = _approvals(conn, "WHERE approval_id = %s", (approval_id,))
            if not found:
                raise UnknownApprovalError(f"no approval has id {approval_id!r} (thread {thread_id})")
            approval = found[0]
            if row["status"] != PAUSED and approval.thread_id == thread_id:
                said = "" if approval.state == OPEN else (
                    f"; approval {approval_id} was already {approval.state}"
                    + (f" by {approval.decided_by}" if approval.decided_by else ""))
                raise ThreadNotPausedError(f"thread {thread_id} is not paused (it is {row['status']}){said}")
            check_decision(approval, thread_id, decision, decider)
            if approval.expired(now):
                _set_state(conn, approval_id, LAPSED)
                _supersede_open(conn, thread_id)
                _set_status(conn, thread_id, EXPIRED, now)
                _audit(conn, thread_id, now, "expired", {"approval": approval_id, "by": decider})
                refusal = ApprovalExpiredError(
                    f"approval {approval_id} on thread {thread_id} expired at {iso(approval.expires_at)}; "
                    "the thread ends as expired")
            elif current is None or (current.key, current.digest) != (approval.hold_key, approval.digest):
                _set_state(conn, approval_id, SUPERSEDED)
                detail: dict[str, Any] = {"approval": approval_id}
                hint = f"grapharc session status {thread_id} shows where it stands"
                if current is not None:
                    fresh = request(current, thread_id, now)
                    _insert_approval(conn, fresh)
                    detail["replaced_by"] = fresh.approval_id
                    hint = f"decide the new approval {fresh.approval_id}"
                _audit(conn, thread_id, now, "superseded", detail)
                refusal = StaleApprovalError(
                    f"approval {approval_id} on thread {thread_id} is stale: what it asked about has "
                    "changed since it was asked", hint=hint)
            else:
                conn.execute("UPDATE grapharc_approvals SET state = %s, decided_by = %s, decided_at = %s "
                             "WHERE approval_id = %s AND state = %s",
                             (decision, decider, now, approval_id, OPEN))
                _audit(conn, thread_id, now, "decided",
                       {"approval": approval_id, "decision": decision, "by": decider, "node": approval.node})
                lease = _after_decision(conn, approval, decision, runner, ttl, now)
        if refusal is not None:
            raise refusal
        return lease

    # -- events ----------------------------------------------------------------------

    def post_event(self, thread_id: str, kind: str, payload: Mapping[str, Any], now: float) -> Event:
        """Queue an event for the thread's next turn."""
        with self._tx() as conn:
            _row(conn, thread_id)
            posted = conn.execute(
                "INSERT INTO grapharc_events (thread_id, kind, payload, posted_at) VALUES (%s, %s, %s, %s) "
                "RETURNING event_id", (thread_id, kind, Jsonb(dict(payload)), now)).fetchone()
            event_id = int(posted["event_id"]) if posted else 0
            _audit(conn, thread_id, now, "event", {"event": event_id, "kind": kind})
        return Event(event_id, thread_id, kind, dict(payload), now, None)

    def events(self, thread_id: str) -> builtins.list[Event]:
        """Every event posted to the thread, oldest first."""
        with self._tx() as conn:
            _row(conn, thread_id)
            rows = conn.execute("SELECT * FROM grapharc_events WHERE thread_id = %s ORDER BY event_id",
                                (thread_id,))
            return [Event(r["event_id"], r["thread_id"], r["kind"], r["payload"], r["posted_at"],
                          r["delivered_at"]) for r in rows]

    # -- audit -----------------------------------------------------------------------

    def audited_step(self, thread_id: str) -> int:
        """The checkpoint step the next scan for completed nodes starts from."""
        with self._tx() as conn:
            return int(_row(conn, thread_id)["audited_step"])

    def record_nodes(self, lease: Lease, runs: Iterable[NodeRun], audited_step: int, now: float) -> None:
        """Record completed nodes, each (thread, step, node, task) once; fenced by the lease's token."""
        thread_id = lease.thread_id
        with self._tx() as conn:
            _fenced_row(conn, lease, "its completed nodes are not recorded")
            for run in runs:
                conn.execute(
                    "INSERT INTO grapharc_audit (thread_id, at, kind, node, step, task_id, detail) "
                    "VALUES (%s, %s, 'node', %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                    (thread_id, now, run.node, run.step, run.task_id, Jsonb({"writes": run.writes})))
            conn.execute("UPDATE grapharc_sessions SET audited_step = %s WHERE thread_id = %s",
                         (audited_step, thread_id))

    def record_run(self, lease: Lease, run: Mapping[str, Any], now: float) -> None:
        """Record one run a turn made, once per run id; fenced by the lease's token."""
        with self._tx() as conn:
            _fenced_row(conn, lease, "its run is not recorded")
            conn.execute(
                "INSERT INTO grapharc_audit (thread_id, at, kind, node, step, task_id, detail) "
                "VALUES (%s, %s, 'run', NULL, NULL, %s, %s) ON CONFLICT DO NOTHING",
                (lease.thread_id, now, str(run["run_id"]), Jsonb(dict(run))))

    def audit(self, thread_id: str) -> builtins.list[AuditEntry]:
        """The thread's audit trail, in the order it was written."""
        with self._tx() as conn:
            _row(conn, thread_id)
            rows = conn.execute("SELECT * FROM grapharc_audit WHERE thread_id = %s ORDER BY seq",
                                (thread_id,))
            return [AuditEntry(r["seq"], r["thread_id"], r["at"], r["kind"], r["node"], r["step"],
                               r["detail"]) for r in rows]

    # -- retention -------------------------------------------------------------------

    def prune(self, before: float) -> builtins.list[str]:
        """Remove finished sessions last changed before ``before``, with their holds, events and audit
        (autovacuum gives the space back)."""
        with self._tx() as conn:
            gone = [r["thread_id"] for r in conn.execute(
                "DELETE FROM grapharc_sessions WHERE status = ANY(%s) AND updated_at < %s "
                "RETURNING thread_id",
                (_FINISHED, before))]
            _delete_records(conn, gone)
        return gone

    def delete(self, thread_id: str, now: float) -> None:
        """Remove one session with its holds, events and audit, unless its lease is live."""
        with self._tx() as conn:
            _refuse_live(_locked(conn, thread_id), now)
            conn.execute("DELETE FROM grapharc_sessions WHERE thread_id = %s", (thread_id,))
            _delete_records(conn, [thread_id])

    def footprint(self) -> dict[str, int]:
        """Bytes of each session table, indexes included, keyed ``DATABASE/TABLE``."""
        return table_footprint(self._pool, TABLES)


def table_footprint(pool: ConnectionPool[Any], tables: Iterable[str]) -> dict[str, int]:
    """``pg_total_relation_size`` of each of ``tables`` that exists, keyed ``DATABASE/TABLE``."""
    with pool.connection() as conn:
        rows = conn.execute(
            "SELECT current_database() || '/' || t AS place, pg_total_relation_size(to_regclass(t)) AS size "
            "FROM unnest(%s::text[]) AS t WHERE to_regclass(t) IS NOT NULL", ([*tables],)).fetchall()
    return {str(row["place"]): int(row["size"]) for row in rows}


def open_session_store(location: str, kind: str = "sessions") -> PostgresSessionStore:
    """The store-hook factory behind ``postgres://`` and ``postgresql://`` for ``kind="sessions"``."""
    return PostgresSessionStore(conninfo(location))


# -- row helpers ---------------------------------------------------------------------


def _row(conn: Conn, thread_id: str, lock: str = "") -> Row:
    found = conn.execute(f"SELECT * FROM grapharc_sessions WHERE thread_id = %s {lock}", (thread_id,))
    row = found.fetchone()
    if row is None:
        raise UnknownSessionError(thread_id)
    return row


def _locked(conn: Conn, thread_id: str) -> Row:
    """The thread's row, locked until the transaction ends: concurrent changes to it queue here."""
    return _row(conn, thread_id, "FOR UPDATE")


def _claimed(conn: Conn, thread_id: str) -> Row:
    """The thread's row locked for a claim, or ``SessionBusyError`` if another runner is claiming
    it right now (its row is locked: skipped rather than waited for)."""
    row = conn.execute("SELECT * FROM grapharc_sessions WHERE thread_id = %s FOR UPDATE SKIP LOCKED",
                       (thread_id,)).fetchone()
    if row is not None:
        return row
    _row(conn, thread_id)  # UnknownSessionError if there is no such thread at all
    raise SessionBusyError(f"thread {thread_id} is being claimed by another runner right now",
                           hint="look again in a moment: grapharc session status shows who holds it")


def _fenced_row(conn: Conn, lease: Lease, consequence: str) -> Row:
    """The lease's thread row, locked, or ``LeaseLostError`` if the lease is no longer its current one."""
    row = _locked(conn, lease.thread_id)
    if row["lease_token"] != lease.token or row["status"] != RUNNING:
        raise LeaseLostError(f"runner {lease.runner} no longer holds thread {lease.thread_id}; {consequence}")
    return row


def _refuse_live(row: Row, now: float) -> None:
    expires = row["lease_expires_at"]
    if row["status"] == RUNNING and expires is not None and now < expires:
        raise SessionBusyError(
            f"thread {row['thread_id']} is being run by runner {row['runner']} "
            f"(lease until {iso(expires)})",
            hint="wait for that turn to end; if its runner died, recover the thread once the lease expires")


def _json(value: Any) -> Jsonb | None:
    return None if value is None else Jsonb(value)


def _lease(conn: Conn, thread_id: str, runner: str, ttl: float, now: float, turn: dict[str, Any]) -> Lease:
    lease = Lease(thread_id, runner, uuid4().hex, ttl, turn)
    conn.execute("UPDATE grapharc_sessions SET status = %s, updated_at = %s, runner = %s, lease_token = %s, "
                 "lease_expires_at = %s, turn = %s, error = NULL WHERE thread_id = %s",
                 (RUNNING, now, runner, lease.token, now + ttl, Jsonb(turn), thread_id))
    return lease


def _after_decision(conn: Conn, approval: Approval, decision: str, runner: str, ttl: float,
                    now: float) -> Lease | None:
    thread_id = approval.thread_id
    if approval.kind == GATE and decision == DECLINED:
        _supersede_open(conn, thread_id)
        _set_status(conn, thread_id, REJECTED, now)
        _audit(conn, thread_id, now, REJECTED, {"approval": approval.approval_id, "node": approval.node})
        return None
    still_open = conn.execute("SELECT COUNT(*) AS n FROM grapharc_approvals "
                              "WHERE thread_id = %s AND state = %s", (thread_id, OPEN)).fetchone()
    if still_open and still_open["n"]:
        conn.execute("UPDATE grapharc_sessions SET updated_at = %s WHERE thread_id = %s", (now, thread_id))
        return None
    lease = _lease(conn, thread_id, runner, ttl, now, {"kind": "continue", "id": uuid4().hex})
    _audit(conn, thread_id, now, "claimed", {"runner": runner, "turn": "continue"})
    return lease


def _set_status(conn: Conn, thread_id: str, status: str, now: float) -> None:
    conn.execute("UPDATE grapharc_sessions SET status = %s, updated_at = %s, turn = NULL "
                 "WHERE thread_id = %s", (status, now, thread_id))


def _set_state(conn: Conn, approval_id: str, state: str) -> None:
    conn.execute("UPDATE grapharc_approvals SET state = %s WHERE approval_id = %s", (state, approval_id))


def _supersede_open(conn: Conn, thread_id: str) -> None:
    conn.execute("UPDATE grapharc_approvals SET state = %s WHERE thread_id = %s AND state = %s",
                 (SUPERSEDED, thread_id, OPEN))


def _delete_records(conn: Conn, thread_ids: builtins.list[str]) -> None:
    """Remove the holds, events and audit of sessions whose rows are already gone."""
    for table in ("grapharc_approvals", "grapharc_events", "grapharc_audit"):
        conn.execute(f"DELETE FROM {table} WHERE thread_id = ANY(%s)", (thread_ids,))


def _take_events(conn: Conn, thread_id: str, now: float, turn_id: str) -> list[dict[str, Any]]:
    rows = conn.execute(
        "UPDATE grapharc_events SET delivered_at = %s, turn_id = %s "
        "WHERE thread_id = %s AND delivered_at IS NULL RETURNING event_id, kind, payload",
        (now, turn_id, thread_id)).fetchall()
    return [{"event_id": r["event_id"], "kind": r["kind"], "payload": r["payload"]}
            for r in sorted(rows, key=lambda r: r["event_id"])]


def _insert_approval(conn: Conn, a: Approval) -> None:
    conn.execute(
        "INSERT INTO grapharc_approvals (approval_id, thread_id, kind, node, hold_key, question, digest, "
        "deciders, created_at, expires_at, state) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (a.approval_id, a.thread_id, a.kind, a.node, a.hold_key, a.question, a.digest,
         Jsonb(list(a.deciders)), a.created_at, a.expires_at, a.state))
    _audit(conn, a.thread_id, a.created_at, "asked",
           {"approval": a.approval_id, "node": a.node, "kind": a.kind, "question": a.question})


def _approvals(conn: Conn, where: str, args: tuple[Any, ...]) -> list[Approval]:
    rows = conn.execute(f"SELECT * FROM grapharc_approvals {where} ORDER BY seq", args)
    return [Approval(r["approval_id"], r["thread_id"], r["kind"], r["node"], r["hold_key"], r["question"],
                     r["digest"], tuple(r["deciders"]), r["created_at"], r["expires_at"],
                     r["state"], r["decided_by"], r["decided_at"]) for r in rows]


def _audit(conn: Conn, thread_id: str, now: float, kind: str, detail: dict[str, Any]) -> None:
    conn.execute("INSERT INTO grapharc_audit (thread_id, at, kind, detail) VALUES (%s, %s, %s, %s)",
                 (thread_id, now, kind, Jsonb(detail)))


def _session(row: Row, holds: list[Approval], last: Row | None) -> Session:
    """A session from its row; times no calendar holds are flagged in ``damaged``, not raised."""
    return Session(
        damaged=unreadable_times(created_at=row["created_at"], updated_at=row["updated_at"],
                                 lease_expires_at=row["lease_expires_at"]),
        thread_id=row["thread_id"], graph=row["graph"], status=row["status"],
        created_at=row["created_at"], updated_at=row["updated_at"], runner=row["runner"],
        lease_expires_at=row["lease_expires_at"], outcome=row["outcome"], error=row["error"],
        last_node=last["node"] if last else None, last_step=last["step"] if last else None,
        holds=tuple(holds),
    )
