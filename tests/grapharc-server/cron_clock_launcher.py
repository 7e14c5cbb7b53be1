"""``python cron_clock_launcher.py CLOCK_FILE serve ...``: the ``grapharc`` CLI with the cron
scheduler reading time from ``CLOCK_FILE`` (epoch seconds, which the test rewrites to move time
on), installed through ``grapharc.server.cron_clock`` before the CLI starts. Only the schedules'
clock moves: runs, leases and claims keep the wall clock. A thread watches the file and tells the
scheduler each time the test moves the time (``cron_clock.moved``), so it never sleeps through a
move."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

from grapharc.cli.main import main
from grapharc.server import cron_clock


class FileClock:
    """The time a file holds, read on every call."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __call__(self) -> float:
        return float(self.path.read_text())


WATCH_SECONDS = 0.05
"""How often the watcher reads the clock file for a move."""


def watch(clock: FileClock) -> None:
    """Tell the scheduler of every move of ``clock`` (a daemon thread's loop)."""
    seen = clock()
    while True:
        time.sleep(WATCH_SECONDS)
        if (now := clock()) != seen:
            seen = now
            cron_clock.moved()


def set_clock(path: Path, moment: float) -> None:
    """Write ``moment`` to the clock file at once (a reader sees the old time or the new, never half)."""
    partial = path.with_name(path.name + ".new")
    partial.write_text(repr(moment))
    os.replace(partial, path)


def launcher(clock_file: Path, *arguments: str) -> list[str]:
    """The command line running ``grapharc ARGUMENTS`` under the clock in ``clock_file``."""
    return [sys.executable, __file__, str(clock_file), *arguments]


if __name__ == "__main__":
    file_clock = FileClock(Path(sys.argv[1]))
    cron_clock.install(file_clock)
    threading.Thread(target=watch, args=(file_clock,), name="clock-watch", daemon=True).start()
    sys.argv = ["grapharc", *sys.argv[2:]]
    main()
