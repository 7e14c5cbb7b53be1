"""A keeper's watch over one call: its process's end or the caller's, then every descendant killed.

The keeper and its caller share two pipes. On the status pipe the keeper writes one line when
it is done: ``exited N`` or ``signaled N`` (how the program ended), ``stopped`` (the caller went
away or asked it to stop, and the program was killed), or ``failed ERRNO`` (the program could
not be started). On the stop pipe the caller writes nothing: closing its end (a timeout, or the
caller's death) is the stop. Pipes rather than a socket pair: a sandboxed tool may not open
sockets, and must be refused for starting a process, not for that.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal

from grapharc.tools.reaper.tree import kill_descendants

POLL_MS = 50


def status_line(status: int) -> bytes:
    """The line reporting a ``waitpid`` status."""
    if os.WIFSIGNALED(status):
        return f"signaled {os.WTERMSIG(status)}\n".encode()
    return f"exited {os.waitstatus_to_exitcode(status)}\n".encode()


def parse_status(line: bytes) -> tuple[str, int]:
    """``(word, number)`` of a keeper's line (``("stopped", 0)`` for ``stopped``); ``("lost", 0)``
    when there is no whole line (the keeper itself was killed)."""
    word, _, number = line.decode("ascii", "replace").strip().partition(" ")
    if word in ("exited", "signaled", "failed") and number.lstrip("-").isdigit():
        return word, int(number)
    return ("stopped", 0) if word == "stopped" else ("lost", 0)


def supervise(child: int, stop_fd: int, status_fd: int) -> None:
    """Wait until ``child`` exits or ``stop_fd`` reaches its end (the caller's stop), kill and reap
    every descendant, then report on ``status_fd``. Without pidfds (not Linux) it looks every
    ``POLL_MS`` milliseconds."""
    exit_fd = _exit_fd(child)
    poller = select.poll()
    if exit_fd is not None:
        poller.register(exit_fd, select.POLLIN)
    poller.register(stop_fd, select.POLLIN | select.POLLHUP)
    status: int | None = None
    while status is None:
        ready = {fd for fd, _event in poller.poll(None if exit_fd is not None else POLL_MS)}
        if exit_fd is None or exit_fd in ready:
            ended, waited = os.waitpid(child, os.WNOHANG)
            if ended:
                status = waited
                continue
        if stop_fd in ready and not _read_some(stop_fd):
            break  # the caller closed its end: stop now
    if exit_fd is not None:
        os.close(exit_fd)
    if status is None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)
    kill_descendants()
    report(status_fd, status_line(status) if status is not None else b"stopped\n")


def _exit_fd(pid: int) -> int | None:
    """A descriptor readable once ``pid`` exits (Linux's pidfd), or None elsewhere."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _read_some(fd: int) -> bytes:
    try:
        return os.read(fd, 64)
    except OSError:
        return b""


def report(status_fd: int, line: bytes) -> None:
    """Send ``line`` to the caller, who may be gone already."""
    with contextlib.suppress(OSError):
        os.write(status_fd, line)
