"""An executor wrapper that redacts secrets from a tool's result before anything keeps it.

Every agent runs its executor through one (``AgentNode`` wraps whatever it is given), so a
result reaches the thread's state, its idempotency ledger (checkpointed), the stored whole of
a long output and the model only after :mod:`grapharc.redaction` has replaced every configured
secret in it. A tool error whose message holds a secret becomes a ``ToolFailedError`` with the
message redacted; timeouts and an unavailable executor pass as they are (the caller decides on
their type, and their messages name no tool output).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from grapharc.harness.executors import Executor, ExecutorUnavailableError, ToolFailedError, ToolTimeoutError
from grapharc.harness.tools import Tool
from grapharc.redaction import Redactor, current_redactor


class RedactingExecutor:
    """Runs calls on ``inner`` (or on the tool's own executor, an MCP server's tool's) and hands
    back results with every secret redacted."""

    def __init__(self, inner: Executor, redactor: Redactor | None = None) -> None:
        self.inner = inner
        self.name = inner.name
        self.redactor = redactor if redactor is not None else current_redactor()

    def run(self, tool: Tool, args: Mapping[str, Any], *, workspace: str | Path,
            timeout: float | None = None) -> Any:
        self.redactor = self.redactor.refreshed()
        try:
            runner = tool.executor if tool.executor is not None else self.inner
            result = runner.run(tool, args, workspace=workspace, timeout=timeout)
        except (ToolTimeoutError, ExecutorUnavailableError):
            raise
        except Exception as exc:
            redacted = self.redactor.scrub_exception(exc)
            if redacted is None:
                raise
            raise ToolFailedError(tool.name, type(exc).__qualname__, redacted) from None
        return self.redactor.scrub(result)
