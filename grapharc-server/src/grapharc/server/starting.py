"""Health answers on the bound socket while ``grapharc serve`` is still loading what it serves.

The server binds its address first, then imports and opens what the API needs (LangGraph, the
registry's graphs, the stores, the app): most of its start-up. Meanwhile ``answering_while_starting``
answers on the listening socket, one request per connection, and honestly: ``/healthz`` 200
``{"ok": true, "ready": false}`` (the process is up), ``/readyz`` and every other path 503 with a
problem document and ``Retry-After`` (nothing can be served yet). When loading is done it stops
accepting, and the connections queued meanwhile are the real server's, whose ``/healthz`` says
``ready: true`` and whose ``/readyz`` answers 200. Plain sockets on purpose: this runs before the
HTTP stack is imported, which is what it saves time on. Neither sign-in nor the ``Host`` check
applies meanwhile: nothing is answered but that the process is up and not ready.
"""

from __future__ import annotations

import json
import os
import selectors
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from http import HTTPStatus

MAX_HEAD_BYTES = 8192
"""A request head longer than this is answered as it stands (no request here needs a body)."""
READ_SECONDS = 1.0
"""How long a connection may take to send its request head before it is closed unanswered."""
LIVE = {"ok": True, "ready": False}
NOT_YET = {"type": "about:blank", "title": HTTPStatus.SERVICE_UNAVAILABLE.phrase, "status": 503,
           "detail": "the server is starting: it is loading its graphs and stores",
           "hint": "retry shortly; the announcement (or /readyz answering 200) says it is ready"}


@contextmanager
def answering_while_starting(listener: socket.socket) -> Iterator[None]:
    """Answer requests on ``listener`` from a thread while the block runs; stop (and wait for the
    request being answered) as it ends, leaving the socket listening."""
    wake_read, wake_write = os.pipe()
    thread = threading.Thread(target=_serve, args=(listener, wake_read), name="grapharc-starting",
                              daemon=True)
    thread.start()
    try:
        yield
    finally:
        os.write(wake_write, b"x")
        thread.join()
        os.close(wake_read)
        os.close(wake_write)


def _serve(listener: socket.socket, wake: int) -> None:
    """Accept and answer connections until ``wake`` is readable."""
    with selectors.DefaultSelector() as selector:
        selector.register(listener, selectors.EVENT_READ)
        selector.register(wake, selectors.EVENT_READ)
        while True:
            ready = [key.fileobj for key, _ in selector.select()]
            if wake in ready:
                return
            try:
                connection, _ = listener.accept()
            except OSError:  # the client gave up between the select and the accept
                continue
            with connection:
                _answer(connection)


def _answer(connection: socket.socket) -> None:
    """Read one request head from ``connection`` and answer it by its path (see the module)."""
    connection.settimeout(READ_SECONDS)
    head = b""
    with suppress(OSError):
        while b"\r\n\r\n" not in head and len(head) < MAX_HEAD_BYTES:
            chunk = connection.recv(MAX_HEAD_BYTES)
            if not chunk:
                break
            head += chunk
        parts = head.split(b" ", 2)
        path = parts[1].split(b"?")[0] if len(parts) == 3 else b""
        status, body, media = (200, LIVE, "application/json") if path == b"/healthz" else \
            (503, NOT_YET, "application/problem+json")
        content = json.dumps(body).encode()
        phrase = HTTPStatus(status).phrase
        retry = "Retry-After: 1\r\n" if status == 503 else ""
        connection.sendall(f"HTTP/1.1 {status} {phrase}\r\nContent-Type: {media}\r\nContent-Length: "
                           f"{len(content)}\r\n{retry}Connection: close\r\n\r\n".encode() + content)
