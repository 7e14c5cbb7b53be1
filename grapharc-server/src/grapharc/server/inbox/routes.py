"""The inbox pages: sign in, see the approvals you may decide, open one, approve or reject it.

Every form carries the page session's CSRF token; a decision answers 303 See Other back to
the approval's page, which then shows who decided and where the thread stands (a thread of a
graph the server registered is carried on by its run worker after the answer, so a long run
never holds the person's request open; the page shows it running until it pauses or ends). A second
decision is refused (409, "already decided by X at T"), an expired approval says so (410),
and a user the auth file does not let decide an approval gets 403.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.responses import RedirectResponse, Response
from fastapi.templating import Jinja2Templates

from grapharc.errors import GraphARCError
from grapharc.server.auth import AuthConfig, User
from grapharc.server.inbox.cookies import Cookies, PageSession
from grapharc.server.service import decisions
from grapharc.server.service.sessions import Details
from grapharc.session.errors import ApprovalExpiredError, UnknownApprovalError
from grapharc.session.records import DECISIONS, iso
from grapharc.stores import offload

TEMPLATES = Jinja2Templates(directory=Path(__file__).parent / "templates")
TEMPLATES.env.globals["iso"] = iso
PREFIX = "/inbox"


class _Pages:
    """Renders pages for one auth file."""

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
        return response

    def error(self, request: Request, status: int, message: str) -> Response:
        """A page saying why the request cannot be done."""
        return self.render(request, "error.html", status, message=message)

    def signed_in(self, request: Request) -> tuple[PageSession, User] | None:
        """The page session and its user, if someone is signed in."""
        session = self.cookies.read(request)
        user = self.auth.users.get(session.user) if session and session.user else None
        return (session, user) if session and user else None


def _to_signin(request: Request) -> RedirectResponse:
    return RedirectResponse(f"{PREFIX}/signin?next={quote(request.url.path)}", status_code=303)


def inbox_router(auth: AuthConfig) -> APIRouter:
    """The inbox's routes for the users of ``auth``, over the app's sessions (``app.state.sessions``);
    threads of the graphs its API registered (``app.state.api``) are carried on by its run worker."""
    pages = _Pages(auth)
    router = APIRouter(prefix=PREFIX)

    @router.get("/signin")
    def signin_form(request: Request, next: str = PREFIX) -> Response:
        return pages.render(request, "signin.html", next=_local(next), error=None)

    @router.post("/signin")
    def signin(request: Request, username: str = Form(""), password: str = Form(""),
               csrf: str = Form(""), next: str = Form(PREFIX)) -> Response:
        session = pages.cookies.read(request)
        if session is None or not session.csrf_ok(csrf):
            return pages.render(request, "signin.html", 403, next=_local(next),
                                error="the form expired or came from elsewhere; sign in again")
        user = auth.sign_in(username, password)
        if user is None:
            return pages.render(request, "signin.html", 401, next=_local(next),
                                error="wrong user name or password")
        response = RedirectResponse(_local(next), status_code=303)
        pages.cookies.write(request, response, PageSession.new(user.name))
        return response

    @router.post("/signout")
    def signout(request: Request, csrf: str = Form("")) -> Response:
        session = pages.cookies.read(request)
        if session is None or not session.csrf_ok(csrf):
            return pages.error(request, 403, "the form expired or came from elsewhere; reload the page")
        response = RedirectResponse(f"{PREFIX}/signin", status_code=303)
        pages.cookies.write(request, response, PageSession.new(None))
        return response

    @router.get("")
    async def inbox(request: Request) -> Response:
        who = pages.signed_in(request)
        if who is None:
            return _to_signin(request)
        waiting = await offload.to_thread(request.app.state.sessions.pending)
        mine = decisions.decidable_by(who[1], waiting)
        return pages.render(request, "inbox.html", pending=mine, others=len(waiting) - len(mine),
                            now=time.time())

    @router.get("/approvals/{approval_id}")
    async def approval_page(request: Request, approval_id: str) -> Response:
        who = pages.signed_in(request)
        if who is None:
            return _to_signin(request)
        found = await _details(request, approval_id)
        if isinstance(found, Response):
            return found
        try:
            decider = decisions.decider(found.approval, found.session.graph, who[1])
        except decisions.MayNotDecide as exc:
            return _not_theirs(request, exc)
        return pages.render(request, "approval.html", found=found, decider=decider, now=time.time(),
                            refusal=None)

    @router.post("/approvals/{approval_id}")
    async def decide(request: Request, approval_id: str, decision: str = Form(""),
                     csrf: str = Form("")) -> Response:
        who = pages.signed_in(request)
        if who is None:
            return _to_signin(request)
        session, user = who
        if not session.csrf_ok(csrf):
            return pages.error(request, 403, "the form's CSRF token is missing or not this session's; "
                                             "reload the page")
        if decision not in DECISIONS:
            return pages.error(request, 422, f"decision must be one of {', '.join(DECISIONS)}")
        try:
            state = request.app.state
            await decisions.decide(state.sessions, approval_id, decision, user, state.api)
        except UnknownApprovalError as exc:
            return pages.error(request, 404, str(exc))
        except decisions.MayNotDecide as exc:
            return _not_theirs(request, exc)
        except GraphARCError as exc:  # already decided, expired, or refused by the session layer
            status = 410 if isinstance(exc, ApprovalExpiredError) else 409
            return await _refused(request, approval_id, user, status, str(exc))
        return RedirectResponse(f"{PREFIX}/approvals/{quote(approval_id)}", status_code=303)

    async def _details(request: Request, approval_id: str) -> Details | Response:
        """The approval's details, or the page saying there is no such approval."""
        try:
            return await offload.to_thread(request.app.state.sessions.details, approval_id)
        except UnknownApprovalError as exc:
            return pages.error(request, 404, str(exc))

    def _not_theirs(request: Request, refusal: decisions.MayNotDecide) -> Response:
        return pages.render(request, "refused.html", 403, approval=refusal.approval, reason=str(refusal))

    async def _refused(request: Request, approval_id: str, user: User, status: int, refusal: str) -> Response:
        found = await _details(request, approval_id)
        if isinstance(found, Response):
            return found
        decider = decisions.deciding_as(user, found.session.graph, found.approval)
        return pages.render(request, "approval.html", status, found=found, decider=decider, now=time.time(),
                            refusal=refusal)

    @router.get("/pending.json")
    async def pending_json(request: Request) -> dict[str, Any]:
        user = auth.bearer(request.headers.get("authorization"))
        if user is None:
            raise HTTPException(401, "send an API token: Authorization: Bearer TOKEN",
                                headers={"WWW-Authenticate": "Bearer"})
        waiting = await offload.to_thread(request.app.state.sessions.pending)
        return {"user": user.name, "approvals": [
            {**p.approval.to_dict(), "graph": p.graph} for p in decisions.decidable_by(user, waiting)]}

    return router


def _local(target: str) -> str:
    """``target`` if it is a page of the inbox, else the inbox (no redirect elsewhere)."""
    return target if target.startswith(PREFIX) and not target.startswith("//") else PREFIX
