"""The inbox pages: sign in, see the approvals you may decide, open one, approve or reject it.

Every form carries the page session's CSRF token; a decision answers 303 See Other back to
the approval's page, which then shows who decided and where the thread stands (a thread of a
graph the server registered is carried on by its run worker after the answer, so a long run
never holds the person's request open; the page shows it running until it pauses or ends). A second
decision is refused (409, "already decided by X at T"), an expired approval says so (410),
and a user the auth file does not let decide an approval gets 403. An approval of a thread the user
may not read is a 404, as an unknown approval is, whether or not they may decide it: its existence
is not leaked, and nobody decides what they may not read. The inbox lists the approvals the user may
decide on threads they may read (the oldest asked first, or the soonest to expire: ``?sort=``), and
counts the others only among the threads they may read; the decisions made so far and a page per
thread are ``grapharc.server.inbox.lists``', the inbox's live updates ``grapharc.server.inbox.live``'.

Every page is sent with a strict Content-Security-Policy (``CSP``): scripts and styles only from the
server's own files (``/inbox/static``), no inline script or style, no framing, forms posted to the
server only.

Signing out revokes the page session (its nonce, in the session store every worker reads);
failed sign-ins throttle the next ones per user name and address (``grapharc.server.inbox.throttle``).

The routes are plain functions on the module's router; who is signed in and whether a form carries
its CSRF token are dependencies, and what they read (the pages, the sessions, the API's run worker)
is the app's, set on ``app.state`` by ``grapharc.server.inbox.mount`` and ``create_app``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import RedirectResponse, Response
from fastapi.templating import Jinja2Templates

from grapharc.errors import GraphARCError
from grapharc.server.api.context import ApiContext, bearer_user
from grapharc.server.auth import AuthConfig, User
from grapharc.server.inbox import humane
from grapharc.server.inbox.amounts import amounts
from grapharc.server.inbox.cookies import MAX_AGE, Cookies, PageSession
from grapharc.server.inbox.evidence import evidence
from grapharc.server.inbox.throttle import Throttle
from grapharc.server.service import access, decisions
from grapharc.server.service.sessions import Details, Pending, Sessions
from grapharc.session.errors import ApprovalExpiredError, UnknownApprovalError
from grapharc.session.records import DECISIONS, iso
from grapharc.stores import offload

TEMPLATES = Jinja2Templates(directory=Path(__file__).parent / "templates")
TEMPLATES.env.globals["iso"] = iso
TEMPLATES.env.globals["humane"] = humane
PREFIX = "/inbox"
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
"""The pages' Content-Security-Policy: nothing inline, nothing from elsewhere."""
SORTS: dict[str, Callable[[Pending], tuple[float, float]]] = {
    "age": lambda p: (p.approval.created_at, 0.0),
    "expiry": lambda p: (p.approval.expires_at if p.approval.expires_at is not None else math.inf,
                         p.approval.created_at),
}
"""How the inbox may be sorted: the oldest asked first, or the soonest to expire (never: last)."""

router = APIRouter(prefix=PREFIX, tags=["inbox"])


class Pages:
    """Renders the inbox's pages for the users of one auth file."""

    def __init__(self, auth: AuthConfig) -> None:
        self.auth = auth
        self.cookies = Cookies(auth.secret)

    def render(self, request: Request, template: str, status: int = 200, **context: Any) -> Response:
        """A page, with a page session (and its CSRF token) made for it if the request had none."""
        session = self.cookies.read(request)
        fresh = session is None
        session = session or PageSession.new(None)
        response = TEMPLATES.TemplateResponse(request, template, status_code=status,
                                              context={"user": session.user, "csrf": session.csrf, **context})
        if fresh:
            self.cookies.write(request, response, session)
        response.headers["Content-Security-Policy"] = CSP
        return response

    def error(self, request: Request, status: int, message: str) -> Response:
        """A page saying why the request cannot be done."""
        return self.render(request, "error.html", status, message=message)


class SignInFirst(Exception):
    """Nobody is signed in to the request's page session: it is sent to the sign-in page (303)."""


class PageRefused(Exception):
    """A request the inbox refuses: answered with a page saying why, with ``status``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


async def to_signin(request: Request, _error: SignInFirst) -> Response:
    """Send a request nobody is signed in to to the sign-in page, which brings them back after."""
    return RedirectResponse(f"{PREFIX}/signin?next={quote(request.url.path)}", status_code=303)


async def refused_page(request: Request, error: PageRefused) -> Response:
    """The page saying why a request was refused."""
    pages: Pages = request.app.state.pages
    return pages.error(request, error.status, error.message)


# -- dependencies: async, as none blocks (FastAPI runs a sync one in a worker thread) ----------------

async def _pages(request: Request) -> Pages:
    pages: Pages = request.app.state.pages
    return pages


PagesDep = Annotated[Pages, Depends(_pages)]


async def _sessions(request: Request) -> Sessions:
    sessions: Sessions = request.app.state.sessions
    return sessions


async def api_context(request: Request) -> ApiContext | None:
    """The app's API (None: the server runs no graphs)."""
    api: ApiContext | None = request.app.state.api
    return api


@dataclass(frozen=True, slots=True)
class SignedIn:
    """The page session of a request someone is signed in to, and who."""

    session: PageSession
    user: User


async def signed_in(request: Request, pages: PagesDep,
                    sessions: Annotated[Sessions, Depends(_sessions)]) -> SignedIn:
    """Who is signed in to the request's page session (``SignInFirst`` if nobody is, or the session
    was signed out)."""
    session = pages.cookies.read(request)
    user = pages.auth.users.get(session.user) if session and session.user else None
    if session is None or user is None:
        raise SignInFirst
    records = sessions.sign_ins()
    if await offload.to_thread(records.sign_in_revoked, session.nonce, sessions.manager.clock()):
        raise SignInFirst
    return SignedIn(session, user)


async def posted_in(request: Request, pages: PagesDep,
                    csrf: Annotated[str, Form()] = "") -> PageSession | None:
    """The page session a form was posted in, if the form carries its CSRF token (None: the form
    expired, or came from another site)."""
    session = pages.cookies.read(request)
    return session if session is not None and session.csrf_ok(csrf) else None


class FormToken:
    """A dependency: the page session a form was posted in, once ``posted_in`` found its CSRF token;
    a form without it is refused (403) with ``refusal``."""

    def __init__(self, refusal: str) -> None:
        self.refusal = refusal

    async def __call__(self, session: Annotated[PageSession | None, Depends(posted_in)]) -> PageSession:
        if session is None:
            raise PageRefused(403, self.refusal)
        return session


async def token_user(request: Request) -> User:
    """The user whose bearer token the request sends (401 saying what is wrong without one)."""
    auth: AuthConfig = request.app.state.auth
    return bearer_user(auth, request.headers.get("authorization"))


SessionsDep = Annotated[Sessions, Depends(_sessions)]
Who = Annotated[SignedIn, Depends(signed_in)]
SIGNOUT_FORM = FormToken("the form expired or came from elsewhere; reload the page")
DECISION_FORM = FormToken("the form's CSRF token is missing or not this session's; reload the page")


# -- routes ------------------------------------------------------------------------------------------

@router.get("/signin")
def signin_form(request: Request, pages: PagesDep, next: str = PREFIX) -> Response:
    """The sign-in page (``next``: the inbox page to open once signed in)."""
    return pages.render(request, "signin.html", next=_local(next), error=None)


@router.post("/signin")
def signin(request: Request, pages: PagesDep, sessions: SessionsDep,
           posted: Annotated[PageSession | None, Depends(posted_in)],
           username: Annotated[str, Form()] = "", password: Annotated[str, Form()] = "",
           next: Annotated[str, Form()] = PREFIX) -> Response:
    """Sign in, unless this user name or address failed too often lately (a sync route: checking the
    password hash is slow work, done in a worker thread, as the store's are)."""
    if posted is None:
        return pages.render(request, "signin.html", 403, next=_local(next),
                            error="the form expired or came from elsewhere; sign in again")
    throttle = Throttle(sessions.sign_ins(), pages.auth.sign_in_limits)
    address, now = request.client.host if request.client else "unknown", sessions.manager.clock()
    wait = throttle.retry_after(username, address, now)
    if wait:
        refused = pages.render(request, "signin.html", 429, next=_local(next),
                               error=f"too many failed sign-ins for this user name or from this address; "
                                     f"try again in {wait} seconds")
        refused.headers["Retry-After"] = str(wait)
        return refused
    user = pages.auth.sign_in(username, password)
    if user is None:
        throttle.failed(username, address, now)
        return pages.render(request, "signin.html", 401, next=_local(next),
                            error="wrong user name or password")
    response = RedirectResponse(_local(next), status_code=303)
    pages.cookies.write(request, response, PageSession.new(user.name))
    return response


@router.post("/signout")
def signout(request: Request, pages: PagesDep, sessions: SessionsDep,
            posted: Annotated[PageSession, Depends(SIGNOUT_FORM)]) -> Response:
    """Sign out: the page session is revoked (for every worker) until it would have expired."""
    if posted.user is not None:
        now = sessions.manager.clock()
        sessions.sign_ins().revoke_sign_in(posted.nonce, now + MAX_AGE, now)
    response = RedirectResponse(f"{PREFIX}/signin", status_code=303)
    pages.cookies.write(request, response, PageSession.new(None))
    return response


@router.get("")
async def inbox(request: Request, who: Who, pages: PagesDep, sessions: SessionsDep,
                sort: str = "age") -> Response:
    """The approvals the user may decide on threads they may read, sorted by ``sort``, and how many
    others those hold."""
    if sort not in SORTS:
        raise PageRefused(422, f"sort must be one of {', '.join(SORTS)}, not {sort!r}")
    seen, mine = await waiting_for(who.user, sessions)
    at_stake = await offload.to_thread(amounts, sessions, mine)
    return pages.render(request, "inbox.html", pending=sorted(mine, key=SORTS[sort]), amounts=at_stake,
                        others=len(seen) - len(mine), now=time.time(), sort=sort)


async def waiting_for(user: User, sessions: Sessions) -> tuple[list[Pending], list[Pending]]:
    """The open approvals on threads ``user`` may read, and those of them ``user`` may decide."""
    seen = _readable(user, await offload.to_thread(sessions.pending))
    return seen, decisions.decidable_by(user, seen)


@router.get("/approvals/{approval_id}")
async def approval_page(request: Request, approval_id: str, who: Who, pages: PagesDep,
                        sessions: SessionsDep) -> Response:
    """One approval's page: what is asked, its evidence and the thread's timeline, with the form
    to decide it when the user may."""
    found = await _details(sessions, approval_id, who.user)
    try:
        decider = decisions.decider(found.approval, found.session.graph, who.user)
    except decisions.MayNotDecide as exc:
        return _not_theirs(request, pages, exc)
    return await _approval(request, pages, sessions, found, decider)


@router.post("/approvals/{approval_id}")
async def decide(request: Request, approval_id: str, who: Who,
                 _posted: Annotated[PageSession, Depends(DECISION_FORM)], pages: PagesDep,
                 sessions: SessionsDep, api: Annotated[ApiContext | None, Depends(api_context)],
                 decision: Annotated[str, Form()] = "") -> Response:
    """Decide an approval from its page's form (``decision``), then show its page again (409 when it
    is already decided, 410 when it has expired)."""
    if decision not in DECISIONS:
        raise PageRefused(422, f"decision must be one of {', '.join(DECISIONS)}")
    await _details(sessions, approval_id, who.user)  # 404 for an approval of a thread they may not read
    try:
        await decisions.decide(sessions, approval_id, decision, who.user, api)
    except UnknownApprovalError as exc:
        raise PageRefused(404, str(exc)) from None
    except decisions.MayNotDecide as exc:
        return _not_theirs(request, pages, exc)
    except GraphARCError as exc:  # already decided, expired, or refused by the session layer
        status = 410 if isinstance(exc, ApprovalExpiredError) else 409
        return await _decision_refused(request, pages, sessions, approval_id, who.user, status, str(exc))
    return RedirectResponse(f"{PREFIX}/approvals/{quote(approval_id)}", status_code=303)


@router.get("/pending.json")
async def pending_json(user: Annotated[User, Depends(token_user)], sessions: SessionsDep) -> dict[str, Any]:
    """What the inbox lists, for the bearer token's user, as JSON."""
    waiting = _readable(user, await offload.to_thread(sessions.pending))
    return {"user": user.name, "approvals": [
        {**p.approval.to_dict(), "graph": p.graph} for p in decisions.decidable_by(user, waiting)]}


def _readable(user: User, pending: list[Pending]) -> list[Pending]:
    """The approvals of ``pending`` whose thread ``user`` may read."""
    return [p for p in pending if access.may_read(user, p.thread)]


async def _details(sessions: Sessions, approval_id: str, user: User | None = None) -> Details:
    """The approval's details: the page saying there is no such approval (404) if none, or if
    ``user`` may not read its thread (the same words)."""
    try:
        found = await offload.to_thread(sessions.details, approval_id)
    except UnknownApprovalError as exc:
        raise PageRefused(404, str(exc)) from None
    if user is not None and not access.may_read(user, found.session):
        raise PageRefused(404, f"no approval has id {approval_id!r}")
    return found


def _not_theirs(request: Request, pages: Pages, refusal: decisions.MayNotDecide) -> Response:
    """The 403 page saying who may decide the approval the user may read but not decide."""
    return pages.render(request, "refused.html", 403, approval=refusal.approval, reason=str(refusal))


async def _decision_refused(request: Request, pages: Pages, sessions: Sessions, approval_id: str, user: User,
                            status: int, refusal: str) -> Response:
    """The approval's page as it stands now, saying why the decision was refused."""
    found = await _details(sessions, approval_id)
    decider = decisions.deciding_as(user, found.session.graph, found.approval)
    return await _approval(request, pages, sessions, found, decider, status, refusal)


async def _approval(request: Request, pages: Pages, sessions: Sessions, found: Details, decider: str | None,
                    status: int = 200, refusal: str | None = None) -> Response:
    """The approval's page: the record, the evidence it rests on, and the form (or who decided)."""
    shown = await offload.to_thread(evidence, sessions, found)
    return pages.render(request, "approval.html", status, found=found, decider=decider, now=time.time(),
                        refusal=refusal, evidence=shown)


def _local(target: str) -> str:
    """``target`` if it is a page of the inbox, else the inbox (no redirect elsewhere)."""
    return target if target.startswith(PREFIX) and not target.startswith("//") else PREFIX
