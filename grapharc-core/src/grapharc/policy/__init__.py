"""Policy: where a document comes from, its schema, and the engine that evaluates it.

The engine is exported lazily: it imports the planner's rules, which importing this
package should not pay for.
"""

from __future__ import annotations

from grapharc._lazy import lazy_exports
from grapharc.decisions.audit import AuditRecord
from grapharc.policy.files import LoadedPolicy, PolicyLoadError, document_digest
from grapharc.policy.sources import PolicyContext, resolve_policy

_LAZY = {
    "ApprovalRequest": "grapharc.decisions.approval",
    "ApprovalRouter": "grapharc.policy.engine",
    "PolicyDecision": "grapharc.decisions.audit",
    "PolicyDocumentError": "grapharc.policy.engine",
    "PolicyEngine": "grapharc.policy.engine",
    "GENERATED_PATH": "grapharc.policy.generate",
    "PolicyGenerationError": "grapharc.policy.generate",
}

__all__ = [
    "AuditRecord",
    "LoadedPolicy",
    "PolicyContext",
    "PolicyLoadError",
    "document_digest",
    "resolve_policy",
    *_LAZY,
]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
