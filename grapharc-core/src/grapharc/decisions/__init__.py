"""The vocabulary every governed decision is made in: deny / ask / allow, audit records, approvals.

:mod:`grapharc.decisions.decision` is what a rule says, :mod:`grapharc.decisions.audit` the record
tying a decision to the document text that made it, and :mod:`grapharc.decisions.approval` the one
way an ``ask`` is answered. Policy, the planner, the agent and sessions all decide with these, so
they sit below all four. Names are exported lazily.
"""

from __future__ import annotations

from grapharc._lazy import lazy_exports

_LAZY_EXPORTS = {
    "Decision": "grapharc.decisions.decision",
    "TIERS": "grapharc.decisions.decision",
    "AuditRecord": "grapharc.decisions.audit",
    **{name: "grapharc.decisions.approval" for name in (
        "Answer", "ApprovalRequest", "Approver", "request_approval", "unanswered_reason")},
}

__all__ = sorted(_LAZY_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY_EXPORTS)
