"""A thread's open interrupts as LangGraph's clients read them, and the answers a run's
``command.resume`` gives them.

Every interrupt is a durable approval record (``grapharc.session.approvals``). One that asks for a
decision (a gate, an ``interrupt()`` in a node that names approvers, a durable ask) shows its
question and takes ``"approved"`` / ``"rejected"`` or an object ``{"decision", "decider",
"approval_id"}``, from whoever may decide it (``grapharc.server.service.decisions``). A plain
``interrupt(value)`` shows its whole value and takes any JSON value, from a caller who may run the
thread's graph; the node receives it. LangGraph's resume map ``{interrupt_id: value}`` answers
several at once; an id is the approval's id or LangGraph's interrupt id.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from grapharc.server.api.problems import ApiProblem
from grapharc.server.auth import User
from grapharc.server.service import access, decisions
from grapharc.session.errors import UnknownGraphError
from grapharc.session.lease import Lease
from grapharc.session.manager import SessionManager
from grapharc.session.records import DECISIONS, GATE, OPEN, Approval, AuditEntry, AuditKind, Session
from grapharc.stores import offload

ANSWERED_BY = "api"
"""Who answers a plain interrupt on a server without an auth file."""


@dataclass(frozen=True, slots=True)
class Pending:
    """An open approval, the value its ``interrupt()`` carries, and whether it asks for a decision."""

    approval: Approval
    value: Any
    decision: bool


def pending(manager: SessionManager, session: Session) -> list[Pending]:
    """The thread's open approvals (one checkpoint read when there are any). A thread whose graph
    this process has not registered shows every one as a decision."""
    opened = [hold for hold in session.holds if hold.state == OPEN]
    if not opened:
        return []
    values = manager.interrupt_values(session.thread_id)
    try:
        graph = manager.graphs.get(session.graph)
    except UnknownGraphError:
        return [Pending(hold, values.get(hold.hold_key), True) for hold in opened]
    return [Pending(hold, value := values.get(hold.hold_key),
                    hold.kind == GATE or graph.asks_for_decision(hold.node, value)) for hold in opened]


def payloads(manager: SessionManager, session: Session) -> dict[str, Any]:
    """The whole values of the thread's open plain interrupts, by approval id (what a client is
    shown in place of the question)."""
    return {p.approval.approval_id: p.value for p in pending(manager, session) if not p.decision}


async def apayloads(manager: SessionManager, session: Session) -> dict[str, Any]:
    """``payloads``, in a trip to a thread only when the thread has an open approval."""
    if not any(hold.state == OPEN for hold in session.holds):
        return {}
    return await offload.to_thread(payloads, manager, session)


def with_payloads(manager: SessionManager, thread_id: str, entries: list[AuditEntry]) -> list[AuditEntry]:
    """``entries`` with each ``asked`` entry of a plain interrupt still open carrying its whole
    value (``value``), which the stream shows as the ``__interrupt__`` update's value."""
    if not any(entry.kind == AuditKind.ASKED for entry in entries):
        return entries
    shown = payloads(manager, manager.get(thread_id))
    return [dataclasses.replace(entry, detail={**entry.detail, "value": shown[entry.detail["approval"]]})
            if entry.kind == AuditKind.ASKED and entry.detail.get("approval") in shown else entry
            for entry in entries]


def resume_example(manager: SessionManager, session: Session, user: User | None) -> str:
    """A ``command`` that answers the thread's open interrupts on this server, for a hint to show:
    a decision names a decider where the approval is for someone and no token says who decides (a
    bare "approved" is then refused with a 403), a plain interrupt takes any value."""
    shown = {p.approval.approval_id: _example_answer(p, user) for p in pending(manager, session)}
    resume = next(iter(shown.values())) if len(shown) == 1 else shown
    return json.dumps({"resume": resume})


def _example_answer(waiting: Pending, user: User | None) -> Any:
    if not waiting.decision:
        return "<any JSON value>"
    if user is None and waiting.approval.deciders:
        return {"decision": "approved", "decider": waiting.approval.deciders[0]}
    return "approved"


def answers(manager: SessionManager, session: Session, resume: Any, now: float,
            user: User | None) -> list[dict[str, Any]]:
    """What ``command.resume`` answers, checked before anything is written: one entry per approval,
    ``{"approval_id", "decision", "decider"}`` for a decision or ``{"approval_id", "answer",
    "answerer"}`` for a plain interrupt's value."""
    waiting = pending(manager, session)
    by_id = {key: p for p in waiting for key in (p.approval.approval_id, p.approval.hold_key)}
    if isinstance(resume, Mapping) and resume and set(resume) <= set(by_id):
        chosen = [(by_id[key], value) for key, value in resume.items()]
        if len({p.approval.approval_id for p, _ in chosen}) != len(chosen):
            raise ApiProblem(422, "command.resume names one interrupt twice",
                             hint="name each interrupt once, by its id")
        return [_answer(session, p, value, now, user) for p, value in chosen]
    plain = [p for p in waiting if not p.decision]
    if plain and len(waiting) > 1:
        raise ApiProblem(409, f"thread {session.thread_id} waits on {len(waiting)} interrupts: "
                              f"answer them with a map of id to value "
                              f"({', '.join(p.approval.approval_id for p in waiting)})",
                         hint='e.g. {"resume": {"<interrupt id>": <value>, ...}}')
    if plain:
        return [_answer(session, plain[0], resume, now, user)]
    return [_decision(session, _chosen(session, waiting, resume), resume, now, user)]


def _answer(session: Session, waiting: Pending, value: Any, now: float, user: User | None) -> dict[str, Any]:
    """One approval's entry: a decision, or a plain interrupt's value (a caller who may run the
    graph may answer it)."""
    if waiting.decision:
        return _decision(session, waiting.approval, value, now, user)
    if user is not None and not access.may_run(user, session.graph):
        raise ApiProblem(403, f"{user.name} may not answer interrupt {waiting.approval.approval_id}: "
                              f"only a caller who may run assistant {session.graph!r} may",
                         hint="the auth file's run grants (a role's run, [roles.everyone]) say who may")
    return {"approval_id": waiting.approval.approval_id, "answer": value,
            "answerer": user.name if user is not None else ANSWERED_BY}


def _chosen(session: Session, waiting: list[Pending], resume: Any) -> Approval:
    """The one open approval a decision answers: the ``approval_id`` it names, or the only one."""
    wanted = resume.get("approval_id") if isinstance(resume, Mapping) else None
    chosen = [p.approval for p in waiting if wanted is None or p.approval.approval_id == wanted]
    if len(chosen) != 1:
        which = f"approval {wanted}" if wanted else "exactly one open approval"
        raise ApiProblem(409, f"thread {session.thread_id} does not wait on {which} "
                              f"(open: {', '.join(p.approval.approval_id for p in waiting) or 'none'})",
                         hint="name the approval_id in command.resume, or read GET /threads/{id}/state")
    return chosen[0]


def _decision(session: Session, approval: Approval, resume: Any, now: float,
              user: User | None) -> dict[str, Any]:
    """The decision ``resume`` gives ``approval`` and who decides (the token's user when the server
    has an auth file, else the ``decider`` named; ``decisions.decider`` says whether they may)."""
    answer = {"decision": resume} if isinstance(resume, str) else dict(resume) if isinstance(
        resume, Mapping) else {"decision": None}
    unknown = sorted(set(answer) - {"decision", "decider", "approval_id"})
    decision, decider = answer.get("decision"), answer.get("decider", "api")
    if unknown or decision not in DECISIONS or not isinstance(decider, str):
        raise ApiProblem(422, f"approval {approval.approval_id} asks for a decision: command.resume must "
                              f"be {' or '.join(DECISIONS)}, or an object with decision, decider and "
                              f"approval_id; got {resume!r}",
                         hint='e.g. {"resume": {"decision": "approved", "decider": "credit-desk"}}')
    if user is not None and "decider" in answer:
        raise ApiProblem(422, "command.resume names a decider, but the bearer token says who decides",
                         hint="leave decider out")
    decider = decisions.decider(approval, session.graph, user, decider)
    if approval.expired(now):
        raise ApiProblem(409, f"approval {approval.approval_id} has expired",
                         hint="the thread cannot be carried on by this approval")
    return {"approval_id": approval.approval_id, "decision": str(decision), "decider": decider}


def record(manager: SessionManager, thread_id: str, given: list[dict[str, Any]]) -> Lease | None:
    """Record a resume's answers in order (store work, no node runs); the lease the last open one
    claimed the thread with, to carry it on (None: the thread still waits)."""
    lease: Lease | None = None
    for entry in given:
        if "answer" in entry:
            lease = manager.answer(thread_id, entry["approval_id"], entry["answer"],
                                   answerer=entry["answerer"])
        else:
            lease = decisions.record(manager, thread_id, entry["approval_id"], entry["decision"],
                                     entry["decider"])
    return lease
