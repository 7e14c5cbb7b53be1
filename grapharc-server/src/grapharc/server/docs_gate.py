"""With an auth file, the API's description and the plugin inventory are for signed-in callers only.

``/openapi.json``, ``/docs`` (and its OAuth2 redirect page), ``/redoc`` and ``/plugins`` answer 401
(a problem document saying what is missing) unless the request sends a bearer token the server
accepts (an API token or a JWT) or carries a page session someone signed in to and did not sign
out of (a browser that signed in at ``/inbox`` opens ``/docs``). An ASGI middleware rather than a
route dependency: FastAPI adds its documentation routes itself, outside any router.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from grapharc.server.api.problems import problem
from grapharc.server.errors import BearerRefused
from grapharc.stores import offload

if TYPE_CHECKING:
    from grapharc.server.auth import AuthConfig

PLUGINS = "/plugins"


class SignedInOnly:
    """Refuses the guarded paths to a request that says nobody the auth file knows (none without one)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        app = scope.get("app")
        auth: AuthConfig | None = getattr(getattr(app, "state", None), "auth", None)
        if scope["type"] != "http" or auth is None or scope["path"] not in _guarded(app):
            await self.app(scope, receive, send)
            return
        refusal = await _refusal(Request(scope), auth)
        if refusal is None:
            await self.app(scope, receive, send)
            return
        await problem(401, refusal, hint="send Authorization: Bearer <token>, or sign in at /inbox/signin",
                      headers={"WWW-Authenticate": "Bearer"})(scope, receive, send)


def _guarded(app: object) -> set[str]:
    """The app's documentation paths and the plugin inventory."""
    paths = (getattr(app, "openapi_url", None), getattr(app, "docs_url", None),
             getattr(app, "swagger_ui_oauth2_redirect_url", None), getattr(app, "redoc_url", None), PLUGINS)
    return {path for path in paths if path}


async def _refusal(request: Request, auth: AuthConfig) -> str | None:
    """Why ``request`` may not see the guarded paths (None: it may)."""
    authorization = request.headers.get("authorization")
    if authorization is not None:
        try:
            auth.bearer(authorization)
        except BearerRefused as exc:
            return str(exc)
        return None
    pages = getattr(request.app.state, "pages", None)
    session = pages.cookies.read(request) if pages is not None else None
    if session is None or session.user not in auth.users:
        return "this needs a bearer token, or a page session someone signed in to"
    sessions = request.app.state.sessions
    if await offload.to_thread(sessions.sign_ins().sign_in_revoked, session.nonce, sessions.manager.clock()):
        return "this page session was signed out; sign in again"
    return None
