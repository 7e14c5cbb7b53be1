"""Forking a keeper (see the package docstring) and hearing from it, on the caller's side.

The keeper is a fork of the caller rather than a fresh interpreter: it costs a fork instead of a
Python start-up and imports, and it is as safe as the sandbox's forked children are. After the
fork it runs only this module's code and ``supervise``'s: a new session, SIGCHLD back to its
default, the subreaper mark, every descendant it inherited blanked but its own pipes, then
``start`` (which returns the pid of the process it started), and supervision. It leaves only
through ``os._exit``, and never before it has killed every descendant, even when its own code
failed (the caller then hears no report: ``lost``).

SIGCHLD is reset because a fork inherits its disposition: were the caller ignoring SIGCHLD (a
library in it set ``SIG_IGN``), the kernel would reap the keeper's children at once, the keeper
could never learn how its program ended, and the program (``SIG_IGN`` survives exec) would run
with its own children reaped behind its back.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import select
import signal
from collections.abc import Callable, Iterable

from grapharc.harness.process_controls import become_subreaper
from grapharc.tools.reaper.supervise import parse_status, report, supervise
from grapharc.tools.reaper.tree import kill_descendants

STOP_GRACE_SECONDS = 10.0
"""How long a stopped keeper may take to kill what it watches before it is killed itself."""


class KeeperStartError(OSError):
    """What the keeper was to start could not be started (no such program, not executable...)."""


def blank_inherited_descriptors(*, keep: Iterable[int]) -> None:
    """Point every inherited descriptor (a socket, a log file, another call's pipe) at /dev/null.

    Overwritten rather than closed: objects copied from the parent still hold those numbers,
    and a closed number would be reused by the next file opened here.
    """
    kept = set(keep)
    null = os.open(os.devnull, os.O_RDWR)
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd != null and fd not in kept:
            with contextlib.suppress(OSError):
                os.dup2(null, fd)
    os.close(null)


def fork_keeper(start: Callable[[], int], *, keep: Iterable[int] = ()) -> Keeper:
    """Fork a keeper that runs ``start()`` and supervises what it started; ``keep``: descriptors
    of this process the keeper needs (an output pipe), left open in it."""
    (stop_theirs, stop_ours), (status_ours, status_theirs) = os.pipe(), os.pipe()
    kept = (0, 1, 2, stop_theirs, status_theirs, *keep)
    try:
        pid = os.fork()
    except BaseException:  # a fork refused (a sandbox's audit hook) or impossible
        for fd in (stop_theirs, stop_ours, status_ours, status_theirs):
            os.close(fd)
        raise
    if pid == 0:
        try:
            os.setsid()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # see the module docstring
            become_subreaper()
            blank_inherited_descriptors(keep=kept)
            try:
                child = start()
            except Exception as exc:  # reported to the caller, who raises KeeperStartError
                report(status_theirs, f"failed {getattr(exc, 'errno', 0) or 0}\n".encode())
            else:
                supervise(child, stop_theirs, status_theirs)
        except BaseException:
            kill_descendants()  # whatever failed here, nothing the call started outlives it
        finally:
            os._exit(0)  # never return into the caller's code from the keeper
    os.close(stop_theirs)
    os.close(status_theirs)
    return Keeper(pid, stop_ours, status_ours)


class Keeper:
    """A forked keeper (process ``pid``), the stop pipe's end and the status pipe it reports on."""

    def __init__(self, pid: int, stop_fd: int, channel: int) -> None:
        self.pid = pid
        self.stop_fd = stop_fd
        self.channel = channel

    def report(self) -> tuple[str, int]:
        """The keeper's word on how its process ended (``parse_status``); it is reaped later."""
        line = b""
        while not line.endswith(b"\n") and (chunk := self._read()):
            line += chunk
        _UNREAPED.add(self.pid)
        return parse_status(line)

    def exit_code(self) -> int:
        """The process's exit code (negative: the signal that killed it); -9 when it was stopped,
        or its keeper killed. ``KeeperStartError`` if it never started."""
        word, number = self.report()
        if word == "failed":
            raise KeeperStartError(number, os.strerror(number) if number else "it could not be started")
        return number if word == "exited" else -number if word == "signaled" else -int(signal.SIGKILL)

    def stop(self) -> None:
        """Have the keeper kill its process and everything it started, and wait until it has."""
        self._close_stop()
        poller = select.poll()
        poller.register(self.channel, select.POLLIN)
        if not poller.poll(STOP_GRACE_SECONDS * 1000):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGKILL)
        self.report()

    def close(self) -> None:
        """Release both pipes."""
        self._close_stop()
        if self.channel >= 0:
            os.close(self.channel)
            self.channel = -1

    def _close_stop(self) -> None:
        if self.stop_fd >= 0:
            os.close(self.stop_fd)
            self.stop_fd = -1

    def _read(self) -> bytes:
        try:
            return os.read(self.channel, 64)
        except OSError:
            return b""


_UNREAPED: set[int] = set()
"""Keepers that reported and are exiting, not waited for yet (tearing down a copy of a large
interpreter takes milliseconds nobody needs to wait for)."""


def reap_finished() -> None:
    """Wait for the keepers that have exited since they reported."""
    for pid in list(_UNREAPED):
        try:
            done = os.waitpid(pid, os.WNOHANG)[0] != 0
        except ChildProcessError:  # reaped already, by another thread's call or an os.wait()
            done = True
        if done:
            _UNREAPED.discard(pid)


@atexit.register
def _reap_all() -> None:
    for pid in list(_UNREAPED):
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
    _UNREAPED.clear()
