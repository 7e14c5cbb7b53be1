"""The ``container`` executor: each tool call in a throwaway, locked-down Docker container.

Names load lazily so that the runner, started inside the image, imports only what it uses.
"""

from __future__ import annotations

from grapharc._lazy import lazy_exports

_LAZY_EXPORTS = {
    "ContainerExecutor": "grapharc.tools.container.executor",
    "create_container_executor": "grapharc.tools.container.executor",
    "ContainerOptions": "grapharc.tools.container.spec",
    "ContainerEngineError": "grapharc.tools.container.errors",
    "ContainerImageMissingError": "grapharc.tools.container.errors",
    "ContainerNoResultError": "grapharc.tools.container.errors",
    "ContainerUnavailableError": "grapharc.tools.container.errors",
    "NotJSONError": "grapharc.tools.container.errors",
    "ToolNotPortableError": "grapharc.tools.container.errors",
}

__all__ = sorted(_LAZY_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _LAZY_EXPORTS)
