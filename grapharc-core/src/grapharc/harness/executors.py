"""Executors run one tool call; the ``local`` one runs it in this process and confines nothing.

Every executor has the same interface, ``run(tool, args, *, workspace, timeout)``, so a
caller never branches on which one it holds: it validates ``args`` against the tool's
args model, calls ``tool.function(workspace, **args)`` (in this process, a sandboxed child,
a container...) and returns the result, raising ``ToolTimeoutError`` past ``timeout``
seconds and ``ToolFailedError`` when the tool raised where its exception cannot travel
back. Other executors come from plugins (grapharc-tools registers ``sandboxed`` and
``container``). With this one, confinement is only what the tool does itself.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from grapharc.errors import GraphARCError
from grapharc.harness.tools import Tool, ToolArgumentError
from grapharc.runtime.deadline import InvalidDeadlineError, NodeTimeoutError, deadline

__all__ = ["Executor", "ExecutorOptionError", "ExecutorUnavailableError", "LocalExecutor",
           "ToolArgumentError", "ToolFailedError", "ToolTimeoutError", "call_timeout",
           "create_local_executor"]


class ExecutorOptionError(GraphARCError):
    """An executor was built with options it does not take."""


class ExecutorUnavailableError(GraphARCError):
    """The executor cannot run any call here (no engine, a missing image, no sandbox on this
    system): the run stops with it rather than showing it to the model as a tool's failure."""


class ToolTimeoutError(GraphARCError, TimeoutError):
    """A tool call ran past its timeout and was stopped; nothing it returned is used."""

    def __init__(self, tool: str, seconds: float) -> None:
        super().__init__(f"tool {tool!r} ran past its timeout of {seconds:g} s and was stopped",
                         hint="give the tool a larger timeout, or make the call cheaper")
        self.tool = tool
        self.seconds = seconds

    def __reduce__(self) -> tuple[type[ToolTimeoutError], tuple[str, float]]:
        return (type(self), (self.tool, self.seconds))


class ToolFailedError(GraphARCError):
    """A tool raised where its exception could not travel back (another process, a container)."""

    def __init__(self, tool: str, exception_type: str, message: str) -> None:
        super().__init__(f"tool {tool!r} raised {exception_type}: {message}")
        self.tool = tool
        self.exception_type = exception_type
        self.message = message

    def __reduce__(self) -> tuple[type[ToolFailedError], tuple[str, str, str]]:
        return (type(self), (self.tool, self.exception_type, self.message))


class Executor(Protocol):
    """Runs one tool call and returns its result."""

    name: str

    def run(self, tool: Tool, args: Mapping[str, Any], *, workspace: str | Path,
            timeout: float | None = None) -> Any: ...


def call_timeout(tool: Tool, timeout: float | None) -> float | None:
    """``timeout`` as the seconds an out-of-process executor waits (None: no limit), checked before
    anything starts: not a number -> InvalidDeadlineError, none left -> ToolTimeoutError."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or math.isnan(timeout):
        raise InvalidDeadlineError(f"timeout for tool {tool.name!r} must be a number of seconds or None, "
                                   f"got {timeout!r}")
    if timeout <= 0:
        raise ToolTimeoutError(tool.name, float(timeout))
    return None if math.isinf(timeout) else float(timeout)


class LocalExecutor:
    """Calls the tool directly, in this process; the timeout interrupts it like a node deadline."""

    name = "local"

    def run(self, tool: Tool, args: Mapping[str, Any], *, workspace: str | Path,
            timeout: float | None = None) -> Any:
        kwargs = tool.arguments(args)
        try:
            with deadline(timeout, node=f"tool {tool.name}"):
                return tool.function(str(workspace), **kwargs)
        except NodeTimeoutError as exc:
            if exc.node != f"tool {tool.name}":  # the enclosing node's own deadline: not ours
                raise
            raise ToolTimeoutError(tool.name, float(timeout or 0.0)) from None


def create_local_executor(**options: Any) -> LocalExecutor:
    """Factory registered under the name ``local``; it takes no options."""
    if options:
        raise ExecutorOptionError(f"the local executor takes no options, got {sorted(options)}")
    return LocalExecutor()
