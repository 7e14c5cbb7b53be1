"""One daemon thread that fires each scheduled entry when it comes due.

A caller pays a heap push instead of starting a ``threading.Timer`` thread of its own (a few
microseconds against roughly a millisecond). Entries no longer active are dropped lazily.
Worker-thread deadlines (``grapharc.runtime.deadline``) are its entries.
"""

from __future__ import annotations

import heapq
import itertools
import os
import threading
from time import monotonic
from typing import Protocol

_COMPACT_MIN = 256


class Due(Protocol):
    """What the watchdog fires: ``fire()`` is called at its time unless it is no longer ``active``."""

    active: bool

    def fire(self) -> None: ...


class Watchdog:
    """The thread (named ``name``, started with the first entry) and its heap of entries by time.

    ``longest_wait`` caps one wait for the next entry, so an entry due at ``inf`` never reaches
    ``Condition.wait``.
    """

    def __init__(self, name: str, longest_wait: float) -> None:
        self._name = name
        self._longest_wait = longest_wait
        self._fresh()
        os.register_at_fork(after_in_child=self._fresh)

    def _fresh(self) -> None:
        """No entries and no thread yet; so too in a forked child, which has no watchdog thread
        and may hold a copy of a locked lock."""
        self._cond = threading.Condition(threading.Lock())
        self._heap: list[tuple[float, int, Due]] = []
        self._order = itertools.count()
        self._compact_at = _COMPACT_MIN
        self._thread: threading.Thread | None = None

    def schedule(self, at: float, entry: Due) -> None:
        """Fire ``entry`` at ``at`` (on the ``monotonic`` clock) unless it is inactive by then."""
        item = (at, next(self._order), entry)
        with self._cond:
            if len(self._heap) >= self._compact_at:
                self._heap = [queued for queued in self._heap if queued[2].active]
                heapq.heapify(self._heap)
                self._compact_at = max(_COMPACT_MIN, 2 * len(self._heap))
            heapq.heappush(self._heap, item)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
            elif self._heap[0] is item:
                self._cond.notify()

    def _run(self) -> None:
        while True:
            due = self._next_due()
            due.fire()

    def _next_due(self) -> Due:
        with self._cond:
            while True:
                while self._heap and not self._heap[0][2].active:
                    heapq.heappop(self._heap)
                if not self._heap:
                    self._cond.wait()
                    continue
                left = self._heap[0][0] - monotonic()
                if left <= 0:
                    return heapq.heappop(self._heap)[2]
                self._cond.wait(min(left, self._longest_wait))
