"""Durable sessions: run a graph, let it pause for a person, let the process die, resume anywhere.

See ``grapharc.session.manager`` for the semantics and ``grapharc.session.approvals``
for the two ways to ask a human (and the interrupt trap). Names are exported lazily.
"""

from __future__ import annotations

from grapharc._lazy import lazy_exports

_LAZY_EXPORTS = {
    "SessionManager": "grapharc.session.manager",
    "Gate": "grapharc.session.approvals",
    "Approvers": "grapharc.session.approvals",
    "Shown": "grapharc.session.approvals",
    "Session": "grapharc.session.records",
    "Approval": "grapharc.session.records",
    "AuditEntry": "grapharc.session.records",
    "Event": "grapharc.session.records",
    "PruneReport": "grapharc.session.retention",
    "parse_duration": "grapharc.session.retention",
    "SqliteSessionStore": "grapharc.sqlite.sessions",
    "SessionStore": "grapharc.session.contracts",
    "CheckpointerProvider": "grapharc.session.contracts",
    **{name: "grapharc.session.errors" for name in (
        "SessionError", "SessionStoreError", "UnknownSessionError", "SessionExistsError",
        "UnknownGraphError", "SessionInputError", "ThreadNotPausedError", "ThreadPausedError",
        "ThreadEndedError", "SessionBusyError", "NothingToRecoverError", "LeaseLostError", "NoProgressError",
        "ApprovalError", "UnknownApprovalError", "ApprovalMismatchError", "AlreadyDecidedError",
        "StaleApprovalError", "ApprovalExpiredError", "DeciderNotAllowedError", "DurationError",
    )},
}

__all__ = sorted(_LAZY_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY_EXPORTS)
