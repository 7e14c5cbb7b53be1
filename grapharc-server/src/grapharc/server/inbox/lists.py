"""The inbox's pages beside the pending list: the decisions made so far, and a page per thread.

``/inbox/decided`` lists the decisions (who, what, when, on which thread) newest first, ``size`` a
page, with links to the pages before and after (marks of a decision: ``grapharc.server.service.decided``);
only decisions on threads the user may read are shown. ``/inbox/threads/{id}`` shows where a thread
stands, the path it took and its audit trail as a timeline (``evidence.thread_story``, as the
approval page draws them), its approvals, its runs (when the server runs graphs), and a link to its
NDJSON trace, ``/inbox/threads/{id}/trace``: what the API's ``/threads/{id}/trace`` sends, read with
the page session rather than a bearer token. A thread the user may not read is a 404 on both, as an
unknown one is.
"""

from __future__ import annotations

import time
from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from grapharc.runs.records import RunRecord
from grapharc.server.api.context import ApiContext
from grapharc.server.auth import User
from grapharc.server.inbox.evidence import thread_story
from grapharc.server.inbox.routes import PREFIX, PageRefused, PagesDep, SessionsDep, Who, api_context
from grapharc.server.service import access
from grapharc.server.service.decided import decided_page
from grapharc.server.service.sessions import Sessions
from grapharc.server.service.trail import trail_ndjson
from grapharc.session.errors import UnknownSessionError
from grapharc.session.records import DecisionMark, Session
from grapharc.stores import offload

PAGE_SIZE = 20
"""Decisions a page shows unless ``size`` says otherwise."""
MAX_PAGE_SIZE = 200
RUNS_SHOWN = 50
"""A thread's newest runs its page lists."""

router = APIRouter(prefix=PREFIX, include_in_schema=False)  # pages for a signed-in person, not the JSON API


def parse_mark(name: str, given: str | None) -> DecisionMark | None:
    """A decision's mark as a page link carries it (``DECIDED_AT:APPROVAL_ID``); a 422 page saying
    what is wrong with one that is not."""
    if given is None:
        return None
    at, _, approval_id = given.partition(":")
    try:
        decided_at = float(at)
    except ValueError:
        decided_at = float("nan")
    if not approval_id or decided_at != decided_at:  # NaN: not a number
        raise PageRefused(422, f"{name} must be a decision's mark, TIME:APPROVAL_ID (as the page links "
                               f"give it), not {given!r}")
    return decided_at, approval_id


def mark_text(mark: DecisionMark) -> str:
    """A mark as ``parse_mark`` reads it back (``repr`` keeps every digit of the time)."""
    return f"{mark[0]!r}:{mark[1]}"


@router.get("/decided")
async def decided(request: Request, who: Who, pages: PagesDep, sessions: SessionsDep,
                  size: str = str(PAGE_SIZE), before: str | None = None,
                  after: str | None = None) -> Response:
    """The decisions on threads the user may read, newest first, a page at a time."""
    shown = int(size) if size.isdecimal() else 0
    if not 1 <= shown <= MAX_PAGE_SIZE:
        raise PageRefused(422, f"size must be a whole number from 1 to {MAX_PAGE_SIZE}, not {size!r}")
    if before is not None and after is not None:
        raise PageRefused(422, "give before or after, not both")
    page = await offload.to_thread(
        decided_page, sessions.manager, lambda thread: access.may_read(who.user, thread), shown,
        before=parse_mark("before", before), after=parse_mark("after", after))
    sized = "" if shown == PAGE_SIZE else f"size={shown}&"
    return pages.render(request, "decided.html", page=page, sized=sized, mark_text=mark_text)


@router.get("/threads/{thread_id}")
async def thread_page(request: Request, thread_id: str, who: Who, pages: PagesDep, sessions: SessionsDep,
                      api: Annotated[ApiContext | None, Depends(api_context)]) -> Response:
    """Where the thread stands, its approvals and runs, and a link to its trace."""
    thread = await _readable_thread(sessions, thread_id, who.user)
    approvals = await offload.to_thread(sessions.manager.approvals, thread_id)
    story = await offload.to_thread(thread_story, sessions, thread)
    runs: list[RunRecord] = []
    if api is not None:
        runs = await offload.to_thread(api.runs.of_thread, thread_id, limit=RUNS_SHOWN)
    return pages.render(request, "thread.html", thread=thread, approvals=approvals, runs=runs,
                        serves_runs=api is not None, runs_shown=RUNS_SHOWN, now=time.time(),
                        picture=story.drawing, moments=story.timeline)


@router.get("/threads/{thread_id}/trace")
async def thread_trace(thread_id: str, who: Who, sessions: SessionsDep) -> Response:
    """The thread's trail as NDJSON, for whoever may read the thread."""
    await _readable_thread(sessions, thread_id, who.user)
    body = await offload.to_thread(trail_ndjson, sessions.manager, thread_id)
    return Response(body, media_type="application/x-ndjson")


async def _readable_thread(sessions: Sessions, thread_id: str, user: User) -> Session:
    """The thread, or the page saying there is none (404) if there is none or ``user`` may not read it."""
    try:
        thread = await offload.to_thread(sessions.thread, thread_id)
    except UnknownSessionError:
        thread = None
    if thread is None or not access.may_read(user, thread):
        raise PageRefused(404, f"no thread has id {thread_id!r}")
    return thread
