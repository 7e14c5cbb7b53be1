"""Deciding an approval, the one path the API's resume and the inbox's approve both take: who may
decide it, the decision recorded, the thread carried on.

Who may decide (``decider``): with an auth file, a user whose decide globs (their roles' ``decide``,
their own ``may_decide``) match the approval's ``graph/node`` and who is one of the deciders it
lists or answers for one (a role of theirs by that name, or their ``decides_for``: the audit then
names ``alice (credit-desk)``); without one (a loopback server),
whoever the request names, if the approval lists them or lists nobody. Recording (``record``) is
store work, done in the store pool; the thread it frees is carried on where nodes run: by the
server's run worker when this process registered the thread's graph (the API's resume run, or the
inbox's ``hand_over`` once the page has answered), else by a manager that registers the thread's
graph (``Sessions.driver_for``) before the page answers.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Protocol

from grapharc.session.errors import (
    AlreadyDecidedError,
    DeciderNotAllowedError,
    SessionBusyError,
    ThreadNotPausedError,
)
from grapharc.session.lease import Lease
from grapharc.session.manager import SessionManager
from grapharc.session.records import OPEN, Approval, AuditKind, iso
from grapharc.stores import offload

if TYPE_CHECKING:
    from grapharc.server.auth import User
    from grapharc.server.service.sessions import Pending, Sessions


class RunWorkerHandOver(Protocol):
    """What carries a decided thread on through this server's run worker (the API's context)."""

    async def hand_over(self, lease: Lease, graph: str, after_seq: int) -> None:
        """Carry on the thread ``lease`` holds, its turn beginning after trail entry ``after_seq``."""


class MayNotDecide(DeciderNotAllowedError):
    """The user, or the decider a request names, may not decide the approval (403 on the API and
    on the pages alike, with this message)."""

    def __init__(self, who: str, approval: Approval, *, hint: str) -> None:
        super().__init__(f"{who} may not decide this approval ({approval.approval_id})", hint=hint)
        self.approval = approval


class AlreadyDecided(AlreadyDecidedError):
    """A decision for an approval that has its answer (a double click, a reload, another tab)."""

    def __init__(self, approval: Approval) -> None:
        super().__init__(f"already {approval.state} by {approval.decided_by or 'nobody named'} "
                         f"at {iso(approval.decided_at) or 'an unknown time'}")
        self.approval = approval


def deciding_as(user: User, graph: str, approval: Approval) -> str | None:
    """The name ``user`` decides ``approval`` (asked by a thread of ``graph``) as, or None when the
    auth file does not let them: ``user (role)`` when they answer for a decider it lists."""
    if not any(fnmatchcase(f"{graph}/{approval.node}", pattern) for pattern in user.rights.decide):
        return None
    if not approval.deciders or user.name in approval.deciders:
        return user.name
    role = next((role for role in user.rights.decides_for if role in approval.deciders), None)
    return None if role is None else f"{user.name} ({role})"


def decider(approval: Approval, graph: str, user: User | None, named: str = "api") -> str:
    """Who decides ``approval``: the signed-in ``user`` as ``deciding_as`` names them, or (a server
    without an auth file) the ``named`` decider; ``MayNotDecide`` when they may not."""
    if user is not None:
        signed = deciding_as(user, graph, approval)
        if signed is None:
            raise MayNotDecide(user.name, approval,
                               hint="the auth file's decide grants (a role's decide, a user's may_decide) "
                                    "and the roles a user answers for say who may")
        return signed
    if approval.deciders and named not in approval.deciders:
        raise MayNotDecide(repr(named), approval, hint=f"it is for: {', '.join(approval.deciders)}")
    return named


def decidable_by(user: User, pending: list[Pending]) -> list[Pending]:
    """The approvals of ``pending`` that ``user`` may decide."""
    return [p for p in pending if deciding_as(user, p.graph, p.approval) is not None]


def record(manager: SessionManager, thread_id: str, approval_id: str, decision: str,
           decider: str) -> Lease | None:
    """Record ``decider``'s ``decision`` of ``approval_id`` through ``manager`` (store work, no node
    runs); the lease when it answered the thread's last open hold: the thread is claimed for
    ``manager``'s runner, to be carried on with ``acarry_on``. A decision of an approval already
    decided raises ``AlreadyDecided`` naming the first."""
    try:
        return manager.decide(thread_id, approval_id, decision, decider=decider)
    except (AlreadyDecidedError, ThreadNotPausedError, SessionBusyError):
        decided = manager.approval(approval_id)
        if decided.state == OPEN:
            raise
        raise AlreadyDecided(decided) from None


async def decide(sessions: Sessions, approval_id: str, decision: str, user: User,
                 api: RunWorkerHandOver | None) -> None:
    """Decide ``approval_id`` as the signed-in ``user`` (``MayNotDecide``, ``AlreadyDecided`` or the
    session layer's refusal when it cannot be). A thread of a graph ``api`` registered is handed to
    its run worker, so the page answers at once; any other is carried on here until it pauses or
    ends."""
    approval, graph = await offload.to_thread(_asked, sessions, approval_id)
    name = decider(approval, graph, user)
    if approval.state != OPEN:
        raise AlreadyDecided(approval)
    if api is not None and sessions.serves(graph):
        handed = await offload.to_thread(_record_for_worker, sessions.manager, approval, decision, name)
        if handed is not None:
            await api.hand_over(handed[0], graph, handed[1])
        return
    async with sessions.driver_for(approval.thread_id) as driver:
        lease = await offload.to_thread(record, driver, approval.thread_id, approval_id, decision, name)
        if lease is not None:
            await driver.acarry_on(lease)


def _asked(sessions: Sessions, approval_id: str) -> tuple[Approval, str]:
    """The approval and the graph of the thread that asked it, in one trip to the store pool."""
    approval = sessions.approval(approval_id)
    return approval, sessions.thread(approval.thread_id).graph


def _record_for_worker(manager: SessionManager, approval: Approval, decision: str,
                       decider: str) -> tuple[Lease, int] | None:
    """``record``, and for a decision that claimed the thread the seq of the trail entry just
    before the one recording it: the run that carries the thread on begins after it."""
    lease = record(manager, approval.thread_id, approval.approval_id, decision, decider)
    if lease is None:
        return None
    decided = [entry.seq for entry in manager.audit(approval.thread_id)
               if entry.kind == AuditKind.DECIDED and entry.detail.get("approval") == approval.approval_id]
    return lease, decided[-1] - 1
