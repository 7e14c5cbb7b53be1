"""The ``sandboxed`` executor: one forked child per call, confined by a CPython audit hook."""

from grapharc.tools.sandbox.errors import (
    SandboxUnavailableError,
    SandboxViolation,
    ToolProcessDiedError,
    UnsandboxableToolError,
)
from grapharc.tools.sandbox.executor import SandboxedExecutor, create_sandboxed_executor

__all__ = ["SandboxUnavailableError", "SandboxViolation", "SandboxedExecutor", "ToolProcessDiedError",
           "UnsandboxableToolError", "create_sandboxed_executor"]
