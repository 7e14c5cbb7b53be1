"""Whether a user may read, delete or run a thread, from their rights and the thread's owner.

A thread records who created it and their tenant (``Session.owner``, ``Session.tenant``). A right
of scope ``own`` covers the threads the user created, ``tenant`` also those created by a user of
the same tenant (compared case-insensitively), ``all`` every thread. A thread without an owner
(created before owners were recorded, or by the CLI) keeps what every thread had before: every user
reads it; but only a user whose ``delete`` is ``all`` (an admin) deletes it. A server without an
auth file (loopback only) has no users: ``None`` may do everything.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import TYPE_CHECKING

from grapharc.config.tenants import tenant_name
from grapharc.server.grants import Scope

if TYPE_CHECKING:
    from grapharc.server.auth import User
    from grapharc.session.records import Session


def covers(scope: Scope, user: User, session: Session) -> bool:
    """Whether a right of ``scope`` held by ``user`` reaches ``session``'s thread."""
    if scope is Scope.ALL:
        return True
    if session.owner is None or scope is Scope.NONE:
        return False
    if session.owner == user.name:
        return True
    return scope is Scope.TENANT and _same_tenant(user.tenant, session.tenant)


def _same_tenant(mine: str | None, theirs: str | None) -> bool:
    """Whether two tenant names are one (as ``tenant_name`` keeps them; no tenant matches none). Both
    are folded here too, so a thread stored with another spelling before folding still matches."""
    return mine is not None and theirs is not None and tenant_name(mine) == tenant_name(theirs)


def may_read(user: User | None, session: Session) -> bool:
    """Whether ``user`` may read the thread (and so learn it exists); every user reads an ownerless one."""
    return user is None or session.owner is None or covers(user.rights.read, user, session)


def may_delete(user: User | None, session: Session) -> bool:
    """Whether ``user`` may delete the thread with its checkpoints and audit trail."""
    return user is None or covers(user.rights.delete, user, session)


def may_run(user: User | None, graph: str) -> bool:
    """Whether ``user`` may run the assistant (registered graph) ``graph``."""
    return user is None or any(fnmatchcase(graph, pattern) for pattern in user.rights.run)


def readable(user: User | None, sessions: list[Session]) -> list[Session]:
    """The sessions ``user`` may read, in their order."""
    return sessions if user is None else [s for s in sessions if may_read(user, s)]
