"""Bind the server's listening socket before anything is announced, and name the address it got.

Binding here rather than inside uvicorn is what lets ``grapharc serve`` report the real
port (``--port 0`` included) only once it is listening, and report a bind failure as a
GraphARC error (uvicorn would log it and exit 3).
"""

from __future__ import annotations

import errno
import os
import socket
from dataclasses import dataclass
from typing import Any

from grapharc.server.errors import (
    AddressInUseError,
    AddressNotLocalError,
    CannotListenError,
    HostNotFoundError,
    PortOutOfRangeError,
)

MAX_PORT = 65535


def host_and_port(host: str, port: int) -> str:
    """``host:port`` as a URL writes it (an IPv6 address in brackets)."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


@dataclass(frozen=True)
class ListeningAddress:
    """The address a listening socket is bound to, as the operating system reports it."""

    host: str
    port: int

    @classmethod
    def of(cls, listener: socket.socket) -> ListeningAddress:
        """The address ``listener`` is bound to (the real port when it was bound to port 0)."""
        host, port = listener.getsockname()[:2]
        return cls(host=host, port=port)

    @property
    def url(self) -> str:
        """The base URL a client on this machine uses to reach the server."""
        return f"http://{host_and_port(self.host, self.port)}"


@dataclass(frozen=True)
class Engine:
    """What serves the requests: the event loop's implementation (``uvloop`` where it is
    installed, a dependency on Linux and macOS, else ``asyncio``) and the HTTP parser's
    (``httptools``, else ``h11``)."""

    event_loop: str
    http: str


def listen(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host``:``port`` and listening; CannotListenError says why it cannot be.

    The host may be an IP address or a name; a name is bound to the first address it resolves to.
    """
    if not 0 <= port <= MAX_PORT:  # getaddrinfo would silently wrap 70000 round to 4464
        raise PortOutOfRangeError(
            f"cannot listen on {host_and_port(host, port)}: a port is a number from 0 to {MAX_PORT}",
            hint="pass --port 8000, say, or --port 0 to let the system pick a free port")
    family, address = _resolve(host, port)
    try:
        return socket.create_server(address, family=family)
    except OSError as exc:
        raise _bind_error(host, port, exc) from None


def _resolve(host: str, port: int) -> tuple[socket.AddressFamily, tuple[Any, ...]]:
    """The address family and socket address to bind for ``host``, or HostNotFoundError."""
    try:
        family, _, _, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                      flags=socket.AI_PASSIVE)[0]
    except (socket.gaierror, UnicodeError) as exc:
        reason = exc.strerror if isinstance(exc, socket.gaierror) else str(exc)
        raise HostNotFoundError(
            f"cannot listen on {host_and_port(host, port)}: the host does not resolve ({reason})",
            hint="pass an IP address of this machine, e.g. --host 127.0.0.1 (this machine only) "
                 "or --host 0.0.0.0 (every interface)") from None
    return family, address


def _bind_error(host: str, port: int, exc: OSError) -> CannotListenError:
    """The GraphARC error for a failed bind, chosen by the operating system's error number."""
    where = f"cannot listen on {host_and_port(host, port)}"
    if exc.errno == errno.EADDRINUSE:
        return AddressInUseError(
            f"{where}: the address is already in use",
            hint="stop whatever listens there, pick another --port, or pass --port 0 for a free one")
    if exc.errno == errno.EADDRNOTAVAIL:
        return AddressNotLocalError(
            f"{where}: {host} is not an address of this machine",
            hint="pass --host 127.0.0.1 (this machine only) or --host 0.0.0.0 (every interface)")
    reason = os.strerror(exc.errno).lower() if exc.errno else str(exc)
    return CannotListenError(f"{where}: {reason}",
                             hint="pick another --host or --port (ports below 1024 need privileges)")
