"""The SQLite session store: status, event queue, approval holds, leases and the audit trail.

The ``SessionStore`` (``grapharc.session.contracts``) that core ships, registered as
the ``sessions`` kind of the ``sqlite:`` store scheme: ``open_store("sqlite:DIR",
kind="sessions")`` opens ``DIR/sessions.db`` (``grapharc.session.sqlite_files``). Every
change is one short ``BEGIN IMMEDIATE`` transaction on a connection of its own, so
claims and decisions are atomic across processes and the store is safe to call from
any thread. Graph state is not kept here: it lives in LangGraph's checkpointer.
"""

from __future__ import annotations

import builtins  # `builtins.list` in annotations: the class below has a method named `list`
import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any
from uuid import uuid4

from grapharc.session.approvals import Hold, check_decision, request
from grapharc.session.audit import NodeRun
from grapharc.session.errors import (
    ApprovalExpiredError,
    LeaseLostError,
    NothingToRecoverError,
    SessionBusyError,
    SessionError,
    SessionExistsError,
    SessionStoreError,
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
from grapharc.session.schema import SCHEMA, SCHEMA_VERSION
from grapharc.session.sqlite_files import SESSIONS_FILE, database_path, footprint, prepare_database_file

_FINISHED = tuple(sorted(FINISHED))


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


class SqliteSessionStore:
    """Sessions, approvals, events, leases and the audit trail in one SQLite file at ``path``."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        self._local = threading.local()
        self._opened: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._prepare()

    # -- connections -----------------------------------------------------------------

    def _prepare(self) -> None:
        prepare_database_file(self.path, "session store", SessionStoreError)
        try:
            with closing(self._connect()) as conn:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.executescript(f"BEGIN IMMEDIATE;\n{SCHEMA}\nCOMMIT;")
                conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('schema', ?)",
                             (SCHEMA_VERSION,))
                found = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()[0]
        except (sqlite3.DatabaseError, OSError) as exc:
            raise SessionStoreError(
                f"cannot use {self.path} as a session store: {exc}",
                hint="point at a session directory GraphARC created, or a new one") from exc
        if found != SCHEMA_VERSION:
            raise SessionStoreError(f"session store {self.path} has schema {found}; this GraphARC reads "
                                    f"schema {SCHEMA_VERSION}")

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(str(self.path), timeout=30.0, isolation_level=None, check_same_thread=False)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA synchronous=NORMAL")
        return conn

    def _thread_connection(self) -> sqlite3.Connection:
        """This thread's connection, kept open (closing the last one would checkpoint the WAL)."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self._connect()
            with self._lock:
                self._opened.append(conn)
        return conn

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One atomic change: BEGIN IMMEDIATE, commit on success, roll back on any error."""
        conn = self._thread_connection()
        try:
            conn.execute("BEGIN IMMEDIATE")
            yield conn
            conn.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise SessionStoreError(f"session store {self.path}: {exc}") from exc
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """A consistent read: one deferred transaction, so a read of several tables sees one state."""
        conn = self._thread_connection()
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            conn.execute("COMMIT")

    def close(self) -> None:
        """Close every connection this store opened."""
        with self._lock:
            opened, self._opened = self._opened, []
        for conn in opened:
            conn.close()
        self._local = threading.local()

    # -- sessions --------------------------------------------------------------------

    def create(self, thread_id: str, graph: str, now: float) -> Session:
        """A new session in status ``created``."""
        with self._write() as conn:
            try:
                conn.execute("INSERT INTO sessions (thread_id, graph, status, created_at, updated_at) "
                             "VALUES (?, ?, ?, ?, ?)", (thread_id, graph, CREATED, now, now))
            except sqlite3.IntegrityError:
                raise SessionExistsError(f"a session with thread id {thread_id!r} already exists",
                                         hint="leave out the thread id to get a fresh one") from None
            _audit(conn, thread_id, now, "created", {"graph": graph})
        return self.get(thread_id)

    def get(self, thread_id: str) -> Session:
        """The session, with its open holds and its last recorded node."""
        with self._read() as conn:
            row = conn.execute("SELECT * FROM sessions WHERE thread_id = ?", (thread_id,)).fetchone()
            if row is None:
                raise UnknownSessionError(thread_id)
            holds = _approvals(conn, "WHERE thread_id = ? AND state = ?", (thread_id, OPEN))
            last = conn.execute("SELECT node, step FROM audit WHERE thread_id = ? AND kind = 'node' "
                                "ORDER BY step DESC, seq DESC LIMIT 1", (thread_id,)).fetchone()
        return _session(row, holds, last)

    def list(self, status: str | None = None) -> list[Session]:
        """Every session (or those in ``status``), most recently changed first."""
        where, args = ("WHERE status = ?", (status,)) if status else ("", ())
        with self._read() as conn:
            rows = conn.execute(f"SELECT * FROM sessions {where} ORDER BY updated_at DESC, thread_id",
                                args).fetchall()
            holds: dict[str, list[Approval]] = {}
            for approval in _approvals(conn, "WHERE state = ?", (OPEN,)):
                holds.setdefault(approval.thread_id, []).append(approval)
            last = {r["thread_id"]: r for r in conn.execute(
                "SELECT a.thread_id, a.node, a.step FROM audit AS a JOIN (SELECT thread_id, "
                "MAX(step) AS step FROM audit WHERE kind = 'node' GROUP BY thread_id) AS m "
                "ON a.thread_id = m.thread_id AND a.step = m.step WHERE a.kind = 'node' ORDER BY a.seq")}
        return [_session(row, holds.get(row["thread_id"], []), last.get(row["thread_id"])) for row in rows]

    # -- leases ----------------------------------------------------------------------

    def claim_start(self, thread_id: str, *, runner: str, ttl: float, now: float,
                    input: Mapping[str, Any], inbox: str | None) -> Lease:
        """Take a created or completed thread for a new turn; queued events join ``inbox``."""
        with self._write() as conn:
            row = _row(conn, thread_id)
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
        with self._write() as conn:
            row = _row(conn, thread_id)
            _refuse_live(row, now)
            if row["status"] not in (RUNNING, FAILED):
                raise NothingToRecoverError(
                    f"thread {thread_id} is {row['status']}; only a thread whose runner died "
                    "(its lease expired) or whose turn failed can be recovered")
            turn = json.loads(row["turn"]) if row["turn"] else {"kind": "continue", "id": uuid4().hex}
            lease = _lease(conn, thread_id, runner, ttl, now, turn)
            _audit(conn, thread_id, now, "reclaimed",
                   {"runner": runner, "from": row["runner"], "status": row["status"]})
        return lease

    def renew(self, lease: Lease, now: float) -> bool:
        """Extend ``lease``; False if it is no longer this runner's. Called from heartbeat
        threads, so it uses a connection of its own rather than keep one per thread."""
        with closing(self._connect()) as conn:
            cursor = conn.execute(
                "UPDATE sessions SET lease_expires_at = ? WHERE thread_id = ? AND lease_token = ? "
                "AND status = ?", (now + lease.ttl, lease.thread_id, lease.token, RUNNING))
        return cursor.rowcount == 1

    def holds(self, lease: Lease) -> bool:
        """True while ``lease`` is still its thread's current lease."""
        with self._read() as conn:
            row = conn.execute("SELECT lease_token, status FROM sessions WHERE thread_id = ?",
                               (lease.thread_id,)).fetchone()
        return row is not None and row["lease_token"] == lease.token and row["status"] == RUNNING

    def finish(self, lease: Lease, status: str, now: float, *, requests: Iterable[Approval] = (),
               outcome: str | None = None, error: str | None = None) -> None:
        """End a turn: set ``status``, release the lease, open ``requests``; fenced by the token."""
        with self._write() as conn:
            row = _fenced_row(conn, lease, "its turn ends without writing a status")
            keep_turn = row["turn"] if status == FAILED else None
            conn.execute(
                "UPDATE sessions SET status = ?, updated_at = ?, runner = NULL, lease_token = NULL, "
                "lease_expires_at = NULL, turn = ?, outcome = COALESCE(?, outcome), error = ? "
                "WHERE thread_id = ?", (status, now, keep_turn, outcome, error, lease.thread_id))
            if status != PAUSED:
                _supersede_open(conn, lease.thread_id)
            for approval in requests:
                _insert_approval(conn, approval)
            detail: dict[str, Any] = {"runner": lease.runner}
            if status == PAUSED:
                detail["holds"] = [a.approval_id for a in _approvals(
                    conn, "WHERE thread_id = ? AND state = ?", (lease.thread_id, OPEN))]
            if error:
                detail["error"] = error
            _audit(conn, lease.thread_id, now, status, detail)

    # -- approvals -------------------------------------------------------------------

    def approvals(self, thread_id: str) -> builtins.list[Approval]:
        """Every approval the thread has asked for, oldest first."""
        with self._read() as conn:
            _row(conn, thread_id)
            return _approvals(conn, "WHERE thread_id = ?", (thread_id,))

    def approval(self, approval_id: str) -> Approval:
        """One approval by id."""
        with self._read() as conn:
            found = _approvals(conn, "WHERE approval_id = ?", (approval_id,))
        if not found:
            raise UnknownApprovalError(f"no approval has id {approval_id!r}",
                                       hint="grapharc session status THREAD shows a thread's open approvals")
        return found[0]

    def decide(self, thread_id: str, approval_id: str, decision: str, *, decider: str, now: float,
               current: Hold | None, runner: str, ttl: float) -> Lease | None:
        """Record a decision; returns a lease when it was the thread's last open hold.

        ``current`` is the hold the thread is paused on now for the approval's node, read
        from the checkpoint; if it is another hold or has another digest (or there is
        none) the approval is superseded and a new one asked for. A rejected gate ends
        the thread as ``rejected``.
        """
        refusal: Exception | None = None
        lease: Lease | None = None
        with self._write() as conn:
            row = _row(conn, thread_id)
            found = _approvals(conn, "WHERE approval_id = ?", (approval_id,))
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
                conn.execute("UPDATE approvals SET state = ?, decided_by = ?, decided_at = ? "
                             "WHERE approval_id = ? AND state = ?",
                             (decision, decider, now, approval_id, OPEN))
                _audit(conn, thread_id, now, "decided",
                       {"approval": approval_id, "decision": decision, "by": decider, "node": approval.node})
                lease = self._after_decision(conn, approval, decision, runner, ttl, now)
        if refusal is not None:
            raise refusal
        return lease

    @staticmethod
    def _after_decision(conn: sqlite3.Connection, approval: Approval, decision: str, runner: str,
                        ttl: float, now: float) -> Lease | None:
        thread_id = approval.thread_id
        if approval.kind == GATE and decision == DECLINED:
            _supersede_open(conn, thread_id)
            _set_status(conn, thread_id, REJECTED, now)
            _audit(conn, thread_id, now, REJECTED, {"approval": approval.approval_id, "node": approval.node})
            return None
        still_open = conn.execute("SELECT COUNT(*) FROM approvals WHERE thread_id = ? AND state = ?",
                                  (thread_id, OPEN)).fetchone()[0]
        if still_open:
            conn.execute("UPDATE sessions SET updated_at = ? WHERE thread_id = ?", (now, thread_id))
            return None
        lease = _lease(conn, thread_id, runner, ttl, now, {"kind": "continue", "id": uuid4().hex})
        _audit(conn, thread_id, now, "claimed", {"runner": runner, "turn": "continue"})
        return lease

    # -- events ----------------------------------------------------------------------

    def post_event(self, thread_id: str, kind: str, payload: Mapping[str, Any], now: float) -> Event:
        """Queue an event for the thread's next turn."""
        with self._write() as conn:
            _row(conn, thread_id)
            cursor = conn.execute(
                "INSERT INTO events (thread_id, kind, payload, posted_at) VALUES (?, ?, ?, ?)",
                (thread_id, kind, _dumps(dict(payload)), now))
            _audit(conn, thread_id, now, "event", {"event": cursor.lastrowid, "kind": kind})
        return Event(int(cursor.lastrowid or 0), thread_id, kind, dict(payload), now, None)

    def events(self, thread_id: str) -> builtins.list[Event]:
        """Every event posted to the thread, oldest first."""
        with self._read() as conn:
            _row(conn, thread_id)
            rows = conn.execute("SELECT * FROM events WHERE thread_id = ? ORDER BY event_id", (thread_id,))
            return [Event(r["event_id"], r["thread_id"], r["kind"], json.loads(r["payload"]),
                          r["posted_at"], r["delivered_at"]) for r in rows]

    # -- audit -----------------------------------------------------------------------

    def audited_step(self, thread_id: str) -> int:
        """The checkpoint step the next scan for completed nodes starts from."""
        with self._read() as conn:
            return int(_row(conn, thread_id)["audited_step"])

    def record_nodes(self, lease: Lease, runs: Iterable[NodeRun], audited_step: int, now: float) -> None:
        """Record completed nodes, each (thread, step, node, task) once however often it is seen;
        fenced by the lease's token."""
        thread_id = lease.thread_id
        with self._write() as conn:
            _fenced_row(conn, lease, "its completed nodes are not recorded")
            for run in runs:
                conn.execute(
                    "INSERT OR IGNORE INTO audit (thread_id, at, kind, node, step, task_id, detail) "
                    "VALUES (?, ?, 'node', ?, ?, ?, ?)",
                    (thread_id, now, run.node, run.step, run.task_id, _dumps({"writes": run.writes})))
            conn.execute("UPDATE sessions SET audited_step = ? WHERE thread_id = ?",
                         (audited_step, thread_id))

    def record_run(self, lease: Lease, run: Mapping[str, Any], now: float) -> None:
        """Record one run a turn made (its id, status, stop reason, steps and spend), once per
        run id; fenced by the lease's token."""
        with self._write() as conn:
            _fenced_row(conn, lease, "its run is not recorded")
            conn.execute(
                "INSERT OR IGNORE INTO audit (thread_id, at, kind, node, step, task_id, detail) "
                "VALUES (?, ?, 'run', NULL, NULL, ?, ?)",
                (lease.thread_id, now, str(run["run_id"]), _dumps(dict(run))))

    def audit(self, thread_id: str) -> builtins.list[AuditEntry]:
        """The thread's audit trail, in the order it was written."""
        with self._read() as conn:
            _row(conn, thread_id)
            rows = conn.execute("SELECT * FROM audit WHERE thread_id = ? ORDER BY seq", (thread_id,))
            return [AuditEntry(r["seq"], r["thread_id"], r["at"], r["kind"], r["node"], r["step"],
                               json.loads(r["detail"])) for r in rows]

    # -- retention -------------------------------------------------------------------

    def prune(self, before: float) -> builtins.list[str]:
        """Remove finished sessions last changed before ``before``, with their holds, events and audit,
        and give the space back to the file system."""
        marks = ",".join("?" * len(_FINISHED))
        with self._write() as conn:
            gone = [r[0] for r in conn.execute(
                f"SELECT thread_id FROM sessions WHERE status IN ({marks}) AND updated_at < ?",
                (*_FINISHED, before))]
            for thread_id in gone:
                conn.execute("DELETE FROM sessions WHERE thread_id = ?", (thread_id,))
                for table in ("approvals", "events", "audit"):
                    conn.execute(f"DELETE FROM {table} WHERE thread_id = ?", (thread_id,))
        if gone:
            self._compact()
        return gone

    def delete(self, thread_id: str, now: float) -> None:
        """Remove one session with its holds, events and audit, unless its lease is live."""
        with self._write() as conn:
            _refuse_live(_row(conn, thread_id), now)
            conn.execute("DELETE FROM sessions WHERE thread_id = ?", (thread_id,))
            for table in ("approvals", "events", "audit"):
                conn.execute(f"DELETE FROM {table} WHERE thread_id = ?", (thread_id,))

    def _compact(self) -> None:
        """Give the space of removed rows back to the file system (outside any transaction)."""
        conn = self._thread_connection()
        conn.execute("VACUUM")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def footprint(self) -> dict[str, int]:
        """Bytes of the store's file, its WAL and shared-memory files included."""
        return footprint(self.path)


def open_session_store(location: str, kind: str = "sessions") -> SqliteSessionStore:
    """The store-hook factory behind ``sqlite:`` for ``kind="sessions"``: a directory's
    ``sessions.db``, or the file named."""
    return SqliteSessionStore(database_path(location, SESSIONS_FILE, SessionStoreError))


# -- row helpers ---------------------------------------------------------------------


def _row(conn: sqlite3.Connection, thread_id: str) -> sqlite3.Row:
    found = conn.execute("SELECT * FROM sessions WHERE thread_id = ?", (thread_id,))
    row: sqlite3.Row | None = found.fetchone()  # the store's connections make sqlite3.Row rows
    if row is None:
        raise UnknownSessionError(thread_id)
    return row


def _fenced_row(conn: sqlite3.Connection, lease: Lease, consequence: str) -> sqlite3.Row:
    """The lease's thread row, or ``LeaseLostError`` if the lease is no longer its current one."""
    row = _row(conn, lease.thread_id)
    if row["lease_token"] != lease.token or row["status"] != RUNNING:
        raise LeaseLostError(f"runner {lease.runner} no longer holds thread {lease.thread_id}; {consequence}")
    return row


def _refuse_live(row: sqlite3.Row, now: float) -> None:
    expires = row["lease_expires_at"]
    if row["status"] == RUNNING and expires is not None and now < expires:
        raise SessionBusyError(
            f"thread {row['thread_id']} is being run by runner {row['runner']} "
            f"(lease until {iso(expires)})",
            hint="wait for that turn to end; if its runner died, recover the thread once the lease expires")


def _lease(conn: sqlite3.Connection, thread_id: str, runner: str, ttl: float, now: float,
           turn: dict[str, Any]) -> Lease:
    lease = Lease(thread_id, runner, uuid4().hex, ttl, turn)
    conn.execute("UPDATE sessions SET status = ?, updated_at = ?, runner = ?, lease_token = ?, "
                 "lease_expires_at = ?, turn = ?, error = NULL WHERE thread_id = ?",
                 (RUNNING, now, runner, lease.token, now + ttl, _dumps(turn), thread_id))
    return lease


def _set_status(conn: sqlite3.Connection, thread_id: str, status: str, now: float) -> None:
    conn.execute("UPDATE sessions SET status = ?, updated_at = ?, turn = NULL WHERE thread_id = ?",
                 (status, now, thread_id))


def _set_state(conn: sqlite3.Connection, approval_id: str, state: str) -> None:
    conn.execute("UPDATE approvals SET state = ? WHERE approval_id = ?", (state, approval_id))


def _supersede_open(conn: sqlite3.Connection, thread_id: str) -> None:
    conn.execute("UPDATE approvals SET state = ? WHERE thread_id = ? AND state = ?",
                 (SUPERSEDED, thread_id, OPEN))


def _take_events(conn: sqlite3.Connection, thread_id: str, now: float, turn_id: str) -> list[dict[str, Any]]:
    pending = "thread_id = ? AND delivered_at IS NULL"
    rows = conn.execute(f"SELECT event_id, kind, payload FROM events WHERE {pending} ORDER BY event_id",
                        (thread_id,)).fetchall()
    conn.execute(f"UPDATE events SET delivered_at = ?, turn_id = ? WHERE {pending}",
                 (now, turn_id, thread_id))
    return [{"event_id": r["event_id"], "kind": r["kind"], "payload": json.loads(r["payload"])} for r in rows]


def _insert_approval(conn: sqlite3.Connection, a: Approval) -> None:
    conn.execute(
        "INSERT INTO approvals (approval_id, thread_id, kind, node, hold_key, question, digest, deciders, "
        "created_at, expires_at, state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (a.approval_id, a.thread_id, a.kind, a.node, a.hold_key, a.question, a.digest,
         _dumps(list(a.deciders)), a.created_at, a.expires_at, a.state))
    _audit(conn, a.thread_id, a.created_at, "asked",
           {"approval": a.approval_id, "node": a.node, "kind": a.kind, "question": a.question})


def _approvals(conn: sqlite3.Connection, where: str, args: tuple[Any, ...]) -> list[Approval]:
    rows = conn.execute(f"SELECT * FROM approvals {where} ORDER BY rowid", args)
    return [Approval(r["approval_id"], r["thread_id"], r["kind"], r["node"], r["hold_key"], r["question"],
                     r["digest"], tuple(json.loads(r["deciders"])), r["created_at"], r["expires_at"],
                     r["state"], r["decided_by"], r["decided_at"]) for r in rows]


def _audit(conn: sqlite3.Connection, thread_id: str, now: float, kind: str, detail: dict[str, Any]) -> None:
    conn.execute("INSERT INTO audit (thread_id, at, kind, detail) VALUES (?, ?, ?, ?)",
                 (thread_id, now, kind, _dumps(detail)))


def _session(row: sqlite3.Row, holds: list[Approval], last: sqlite3.Row | None) -> Session:
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
