"""grapharc-tools: tools for the agent harness, each confining itself to a workspace."""

from __future__ import annotations

from importlib import import_module
from typing import Any

_LAZY = {
    "ContainerExecutor": "grapharc.tools.container",
}


def __getattr__(name: str) -> Any:
    """Public names load on first use, so ``import grapharc.tools`` stays cheap."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_LAZY[name]), name)
