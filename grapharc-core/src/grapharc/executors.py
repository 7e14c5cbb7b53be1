"""The ``local`` executor: runs a tool in this process and confines nothing.

Every executor has the same ``run(tool, args)`` interface so a caller never
branches on which one it holds; any other executor is registered by a plugin
through the executors hook. Confinement must live in the tool itself when this
one is used.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from grapharc.errors import GraphARCError


class ToolArgumentError(GraphARCError, TypeError):
    """Tool arguments that are not a mapping of names to values, or do not fit the tool."""


class Executor(Protocol):
    """Runs one tool call and returns its result."""

    name: str

    def run(self, tool: Callable[..., Any], args: Mapping[str, Any]) -> Any: ...


class LocalExecutor:
    """Calls the tool directly, in this process, with keyword arguments."""

    name = "local"

    def run(self, tool: Callable[..., Any], args: Mapping[str, Any]) -> Any:
        if not isinstance(args, Mapping) or not all(isinstance(key, str) for key in args):
            raise ToolArgumentError(
                f"tool {getattr(tool, '__name__', tool)!r} takes a mapping of argument names "
                f"to values, got {type(args).__name__}")
        return tool(**args)


def create_local_executor(**options: Any) -> LocalExecutor:
    """Factory registered under the name ``local``; it takes no options."""
    if options:
        raise ToolArgumentError(f"the local executor takes no options, got {sorted(options)}")
    return LocalExecutor()
