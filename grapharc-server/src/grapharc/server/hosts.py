"""Which host names a request may be sent to, and which pages may change something: the server's
guard against DNS rebinding and cross-site requests.

Without ``--auth-file`` the server listens on loopback and asks nobody who they are, so a web page
the operator's browser opens could reach it under a name of the page's own that resolves to
127.0.0.1 (DNS rebinding): the browser then sends that name as ``Host``. Such a server answers only
to ``localhost``, ``127.0.0.1``, ``[::1]`` and the names the operator lists (``serve
--allowed-host``, the ``allowed_hosts`` setting); any other ``Host``, or none, is refused with 421
before a route runs. With ``--auth-file`` the ``Host`` is not checked: a shared server is reached
under names (a proxy's, an address) the operator may not list, and what guards it is a credential
no other page can read.

Either way, a request that changes something (POST, PUT, PATCH, DELETE) and every WebSocket
handshake whose ``Origin`` names a host it may not come from is refused with 403: a page of
another site cannot act with the browser's access (its cookie, its reach to loopback), beside
the inbox's CSRF tokens. It may come from the hosts above and, with ``--auth-file``, from the
host the request was sent to (the server's own pages). Ports are not compared. A request without
``Origin`` (an API client, a same-origin GET) is not a browser's cross-site request and passes.

Hand-written rather than Starlette's ``TrustedHostMiddleware``: that answers 400 in plain text,
cuts an IPv6 ``Host`` such as ``[::1]:8000`` at its first colon, and does not look at ``Origin``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from grapharc.server.refusals import refuse

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
"""The names a server without sign-in always answers to (an IPv6 address without its brackets)."""
HOSTS_REMEMBERED = 64
"""How many ``Host`` headers a guard remembers its answer for (the least recently sent go first)."""
CHANGING_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
"""The methods whose requests change something, so a cross-site one is refused."""
_HOST_PORT = re.compile(r"(?:\[(?P<ipv6>[0-9a-f:.]+)\]|(?P<name>[^\s\[\]:/?#@\\]+))(?::[0-9]*)?")
"""A ``Host`` header: a name, an IPv4 address or a bracketed IPv6 address, and an optional port."""


def host_of(header: str) -> str | None:
    """The lower-cased name a ``Host`` header names, without its port or an IPv6 address's
    brackets; None when it is not a host (a path, user information, spaces)."""
    match = _HOST_PORT.fullmatch(header.strip().lower())
    if match is None:
        return None
    return match["ipv6"] or match["name"]


def origin_host(header: str) -> str | None:
    """The lower-cased host of an ``Origin`` header (``scheme://host[:port]``); None for ``null``
    and anything that is not a web page's origin."""
    try:
        parts = urlsplit(header.strip())
        parts.port  # noqa: B018 -- raises ValueError for a port that is not a number
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or "@" in parts.netloc or parts.path not in ("", "/"):
        return None
    return parts.hostname or None


def shown(names: Iterable[str]) -> str:
    """Host names as a person writes them: an IPv6 address in brackets."""
    return ", ".join(f"[{name}]" if ":" in name else name for name in names)


class HostGuard:
    """ASGI middleware: the ``Host`` and ``Origin`` checks this module's docstring describes, for
    HTTP requests (SSE streams included) and WebSocket handshakes alike."""

    def __init__(self, app: ASGIApp, *, listed: Iterable[str] = (), signed_in: bool = False) -> None:
        """``listed``: the operator's further names; ``signed_in``: whether the server has an auth
        file (then the ``Host`` is not checked, and a page of the request's own host may post)."""
        self.app = app
        self.allowed = tuple(dict.fromkeys([*LOOPBACK_NAMES, *(name.lower().strip("[]") for name in listed)]))
        self.signed_in = signed_in
        self.answers_to = functools.lru_cache(maxsize=HOSTS_REMEMBERED)(self._answers_to)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind != "http" and kind != "websocket":
            await self.app(scope, receive, send)
            return
        hosts, origins = _hosts_and_origins(scope["headers"])
        if not self.signed_in:
            stray = next((host for host in hosts or [""] if not self.answers_to(host)), None)
            if stray is not None:
                await refuse(scope, receive, send, 421, self._misdirected(stray), _hint(host_of(stray)))
                return
        if origins and (kind == "websocket" or scope["method"] in CHANGING_METHODS):
            own = {host_of(host) for host in hosts[:1]} if self.signed_in else set()
            foreign = next((origin for origin in origins
                            if origin_host(origin) not in {*self.allowed, *own} - {None}), None)
            if foreign is not None:
                await refuse(scope, receive, send, 403, self._cross_site(scope, foreign),
                             _hint(origin_host(foreign)))
                return
        await self.app(scope, receive, send)

    def _answers_to(self, host: str) -> bool:
        """Whether a server without sign-in answers a request sent to ``host`` (a ``Host`` header);
        remembered as ``answers_to``, since a server is sent the same few again and again."""
        return host_of(host) in self.allowed

    def _misdirected(self, host: str) -> str:
        sent_to = f"was sent to {host!r}" if host else "names no host (no Host header)"
        return (f"this server answers only to {shown(self.allowed)}, and this request {sent_to}; "
                "without --auth-file other names are refused, as a web page could reach this server "
                "under a name of its own (DNS rebinding)")

    def _cross_site(self, scope: Scope, origin: str) -> str:
        what = "a WebSocket handshake" if scope["type"] == "websocket" else f"a {scope['method']} request"
        mine = " or the server's own host" if self.signed_in else ""
        return (f"{what} from a page of {origin!r} is refused: this server takes requests that change "
                f"something only from pages of {shown(self.allowed)}{mine}")


def _hosts_and_origins(headers: Iterable[tuple[bytes, bytes]]) -> tuple[list[str], list[str]]:
    """The ``Host`` and the ``Origin`` headers among ``headers``, in one pass."""
    hosts: list[str] = []
    origins: list[str] = []
    for name, value in headers:
        if name == b"host":
            hosts.append(value.decode("latin-1"))
        elif name == b"origin":
            origins.append(value.decode("latin-1"))
    return hosts, origins


def _hint(name: str | None) -> str:
    """What to do when ``name`` (the host a request was sent to or came from) is one's own."""
    listed = f"--allowed-host {shown([name])}" if name else "--allowed-host NAME"
    return (f"if that is a name of this server you use on purpose, serve with {listed} (or the "
            "allowed_hosts setting: GRAPHARC_ALLOWED_HOSTS, grapharc.toml)")
