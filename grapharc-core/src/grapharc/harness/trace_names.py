"""Thread ids as an agent session takes them, and the trace file name a session derives from one.

A thread id is the caller's text and never becomes a path: ``../../ws/planted`` once put a
session's trace inside the agent's own workspace, and an absolute id put it anywhere. The file
name is the id itself when it is a plain name (letters, digits, ``_``, ``.``, ``-``, not starting
with a dot, at most ``PLAIN_CHARS`` characters), so the usual ids read as before; any other id is
named by its characters with the rest replaced by ``_`` plus a digest of the whole id, so two ids
never share a name by accident. An id with a control character (NUL, a newline), an empty one
and one past ``MAX_THREAD_ID_CHARS`` are refused outright.
"""

from __future__ import annotations

import hashlib
import re

MAX_THREAD_ID_CHARS = 256
PLAIN_CHARS = 100
_PLAIN = re.compile(rf"[A-Za-z0-9][A-Za-z0-9_.-]{{0,{PLAIN_CHARS - 1}}}")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def thread_id_problem(thread_id: str) -> str | None:
    """Why ``thread_id`` cannot name a thread, or None when it can."""
    if not thread_id:
        return "a thread id cannot be empty"
    if len(thread_id) > MAX_THREAD_ID_CHARS:
        return f"a thread id has at most {MAX_THREAD_ID_CHARS} characters, this one {len(thread_id)}"
    if _CONTROL.search(thread_id):
        return "a thread id cannot hold a control character (a NUL byte, a newline...)"
    return None


def trace_file_name(thread_id: str) -> str:
    """The name (never a path) of the trace file a session keeps for ``thread_id``."""
    if _PLAIN.fullmatch(thread_id):
        return f"{thread_id}.jsonl"
    readable = _UNSAFE.sub("_", thread_id)[:64].lstrip(".")
    digest = hashlib.sha256(thread_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{readable}-{digest}.jsonl" if readable else f"thread-{digest}.jsonl"
