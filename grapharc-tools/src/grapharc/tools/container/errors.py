"""What can go wrong around a container call, apart from the tool's own error and its timeout."""

from __future__ import annotations

from grapharc.errors import GraphARCError
from grapharc.harness.executors import ExecutorUnavailableError


class ContainerEngineError(GraphARCError):
    """The Docker engine refused or failed a request the executor made."""


class ContainerUnavailableError(ContainerEngineError, ExecutorUnavailableError):
    """The docker SDK is not installed, or no Docker engine answers where it was looked for."""


class ContainerImageMissingError(ExecutorUnavailableError, LookupError):
    """The image the executor was given is not on the engine; it is never pulled implicitly."""


class ToolNotPortableError(GraphARCError, TypeError):
    """A tool whose function cannot be imported by path inside the image (a lambda, a partial,
    a bound method, a closure, or a path the image does not resolve to that function)."""

    hint = "define the tool's function at module level in a package installed in the image"


class NotJSONError(GraphARCError, TypeError):
    """Arguments or a result that are not plain JSON data cannot cross the container boundary."""

    hint = "use only null, booleans, numbers, strings, lists and objects with string keys"


class ContainerNoResultError(GraphARCError):
    """The container exited without the runner's answer (it crashed, was OOM-killed, or the
    image has no GraphARC in it)."""

    def __init__(self, tool: str, exit_code: int, logs: str) -> None:
        super().__init__(f"tool {tool!r}: its container exited with code {exit_code} without a "
                         f"result; last output:\n{logs.strip() or '(none)'}",
                         hint="the image must have python and grapharc-tools installed, and the "
                              "tool must fit the memory and pid limits")
        self.tool = tool
        self.exit_code = exit_code
        self.logs = logs
