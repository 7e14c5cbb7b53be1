"""The one clock the cron scheduler reads time through: the wall clock, unless the process installs
another before its server starts (an application embedding the server that runs its schedules in
its own time, or a test's launcher moving time on). Only the scheduler reads it: runs, leases and
claims keep the session manager's clock.

The scheduler sleeps until its next slot is due by this clock, so a clock that jumps (one a test
moves on) must say so with ``moved``: every scheduler listening looks again at once, rather than
sleep through the jump.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

Clock = Callable[[], float]
"""Epoch seconds now."""

_clock: Clock = time.time
_listeners: set[Callable[[], None]] = set()
_lock = threading.Lock()


def install(clock: Clock) -> None:
    """Make ``clock`` the one the scheduler reads from now on."""
    global _clock
    _clock = clock


def now() -> float:
    """The installed clock's time (epoch seconds)."""
    return _clock()


def moved() -> None:
    """The installed clock jumped: wake every listener (callable from any thread)."""
    with _lock:
        listeners = list(_listeners)
    for listener in listeners:
        listener()


def listen(listener: Callable[[], None]) -> Callable[[], None]:
    """Call ``listener`` on every ``moved``; the callable that stops it."""
    with _lock:
        _listeners.add(listener)

    def stop() -> None:
        with _lock:
            _listeners.discard(listener)

    return stop
