"""The API's checks of what the caller may do (``grapharc.server.service.access`` says the rules).

A thread the caller may not read answers exactly as a thread that does not exist (404, the same
message), so its existence is not leaked; running an assistant, deleting a thread they may read
but not delete, is refused 403 naming the right that is missing.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from grapharc.server.api.context import ApiContext, caller
from grapharc.server.api.problems import ApiProblem
from grapharc.server.auth import User
from grapharc.server.service import access
from grapharc.session.errors import UnknownSessionError
from grapharc.session.records import Session
from grapharc.stores import offload

Caller = Annotated[User | None, Depends(caller)]


class ThreadGuard:
    """A route dependency: a thread the caller may not read is a 404, exactly as one that does not
    exist is; ``may_create``: one that does not exist is left to the route (which may create it)."""

    def __init__(self, *, may_create: bool = False) -> None:
        self.may_create = may_create

    async def __call__(self, thread_id: str, request: Request, user: Caller) -> None:
        if user is None:
            return
        context: ApiContext = request.app.state.api
        try:
            session = await offload.to_thread(context.manager.get, thread_id)
        except UnknownSessionError:
            if self.may_create:
                return
            raise
        if not access.may_read(user, session):
            raise UnknownSessionError(thread_id)


ReadableThread = Depends(ThreadGuard())
ReadableOrNewThread = Depends(ThreadGuard(may_create=True))
"""For the routes that create the thread a request names when it asks (``if_not_exists``)."""


def require_run(user: User | None, graph: str) -> None:
    """403 unless ``user`` may run the assistant ``graph`` (nobody in particular, without an auth file,
    may run every one)."""
    if user is not None and not access.may_run(user, graph):
        raise ApiProblem(403, f"{user.name} may not run assistant {graph!r}",
                         hint="the auth file's run grants (a role's run, [roles.everyone]) say who may")


def require_delete(user: User | None, session: Session) -> None:
    """403 unless ``user`` may delete ``session``'s thread (which they may read)."""
    if user is not None and not access.may_delete(user, session):
        raise ApiProblem(403, f"{user.name} may not delete thread {session.thread_id}",
                         hint="its owner or a user whose delete right covers it may (the auth file's "
                              "delete grants: own, tenant or all)")


def asker(user: User | None) -> str:
    """Who asks, as the audit trail records it: the bearer token's user, or ``api`` without auth."""
    return user.name if user is not None else "api"


def refuse_running(ctx: ApiContext, thread_id: str, change: str) -> None:
    """409 while a run of the thread is pending or in flight (``change``: what to do once it is not)."""
    if any(not run.ended for run in ctx.runs.of_thread(thread_id)):
        raise ApiProblem(409, f"thread {thread_id} has a run pending or in flight",
                         hint=f"cancel the run (POST .../runs/{{run}}/cancel), then {change}")
