"""An incremental summary of one thread: each call folds only the bytes appended since the last.

``ThreadSummarizer`` remembers the byte offset and line number it has folded up to. An
unfinished last line is left unread until it is complete, so a summary taken while a run
writes equals one taken from scratch afterwards; over a thread's life every byte is read
once (O(events)). A trace that shrank since the last call is refused: traces are append-only.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grapharc.observe.errors import TraceError
from grapharc.observe.fold import Reducer, StateFolder
from grapharc.observe.tally import Tally
from grapharc.trace import schema as ts
from grapharc.trace.files import open_trace
from grapharc.trace.reader import TraceScanner


@dataclass(frozen=True)
class ThreadSummary:
    """Where a thread stands: its runs, how they ended, what they spent and the folded state."""

    thread_id: str
    runs: list[str]
    attempts: list[int]
    status: str | None
    stop_reason: Any
    events: int
    node_executions: int
    failed: int
    unfinished: int
    tokens: int
    outside_node_tokens: int
    recorded_cost_usd: float | None
    last_step: int | None
    state: dict[str, Any]


class ThreadSummarizer:
    """Keeps ``thread_id``'s summary current by folding only what was appended to ``path``."""

    def __init__(self, path: str | os.PathLike[str], thread_id: str, *,
                 reducers: Mapping[str, str | Reducer] | None = None) -> None:
        self.path = Path(path)
        self.thread_id = thread_id
        self.offset = 0
        self.line = 0
        self.torn_lines: list[int] = []
        self._tally = Tally()
        self._folder = StateFolder(reducers)
        self._last_step: int | None = None

    def update(self) -> ThreadSummary:
        """Fold the complete lines appended since the last call and return the summary."""
        with open_trace(self.path) as handle:
            size = os.fstat(handle.fileno()).st_size
            if size < self.offset:
                raise TraceError(f"{self.path}: shrank to {size} bytes after {self.offset} were read "
                                 f"(line {self.line}); a trace is append-only",
                                 hint="start a new ThreadSummarizer for a rewritten trace")
            handle.seek(self.offset)
            scanner = TraceScanner(self.path, handle, first_line=self.line + 1)
            try:
                for event in scanner:
                    if event.get(ts.THREAD_ID) == self.thread_id:
                        self._fold(event)
            finally:
                self.offset += scanner.consumed
                self.line = scanner.line
                self.torn_lines.extend(scanner.torn_lines)
        return self.summary()

    def _fold(self, event: dict[str, Any]) -> None:
        self._tally.add(event)
        if event.get(ts.PHASE) == ts.END:
            self._folder.apply(event.get(ts.STATE_DELTA))
        step = event.get(ts.STEP)
        if isinstance(step, int) and (self._last_step is None or step > self._last_step):
            self._last_step = step

    def summary(self) -> ThreadSummary:
        """The summary of everything folded so far (the state is a copy)."""
        tally = self._tally
        usage = tally.usage
        return ThreadSummary(
            thread_id=self.thread_id, runs=list(tally.run_ids),
            attempts=sorted(a for a in tally.attempts if isinstance(a, int)),
            status=tally.status, stop_reason=tally.stop_reason, events=tally.events,
            node_executions=tally.executions, failed=sum(s.failed for s in tally.nodes.values()),
            unfinished=tally.unfinished, tokens=usage.tokens, outside_node_tokens=tally.outside.tokens,
            recorded_cost_usd=usage.recorded_cost_usd if usage.recorded_events else None,
            last_step=self._last_step, state=copy.deepcopy(self._folder.state),
        )
