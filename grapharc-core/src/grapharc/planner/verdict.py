"""The admission gate's verdict on one proposal: admitted or rejected, every failed check as a
``Rejection`` (code, message, where), the worst case it was judged on, and its audit records.

``AdmissionChecker`` (``grapharc.planner.admission``) makes it; the loop records each round's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from pydantic import BaseModel

from grapharc.decisions.audit import AuditRecord
from grapharc.planner.registry import CostEstimate

CHECKS: tuple[str, ...] = ("kinds", "edges", "budget", "depth", "acyclic")


class AdmissionStatus(StrEnum):
    """Whether a proposal may be materialised."""

    ADMITTED = "admitted"
    REJECTED = "rejected"


@dataclass(frozen=True)
class Rejection:
    """One failed check: a stable code, what is wrong, and where in the proposal."""

    check: str
    code: str
    message: str
    location: str = ""
    rule_id: str = ""

    def as_dict(self) -> dict[str, str]:
        return {"check": self.check, "code": self.code, "message": self.message,
                "location": self.location, "rule_id": self.rule_id}


@dataclass(frozen=True)
class AdmissionResult:
    """The verdict on one proposal, bound to it by fingerprint."""

    status: AdmissionStatus
    fingerprint: str
    rejections: tuple[Rejection, ...]
    worst_case: CostEstimate
    depth: int
    node_count: int
    args: Mapping[str, BaseModel] = field(default_factory=dict)  # by node path, "scope.node"
    audit: tuple[AuditRecord, ...] = ()
    checks_run: tuple[str, ...] = CHECKS

    @property
    def admitted(self) -> bool:
        return self.status is AdmissionStatus.ADMITTED

    def codes(self) -> list[str]:
        """The distinct failure codes, in the order first seen."""
        return list(dict.fromkeys(r.code for r in self.rejections))

    def feedback(self) -> str:
        """What a planner is told: every objection, with where and why."""
        if self.admitted:
            return "admitted"
        lines = [f"proposal {self.fingerprint[:12]} was rejected; fix every item:"]
        lines += [f"- {r.code} at {r.location or 'proposal'}: {r.message}" for r in self.rejections]
        return "\n".join(lines)

    def event(self) -> dict[str, Any]:
        """The trace payload: status, fingerprint, checks run and failed codes."""
        return {"status": self.status.value, "fingerprint": self.fingerprint,
                "checks_run": list(self.checks_run), "failed": self.codes(),
                "nodes": self.node_count, "depth": self.depth,
                "worst_case": {"tokens": self.worst_case.tokens,
                               "iterations": self.worst_case.iterations,
                               "seconds": self.worst_case.seconds,
                               "cost_usd": self.worst_case.cost_usd},
                "rejections": [r.as_dict() for r in self.rejections]}
