"""What crosses the container boundary: one call in (on the container's stdin), one answer out.

The host and the runner inside the image both import this module, so it needs nothing but
the standard library and ``grapharc.tools.jsondata`` (shared with the sandbox). A call is JSON
naming the tool's import path, its validated arguments and a per-call marker; the runner
prints one line, the marker then a JSON answer, on its own stdout (the tool's prints are sent
to stderr). Only plain JSON data crosses: ``None``, ``bool``, ``int``, finite ``float``,
``str``, lists and string-keyed dicts, checked by type rather than by a lossy round trip, so a
tuple or a ``datetime`` is refused instead of silently becoming something else.
"""

from __future__ import annotations

import json
from typing import Any

from grapharc.tools.jsondata import MAX_DEPTH, json_problem

__all__ = ["MAX_DEPTH", "NOT_IMPORTABLE", "NOT_JSON", "RUNNER_MODULE", "answer_line", "decode_call",
           "encode_call", "find_answer", "json_problem"]

RUNNER_MODULE = "grapharc.tools.container.runner"

NOT_IMPORTABLE = "not_importable"
NOT_JSON = "not_json"


def encode_call(import_path: str, name: str, args: dict[str, Any], marker: str) -> str:
    """The call as the runner reads it from stdin (ASCII: every other character is escaped)."""
    return json.dumps({"tool": import_path, "name": name, "args": args, "marker": marker},
                      allow_nan=False, separators=(",", ":"))


def decode_call(raw: str) -> tuple[str, str, dict[str, Any], str]:
    """``(import_path, name, args, marker)`` of a call ``encode_call`` wrote."""
    call = json.loads(raw)
    return call["tool"], call["name"], call["args"], call["marker"]


def answer_line(marker: str, answer: dict[str, Any]) -> str:
    """The one line the runner prints: the marker, a space, the answer as JSON."""
    return f"{marker} {json.dumps(answer, allow_nan=False, separators=(',', ':'))}\n"


def find_answer(stdout: str, marker: str) -> dict[str, Any] | None:
    """The answer the runner printed on ``stdout``, or None if it never printed a whole one
    (a process killed mid-line leaves a line that is not JSON)."""
    for line in reversed(stdout.splitlines()):
        if line.startswith(marker + " "):
            try:
                answer = json.loads(line[len(marker) + 1:])
            except ValueError:
                return None
            return answer if isinstance(answer, dict) else None
    return None
