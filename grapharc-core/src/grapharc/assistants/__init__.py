"""Assistants created over the API: named, versioned configurations of registered graphs.

An assistant is a registered graph plus the config and context that graph declares, kept
durably with every version and a log of who changed it (``grapharc.assistants.contracts`` says
what a store keeps and promises). Names are exported lazily.
"""

from __future__ import annotations

from grapharc._lazy import lazy_exports

_LAZY_EXPORTS = {
    **{name: "grapharc.assistants.records" for name in ("Assistant", "AssistantVersion", "AssistantChange")},
    "AssistantStore": "grapharc.assistants.contracts",
    "SqliteAssistantStore": "grapharc.sqlite.assistants",
    **{name: "grapharc.assistants.errors" for name in (
        "AssistantError", "AssistantStoreError", "UnknownAssistantError", "AssistantExistsError",
        "UnknownVersionError")},
}

__all__ = sorted(_LAZY_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY_EXPORTS)
