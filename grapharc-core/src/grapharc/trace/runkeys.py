"""Format version 2's saving: a node event names its run's thread and attempt by a key, not in full.

A version-2 ``run_start`` line carries ``run_key``, a random key its writer chose, declaring the
run's thread id and attempt once; the writer then puts ``"run_key": KEY`` in place of
``"thread_id": ..., "attempt": ...`` on that run's node events (39 bytes a line less for a
32-digit thread id). Lines keep their ``run_id``, so a store or a grep still finds a run's lines,
and the key tells apart runs sharing a caller-chosen ``run_id`` even when several processes append
to one file.
The writer compacts (:class:`RunKeyWriter`), the reader expands (:class:`RunKeys`), so every reader
yields the events format version 1 wrote, field for field and in the same order.
"""

from __future__ import annotations

import secrets
from itertools import islice
from typing import Any, Final

from grapharc.trace.schema import (
    AGENT_PHASES,
    ATTEMPT,
    CLOSING_PHASES,
    PHASE,
    RUN_END,
    RUN_ID,
    RUN_START,
    SCHEMA_VERSION,
    SCHEMA_VERSION_FIELD,
    START,
    THREAD_ID,
)

RUN_KEY: Final = "run_key"
"""The field of a version-2 line that stands for its run's thread id and attempt."""
KEYED_PHASES: Final = frozenset({START, *CLOSING_PHASES, *AGENT_PHASES})
"""The phases whose events carry the key: a node's, always written after its run's ``run_start``."""
_LEAD: Final = (PHASE, RUN_ID, THREAD_ID, ATTEMPT)
"""The fields a node event begins with, in order: where the reader puts back what the key stood for."""
_KEY_BYTES: Final = 5
"""A key's random bytes: 40 bits, written as 7 characters, fewer than the shortest secret redaction
replaces (``grapharc.redaction.MIN_SECRET_CHARS``), so no redaction can change a key."""


class UndeclaredRunKeyError(LookupError):
    """A line names a run key no earlier ``run_start`` of its run declared."""


class RunKeys:
    """What the reader learnt from the version-2 ``run_start`` lines it read: each run key's thread
    id and attempt. A reader resuming mid-trace keeps this object, as it keeps its offset."""

    def __init__(self) -> None:
        self._declared: dict[tuple[Any, Any], tuple[Any, Any]] = {}

    def declare(self, run_start: dict[str, Any]) -> None:
        """Take the key off a ``run_start`` line and remember what it stands for."""
        key = run_start.pop(RUN_KEY)
        self._declared[run_start.get(RUN_ID), key] = (run_start.get(THREAD_ID), run_start.get(ATTEMPT))

    def expand(self, event: dict[str, Any]) -> dict[str, Any]:
        """The event a compacted line stood for: its thread id and attempt back where they were."""
        key = event.pop(RUN_KEY)
        run_id = event.get(RUN_ID)
        declared = self._declared.get((run_id, key))
        if declared is None:
            raise UndeclaredRunKeyError(f"names run key {key!r} of run {run_id!r}, which no earlier "
                                        f"{RUN_START} declared")
        thread_id, attempt = declared
        return {PHASE: event[PHASE], RUN_ID: run_id, THREAD_ID: thread_id, ATTEMPT: attempt, **event}


class RunKeyWriter:
    """What the writer declared: the key of each run whose ``run_start`` it wrote in format version 2,
    until that run's ``run_end``. Only a run declared by this writer, before, is ever keyed."""

    def __init__(self) -> None:
        self._declared: dict[Any, tuple[Any, Any, str]] = {}

    def line_form(self, event: dict[str, Any]) -> dict[str, Any]:
        """``event`` as its line holds it: keyed when its run was declared and it begins as every
        node event does (so the reader restores it exactly), declaring on ``run_start``; else as is."""
        phase = event.get(PHASE)
        if phase in KEYED_PHASES:
            declared = self._declared.get(event.get(RUN_ID))
            if (declared is None or event.get(THREAD_ID) != declared[0] or event.get(ATTEMPT) != declared[1]
                    or RUN_KEY in event or tuple(islice(event, 4)) != _LEAD):
                return event
            keyed = {PHASE: phase, RUN_ID: event[RUN_ID], RUN_KEY: declared[2], **event}
            del keyed[THREAD_ID], keyed[ATTEMPT]
            return keyed
        if phase == RUN_START and event.get(SCHEMA_VERSION_FIELD) == SCHEMA_VERSION and RUN_KEY not in event:
            key = secrets.token_urlsafe(_KEY_BYTES)
            self._declared[event.get(RUN_ID)] = (event.get(THREAD_ID), event.get(ATTEMPT), key)
            return {**event, RUN_KEY: key}
        if phase == RUN_END:
            self._declared.pop(event.get(RUN_ID), None)
        return event
