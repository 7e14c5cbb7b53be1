"""Bounds on a request's head (its request line and headers), kept before any route runs.

A head over ``MAX_HEAD_BYTES`` is refused while it arrives, by the HTTP protocol itself: uvicorn's
httptools protocol keeps no limit (a 300 MB header was read whole), so serve runs the one of
``grapharc.server.httptools_head`` in its place; where httptools is missing, uvicorn's h11
protocol runs with h11's own bound (``h11_max_incomplete_event_size``) and uvicorn answers 400 at
it (``lifecycle.bounded_http`` picks). A request with more than ``MAX_HEADERS`` headers is
refused with 431 by ``HeaderCount``, the outermost layer of the app: its head is already bounded
in bytes, so counting there holds nothing unbounded.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from grapharc.server.refusals import refuse

MAX_HEAD_BYTES = 64 * 1024
"""The most bytes a request's head (request line and headers) may take."""
MAX_HEADERS = 100
"""The most header lines a request may carry."""


class HeaderCount:
    """ASGI middleware: a request (or WebSocket handshake) with more than ``MAX_HEADERS`` headers is
    refused with 431 before the app sees it."""

    def __init__(self, app: ASGIApp, *, max_headers: int = MAX_HEADERS) -> None:
        self.app = app
        self.max_headers = max_headers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket") and len(scope["headers"]) > self.max_headers:
            await refuse(scope, receive, send, 431,
                         f"this request carries {len(scope['headers'])} headers, over the limit of "
                         f"{self.max_headers}", "send fewer headers")
            return
        await self.app(scope, receive, send)
