"""The agent harness: tools, permissions, approvals and the governed tool loop (``AgentNode``).

Names are exported lazily (PEP 562), so importing the permission rules costs nothing more.
"""

from __future__ import annotations

from grapharc._lazy import lazy_exports

_LAZY_EXPORTS = {
    **dict.fromkeys(("Decision", "PermissionDecision", "PermissionPolicy", "PermissionRule"),
                    "grapharc.harness.permissions"),
    **dict.fromkeys(("Tool", "ToolRegistry", "SideEffect", "ToolArgumentError", "ToolDefinitionError",
                     "UnknownToolError"), "grapharc.harness.tools"),
    **dict.fromkeys(("AgentNode", "AgentState", "AgentSetupError", "DelegatedToolUseWarning"),
                    "grapharc.harness.agent"),
    **dict.fromkeys(("AgentSettings", "AgentSettingsError", "build_agent", "open_executor"),
                    "grapharc.harness.setup"),
    **dict.fromkeys(("LocalExecutor", "ToolTimeoutError", "ToolFailedError"), "grapharc.harness.executors"),
}

__all__ = sorted(_LAZY_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY_EXPORTS)
