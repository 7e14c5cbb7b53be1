"""What crosses the container boundary: one call in (on the container's stdin), one answer out.

The host and the runner inside the image both import this module, so it needs nothing but
the standard library. A call is JSON naming the tool's import path, its validated arguments
and a per-call marker; the runner prints one line, the marker then a JSON answer, on its
own stdout (the tool's prints are sent to stderr). Only plain JSON data crosses: ``None``,
``bool``, ``int``, finite ``float``, ``str``, lists and string-keyed dicts, checked by type
rather than by a lossy round trip, so a tuple or a ``datetime`` is refused instead of
silently becoming something else.
"""

from __future__ import annotations

import json
import math
from typing import Any

RUNNER_MODULE = "grapharc.tools.container.runner"

NOT_IMPORTABLE = "not_importable"
NOT_JSON = "not_json"


def json_problem(value: Any, where: str) -> str | None:
    """Where ``value`` stops being plain JSON data (e.g. ``"args.when: datetime"``), or None."""
    if value is None or type(value) in (bool, int, str):
        return None
    if type(value) is float:
        return None if math.isfinite(value) else f"{where}: {value!r} (not a finite number)"
    if type(value) is list:
        return next((problem for index, item in enumerate(value)
                     if (problem := json_problem(item, f"{where}[{index}]"))), None)
    if type(value) is dict:
        for key, item in value.items():
            if type(key) is not str:
                return f"{where}: key {key!r} ({type(key).__name__}, not str)"
            if problem := json_problem(item, f"{where}.{key}"):
                return problem
        return None
    return f"{where}: {type(value).__name__}"


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
