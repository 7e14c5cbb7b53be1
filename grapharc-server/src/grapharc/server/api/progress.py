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

A wake-up says what was written while it was the thread's (``Change.kinds``: the kinds of the
trail entries its turn's record watcher reported, ``BEGAN`` for a run's beginning here, None once
anything unsaid was, such as a run's end): a stream whose modes render none of them need not read
the records again.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable

from grapharc.session.subscribers import OnRecord, Written

BEGAN = "began"
"""Not a trail entry: a run of the thread began on this worker (its record changed, not the trail)."""
RUN_BEGAN: frozenset[str] = frozenset({BEGAN})


class Change(asyncio.Event):
    """A thread's wake-up: set by its first progress, it collects the kinds of trail entries
    written (``kinds``) until the next waiter takes a fresh one."""

    def __init__(self) -> None:
        super().__init__()
        self.kinds: set[str] | None = set()
        """The kinds of the entries written since it was taken; None: some write did not say."""
        self.next: Change | None = None
        """The thread's change taken after this one was set: what was written after that is there."""

    def add(self, kinds: Written) -> None:
        """Progress that wrote entries of ``kinds`` (None: of any kind): note them and wake the waiters."""
        if kinds is None or self.kinds is None:
            self.kinds = None
        else:
            self.kinds |= kinds
        self.set()

    def says(self, kind: str) -> bool:
        """Whether a write of ``kind`` is among those it said."""
        return self.kinds is not None and kind in self.kinds

    def said_none_of(self, kinds: frozenset[str] | None) -> bool:
        """Whether it was set by writes that all said their kinds, none of them in ``kinds`` (None:
        every kind): a stream whose modes render only ``kinds`` has nothing new to send."""
        return self.is_set() and kinds is not None and self.kinds is not None and self.kinds.isdisjoint(kinds)


class Progress:
    """Per thread, a ``Change`` replaced once it is set and a waiter asks for the next, so each
    waiter sees the progress after its read; a change nobody waits on any more is forgotten."""

    def __init__(self) -> None:
        self._changed: weakref.WeakValueDictionary[str, Change] = weakref.WeakValueDictionary()
        self.relay: Callable[[str], None] | None = None
        """Told of each thread a run here makes progress on (the sibling workers' channel)."""

    def changed(self, thread_id: str) -> Change:
        """The change the thread's next progress sets (a set one collects what follows until a
        waiter asks for the next, which it then links to)."""
        change = self._changed.get(thread_id)
        if change is None or change.is_set():
            fresh = self._changed[thread_id] = Change()
            if change is not None:
                change.next = fresh
            change = fresh
        return change

    def following(self, thread_id: str, change: Change) -> Change:
        """The thread's change after ``change`` (set): a waiter that let ``change`` pass waits on it,
        and so sees every write after ``change``'s, however many other waiters took changes since."""
        return change.next or self.changed(thread_id)

    def notify(self, thread_id: str, kinds: Written = None) -> None:
        """A run here moved the thread on, writing trail entries of ``kinds`` (None: any, or none
        said): wake every waiter on it, here and (``relay``) elsewhere."""
        self.wake(thread_id, kinds)
        if self.relay is not None:
            self.relay(thread_id)

    def wake(self, thread_id: str, kinds: Written = None) -> None:
        """Wake every waiter on the thread in this process."""
        change = self._changed.get(thread_id)
        if change is not None:
            change.add(kinds)

    def watcher(self, thread_id: str) -> OnRecord:
        """A turn's ``on_record`` for the thread: wakes its waiters after each audit write, saying the
        kinds written. Made on the event loop the waiters wait on; called from another thread, it
        hands the wake-up to that loop (an ``asyncio.Event`` set off its loop's thread can lose a
        waiter for good)."""
        loop = asyncio.get_running_loop()

        def notify(kinds: Written) -> None:
            if _running_loop() is loop:
                self.notify(thread_id, kinds)
            else:
                loop.call_soon_threadsafe(self.notify, thread_id, kinds)

        return notify


def _running_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop running in this thread, if any."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
