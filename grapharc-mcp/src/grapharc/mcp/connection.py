"""One configured MCP server, kept connected for the agent's life on the background loop.

A connection opens the transport (``stdio_client`` or ``streamable_http_client``) and a
``ClientSession`` in one task of :mod:`grapharc.mcp.loop`, which holds them open until
:meth:`ServerConnection.close`. Calls come from the harness's thread and wait for at most their
timeout. A server that dies fails the call in flight; the next call restarts it, once: a call never
restarts a server twice. ``notifications/tools/list_changed`` marks the tool list stale; it is
listed again when the source is next asked for new tools (:meth:`ServerConnection.changed_tools`).
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import threading
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from typing import IO, Any

import anyio
import httpx2
import mcp_types as types
from mcp.client.session import ClientSession, IncomingMessage
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from grapharc.errors import ConfigurationError, GraphARCError
from grapharc.harness.executors import ToolTimeoutError
from grapharc.mcp import loop
from grapharc.mcp.config import REFERENCE, ServerConfig
from grapharc.mcp.errors import McpCallError, McpConnectError, McpResultTooLargeError, McpServerDiedError
from grapharc.mcp.stdio import capped_stdio_client
from grapharc.redaction import mark_secret_names

MAX_TOOLS = 1000
"""Tools one server may list (over all its pages), at most."""
STDERR_TAIL = 400
"""Characters of a stdio server's last stderr output quoted when it fails to start."""
ENVELOPE_BYTES = 64 * 1024
"""Room for a message's JSON-RPC envelope beyond its result's text."""
STOP_WAIT_SECONDS = 5.0
"""How long a connected session is given to end on its own when closed, before it is cancelled."""


def message_cap(server: ServerConfig) -> int:
    """The largest message read from ``server``: its result cap, twice (JSON escapes can double a
    text), plus the envelope. A larger message stops the call before it is read whole."""
    return 2 * server.max_result_bytes + ENVELOPE_BYTES


def filled(server: ServerConfig, key: str, values: dict[str, str]) -> dict[str, str]:
    """``values`` with every ``${NAME}`` replaced by that variable's value; every variable the
    server's settings name is marked secret first (its value is redacted wherever a run writes).
    An unset variable is an error naming server and key."""

    def fill(name: str, value: str) -> str:
        def lookup(match: Any) -> str:
            variable = match.group(1)
            if variable not in os.environ:
                raise ConfigurationError(f"MCP server {server.name!r}: {key}.{name} names ${{{variable}}}, "
                                         "which is not set in the environment",
                                         hint=f"export {variable} before starting the agent")
            return os.environ[variable]

        return str(REFERENCE.sub(lookup, value))

    mark_secret_names(server.secret_names())
    return {name: fill(name, value) for name, value in values.items()}


class ServerConnection:
    """A live client session with one MCP server (see the module docstring)."""

    def __init__(self, server: ServerConfig) -> None:
        self.server = server
        self.session: ClientSession | None = None
        self.dead = False
        self._changed = threading.Event()
        self._stop: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._stderr: IO[str] | None = None
        self.oversized: int | None = None

    # -- connecting -----------------------------------------------------------------------------

    def connect(self) -> list[types.Tool]:
        """Start (or restart) the server and list its tools, within its connect timeout."""
        try:
            return loop.run(self._start(), self.server.connect_timeout + 10.0)
        except TimeoutError:
            raise McpConnectError(f"MCP server {self.server.name!r} did not start within "
                                  f"{self.server.connect_timeout:g} s") from None

    def _transport(self) -> AbstractAsyncContextManager[Any]:
        if self.server.transport == "http":
            headers = filled(self.server, "headers", dict(self.server.headers))
            client = httpx2.AsyncClient(headers=headers,
                                        timeout=httpx2.Timeout(self.server.connect_timeout, read=None))
            return streamable_http_client(self.server.url, http_client=client,
                                          max_sse_event_size=message_cap(self.server))
        if self._stderr is not None:
            self._stderr.close()
        self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
        parameters = StdioServerParameters(
            command=self.server.command, args=list(self.server.args),
            env=filled(self.server, "env", dict(self.server.env)), cwd=self.server.cwd)
        return capped_stdio_client(parameters, errlog=self._stderr, on_oversize=self._on_oversize,
                                   max_message_bytes=message_cap(self.server))

    def _on_oversize(self, size: int) -> None:
        self.oversized = size

    async def _start(self) -> list[types.Tool]:
        await self._shutdown()
        ready: asyncio.Future[list[types.Tool]] = asyncio.get_running_loop().create_future()
        self._stop = asyncio.Event()
        task = self._task = asyncio.create_task(self._hold(ready, self._stop))
        try:
            with anyio.fail_after(self.server.connect_timeout):
                tools = await asyncio.shield(ready)
        except TimeoutError:
            task.cancel()  # still in its handshake: nothing to end gracefully, so no wait for it
            await self._shutdown()
            raise McpConnectError(f"MCP server {self.server.name!r} did not finish its handshake within "
                                  f"{self.server.connect_timeout:g} s{self._stderr_tail()}") from None
        except GraphARCError:
            raise
        except Exception as exc:
            await self._shutdown()
            raise McpConnectError(f"MCP server {self.server.name!r} could not be reached: "
                                  f"{_described(exc)}{self._stderr_tail()}") from None
        self.dead = False
        return tools

    async def _hold(self, ready: asyncio.Future[list[types.Tool]], stop: asyncio.Event) -> None:
        """Open transport and session, list the tools, and keep both open until ``stop``."""
        try:
            async with AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self._transport())
                session = await stack.enter_async_context(
                    ClientSession(read, write, message_handler=self._on_message))
                await session.initialize()
                tools = await list_all_tools(session)
                self.session = session
                ready.set_result(tools)
                await stop.wait()
        except Exception as exc:  # the transport's own failure, reported through ``ready`` or a call
            if not ready.done():
                ready.set_exception(exc)
        finally:
            self.session = None
            self.dead = True

    async def _shutdown(self) -> None:
        task, stop = self._task, self._stop
        self._task = self._stop = None
        if task is None or stop is None:
            return
        stop.set()
        with anyio.move_on_after(STOP_WAIT_SECONDS):
            await asyncio.wait({task})
        if not task.done():
            task.cancel()
            await asyncio.wait({task}, timeout=5.0)

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.flush()
        self._stderr.seek(0)
        tail = self._stderr.read()[-STDERR_TAIL:].strip()
        return f"; its stderr ends: {tail}" if tail else ""

    async def _on_message(self, message: IncomingMessage) -> None:
        """Mark the tool list stale on ``notifications/tools/list_changed``. This runs before a call
        answered after the notification returns, with no wait of the call's own: the session starts
        this handler's task as it reads the notification, before it reads the answer and wakes the
        call's task, and the loop runs tasks in the order they were woken."""
        if isinstance(message, types.ToolListChangedNotification):
            self._changed.set()

    # -- calling --------------------------------------------------------------------------------

    def call(self, name: str, arguments: dict[str, Any], timeout: float) -> types.CallToolResult:
        """Call tool ``name`` (as the server names it): a dead server is restarted first, once."""
        if self.dead or self.session is None:
            self._changed.set()  # a restarted server's tools are listed again, and governed again
            self.connect()
        try:  # the hand-off's own deadline times the call out: no timer on the loop per call
            return loop.run(self._call(name, arguments), timeout)
        except TimeoutError:
            raise ToolTimeoutError(f"{self.server.tool_prefix}.{name}", timeout) from None

    async def _call(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        session = self.session
        if session is None:
            raise McpServerDiedError(f"MCP server {self.server.name!r} is not connected")
        self.oversized = None
        try:
            result = await session.call_tool(name, arguments)
        except MCPError as exc:
            if exc.code == types.CONNECTION_CLOSED and self.oversized is not None:
                self.dead = True
                raise McpResultTooLargeError(
                    f"MCP server {self.server.name!r} sent a message of more than {self.oversized} bytes "
                    f"for tool {name!r}, past its cap of {self.server.max_result_bytes} result bytes "
                    "(max_result_bytes); the call failed and the server is restarted at the next call"
                ) from None
            if exc.code == types.CONNECTION_CLOSED:
                self.dead = True
                raise McpServerDiedError(f"MCP server {self.server.name!r} closed its connection during "
                                         "the call; the call failed, and the server is restarted at the "
                                         "next call") from None
            raise McpCallError(f"MCP server {self.server.name!r}: {exc.message}") from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            self.dead = True
            raise McpServerDiedError(f"MCP server {self.server.name!r} is gone; the server is restarted "
                                     "at the next call") from None
        if not isinstance(result, types.CallToolResult):
            raise McpCallError(f"MCP server {self.server.name!r} answered with a {type(result).__name__}, "
                               "not a tool result")
        return result

    # -- the tool list ---------------------------------------------------------------------------

    def changed_tools(self) -> list[types.Tool] | None:
        """The server's tools listed again if it announced a change (or restarted), else None."""
        if not self._changed.is_set() or self.session is None:
            return None
        self._changed.clear()
        return loop.run(self._relist(), self.server.call_timeout + 10.0)

    async def _relist(self) -> list[types.Tool]:
        session = self.session
        if session is None:
            return []
        with anyio.fail_after(self.server.call_timeout):
            return await list_all_tools(session)

    def close(self) -> None:
        """End the session and stop the server (a stdio server's process ends with it)."""
        if self._task is not None:
            loop.run(self._shutdown(), 20.0)
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None


async def list_all_tools(session: ClientSession) -> list[types.Tool]:
    """Every tool the server lists, page by page, refusing a server that lists more than
    ``MAX_TOOLS`` (a listing without end)."""
    tools: list[types.Tool] = []
    cursor: str | None = None
    while True:
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        tools.extend(page.tools)
        if len(tools) > MAX_TOOLS:
            raise McpConnectError(f"the server lists more than {MAX_TOOLS} tools")
        cursor = page.next_cursor
        if not cursor:
            return tools


def _described(exc: BaseException) -> str:
    """An exception (or the first of a group) in words, as the reason a connection failed."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
