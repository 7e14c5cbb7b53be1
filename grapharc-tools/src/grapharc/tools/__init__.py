"""grapharc-tools: tools for the agent harness, each confining itself to a workspace."""

from grapharc._lazy import lazy_exports

__all__ = ["SandboxViolation", "SandboxedExecutor"]

__getattr__, __dir__ = lazy_exports(__name__, {"SandboxViolation": "grapharc.tools.sandbox",
                                               "SandboxedExecutor": "grapharc.tools.sandbox"})
