"""Request body limits, checked before any route sees the body: its size, its JSON nesting depth, and
text UTF-8 can carry (JSON may escape a lone surrogate; stored, it would break every later answer
that echoes it).

A body that cannot break the depth or text limits (``may_be_refused`` says which) is not parsed
here: the route parses it, once. Most API bodies are such: a few brackets of plain ASCII."""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from grapharc.server.api.problems import problem

DEFAULT_MAX_BODY_BYTES = 1_000_000
DEFAULT_MAX_JSON_DEPTH = 32
BODY_METHODS = ("POST", "PUT", "PATCH", "DELETE")
"""The methods whose bodies are checked (a DELETE's too: the store's names the item it deletes)."""


def scan_json(value: Any) -> tuple[int, str | None]:
    """How deeply ``value`` nests lists and objects (a scalar is 0), and its first string (a key or a
    value) holding a lone surrogate, which UTF-8 cannot encode (None if there is none)."""
    depth, level, unencodable = 0, [(value, 1)], None
    while level:
        item, at = level.pop()
        if isinstance(item, dict | list):
            depth = max(depth, at)
            children = [*item.keys(), *item.values()] if isinstance(item, dict) else item
            level.extend((child, at + 1) for child in children)
        elif isinstance(item, str) and unencodable is None and not _encodes(item):
            unencodable = item
    return depth, unencodable


def may_be_refused(body: bytes, max_depth: int) -> bool:
    """Whether ``body`` could nest deeper than ``max_depth`` or hold a lone surrogate, told from its
    bytes alone: no when it is ASCII without NUL bytes (so UTF-8, no raw surrogate), without a
    ``\\u`` escape (the only way left to write one) and with no more opening brackets than
    ``max_depth`` (each level needs one)."""
    return (not body.isascii() or b"\x00" in body or b"\\u" in body
            or body.count(b"[") + body.count(b"{") > max_depth)


def _encodes(text: str) -> bool:
    """Whether UTF-8 can encode ``text`` (it holds no lone surrogate)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class BodyLimits:
    """ASGI middleware: a body over ``max_bytes`` gets 413, JSON nested deeper than ``max_depth`` 422."""

    def __init__(self, app: ASGIApp, *, max_bytes: int = DEFAULT_MAX_BODY_BYTES,
                 max_depth: int = DEFAULT_MAX_JSON_DEPTH) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.max_depth = max_depth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in BODY_METHODS:
            await self.app(scope, receive, send)
            return
        body = bytearray()
        while True:
            message = await receive()
            body.extend(message.get("body", b""))
            if len(body) > self.max_bytes:
                await problem(413, f"the request body is over {self.max_bytes} bytes",
                              hint="send less; the operator sets the limit")(scope, receive, send)
                return
            if not message.get("more_body", False):
                break
        whole = bytes(body)
        refusal = self._refusal(whole)
        if refusal is not None:
            detail, hint = refusal
            await problem(422, detail, hint=hint)(scope, receive, send)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": whole, "more_body": False}

        await self.app(scope, replay, send)

    def _refusal(self, body: bytes) -> tuple[str, str] | None:
        """Why a JSON body is refused before parsing it for a route, and the hint (None when it is fine)."""
        if not may_be_refused(body, self.max_depth):
            return None
        less_nesting = "send a JSON object with less nesting"
        try:
            parsed = json.loads(body)
        except RecursionError:
            return f"the request body nests deeper than the limit of {self.max_depth}", less_nesting
        except ValueError:
            return None  # the route's own parser answers malformed JSON
        depth, unencodable = scan_json(parsed)
        if depth > self.max_depth:
            return (f"the request body nests {depth} levels deep, over the limit of {self.max_depth}",
                    less_nesting)
        if unencodable is not None:
            return (f"the request body holds a string with a lone surrogate, which UTF-8 cannot carry: "
                    f"{unencodable!r}", "escape only whole surrogate pairs (or send the text as UTF-8)")
        return None
