"""Reading a model's reply without trusting its prose: its text, and the JSON value in it.

JSON extraction tries every ``{`` and ``[`` in the reply as an opener and keeps the
longest valid parse, so a bracket in prose (``see note [1]``) cannot stand in for the
value that follows it. Replies are capped in length, which also bounds the quadratic
worst case of trying every opener. The planner and the claim verifier both read replies
this way.
"""

from __future__ import annotations

import json
from typing import Any

from grapharc.errors import GraphARCError

MAX_REPLY_CHARS = 200_000


class NoJSONError(GraphARCError):
    """A model reply with no JSON value in it."""


def extract_json(text: str) -> Any:
    """The longest valid JSON value starting at any ``{`` or ``[`` in ``text``."""
    if len(text) > MAX_REPLY_CHARS:
        raise NoJSONError(f"reply is {len(text)} characters, over the {MAX_REPLY_CHARS} limit")
    decoder = json.JSONDecoder()
    best: tuple[int, Any] | None = None
    for position, char in enumerate(text):
        if char not in "{[":
            continue
        try:
            value, end = decoder.raw_decode(text, position)
        except (ValueError, RecursionError):
            continue
        if best is None or end - position > best[0]:
            best = (end - position, value)
    if best is None:
        raise NoJSONError("reply contains no JSON object or array")
    return best[1]


def reply_text(content: Any) -> str:
    """A chat message's content as text (LangChain content is a string or a list of parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part if isinstance(part, str) else str(part.get("text", ""))
                       for part in content if isinstance(part, str | dict))
    return str(content)
