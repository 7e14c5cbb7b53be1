"""The workers of one ``grapharc serve --workers N`` telling each other which threads moved on.

A stream is woken at once by progress of a run executing in its own process (``Progress``); a
run another worker claimed (a worker claims every runnable run it finds, not only those its own
requests queued) would otherwise be seen only by polling the store. Each worker binds a Unix
datagram socket, ``<index>.sock`` in a directory the supervisor made, and sends every thread id
its runs make progress on to its siblings' sockets; a worker that receives one wakes its own
waiters on that thread. Sending never blocks: a sibling that is gone, being replaced or too busy
to read misses that wake-up, and its streams' poll still finds the progress.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Callable
from pathlib import Path

MAX_THREAD_ID_BYTES = 4096
"""A datagram carries one thread id; a longer id is not relayed (its streams poll)."""


class Siblings:
    """Worker ``index``'s end of the wake-up channel shared by ``count`` workers in ``directory``."""

    def __init__(self, directory: Path, index: int, count: int) -> None:
        self.path = directory / f"{index}.sock"
        self._others = [str(directory / f"{other}.sock") for other in range(count) if other != index]
        directory.mkdir(mode=0o700, exist_ok=True)  # the last sibling to stop removes it
        self.path.unlink(missing_ok=True)  # left by the worker this one replaces
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._socket.bind(str(self.path))
        self._socket.setblocking(False)

    def tell(self, thread_id: str) -> None:
        """Tell every sibling that ``thread_id`` moved on."""
        data = thread_id.encode("utf-8", "surrogatepass")
        if len(data) > MAX_THREAD_ID_BYTES:
            return
        for other in self._others:
            with contextlib.suppress(OSError):  # gone, replaced or its queue full: it polls instead
                self._socket.sendto(data, other)

    def listen(self, loop: asyncio.AbstractEventLoop, on_thread: Callable[[str], None]) -> None:
        """Call ``on_thread`` on ``loop`` with each thread id a sibling tells."""
        loop.add_reader(self._socket.fileno(), self._receive, on_thread)

    def _receive(self, on_thread: Callable[[str], None]) -> None:
        while True:
            try:
                data = self._socket.recv(MAX_THREAD_ID_BYTES)
            except (BlockingIOError, InterruptedError):
                return
            on_thread(data.decode("utf-8", "replace"))  # a garbled id wakes nobody

    def close(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        """Stop listening (on ``loop``, if it listened there) and remove the socket, and the
        directory once it is the last (the supervisor, if it was killed, cannot)."""
        if loop is not None:
            loop.remove_reader(self._socket.fileno())
        self._socket.close()
        self.path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):  # not empty: a sibling still serves
            self.path.parent.rmdir()
