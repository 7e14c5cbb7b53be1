"""The page session: a signed cookie (HttpOnly, SameSite=Lax) holding who signed in, a CSRF token and
a nonce.

The cookie is signed with the auth file's secret (itsdangerous) and expires after ``MAX_AGE``;
every form carries the CSRF token the cookie holds. Signing out records the nonce as revoked in the
session store until the cookie would have expired (``SignInRecords``), so a copy of the old cookie
opens nothing on any worker (``grapharc.server.inbox.routes.signed_in`` checks it).
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass

from fastapi import Request, Response
from itsdangerous import BadSignature, URLSafeTimedSerializer

COOKIE = "grapharc_session"
MAX_AGE = 12 * 3600
"""Seconds a sign-in lasts."""


@dataclass(frozen=True, slots=True)
class PageSession:
    """Who is signed in (None: nobody yet) and the token every form of this session must carry."""

    user: str | None
    csrf: str
    nonce: str
    """What names this session when it is signed out (revoked)."""

    @classmethod
    def new(cls, user: str | None) -> PageSession:
        """A session for ``user`` with a fresh CSRF token and nonce (made again at every sign-in and out)."""
        return cls(user, secrets.token_urlsafe(24), secrets.token_urlsafe(24))

    def csrf_ok(self, presented: str | None) -> bool:
        """True when a form's token is this session's (compared as bytes: ``compare_digest`` refuses
        a str holding non-ASCII characters, which a forged form may carry)."""
        given = (presented or "").encode("utf-8", "replace")
        return bool(given) and hmac.compare_digest(self.csrf.encode(), given)


class Cookies:
    """Reads and writes page sessions signed with one secret."""

    def __init__(self, secret: str) -> None:
        self._signer = URLSafeTimedSerializer(secret, salt="grapharc-inbox")

    def read(self, request: Request) -> PageSession | None:
        """The request's page session, or None if it has none (or a forged or expired one)."""
        raw = request.cookies.get(COOKIE)
        if not raw:
            return None
        try:
            data = self._signer.loads(raw, max_age=MAX_AGE)
        except BadSignature:
            return None
        if not isinstance(data, dict) or not isinstance(data.get("csrf"), str) or \
                not isinstance(data.get("nonce"), str):
            return None  # a cookie signed before sessions had a nonce (one that cannot be revoked) too
        user = data.get("user")
        return PageSession(user if isinstance(user, str) else None, data["csrf"], data["nonce"])

    def write(self, request: Request, response: Response, session: PageSession) -> None:
        """Set ``session`` as the response's page session cookie."""
        signed = self._signer.dumps({"user": session.user, "csrf": session.csrf, "nonce": session.nonce})
        response.set_cookie(COOKIE, signed,
                            max_age=MAX_AGE, httponly=True, samesite="lax", path="/",
                            secure=request.url.scheme == "https")
