"""Where a trace writer's lines go: a sink, and the one core ships, a JSONL file.

One JSON object per line, appended with a single ``os.write`` on an ``O_APPEND`` descriptor, so
threads and separate processes can share one file without interleaving lines. A line torn by a
crash is closed off with a newline before this writer's first event, so it never swallows a new
event (readers skip it as one unparseable line). Writes hold a shared ``flock`` and that first
check an exclusive one, so a line another live process is still writing is never mistaken for
a torn one.
"""

from __future__ import annotations

import fcntl
import os
import stat
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from grapharc.trace.errors import TraceClosedError, TraceOpenError


def _open_for_append(path: Path) -> int:
    """A descriptor appending to the regular file ``path`` (created with its folder if missing)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise TraceOpenError(f"cannot write the trace to {path}: part of its folder is a file") from None
    except OSError as exc:
        raise TraceOpenError(f"cannot write the trace to {path}: {exc.strerror or exc}") from None
    try:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, 0o644)
    except OSError as exc:
        raise TraceOpenError(f"cannot write the trace to {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise TraceOpenError(f"cannot write the trace to {path}: it is not a regular file")
    os.set_blocking(fd, True)
    return fd


def check_trace_writable(path: Path) -> None:
    """Raise ``TraceOpenError`` where ``path`` cannot take a trace, leaving no file or folder behind.

    For a command that creates other state first (a claim store): refused input must change nothing.
    """
    created = [p for p in (path, *path.parents) if not os.path.lexists(p)]  # deepest first
    try:
        os.close(_open_for_append(path))
    finally:
        for made in created:
            if os.path.lexists(made):
                (os.rmdir if made.is_dir() else os.unlink)(made)


class TraceSink(Protocol):
    """Where a ``TraceWriter``'s encoded lines go: a file, a database table (:mod:`grapharc.trace.store`)."""

    name: str

    def write(self, events: Sequence[dict[str, Any]], lines: Sequence[bytes]) -> None:
        """Store ``lines`` (each one event's JSON line, newline included) in order, all or none."""

    def close(self) -> None:
        """Release the sink; writing after this raises ``TraceClosedError``."""


class FileTraceSink:
    """Appends lines to one JSONL file with a single ``os.write`` each batch; shared safely by
    threads and processes (the module docstring says how)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.name = str(self.path)
        self._fd = _open_for_append(self.path)
        self._lock = threading.Lock()
        self._tail_checked = False

    def write(self, events: Sequence[dict[str, Any]], lines: Sequence[bytes]) -> None:
        """Append ``lines`` with one write."""
        self._write(b"".join(lines))

    def _write(self, data: bytes) -> None:
        with self._lock:
            if self._fd < 0:
                raise TraceClosedError(f"the trace writer for {self.path} is closed")
            first = not self._tail_checked
            fcntl.flock(self._fd, fcntl.LOCK_EX if first else fcntl.LOCK_SH)
            try:
                if first:
                    data = self._torn_tail_fix() + data
                    self._tail_checked = True
                try:
                    written = os.write(self._fd, data)
                    if written < len(data):  # short (a full disk): finishing the line beats tearing it
                        view = memoryview(data)[written:]
                        while view:
                            view = view[os.write(self._fd, view) :]
                except OSError as exc:
                    raise TraceOpenError(f"cannot write the trace to {self.path}: {exc.strerror or exc}",
                                         hint="name a regular file on a writable disk") from None
            finally:
                fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        """Close the file; further writes raise TraceClosedError. Closing twice is harmless."""
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1

    def _torn_tail_fix(self) -> bytes:
        """A newline if the file ends mid-line (an earlier writer crashed), else nothing."""
        size = os.fstat(self._fd).st_size
        if size == 0:
            return b""
        os.lseek(self._fd, size - 1, os.SEEK_SET)
        return b"" if os.read(self._fd, 1) == b"\n" else b"\n"
