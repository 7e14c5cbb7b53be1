"""What the inbox reads and does through the session layer: open approvals, one approval's
details, and a decision (made as ``grapharc session approve`` makes it).

Each call opens the sessions location and closes it again: between requests nothing is
held, so a decision made here and one made from the CLI meet in the same store. A thread of a
graph the server itself registered (``--registry``, the governed assistant) is driven by the
server's own SessionManager (``served``), the one its threads API drives, and carried on by
the server's run worker after the page has answered.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from grapharc.errors import GraphARCError
from grapharc.session.errors import (
    AlreadyDecidedError,
    SessionBusyError,
    ThreadNotPausedError,
)
from grapharc.session.lease import Lease
from grapharc.session.manager import SessionManager
from grapharc.session.records import GATE, OPEN, Approval, AuditKind, Session


@dataclass(frozen=True, slots=True)
class Pending:
    """An open approval and the graph of the thread that waits on it."""

    approval: Approval
    graph: str


@dataclass(frozen=True, slots=True)
class Details:
    """What it takes to decide one approval: the record, its thread, and the arguments asked about."""

    approval: Approval
    session: Session
    arguments: str
    """The arguments as indented JSON (or why they cannot be shown)."""


class AlreadyDecided(GraphARCError):
    """A decision for an approval that has its answer (a double click, a reload, another tab)."""

    def __init__(self, approval: Approval) -> None:
        super().__init__(f"already {approval.state} by {approval.decided_by or 'nobody named'} "
                         f"at {_when(approval.decided_at)}")
        self.approval = approval


@contextmanager
def opened(location: str) -> Iterator[SessionManager]:
    """A session manager over ``location`` for one request."""
    manager = SessionManager(location)
    try:
        yield manager
    finally:
        manager.close()


def pending(location: str) -> list[Pending]:
    """Every open approval of every paused thread, the oldest asked first."""
    with opened(location) as manager:
        found = [Pending(hold, session.graph) for session in manager.list("paused")
                 for hold in session.holds if hold.state == OPEN]
    return sorted(found, key=lambda p: p.approval.created_at)


def details(location: str, approval_id: str, served: SessionManager | None = None) -> Details:
    """The approval ``approval_id`` with its thread and arguments (``UnknownApprovalError`` if none)."""
    with opened(location) as reader:
        approval = reader.store.approval(approval_id)
        session = reader.get(approval.thread_id)
    arguments = "(decided: the thread no longer holds them)"
    if approval.state == OPEN:
        try:
            with driving(location, approval.thread_id, served) as manager:
                arguments = _arguments(manager, approval, session)
        except GraphARCError as exc:
            arguments = f"(cannot be shown: {exc})"
    return Details(approval, session, arguments)


@dataclass(frozen=True, slots=True)
class Handover:
    """A decision that claimed its thread for the server's worker to carry on (``RunWorker.hand_over``)."""

    lease: Lease
    graph: str
    after_seq: int
    """The thread's trail before the decision: the carrying run's part begins after it."""


def decide(location: str, approval_id: str, decision: str, decider: str,
           served: SessionManager | None = None) -> Handover | None:
    """Record ``decider``'s decision. A thread of a graph ``served`` registered is left for the
    server's worker (the ``Handover``, when the decision answered its last open hold), so the page
    answers at once; any other is carried on here until it pauses or ends.

    A second decision of the same approval raises ``AlreadyDecided`` naming the first."""
    with opened(location) as reader:
        approval = reader.store.approval(approval_id)
    if approval.state != OPEN:
        raise AlreadyDecided(approval)
    with driving(location, approval.thread_id, served) as manager:
        try:
            if manager is not served:
                manager.resume(approval.thread_id, approval_id, decision, decider=decider)
                return None
            lease = manager.decide(approval.thread_id, approval_id, decision, decider=decider)
        except (AlreadyDecidedError, ThreadNotPausedError, SessionBusyError):
            decided = manager.store.approval(approval_id)
            if decided.state == OPEN:
                raise
            raise AlreadyDecided(decided) from None
        if lease is None:
            return None
        return Handover(lease, manager.get(approval.thread_id).graph,
                        _before_decision(manager, approval.thread_id, approval_id))


def _before_decision(manager: SessionManager, thread_id: str, approval_id: str) -> int:
    """The seq of the trail entry just before the one recording ``approval_id``'s decision."""
    decided = [entry.seq for entry in manager.audit(thread_id)
               if entry.kind == AuditKind.DECIDED and entry.detail.get("approval") == approval_id]
    return decided[-1] - 1


@contextmanager
def driving(location: str, thread_id: str, served: SessionManager | None) -> Iterator[SessionManager]:
    """A manager with the graph of ``thread_id`` registered: the server's own when it registered that
    graph, else one over ``location`` with the graphs ``grapharc session approve`` knows."""
    if served is not None and served.get(thread_id).graph in served.graphs.names():
        yield served
        return
    from grapharc.governed.known_graphs import register_thread_graph

    with opened(location) as manager:
        register_thread_graph(manager, thread_id)
        yield manager


def _arguments(manager: SessionManager, approval: Approval, session: Session) -> str:
    """What the approval is about: a gate's chosen arguments, or the value its interrupt carries."""
    graph = manager.graphs.get(session.graph, session.thread_id)
    compiled = manager.graphs.compiled(session.graph, manager.checkpointer)
    snapshot = compiled.get_state({"configurable": {"thread_id": session.thread_id}})
    value: Any = None
    if approval.kind == GATE:
        gate = graph.gates.get(approval.node)
        values = dict(snapshot.values)
        value = gate.arguments(values) if gate is not None and gate.arguments is not None else values
    else:
        value = next((i.value for task in snapshot.tasks for i in task.interrupts
                      if i.id == approval.hold_key), None)
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=_plain)


def _plain(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    return dump(mode="json") if callable(dump) else repr(value)


def _when(moment: float | None) -> str:
    from grapharc.session.records import iso

    return iso(moment) or "an unknown time"
