"""The one clock the cron scheduler reads time through: the wall clock, unless the process installs
another before its server starts (an application embedding the server that runs its schedules in
its own time, or a test's launcher moving time on). Only the scheduler reads it: runs, leases and
claims keep the session manager's clock."""

from __future__ import annotations

import time
from collections.abc import Callable

Clock = Callable[[], float]
"""Epoch seconds now."""

_clock: Clock = time.time


def install(clock: Clock) -> None:
    """Make ``clock`` the one the scheduler reads from now on."""
    global _clock
    _clock = clock


def now() -> float:
    """The installed clock's time (epoch seconds)."""
    return _clock()
