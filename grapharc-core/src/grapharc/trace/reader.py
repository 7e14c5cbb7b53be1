"""The one streaming trace reader every trace tool uses.

It reads a JSONL trace line by line (never the whole file), from a file or from the
``traces`` store a URI names (:mod:`grapharc.trace.store`), decodes each line with
:mod:`grapharc.trace.codec`, and yields the events as dicts, optionally only those of
one run, thread or attempt. It tolerates what a live or crashed writer leaves behind: an
unterminated last line that does not parse yet (a line being appended, or a crash
mid-line) is left unread, and a torn line a later writer closed off is skipped and
reported in ``torn_lines``. Any other line that is not a JSON object with a ``phase``
field raises ``TraceFormatError`` naming the file and line: data is never skipped silently,
and a run written in a format version this reader does not know raises
``TraceVersionError`` at its ``run_start`` rather than being misread.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import Any

from grapharc.trace import codec
from grapharc.trace.errors import TraceFormatError, TraceVersionError
from grapharc.trace.schema import (
    ATTEMPT,
    PHASE,
    RUN_ID,
    RUN_START,
    SCHEMA_VERSION_FIELD,
    SUPPORTED_VERSIONS,
    THREAD_ID,
    damaged_field,
)
from grapharc.trace.store import open_traces, trace_location, trace_name
from grapharc.trace.torn import is_torn

Event = dict[str, Any]


class TraceScanner:
    """Decodes the events of an open binary trace from its current position to its end.

    While and after iterating: ``line`` is the number of the last line handled, ``consumed``
    the bytes of the lines handled (yielded or skipped), ``torn_lines`` the lines skipped as
    torn, and ``pending`` the unterminated tail left unread (empty if none). A later read
    continues from the starting offset plus ``consumed``, at line ``line + 1``. Given ``run_id``,
    it yields only that run's events: every line is still decoded and must be an event (and a
    ``run_start`` of a known version), but only the yielded ones are checked for damaged numbers,
    which no answer about the run sums.
    """

    def __init__(self, path: str | os.PathLike[str], handle: Iterable[bytes], first_line: int = 1,
                 *, run_id: str | None = None) -> None:
        self.path = path
        self.handle = handle
        self.run_id = run_id
        self.line = first_line - 1
        self.consumed = 0
        self.torn_lines: list[int] = []
        self.pending = b""

    def __iter__(self) -> Iterator[Event]:
        loads, only = codec.loads, self.run_id
        for raw in self.handle:
            line = self.line + 1
            try:
                event = loads(raw)
            except ValueError:
                if not self._skippable(raw, line):
                    raise TraceFormatError(self.path, line, "is not valid JSON") from None
                if raw is not self.pending:  # an unfinished last line stays unread
                    self.line = line
                    self.consumed += len(raw)
                continue
            if type(event) is not dict or PHASE not in event:
                raise TraceFormatError(self.path, line, f"is not a JSON object with a {PHASE!r} field")
            if event[PHASE] == RUN_START:
                version = event.get(SCHEMA_VERSION_FIELD, 1)
                if version not in SUPPORTED_VERSIONS:
                    raise TraceVersionError(self.path, line, version)
            if only is not None and event.get(RUN_ID) != only:
                self.line = line
                self.consumed += len(raw)
                continue
            damage = damaged_field(event)
            if damage is not None:
                raise TraceFormatError(self.path, line, f"is damaged: {damage}")
            self.line = line
            self.consumed += len(raw)
            yield event

    def _skippable(self, raw: bytes, line: int) -> bool:
        """A blank line, a torn line closed off by a later writer, or an unfinished last line."""
        if not raw.strip():
            return True
        if not is_torn(raw):
            return False
        if raw.endswith(b"\n"):
            self.torn_lines.append(line)
        else:
            self.pending = raw
        return True


class TraceReader:
    """The events of one trace (a file, or a ``traces`` store URI), optionally only one run's,
    thread's or attempt's.

    Each iteration re-reads the trace from the start; the scanner's findings
    (``torn_lines``, ``pending``) describe the latest iteration. ``name`` is how messages and
    documents name the trace (a URI with its credentials masked).
    """

    def __init__(self, path: str | os.PathLike[str], *, run_id: str | None = None,
                 thread_id: str | None = None, attempt: int | None = None) -> None:
        self.path = trace_location(path)
        self.name = trace_name(path)
        self.run_id = run_id
        self.thread_id = thread_id
        self.attempt = attempt
        self.torn_lines: list[int] = []
        self.pending = b""

    def __iter__(self) -> Iterator[Event]:
        store = open_traces(self.path)
        with store.lines(run_id=self.run_id, thread_id=self.thread_id) as handle:
            scanner = TraceScanner(store.name, handle, run_id=self.run_id)
            try:
                yield from self._filtered(scanner)
            finally:
                self.torn_lines = scanner.torn_lines
                self.pending = scanner.pending

    def _filtered(self, events: TraceScanner) -> Iterator[Event]:
        thread_id, attempt = self.thread_id, self.attempt
        if thread_id is None and attempt is None:
            yield from events
            return
        for event in events:
            if thread_id is not None and event.get(THREAD_ID) != thread_id:
                continue
            if attempt is not None and event.get(ATTEMPT) != attempt:
                continue
            yield event

    def warnings(self) -> list[str]:
        """Human notes on what the latest iteration skipped (torn lines a crash left)."""
        return [f"{self.name}:{line}: skipped a line torn by a crashed writer"
                for line in self.torn_lines]


def read_events(path: str | os.PathLike[str], *, run_id: str | None = None,
                thread_id: str | None = None, attempt: int | None = None) -> Iterator[Event]:
    """Stream the events of ``path`` (optionally filtered); see :class:`TraceReader`."""
    return iter(TraceReader(path, run_id=run_id, thread_id=thread_id, attempt=attempt))
