"""The ``sandboxed`` executor: each call runs in a fresh forked child under an audit hook.

The parent validates the arguments, checks that the tool can cross a process boundary (an
import path, JSON arguments), forks a keeper that forks the child (``grapharc.tools.reaper``: a
subreaper, so nothing the child leaves outlives the call; the call's ``CallLimits`` set on the
child, its address space on top of what the fork already maps),
and waits on a pipe for the child's one JSON reply. Past the timeout the keeper SIGKILLs the
child and all it left, so a hung tool and one that ignores SIGTERM both stop for real. A child
is never reused: whatever one tool did to its interpreter dies with it. See ``guard`` for what
the hook refuses and ``grants`` for what it allows.
"""

from __future__ import annotations

import json
import math
import os
import select
import signal
from collections.abc import Callable, Mapping
from pathlib import Path
from time import monotonic
from typing import Any, NoReturn

from grapharc.harness.executors import ExecutorOptionError, ToolFailedError, ToolTimeoutError, call_timeout
from grapharc.harness.limits import call_limits
from grapharc.harness.process_controls import protect_agent_process
from grapharc.harness.tools import Tool
from grapharc.tools.jsondata import json_problem
from grapharc.tools.reaper.keeper import fork_keeper, reap_finished
from grapharc.tools.sandbox import child
from grapharc.tools.sandbox.child import flush_output
from grapharc.tools.sandbox.errors import (
    SandboxUnavailableError,
    SandboxViolation,
    ToolProcessDiedError,
    UnsandboxableToolError,
)
from grapharc.tools.sandbox.grants import Grants
from grapharc.tools.workspace import Workspace

READ_CHUNK = 1 << 16


class SandboxedExecutor:
    """Runs every tool call in its own forked child, confined by a CPython audit hook."""

    name = "sandboxed"

    def __init__(self) -> None:
        if not (hasattr(os, "fork") and hasattr(os, "pidfd_open") and os.path.isdir("/proc/self/fd")):
            raise SandboxUnavailableError("the sandboxed executor needs Linux (fork, /proc and pidfd_open)",
                                          hint="use the container executor on this system")

    def run(self, tool: Tool, args: Mapping[str, Any], *, workspace: str | Path,
            timeout: float | None = None) -> Any:
        kwargs = tool.arguments(args)
        import_path = _import_path(tool)
        arguments = _encode_arguments(tool, kwargs)
        seconds = call_timeout(tool, timeout)
        root = str(Workspace(workspace).root)
        grants = Grants.for_workspace(root, network=tool.needs_network)
        protect_agent_process()  # before the fork: the child inherits a protected process
        reply = _fork_and_wait(tool, seconds, lambda fd: child.serve(
            fd, tool=tool.name, import_path=import_path, workspace=str(workspace), arguments=arguments,
            grants=grants, network=tool.needs_network))
        return _decode(tool, reply)


def create_sandboxed_executor(**options: Any) -> SandboxedExecutor:
    """Factory registered under the name ``sandboxed``; it takes no options."""
    if options:
        raise ExecutorOptionError(f"the sandboxed executor takes no options, got {sorted(options)}")
    return SandboxedExecutor()


def _import_path(tool: Tool) -> str:
    path = tool.import_path
    if path is None:
        raise UnsandboxableToolError(
            f"tool {tool.name!r} cannot run sandboxed: its function {tool.function!r} has no import "
            "path (a lambda, closure, functools.partial or bound method)")
    return path


def _encode_arguments(tool: Tool, kwargs: dict[str, Any]) -> str:
    problem = json_problem(kwargs, "args")
    if problem is not None:
        raise UnsandboxableToolError(f"tool {tool.name!r} cannot run sandboxed: its arguments are "
                                     f"not plain JSON data ({problem})")
    return json.dumps(kwargs, allow_nan=False)


def _fork_and_wait(tool: Tool, seconds: float | None, serve: Callable[[int], NoReturn]) -> bytes:
    """Fork a keeper (``grapharc.tools.reaper.keeper``) whose child runs ``serve(write_fd)`` under
    the call's limits, and return the child's reply.

    The call ends only once the keeper reports that the child has ended and everything it left
    is gone; past the timeout the keeper is told to kill them all. The keeper itself is reaped
    by a later call.
    """
    reap_finished()
    read_fd, write_fd = os.pipe()
    flush_output()  # or the child would write the parent's pending output a second time
    limits = call_limits()

    def start() -> int:  # in the keeper
        pid = os.fork()
        if pid == 0:
            try:
                limits.apply(forked=True)
                serve(write_fd)
            finally:
                os._exit(70)  # never return into the caller's code from the child
        os.close(write_fd)  # the child's copy is the only one: its end closes the executor's pipe
        return pid

    try:
        keeper = fork_keeper(start, keep=(write_fd,))
    except BaseException:
        os.close(read_fd)
        raise
    finally:
        os.close(write_fd)
    expires = None if seconds is None else monotonic() + seconds
    reply: bytes | None = None
    try:
        reply = _read_until_closed(read_fd, expires)
        if reply is not None and not _readable(keeper.channel, expires):  # it answered, then hung
            reply = None
    finally:
        os.close(read_fd)
        if reply is None:
            keeper.stop()
        how = None if reply is None else keeper.report()
        keeper.close()
    if reply is None:
        raise ToolTimeoutError(tool.name, seconds or 0.0)
    if not reply:
        raise ToolProcessDiedError(tool.name, _death(how))
    return reply


def _read_until_closed(fd: int, expires: float | None) -> bytes | None:
    """Everything written to ``fd`` until it closes, or None if ``expires`` comes first."""
    chunks: list[bytes] = []
    while _readable(fd, expires):
        chunk = os.read(fd, READ_CHUNK)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
    return None


def _readable(fd: int, expires: float | None) -> bool:
    """Whether ``fd`` becomes readable before ``expires`` (None: wait as long as it takes)."""
    poller = select.poll()  # not select(): descriptors past 1023 are common in a busy server
    poller.register(fd, select.POLLIN)
    left = None if expires is None else max(math.ceil((expires - monotonic()) * 1000), 0)
    return bool(poller.poll(left))


def _death(how: tuple[str, int] | None) -> str:
    """How the child ended, from its keeper's report."""
    word, number = how or ("lost", 0)
    if word == "signaled":
        try:
            return f"killed by signal {signal.Signals(number).name}"
        except ValueError:
            return f"killed by signal {number}"
    if word == "exited":
        return f"exited with status {number}"
    return "its keeper ended without saying how"


def _decode(tool: Tool, reply: bytes) -> Any:
    try:
        message = json.loads(reply)
    except ValueError:
        raise ToolProcessDiedError(tool.name, "its answer was cut off or garbled") from None
    if "result" in message:
        return message["result"]
    if "violation" in message:
        raise SandboxViolation(tool.name, message["violation"]["operation"], message["violation"]["target"])
    error = message["error"]
    if error["type"] == UnsandboxableToolError.__name__:
        raise UnsandboxableToolError(f"tool {tool.name!r} cannot run sandboxed: {error['message']}")
    raise ToolFailedError(tool.name, error["type"], error["message"])
