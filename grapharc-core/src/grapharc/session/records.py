"""What the session store hands back: sessions, approvals, events and audit entries.

Plain frozen dataclasses with a ``to_dict`` for ``--json``; times are epoch seconds
here and ISO 8601 (UTC) in the dictionaries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

CREATED, RUNNING, PAUSED = "created", "running", "paused"
COMPLETED, REJECTED, EXPIRED, FAILED = "completed", "rejected", "expired", "failed"
STATUSES = (CREATED, RUNNING, PAUSED, COMPLETED, REJECTED, EXPIRED, FAILED)
FINISHED = frozenset({COMPLETED, REJECTED, EXPIRED, FAILED})

GATE, INTERRUPT = "gate", "interrupt"
OPEN, APPROVED, DECLINED, SUPERSEDED, LAPSED = "open", "approved", "rejected", "superseded", "expired"
DECISIONS = (APPROVED, DECLINED)
EDIT, FORK = "edit", "fork"
"""The kinds of a lease's turn besides a start, a resume and a recovery: a state edit from outside a
turn, and a turn from a past checkpoint."""


class AuditKind(StrEnum):
    """What one entry of a thread's audit trail records (its ``kind``): the store writes these and
    nothing else, and the server's streams, run worker and inbox read them by these names."""

    CREATED = "created"
    CLAIMED = "claimed"
    RECLAIMED = "reclaimed"
    NODE = "node"
    ASKED = "asked"
    DECIDED = "decided"
    SUPERSEDED = "superseded"
    EVENT = "event"
    DIRECTED = "directed"
    """A client's goto and update, applied by the turn that carries the thread on."""
    UPDATED = "updated"
    """The thread's state was written from outside a turn (``update_state``), by whom, as which node."""
    COPIED = "copied"
    """The thread began as a copy of another one's state and checkpoints (that thread's trail stays there)."""
    PRUNED = "pruned"
    """All but the thread's latest checkpoints were dropped (``threads.prune``'s ``keep_latest``), by whom."""
    METADATA = "metadata"
    """The thread's own metadata was changed, by whom, and which keys (never their values)."""
    PAUSED = PAUSED
    """A turn ended with the thread paused; the finishing statuses below end one too."""
    COMPLETED = COMPLETED
    REJECTED = REJECTED
    EXPIRED = EXPIRED
    """An approval lapsed (a turn that finds it so ends the thread ``expired``)."""
    FAILED = FAILED
    CANCELLED = "cancelled"
    """A turn ended by a cancel someone asked for: who, for which run, the action, and the status
    the thread was left in (its last checkpoint's: completed or paused)."""


def iso(moment: float | None) -> str | None:
    """Epoch seconds as ISO 8601 in UTC (None, and a value no calendar holds, give None)."""
    if moment is None:
        return None
    try:
        return datetime.fromtimestamp(moment, UTC).isoformat(timespec="seconds")
    except (OverflowError, OSError, ValueError, TypeError):
        return None


READABLE = (datetime(1, 1, 2, tzinfo=UTC).timestamp(), datetime(9999, 12, 30, tzinfo=UTC).timestamp())
"""Epoch seconds a day inside the years ``datetime`` holds: a number strictly between them is a time
``iso`` reads, known without building the date (a thread's row has three times to check)."""


def unreadable_times(**moments: Any) -> str | None:
    """Which of the named times is not a time a calendar holds (a damaged row), if any."""
    bad = [f"{name}={value!r}" for name, value in moments.items() if not _readable(value)]
    return f"unreadable {', '.join(bad)}" if bad else None


def _readable(moment: Any) -> bool:
    """Whether ``moment`` is None or a time ``iso`` reads."""
    if moment is None or (type(moment) in (float, int) and READABLE[0] < moment < READABLE[1]):
        return True
    return iso(moment) is not None


@dataclass(frozen=True, slots=True)
class Approval:
    """One request for a human decision: what is held, who may decide, until when, and the answer."""

    approval_id: str
    thread_id: str
    kind: str
    node: str
    hold_key: str
    question: str
    digest: str
    deciders: tuple[str, ...]
    created_at: float
    expires_at: float | None
    state: str = OPEN
    decided_by: str | None = None
    decided_at: float | None = None

    def expired(self, now: float) -> bool:
        """True once the approval's expiry has passed."""
        return self.expires_at is not None and now >= self.expires_at

    def to_dict(self) -> dict[str, Any]:
        return {
            "approval_id": self.approval_id, "thread_id": self.thread_id, "kind": self.kind,
            "node": self.node, "question": self.question, "digest": self.digest,
            "deciders": list(self.deciders), "created_at": iso(self.created_at),
            "expires_at": iso(self.expires_at), "state": self.state,
            "decided_by": self.decided_by, "decided_at": iso(self.decided_at),
        }


@dataclass(frozen=True, slots=True)
class Answer:
    """What a person answered a plain ``interrupt()`` with (any JSON value, None included): the
    node receives it as the call's return value. Its approval is recorded ``approved`` (answered)
    and the value on the trail's ``decided`` entry (``ANSWER_KEY``), where a turn finds it."""

    value: Any


DecisionMark = tuple[float, str]
"""Where a decided approval stands in the list of decisions: its (``decided_at``, ``approval_id``)."""


def decision_mark(approval: Approval) -> DecisionMark:
    """The mark of a decided approval (``SessionStore.decided`` pages on it)."""
    if approval.decided_at is None:
        raise ValueError(f"approval {approval.approval_id} is not decided")
    return approval.decided_at, approval.approval_id


ANSWER_KEY = "answer"
"""The key of a ``decided`` audit entry's detail that holds an ``Answer``'s value."""


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One line of a thread's append-only audit trail."""

    seq: int
    thread_id: str
    at: float
    kind: str
    node: str | None
    step: int | None
    detail: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"seq": self.seq, "at": iso(self.at), "kind": self.kind, "node": self.node,
                "step": self.step, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class Event:
    """Something said to a session; delivered into its inbox field at its next turn."""

    event_id: int
    thread_id: str
    kind: str
    payload: dict[str, Any]
    posted_at: float
    delivered_at: float | None


@dataclass(frozen=True, slots=True)
class Session:
    """Where one thread stands: status, who holds it, what it waits on, its last node."""

    thread_id: str
    graph: str
    status: str
    created_at: float
    updated_at: float
    runner: str | None = None
    lease_expires_at: float | None = None
    outcome: str | None = None
    error: str | None = None
    last_node: str | None = None
    last_step: int | None = None
    holds: tuple[Approval, ...] = field(default=())
    damaged: str | None = None
    """What of this session's stored record cannot be read (it is listed, flagged, not dropped)."""
    owner: str | None = None
    """Who created the thread (a server's signed-in user); None: created without one (the CLI), or
    before threads recorded it."""
    tenant: str | None = None
    """The tenant its owner belonged to when it was created (None: none)."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """The thread's own metadata: what a client set at its creation and merged in since."""

    def lease_live(self, now: float) -> bool:
        """True while a runner holds a lease that has not expired."""
        return self.status == RUNNING and self.lease_expires_at is not None and now < self.lease_expires_at

    def stand(self, now: float) -> str:
        """The status as a person reads it: a dead runner's thread shows as reclaimable."""
        if self.status == RUNNING and not self.lease_live(now):
            return "running (lease expired: reclaimable)"
        return self.status

    def to_dict(self, now: float) -> dict[str, Any]:
        return {
            "thread_id": self.thread_id, "graph": self.graph, "status": self.status,
            "stand": self.stand(now), "reclaimable": self.status == RUNNING and not self.lease_live(now),
            "created_at": iso(self.created_at), "updated_at": iso(self.updated_at),
            "runner": self.runner, "lease_expires_at": iso(self.lease_expires_at),
            "outcome": self.outcome, "error": self.error,
            "last_node": self.last_node, "last_step": self.last_step,
            "holds": [hold.to_dict() for hold in self.holds],
            "damaged": self.damaged, "owner": self.owner, "tenant": self.tenant,
            "metadata": self.metadata,
        }
