"""What the sandboxed executor raises beyond the executor contract's own errors."""

from __future__ import annotations

from grapharc.errors import GraphARCError
from grapharc.harness.executors import ExecutorUnavailableError


class SandboxViolation(GraphARCError):
    """A sandboxed tool tried something its grants do not cover; the call's result is discarded.

    Deliberately not an ``OSError``: library code that swallows ``OSError`` must not turn a
    refused operation into a silent fallback.
    """

    hint = ("keep the tool's files inside the workspace, declare needs_network=True for a tool "
            "that must use the network, or run it with the container executor")

    def __init__(self, tool: str, operation: str, target: str) -> None:
        super().__init__(f"sandboxed tool {tool!r} was refused {operation} on {target}")
        self.tool = tool
        self.operation = operation
        self.target = target

    def __reduce__(self) -> tuple[type[SandboxViolation], tuple[str, str, str]]:
        return (type(self), (self.tool, self.operation, self.target))


class SandboxUnavailableError(ExecutorUnavailableError):
    """This system lacks what the sandbox is built on (fork, /proc, pidfd_open: Linux)."""


class UnsandboxableToolError(GraphARCError, TypeError):
    """A tool the sandbox cannot run: its function has no import path, or its data is not JSON."""

    hint = ("define the tool's function at module level and give it arguments and a result "
            "made of JSON data (str, int, float, bool, None, lists and string-keyed dicts)")


class ToolProcessDiedError(GraphARCError):
    """The child running a tool ended without answering (os._exit, a signal, a crash)."""

    def __init__(self, tool: str, how: str) -> None:
        super().__init__(f"sandboxed tool {tool!r} died without answering: {how}",
                         hint="the tool ended its own process or crashed; run it locally to see why")
        self.tool = tool
        self.how = how

    def __reduce__(self) -> tuple[type[ToolProcessDiedError], tuple[str, str]]:
        return (type(self), (self.tool, self.how))
