"""A trace writer that keeps ``os.write`` off LangGraph's worker threads.

``os.write`` releases the GIL; on one of LangGraph's pool threads during a fan-out,
getting it back means queueing behind every runnable sibling, which measured about
100 µs per event there against about 5 µs on the thread that drives the run. So a
``RunTraceWriter`` appends an event directly only on the thread that opened the
event's run; events from other threads are queued whole (their timestamps taken when
they happened) and appended in queue order by that run's thread at its next event, at
run end, or by a background flush ``FLUSH_SECONDS`` after they were queued if the run's
thread is blocked (waiting on a hung worker, say). Events of runs it was not told about
are appended directly, as ``TraceWriter`` does.
"""

from __future__ import annotations

import os
import threading
import time
import weakref
from collections import deque
from typing import Any

from grapharc.trace.schema import RUN_ID
from grapharc.trace.writer import TraceWriter

FLUSH_SECONDS = 0.1


class RunTraceWriter(TraceWriter):
    """A ``TraceWriter`` that holds worker-thread events for the run's own thread to append."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__(path)
        self._owners: dict[str, int] = {}
        self._pending: deque[dict[str, Any]] = deque()
        self._order = threading.Lock()
        self._wake = threading.Event()
        self._flusher: threading.Thread | None = None
        self._closing = False

    def own(self, run_id: str) -> None:
        """Make the calling thread the one that appends ``run_id``'s events."""
        self._owners[run_id] = threading.get_ident()

    def release(self, run_id: str) -> None:
        """Append what ``run_id`` left queued; its later events are appended directly."""
        self.flush()
        self._owners.pop(run_id, None)

    def append(self, event: dict[str, Any]) -> None:
        """Append now on the run's own thread (after anything queued); queue otherwise.

        Queueing is a lock-free ``deque.append``, so a worker never waits on another.
        """
        owner = self._owners.get(event.get(RUN_ID, ""))
        if owner is None or owner == threading.get_ident():
            with self._order:
                if self._pending:
                    self._drain(event)
                else:
                    super().append(event)
            return
        if not self._pending:
            self._wake.set()
        self._pending.append(event)
        if self._flusher is None:
            self._start_flusher()

    def _start_flusher(self) -> None:
        with self._order:
            if self._flusher is None:
                self._flusher = threading.Thread(
                    target=_flush_later,
                    args=(weakref.ref(self), self._wake),
                    name="grapharc-trace-flush",
                    daemon=True,
                )
                self._flusher.start()

    def flush(self) -> None:
        """Append every queued event now, in the order they were queued."""
        with self._order:
            self._drain()

    def close(self) -> None:
        """Append what is queued, stop the background flush and close the file."""
        self.flush()
        self._closing = True
        self._wake.set()
        super().close()

    def _drain(self, last: dict[str, Any] | None = None) -> None:
        """Append the queue (then ``last``, if given) in one write, so a fan-out's hundreds of
        queued events cost one ``os.write`` rather than one each."""
        pending = self._pending
        batch = []
        while pending:
            batch.append(pending.popleft())
        if last is not None:
            batch.append(last)
        TraceWriter.append_many(self, batch)


def _flush_later(ref: weakref.ref[RunTraceWriter], wake: threading.Event) -> None:
    """The background flush: ``FLUSH_SECONDS`` after events are queued (or within a second
    in any case), append what is queued; stop when the writer is closed or gone."""
    while True:
        if wake.wait(1.0):
            wake.clear()
            time.sleep(FLUSH_SECONDS)
        writer = ref()
        if writer is None or writer._closing:
            return
        if writer._pending:
            writer.flush()
        del writer
