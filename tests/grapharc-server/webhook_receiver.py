"""A real HTTP receiver for run webhooks, on 127.0.0.1 in a thread of the test: it records every
POST (path, headers, body, the status it answered) and answers as the test scripts it, per path:
a status, or ``HANG`` (no answer until the receiver stops, so the sender's attempt times out)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HANG = "hang"
PATIENCE_SECONDS = 60.0
"""How long a wait for a hook may last before the test fails (never a measured time)."""


@dataclass(frozen=True)
class Received:
    """One POST as it arrived, and what the receiver answered (0: no answer, it hung)."""

    path: str
    headers: dict[str, str]
    body: bytes
    answered: int

    def json(self) -> Any:
        return json.loads(self.body)


class Receiver:
    """The receiver's script and record; ``url(path)`` is where a hook for ``path`` goes."""

    def __init__(self) -> None:
        self.received: list[Received] = []
        self._script: dict[str, list[int | str]] = {}
        self._default: dict[str, int] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self.base = ""

    def url(self, path: str) -> str:
        return f"{self.base}{path}"

    def answer(self, path: str, *answers: int | str, then: int = 200) -> None:
        """Answer ``path``'s next POSTs with ``answers`` in turn, then always ``then``."""
        with self._lock:
            self._script[path] = list(answers)
            self._default[path] = then

    def at(self, path: str) -> list[Received]:
        with self._lock:
            return [r for r in self.received if r.path == path]

    def wait_for(self, path: str, count: int = 1, *, answered: int | None = None) -> list[Received]:
        """The POSTs to ``path`` once ``count`` have arrived (answered ``answered``, if given)."""
        return wait_until(lambda: len(hits := [r for r in self.at(path)
                                               if answered is None or r.answered == answered]) >= count
                          and hits, f"{count} POST(s) to {path}")

    def _next_answer(self, path: str) -> int | str:
        with self._lock:
            script = self._script.get(path, [])
            return script.pop(0) if script else self._default.get(path, 200)

    def _record(self, hit: Received) -> None:
        with self._lock:
            self.received.append(hit)


def wait_until(condition: Callable[[], Any], what: str) -> Any:
    """Poll ``condition`` until it is truthy (its value), failing after ``PATIENCE_SECONDS``."""
    deadline = time.monotonic() + PATIENCE_SECONDS
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {PATIENCE_SECONDS:g}s for {what}")
        time.sleep(0.05)
    return value


@contextmanager
def receiving() -> Iterator[Receiver]:
    """A receiver listening on 127.0.0.1 until the block ends."""
    receiver = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            answer = receiver._next_answer(self.path)
            if answer == HANG:
                receiver._record(Received(self.path, dict(self.headers), body, 0))
                receiver._stopping.wait(PATIENCE_SECONDS)
                return
            receiver._record(Received(self.path, dict(self.headers), body, int(answer)))
            self.send_response(int(answer))
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    receiver.base = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        receiver._stopping.set()
        server.shutdown()
        server.server_close()
