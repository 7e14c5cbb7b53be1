"""A stdio transport for the SDK's ``ClientSession`` that reads the server's output in linear time,
stops at a size cap, and costs the MCP loop no task of its own.

The SDK's own ``stdio_client`` joins a line's chunks by repeated concatenation, so a 100 MB line
costs minutes of copying before any size check could see it. This transport starts the server as
the SDK does (its safe default environment, a new process group), frames newline-delimited
JSON-RPC messages itself, parses each with the SDK's own ``jsonrpc_message_adapter``, and stops
the server when one message grows past ``max_message_bytes``: a message cannot be skipped without
reading it whole, and a server that sends one is not trusted to go on. ``on_oversize`` is told
first, so the call that was waiting can be failed as too large rather than as a crash.

It is an asyncio subprocess protocol rather than anyio process streams with a reader and a writer
task: the pipe's data callback frames and parses the lines and puts each message in an
:class:`~grapharc.mcp.inbox.Inbox`, and a message to the server is written to the pipe by the task
that sends it. A call thus costs the loop no hand-over between tasks on either side (each one a
loop turn), and no copy of the bytes read into a stream buffer and out again.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from types import TracebackType
from typing import IO, cast

import anyio
import mcp_types as types
from mcp.client.stdio import StdioServerParameters, get_default_environment
from mcp.shared.message import SessionMessage

from grapharc.mcp.inbox import Inbox, Item

STOP_GRACE_SECONDS = 2.0
"""How long a server has to exit after its stdin closes, before its process group is killed."""

STDIN = 0


def _parsed(line: bytes) -> Item:
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:  # the session surfaces a parse error as it would from the SDK's transport
        return exc


class _Output(asyncio.Protocol):
    """The server's stdout, framed into messages for its inbox; past the size cap nothing more of
    it is read (``on_oversize`` kills the server). While the inbox holds more than one message it
    is not read either: a server cannot make the client hold more than one read's worth."""

    def __init__(self, max_message_bytes: int, on_oversize: Callable[[int], None]) -> None:
        self.inbox = Inbox(on_backlog=self._pause, on_drained=self._resume)
        self._max_message_bytes = max_message_bytes
        self._on_oversize = on_oversize
        self._transport: asyncio.ReadTransport | None = None
        self._pieces: list[bytes] = []
        self._size = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.ReadTransport, transport)

    def data_received(self, data: bytes) -> None:
        *complete, rest = data.split(b"\n")
        for part in complete:
            line = b"".join([*self._pieces, part])
            self._pieces, self._size = [], 0
            if line.strip():
                self.inbox.put(_parsed(line))
        self._pieces.append(rest)
        self._size += len(rest)
        if self._size > self._max_message_bytes:
            self._on_oversize(self._size)
            self._pieces, self._size = [], 0
            self.stop_reading()

    def connection_lost(self, exc: Exception | None) -> None:
        self.inbox.end()

    def _pause(self) -> None:
        if self._transport is not None and not self._transport.is_closing():
            self._transport.pause_reading()

    def _resume(self) -> None:
        if self._transport is not None and not self._transport.is_closing():
            self._transport.resume_reading()

    def stop_reading(self) -> None:
        """Close the pipe: its loss ends the inbox."""
        if self._transport is not None:
            self._transport.close()


class _Process(asyncio.SubprocessProtocol):
    """The server process: its exit, and whether its stdin may be written (its buffer below the
    pipe's high-water mark) or is gone."""

    def __init__(self, inbox: Inbox) -> None:
        self.inbox = inbox
        self.exited = asyncio.get_running_loop().create_future()
        self.stdin_lost = False
        self._writable: asyncio.Future[None] | None = None

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        self.stdin_lost = True  # stdin is its only pipe
        if exc is not None:  # a write failed: the message is lost, and the server with it
            self.inbox.end()
        self.resume_writing()

    def process_exited(self) -> None:
        self.exited.set_result(None)

    def pause_writing(self) -> None:
        self._writable = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)
        self._writable = None

    async def writable(self) -> None:
        """Wait until the server has read enough of its stdin for more to be written."""
        if self._writable is not None:
            await asyncio.shield(self._writable)


class _Outbox:
    """The write stream: each message is written to the server's stdin by the task that sends it."""

    def __init__(self, stdin: asyncio.WriteTransport, process: _Process) -> None:
        self._stdin = stdin
        self._process = process
        self._closed = False

    async def send(self, message: SessionMessage, /) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        if self._process.stdin_lost or self._stdin.is_closing():
            self._process.inbox.end()  # a server that cannot be written to is gone: end the reading too
            raise anyio.BrokenResourceError
        text = message.message.model_dump_json(by_alias=True, exclude_unset=True)
        self._stdin.write(text.encode("utf-8") + b"\n")
        await self._process.writable()

    async def aclose(self) -> None:
        self._closed = True

    async def __aenter__(self) -> _Outbox:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc_val: BaseException | None,
                        exc_tb: TracebackType | None) -> None:
        await self.aclose()


@asynccontextmanager
async def capped_stdio_client(parameters: StdioServerParameters, *, errlog: IO[str], max_message_bytes: int,
                              on_oversize: Callable[[int], None]) -> AsyncIterator[tuple[Inbox, _Outbox]]:
    """Start the server and yield ``(read_stream, write_stream)`` as ``stdio_client`` does.

    Its stdout is a pipe of our own, read by :class:`_Output` directly: through the subprocess
    transport, each chunk read would wait one more loop turn before reaching a protocol."""
    loop = asyncio.get_running_loop()

    def oversize(size: int) -> None:
        on_oversize(size)
        _kill(transport.get_pid())

    output = _Output(max_message_bytes, oversize)
    output_end, input_end = os.pipe()
    try:
        transport, process = await loop.subprocess_exec(
            lambda: _Process(output.inbox), parameters.command, *parameters.args,
            stdin=subprocess.PIPE, stdout=input_end, stderr=errlog, cwd=parameters.cwd,
            env=get_default_environment() | (parameters.env or {}), start_new_session=True)
    except BaseException:
        os.close(output_end)
        raise
    finally:
        os.close(input_end)
    try:
        await loop.connect_read_pipe(lambda: output, open(output_end, "rb", buffering=0))  # noqa: SIM115
        stdin = cast(asyncio.WriteTransport, transport.get_pipe_transport(STDIN))
        yield output.inbox, _Outbox(stdin, process)
    finally:
        with anyio.CancelScope(shield=True):
            output.stop_reading()
            await _stop(transport, process.exited)


async def _stop(transport: asyncio.SubprocessTransport, exited: asyncio.Future[None]) -> None:
    """Close the server's stdin, give it ``STOP_GRACE_SECONDS`` to exit, then kill its group."""
    stdin = transport.get_pipe_transport(STDIN)
    if stdin is not None:
        stdin.close()
    await asyncio.wait({exited}, timeout=STOP_GRACE_SECONDS)
    if not exited.done():
        _kill(transport.get_pid())
        await asyncio.wait({exited}, timeout=STOP_GRACE_SECONDS)
    transport.close()


def _kill(pid: int) -> None:
    """Kill the server's whole process group (it was started in a new session)."""
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
