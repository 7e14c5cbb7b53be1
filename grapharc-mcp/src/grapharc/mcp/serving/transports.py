"""Where ``grapharc mcp serve`` listens: stdio (the default), or streamable HTTP on an address.

HTTP has no authentication here: whoever reaches the address can start runs and read threads. So
it listens on loopback unless the operator passes an explicit flag for another address, and then
only with DNS rebinding protection off (a remote client's Host is not loopback). On loopback the
SDK's DNS rebinding protection accepts only loopback Host and Origin headers. The socket is bound
here, so ``--http 127.0.0.1:0`` picks a free port and the announcement names the one bound.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType
from typing import Any

import uvicorn
from mcp.server import Server
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecuritySettings

from grapharc.errors import GraphARCError

MCP_PATH = "/mcp"
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


class AddressError(GraphARCError):
    """``--http`` names an address that is not HOST:PORT, cannot be listened on, or is not loopback
    without the flag that allows it."""


@dataclass(frozen=True, slots=True)
class Listening:
    """The bound address the HTTP transport serves on."""

    host: str
    port: int
    remote: bool

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{MCP_PATH}"

    def document(self) -> dict[str, Any]:
        """The announcement as JSON data (``--json``)."""
        return {"ok": True, "transport": "streamable-http", "url": self.url, "host": self.host,
                "port": self.port, "pid": os.getpid(), "auth": None, "remote": self.remote}

    def line(self) -> str:
        """The announcement as a person reads it on stderr, warning when off loopback."""
        warning = ("; WARNING: no authentication, and not on loopback: anyone who reaches this address "
                   "can start runs and read threads" if self.remote else "; no authentication: loopback only")
        return f"serving MCP on {self.url} (pid {os.getpid()}{warning}; Ctrl+C or SIGTERM stops)"


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[v6]:PORT`` for an IPv6 address) as host and port."""
    host, colon, port = text.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not colon or not host or not port.isdigit() or int(port) > 65535:
        raise AddressError(f"--http {text!r} is not HOST:PORT",
                           hint="e.g. --http 127.0.0.1:8765 ([::1]:8765 for IPv6; port 0 picks a free one)")
    return host, int(port)


def bind(host: str, port: int, *, allow_remote: bool) -> socket.socket:
    """A listening socket on ``host``:``port``; refused unless loopback or ``allow_remote``."""
    try:
        family, _kind, _proto, _name, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        listener = socket.create_server(address[:2], family=family)
    except OSError as exc:
        raise AddressError(f"cannot listen on {host}:{port}: {exc.strerror or exc}",
                           hint="pick another address or port (port 0 picks a free one)") from None
    if not allow_remote and not ipaddress.ip_address(listener.getsockname()[0]).is_loopback:
        listener.close()
        raise AddressError(f"refusing to serve MCP on {host}: the HTTP transport has no authentication, so "
                           "anyone who reaches that address could start runs and read threads",
                           hint="listen on 127.0.0.1, or pass --allow-remote to serve it anyway")
    return listener


def listening(listener: socket.socket) -> Listening:
    """What ``listener`` is bound to."""
    host, port = listener.getsockname()[:2]
    return Listening(host, port, remote=not ipaddress.ip_address(host).is_loopback)


async def serve_stdio(server: Server[object]) -> None:
    """Serve ``server`` over this process's stdin and stdout until the client closes stdin."""
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


async def serve_http(server: Server[object], listener: socket.socket,
                     on_listening: Callable[[Listening], None]) -> None:
    """Serve ``server`` over streamable HTTP on ``listener`` until SIGINT or SIGTERM (a second
    one stops at once), calling ``on_listening`` once requests are accepted."""
    where = listening(listener)
    app = server.streamable_http_app(streamable_http_path=MCP_PATH, host=where.host,
                                     transport_security=security(where))
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
    await _AnnouncingServer(config, lambda: on_listening(where)).serve(sockets=[listener])


def security(where: Listening) -> TransportSecuritySettings:
    """DNS rebinding protection on loopback (only loopback names and origins are accepted); none
    off it, where clients name the host however they reach it."""
    if where.remote:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    names = sorted({*LOOPBACK_NAMES, f"[{where.host}]" if ":" in where.host else where.host})
    return TransportSecuritySettings(allowed_hosts=[f"{name}:*" for name in names],
                                     allowed_origins=[f"http://{name}:*" for name in names])


class _AnnouncingServer(uvicorn.Server):
    """uvicorn's server, saying when it accepts requests and ending normally on a signal (uvicorn
    would raise the signal again once stopped, so the process died before its stores were closed)."""

    def __init__(self, config: uvicorn.Config, on_listening: Callable[[], None]) -> None:
        super().__init__(config)
        self._on_listening = on_listening

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started:
            self._on_listening()

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        """The first signal stops serving once in-flight requests end; a second one at once."""
        if self.should_exit:
            self.force_exit = True
        self.should_exit = True
