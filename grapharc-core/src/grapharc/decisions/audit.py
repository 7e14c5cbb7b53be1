"""Audit records: every policy decision tied to the exact document text that made it.

The policy engine makes them, and the planner's rules, its admission gate and the agent carry
them, so they live below all of these: the planner never imports the policy package (the policy
engine compiles into the planner's rules, and the two must not import each other).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from grapharc.decisions.decision import Decision


@dataclass(frozen=True)
class AuditRecord:
    """One decision: what was decided about which subject, by which rule of which document.

    ``rule_id`` is empty when no rule matched (and the decision is the unmatched deny).
    """

    resource: str
    subject: str
    decision: str
    rule_id: str
    reason: str
    policy_version: str
    document_digest: str
    tenant: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class PolicyDecision:
    """An engine decision on a tool or a spend, with its audit record and approval route."""

    decision: Decision
    record: AuditRecord
    route: str = ""
