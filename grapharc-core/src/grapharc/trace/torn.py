"""Telling a line a crash cut short from a corrupt one.

A writer that dies mid-write leaves a proper prefix of a JSON object; the kernel's
next writer closes it with a newline before its own first event. Such a line holds no
event and is skipped (and reported). Anything else that fails to parse is corruption.
The check runs only on lines that already failed, with the standard library, so it
means the same whichever decoder read the trace.
"""

from __future__ import annotations

import json
import re

_LITERAL_START = re.compile(r"t(?:r(?:u)?)?|f(?:a(?:l(?:s)?)?)?|n(?:u(?:l)?)?|-")
_NUMBER_TAIL = re.compile(r"\.|[eE][-+]?")
_ESCAPE_TAIL = re.compile(r"u[0-9a-fA-F]{0,4}(?:\\(?:u[0-9a-fA-F]{0,4})?)?")


def is_torn(raw: bytes) -> bool:
    """True if ``raw`` (one line, newline optional) is a proper prefix of a JSON object."""
    data = raw.rstrip(b"\r\n")
    if not data.startswith(b"{"):
        return False
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:  # cut inside a multi-byte character?
        if exc.reason != "unexpected end of data" or exc.end != len(data):
            return False
        text = data[: exc.start].decode("utf-8", "replace")
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        return _ends_inside_a_token(text, exc)
    return False


def _ends_inside_a_token(text: str, exc: json.JSONDecodeError) -> bool:
    """Whether the decoder stopped only because the text ran out."""
    if exc.pos >= len(text) or exc.msg.startswith("Unterminated string"):
        return True
    rest = text[exc.pos :]
    if exc.msg == "Expecting value":
        return _LITERAL_START.fullmatch(rest) is not None
    if exc.msg.startswith("Invalid \\uXXXX escape"):
        return _ESCAPE_TAIL.fullmatch(rest) is not None
    if exc.msg == "Expecting ',' delimiter":
        return _NUMBER_TAIL.fullmatch(rest) is not None and text[exc.pos - 1].isdigit()
    return False
