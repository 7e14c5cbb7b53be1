"""grapharc-tools: the seven core tools for the agent harness, each confining itself to a workspace,
and the sandboxed and container executors.

Names are exported lazily (PEP 562), so ``from grapharc.tools import WorkspaceEscape`` does not
import every tool.
"""

from __future__ import annotations

from grapharc._lazy import lazy_exports

_LAZY_EXPORTS = {
    **dict.fromkeys(("Workspace", "WorkspaceEscape", "WorkspaceNotADirectoryError"),
                    "grapharc.tools.workspace"),
    "ToolInputError": "grapharc.tools.errors",
    "ContainerExecutor": "grapharc.tools.container.executor",
    **dict.fromkeys(("SandboxViolation", "SandboxedExecutor"), "grapharc.tools.sandbox"),
}

__all__ = sorted(_LAZY_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _LAZY_EXPORTS)
