"""A stdio transport for the SDK's ``ClientSession`` that reads the server's output in linear time
and stops at a size cap.

The SDK's own ``stdio_client`` joins a line's chunks by repeated concatenation, so a 100 MB line
costs minutes of copying before any size check could see it. This transport starts the server as
the SDK does (its safe default environment, a new process group), frames newline-delimited
JSON-RPC messages itself, parses each with the SDK's own ``jsonrpc_message_adapter``, and stops
the server when one message grows past ``max_message_bytes``: a message cannot be skipped without
reading it whole, and a server that sends one is not trusted to go on. ``on_oversize`` is told
first, so the call that was waiting can be failed as too large rather than as a crash.
"""

from __future__ import annotations

import os
import signal
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from typing import IO, Any

import anyio
import anyio.abc
import mcp_types as types
from mcp.client.stdio import StdioServerParameters, get_default_environment
from mcp.shared.message import SessionMessage

STOP_GRACE_SECONDS = 2.0
"""How long a server has to exit after its stdin closes, before its process group is killed."""


def _parsed(line: bytes) -> SessionMessage | Exception:
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:  # the session surfaces a parse error as it would from the SDK's transport
        return exc


@asynccontextmanager
async def capped_stdio_client(parameters: StdioServerParameters, *, errlog: IO[str], max_message_bytes: int,
                              on_oversize: Callable[[int], None]) -> AsyncIterator[Any]:
    """Start the server and yield ``(read_stream, write_stream)`` as ``stdio_client`` does."""
    process = await anyio.open_process([parameters.command, *parameters.args],
                                       env=get_default_environment() | (parameters.env or {}),
                                       stderr=errlog, cwd=parameters.cwd, start_new_session=True)
    stdout, stdin = process.stdout, process.stdin
    if stdout is None or stdin is None:  # open_process pipes both unless told otherwise
        raise OSError(f"the MCP server {parameters.command!r} was started without pipes")
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)

    async def read_messages() -> None:
        pieces: list[bytes] = []
        size = 0
        async with read_writer:
            with suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                async for chunk in stdout:
                    *complete, rest = chunk.split(b"\n")
                    for part in complete:
                        line = b"".join([*pieces, part])
                        pieces, size = [], 0
                        if line.strip():
                            await read_writer.send(_parsed(line))
                    pieces.append(rest)
                    size += len(rest)
                    if size > max_message_bytes:
                        on_oversize(size)
                        _kill(process)
                        return

    async def write_messages() -> None:
        with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            async with write_reader:
                async for message in write_reader:
                    text = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await stdin.send((text + "\n").encode("utf-8"))
        await read_writer.aclose()  # a server that cannot be written to is gone: end the reading too

    async with anyio.create_task_group() as group:
        group.start_soon(read_messages)
        group.start_soon(write_messages)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                await _stop(process)
            group.cancel_scope.cancel()


async def _stop(process: anyio.abc.Process) -> None:
    """Close the server's stdin, give it ``STOP_GRACE_SECONDS`` to exit, then kill its group."""
    if process.stdin is not None:
        with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdin.aclose()
    with anyio.move_on_after(STOP_GRACE_SECONDS):
        while process.returncode is None:
            await anyio.sleep(0.01)
    if process.returncode is None:
        _kill(process)
        with anyio.move_on_after(STOP_GRACE_SECONDS):
            await process.wait()


def _kill(process: anyio.abc.Process) -> None:
    """Kill the server's whole process group (it was started in a new session)."""
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
