"""The ``container`` executor: each tool call in a throwaway, locked-down Docker container.

Names load lazily so that the runner, started inside the image, imports only what it uses.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "ContainerExecutor": "grapharc.tools.container.executor",
    "ContainerOptions": "grapharc.tools.container.spec",
    "create_container_executor": "grapharc.tools.container.executor",
    "ContainerEngineError": "grapharc.tools.container.errors",
    "ContainerImageMissingError": "grapharc.tools.container.errors",
    "ContainerNoResultError": "grapharc.tools.container.errors",
    "ContainerUnavailableError": "grapharc.tools.container.errors",
    "NotJSONError": "grapharc.tools.container.errors",
    "ToolNotPortableError": "grapharc.tools.container.errors",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_EXPORTS[name]), name)
