"""The descendants of a process, read from /proc, and killing them all from a subreaper.

Hand-written over /proc rather than with psutil: it is one scan of ``/proc/*/stat`` for parent
links, run in a forked keeper, and a new dependency for one loop would buy nothing.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time

GIVE_UP_SECONDS = 10.0
"""How long a keeper keeps killing before it leaves what it cannot kill (uninterruptible sleep)."""
_PAUSE = 0.002


def _links() -> dict[int, tuple[int, str]]:
    """Every process's ``(parent pid, state)``, by pid."""
    links: dict[int, tuple[int, str]] = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if entry.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                with open(f"/proc/{entry}/stat", "rb") as stat:
                    fields = stat.read().rpartition(b")")[2].split()
                links[int(entry)] = (int(fields[1]), fields[0].decode())
    return links


def descendants(pid: int) -> list[int]:
    """The living (not zombie) descendants of ``pid``, parents before their children."""
    children: dict[int, list[int]] = {}
    states: dict[int, str] = {}
    for child, (parent, state) in _links().items():
        children.setdefault(parent, []).append(child)
        states[child] = state
    found: list[int] = []
    queue = list(children.get(pid, ()))
    while queue:
        child = queue.pop(0)
        if states.get(child) != "Z":
            found.append(child)
        queue.extend(children.get(child, ()))
    return found


def kill_descendants() -> list[int]:
    """SIGKILL every descendant of this process and reap them, until none is left; the pids it may
    not kill (another user's) or that would not die within ``GIVE_UP_SECONDS``.

    Meant for a subreaper: an orphan becomes its child, so when it has no child left it has no
    descendant left either. A process forked between a scan and the kills is found by the next.
    """
    me = os.getpid()
    refused: set[int] = set()
    deadline = time.monotonic() + GIVE_UP_SECONDS
    while True:
        if not _has_children():
            return sorted(refused)
        alive = [pid for pid in descendants(me) if pid not in refused]
        for pid in alive:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            except PermissionError:
                refused.add(pid)
        if not _reap() and (time.monotonic() > deadline or not (set(alive) - refused)):
            return sorted(set(descendants(me)) | refused)
        time.sleep(_PAUSE)  # a killed process takes a moment to become reapable


def _has_children() -> bool:
    """Whether this process has any child, living or a zombie."""
    try:
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return False
    return True


def _reap() -> int:
    """Reap every child that has ended; how many."""
    reaped = 0
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return reaped
        if pid == 0:
            return reaped
        reaped += 1
