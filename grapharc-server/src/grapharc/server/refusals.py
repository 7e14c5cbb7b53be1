"""Refusing a request before any route sees it: a problem document over HTTP; a WebSocket
handshake is closed instead, which uvicorn answers 403 without a body (a denial response with
a body works too, but uvicorn's websockets protocol then logs an error for every one)."""

from __future__ import annotations

from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocketClose

from grapharc.server.api.problems import problem

POLICY_VIOLATION = 1008
"""The WebSocket close code of a refused handshake."""


async def refuse(scope: Scope, receive: Receive, send: Send, status: int, detail: str, hint: str) -> None:
    """Answer the request of ``scope`` with a problem document of ``status`` (a WebSocket handshake:
    a close before it is accepted, so a 403)."""
    if scope["type"] == "websocket":
        await WebSocketClose(POLICY_VIOLATION)(scope, receive, send)
        return
    await problem(status, detail, hint=hint)(scope, receive, send)
