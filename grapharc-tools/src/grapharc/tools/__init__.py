"""grapharc-tools: tools for the agent harness, each confining itself to a workspace."""

from __future__ import annotations

from grapharc._lazy import lazy_exports

_LAZY_EXPORTS = {
    **dict.fromkeys(("SandboxViolation", "SandboxedExecutor"), "grapharc.tools.sandbox"),
}

__all__ = sorted(_LAZY_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _LAZY_EXPORTS)
