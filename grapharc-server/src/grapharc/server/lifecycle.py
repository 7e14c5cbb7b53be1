"""Run an ASGI app on an already-bound socket until SIGTERM or SIGINT, then drain it and stop.

uvicorn's own signal handling re-raises the signal once it has shut down (so SIGTERM ends
the process with status 143), waits for in-flight requests for as long as they take, and
stops waiting early only on a second SIGINT. This module keeps uvicorn's drain (stop
accepting, close idle connections, let in-flight requests finish) and changes the rest:

- the first SIGTERM or SIGINT starts the drain and is not re-raised, so a drained server
  returns normally (``grapharc serve`` then exits 0);
- the drain ends the open event streams (``grapharc.server.event_stream``), which would
  otherwise stay open until their clients leave;
- a second signal of either kind, or a drain that outlasts its timeout, ends the process at
  once with exit status 1. A request handler running in a worker thread cannot be cancelled,
  so ending the process is the only stop that is bounded.

Every request's head is bounded before the app sees it (``heads``): its bytes by the HTTP
protocol, its header count by the app's outermost layer.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import NoReturn

import uvicorn
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.config import STARTUP_FAILURE

from grapharc.errors import ExitCode
from grapharc.server.errors import ServerStartupError
from grapharc.server.event_stream import end_open_streams
from grapharc.server.heads import MAX_HEAD_BYTES, HeaderCount
from grapharc.server.listener import Engine, ListeningAddress
from grapharc.server.notices import notice


def serve_until_stopped(listener: socket.socket, app: ASGIApp, *, drain_timeout: float,
                        on_listening: Callable[[ListeningAddress, Engine], None],
                        lifeline: int | None = None) -> None:
    """Serve ``app`` on ``listener`` until a signal stops it; return once every request has finished.

    ``on_listening`` is called once the app has started and its requests are being accepted,
    with the address and what serves it (uvloop where uvicorn finds it installed, and the HTTP
    parser ``bounded_http`` picks).
    Raises ServerStartupError when the app's startup (its lifespan) fails. When the drain is cut
    short (a second signal, or ``drain_timeout`` seconds pass) the process exits 1 instead.
    ``lifeline``, a pipe's read end a supervisor holds the other end of, starts the drain once it
    reaches its end: the supervisor is gone (``processes``).
    """
    requests = _InFlight(app)
    protocol, parser = bounded_http()
    config = uvicorn.Config(HeaderCount(requests), log_level="warning", access_log=False,
                            timeout_graceful_shutdown=None, http=protocol,
                            h11_max_incomplete_event_size=MAX_HEAD_BYTES)
    server = _DrainingServer(config, requests, drain_timeout=drain_timeout, on_listening=on_listening,
                             lifeline=lifeline, parser=parser)
    try:
        server.run(sockets=[listener])
    except SystemExit as exc:
        if exc.code != STARTUP_FAILURE:
            raise
        where = ListeningAddress.of(listener).url
        raise ServerStartupError(f"the app failed to start on {where}, so nothing was served",
                                 hint="the log lines above say why") from None
    finally:
        server.cancel_drain_deadline()
        listener.close()
    notice("stopped: every request finished")


def bounded_http() -> tuple[type[asyncio.Protocol] | str, str]:
    """uvicorn's ``http`` setting and the parser's name: the bounded httptools protocol where
    httptools is installed (a dependency of this distribution), else uvicorn's h11 protocol, which
    ``h11_max_incomplete_event_size`` bounds."""
    try:
        from grapharc.server.httptools_head import BoundedHttpToolsProtocol
    except ImportError:
        return "h11", "h11"
    return BoundedHttpToolsProtocol, "httptools"


class _InFlight:
    """The ASGI app, counting the requests it is serving (HTTP and WebSocket) so a drain can say how
    many are left: uvicorn keeps its own count only in its server's undocumented state. A request
    stops counting once its last message is sent (the client holds the whole response then, even
    if the app's call has a moment left to return), or when the app returns without one."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.count = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):  # the lifespan is not a request
            await self.app(scope, receive, send)
            return
        self.count += 1
        finished = False

        async def counted_send(message: Message) -> None:
            nonlocal finished
            await send(message)
            if not finished and _is_last(message):
                finished = True
                self.count -= 1

        try:
            await self.app(scope, receive, counted_send)
        finally:
            if not finished:
                self.count -= 1


def _is_last(message: Message) -> bool:
    """Whether ``message`` ends its request: a response body with no more to come, or a close."""
    kind = message["type"]
    return (kind == "http.response.body" and not message.get("more_body", False)) or \
        kind == "websocket.close"


class _DrainingServer(uvicorn.Server):
    """uvicorn's server with the announcement and stop rules this module's docstring describes."""

    def __init__(self, config: uvicorn.Config, requests: _InFlight, *, drain_timeout: float,
                 on_listening: Callable[[ListeningAddress, Engine], None], lifeline: int | None,
                 parser: str) -> None:
        super().__init__(config)
        self._parser = parser
        self._requests = requests
        self._drain_timeout = drain_timeout
        self._on_listening = on_listening
        self._lifeline = lifeline
        self._drain_deadline: threading.Timer | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        """Start as uvicorn does, then announce the address once requests are being accepted."""
        await super().startup(sockets=sockets)
        self._loop = asyncio.get_running_loop()
        if self._lifeline is not None:
            asyncio.get_running_loop().add_reader(self._lifeline, self._supervisor_gone)
        if self.started and sockets:
            self._on_listening(ListeningAddress.of(sockets[0]), self._engine())

    def _supervisor_gone(self) -> None:
        """The lifeline reached its end: drain, as on SIGTERM (nobody would pass one on now)."""
        assert self._lifeline is not None  # noqa: S101 -- narrows the type: only a server with a lifeline reads it
        asyncio.get_running_loop().remove_reader(self._lifeline)
        if not self.should_exit:
            self._drain("the supervisor is gone")

    def _engine(self) -> Engine:
        """The running event loop's implementation and the HTTP protocol's parser."""
        loop = type(asyncio.get_running_loop()).__module__.split(".")[0]
        return Engine(event_loop=loop, http=self._parser)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        """The first signal starts a bounded drain; a second one stops the process now."""
        name = signal.Signals(sig).name
        if self.should_exit:
            _stop_now(f"{name} again: stopped without finishing {self._in_flight()}")
        self._drain(f"{name}", f"; send {name} again to stop now")

    def _drain(self, why: str, how_to_stop_now: str = "") -> None:
        """Stop accepting and let the requests in flight finish, for ``drain_timeout`` at most."""
        self.should_exit = True
        if self._loop is not None:  # event streams stay open until their clients leave: end them
            self._loop.call_soon_threadsafe(end_open_streams)  # (from a signal handler: on the loop)
        self._drain_deadline = threading.Timer(self._drain_timeout, self._drain_timed_out)
        self._drain_deadline.daemon = True
        self._drain_deadline.start()
        notice(f"{why}: stopping, {self._in_flight()} (waiting at most {self._drain_timeout:g}s"
               f"{how_to_stop_now})")

    def cancel_drain_deadline(self) -> None:
        """Forget the drain's deadline (the drain finished, or it never started)."""
        if self._drain_deadline is not None:
            self._drain_deadline.cancel()

    def _drain_timed_out(self) -> None:
        outlasted = f"the drain outlasted {self._drain_timeout:g}s"
        if self._requests.count:
            _stop_now(f"{outlasted}: stopped without finishing {self._in_flight()}")
        _stop_now(f"{outlasted}: every request finished, but the server's shutdown waited on work still "
                  "running in a thread (a sync node cannot be cancelled); stopped without it")

    def _in_flight(self) -> str:
        count = self._requests.count
        if count == 1:
            return "1 request in flight"
        return f"{count or 'no'} requests in flight"


def _stop_now(message: str) -> NoReturn:
    """End the process with status 1 at once, leaving whatever requests are still running (with no
    reader left, the notice and the flush of stdout fail quietly: the exit happens regardless)."""
    notice(message)
    with contextlib.suppress(OSError, ValueError):  # ValueError: stdout is closed
        sys.stdout.flush()
    os._exit(int(ExitCode.NEGATIVE))
