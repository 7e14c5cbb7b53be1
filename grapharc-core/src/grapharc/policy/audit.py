"""Audit records: every policy decision tied to the exact document text that made it."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


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
