"""Durable runs: the record of each run a server was asked for, and the queue workers claim from.

See ``grapharc.runs.contracts`` for what a run store keeps and promises. Names are exported lazily.
"""

from __future__ import annotations

from grapharc._lazy import lazy_exports

_LAZY_EXPORTS = {
    "RunRecord": "grapharc.runs.records",
    "RunStore": "grapharc.runs.contracts",
    "SqliteRunStore": "grapharc.sqlite.runs",
    **{name: "grapharc.runs.errors" for name in (
        "RunError", "RunStoreError", "UnknownRunError", "ThreadBusyError")},
}

__all__ = sorted(_LAZY_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY_EXPORTS)
