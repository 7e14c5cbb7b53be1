"""Starting a command under its own reaper, from the caller's side (``run_command``).

``start_reaped`` starts ``python -I -m grapharc.tools.reaper`` (see ``__main__``) in a session of
its own with the command's environment, its stdout and stderr piped back, and the two pipes of
``supervise``; ``Reaped.channel`` (the status pipe) becomes readable when the command has ended
and every process it left has been killed, and ``Reaped.stop()`` kills them all now (a timeout).
When the caller dies, its end of the stop pipe closes and the reaper stops everything the same way.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping
from typing import IO

from grapharc.harness.limits import CallLimits
from grapharc.tools.reaper.supervise import parse_status

BOOT = ("import json, sys; sys.path[:0] = json.loads(sys.argv[1]); "
        "from grapharc.tools.reaper.__main__ import run; run(sys.argv[2:])")
"""How the reaper starts under ``-I`` (no ``PYTHON*`` variables, no workspace on the path): from
the folders this process imported GraphARC from, however it was installed."""
STOP_GRACE_SECONDS = 10.0
"""How long a stopped reaper may take to kill what it watches before it is killed itself."""


class ReaperStartError(OSError):
    """The command could not be started (no such program, not executable...)."""


class Reaped:
    """A reaper (process ``pid``, which ``wait`` reaps) and the channel it reports on; for a command,
    its output pipes too."""

    def __init__(self, pid: int, stop_fd: int, channel: int, wait: Callable[[], object], *,
                 stdout: IO[bytes] | None = None, stderr: IO[bytes] | None = None) -> None:
        self.pid = pid
        self.stop_fd = stop_fd
        self.channel = channel
        self._wait = wait
        self.stdout = stdout
        self.stderr = stderr

    def outcome(self) -> int:
        """The command's exit code (negative: the signal that killed it), once ``channel`` is
        readable; -9 when it was stopped, or its reaper killed."""
        word, number = self.report()
        if word == "failed":
            raise ReaperStartError(number, os.strerror(number) if number else "it could not be started")
        return number if word == "exited" else -number if word == "signaled" else -int(signal.SIGKILL)

    def report(self) -> tuple[str, int]:
        """The reaper's word on how the program ended (``parse_status``), once it has exited."""
        line = self._line()
        self._wait()
        return parse_status(line)

    def stop(self) -> None:
        """Have the reaper kill the command and everything it started, and wait until it has."""
        self._close_stop()
        poller = select.poll()
        poller.register(self.channel, select.POLLIN)
        if not poller.poll(STOP_GRACE_SECONDS * 1000):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGKILL)
        self.report()

    def close(self) -> None:
        """Release the channel and the pipes (the reaper has been waited for)."""
        self._close_stop()
        if self.channel >= 0:
            os.close(self.channel)
            self.channel = -1
        for stream in (self.stdout, self.stderr):
            if stream is not None:
                stream.close()

    def _close_stop(self) -> None:
        if self.stop_fd >= 0:
            os.close(self.stop_fd)
            self.stop_fd = -1

    def _line(self) -> bytes:
        chunks = []
        while chunk := self._recv():
            chunks.append(chunk)
        return b"".join(chunks)

    def _recv(self) -> bytes:
        try:
            return os.read(self.channel, 64)
        except OSError:
            return b""



def _package_roots() -> list[str]:
    """The folders holding this process's ``grapharc`` package (one per installed distribution)."""
    import grapharc

    return sorted({os.path.dirname(path) for path in grapharc.__path__})


def start_reaped(argv: list[str], cwd: str, env: Mapping[str, str], limits: CallLimits) -> Reaped:
    """Start ``argv`` in ``cwd`` under a reaper of its own (see the module docstring)."""
    (stop_theirs, stop_ours), (status_ours, status_theirs) = os.pipe(), os.pipe()
    theirs = (stop_theirs, status_theirs)
    try:
        process = subprocess.Popen(  # argv, no shell; the reaper is this package's
            [sys.executable, "-I", "-c", BOOT, json.dumps(_package_roots()), *map(str, theirs),
             limits.to_json(), cwd, "--", *argv],
            cwd="/", env=dict(env), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, pass_fds=theirs, start_new_session=True)
    except BaseException:
        os.close(stop_ours)
        os.close(status_ours)
        raise
    finally:
        for fd in theirs:
            os.close(fd)
    return Reaped(process.pid, stop_ours, status_ours, process.wait, stdout=process.stdout,
                  stderr=process.stderr)
