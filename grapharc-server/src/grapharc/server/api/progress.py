"""The wake-ups a process's streams and joins wait on: one per thread, set when a run of that
thread executing here makes progress.

A run executing here wakes the waiters on its thread each time its turn writes to the thread's
audit trail (a node's saved writes, the run's record, the turn's ending) and when it ends;
waiters on other threads sleep on (with 200 streams open, waking them all for every node of
every run cost more than the streams' own work). A waiter takes
``changed(thread_id)`` before it reads the durable records, so progress made after its read is
not missed; runs executing on another worker are seen by polling
(``grapharc.server.api.streaming.wait_for_progress``), or at once when that worker is a sibling
under the same ``serve --workers`` supervisor: progress here is then ``relay``-ed to the siblings
(``grapharc.server.siblings``), which ``wake`` their own waiters.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable

from grapharc.session.subscribers import OnRecord


class Progress:
    """Per thread, an event replaced each time it is set, so each waiter sees the progress after
    its read; an event nobody waits on any more is forgotten."""

    def __init__(self) -> None:
        self._changed: weakref.WeakValueDictionary[str, asyncio.Event] = weakref.WeakValueDictionary()
        self.relay: Callable[[str], None] | None = None
        """Told of each thread a run here makes progress on (the sibling workers' channel)."""

    def changed(self, thread_id: str) -> asyncio.Event:
        """The event the thread's next progress sets."""
        event = self._changed.get(thread_id)
        if event is None:
            event = self._changed[thread_id] = asyncio.Event()
        return event

    def notify(self, thread_id: str) -> None:
        """A run here moved the thread on: wake every waiter on it, here and (``relay``) elsewhere."""
        self.wake(thread_id)
        if self.relay is not None:
            self.relay(thread_id)

    def wake(self, thread_id: str) -> None:
        """Wake every waiter on the thread in this process."""
        event = self._changed.pop(thread_id, None)
        if event is not None:
            event.set()

    def watcher(self, thread_id: str) -> OnRecord:
        """A turn's ``on_record`` for the thread: wakes its waiters after each audit write. Made on
        the event loop the waiters wait on; called from another thread, it hands the wake-up to
        that loop (an ``asyncio.Event`` set off its loop's thread can lose a waiter for good)."""
        loop = asyncio.get_running_loop()

        def notify() -> None:
            if _running_loop() is loop:
                self.notify(thread_id)
            else:
                loop.call_soon_threadsafe(self.notify, thread_id)

        return notify


def _running_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop running in this thread, if any."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
