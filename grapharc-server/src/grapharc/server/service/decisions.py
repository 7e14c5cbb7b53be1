"""Deciding an approval, as the API's resume and the inbox's approve both do: who may decide it.

With an auth file, a user whose ``may_decide`` globs match the approval's ``graph/node`` and who
is one of the deciders it lists or answers for one (``decides_for``: the audit then names
``alice (credit-desk)``); without one (a loopback server), whoever the request names, if the
approval lists them or lists nobody.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import TYPE_CHECKING

from grapharc.session.errors import DeciderNotAllowedError
from grapharc.session.records import Approval

if TYPE_CHECKING:
    from grapharc.server.auth import User
    from grapharc.server.inbox.queue import Pending


class MayNotDecide(DeciderNotAllowedError):
    """The user, or the decider a request names, may not decide the approval (403 on the API and
    on the pages alike, with this message)."""

    def __init__(self, who: str, approval: Approval, *, hint: str) -> None:
        super().__init__(f"{who} may not decide this approval ({approval.approval_id})", hint=hint)
        self.approval = approval


def deciding_as(user: User, graph: str, approval: Approval) -> str | None:
    """The name ``user`` decides ``approval`` (asked by a thread of ``graph``) as, or None when the
    auth file does not let them: ``user (role)`` when they answer for a decider it lists."""
    if not any(fnmatchcase(f"{graph}/{approval.node}", pattern) for pattern in user.may_decide):
        return None
    if not approval.deciders or user.name in approval.deciders:
        return user.name
    role = next((role for role in user.decides_for if role in approval.deciders), None)
    return None if role is None else f"{user.name} ({role})"


def decider(approval: Approval, graph: str, user: User | None, named: str = "api") -> str:
    """Who decides ``approval``: the signed-in ``user`` as ``deciding_as`` names them, or (a server
    without an auth file) the ``named`` decider; ``MayNotDecide`` when they may not."""
    if user is not None:
        signed = deciding_as(user, graph, approval)
        if signed is None:
            raise MayNotDecide(user.name, approval,
                               hint="the auth file's may_decide and decides_for say who may")
        return signed
    if approval.deciders and named not in approval.deciders:
        raise MayNotDecide(repr(named), approval, hint=f"it is for: {', '.join(approval.deciders)}")
    return named


def decidable_by(user: User, pending: list[Pending]) -> list[Pending]:
    """The approvals of ``pending`` that ``user`` may decide."""
    return [p for p in pending if deciding_as(user, p.graph, p.approval) is not None]
