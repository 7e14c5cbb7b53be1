"""What a governed loop reports: why it stopped (``StopReason``), each round's record
(``RoundRecord``: the proposal, its admission verdict, whether and how it ran) and the result.

``GovernedLoop`` (``grapharc.planner.loop``) keeps each round as ``RoundRecord.record()`` in
its state and reads it back with ``RoundRecord.from_record``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from pydantic import BaseModel

from grapharc.decisions.audit import AuditRecord
from grapharc.planner.proposal import Subgraph
from grapharc.planner.registry import CostEstimate
from grapharc.planner.verdict import AdmissionResult, AdmissionStatus, Rejection


class StopReason(StrEnum):
    """Why a governed loop stopped."""

    GOAL_MET = "goal_met"
    MAX_ROUNDS = "max_rounds"
    BUDGET_EXHAUSTED = "budget_exhausted"
    NO_NEW_PROPOSAL = "no_new_proposal"
    PLANNER_FAILED = "planner_failed"
    RUN_FAILED = "run_failed"
    APPROVAL_DECLINED = "approval_declined"

    @property
    def description(self) -> str:
        return _DESCRIPTIONS[self]


_DESCRIPTIONS = {
    StopReason.GOAL_MET: "the goal check was satisfied",
    StopReason.MAX_ROUNDS: "the round limit was reached before the goal",
    StopReason.BUDGET_EXHAUSTED: "the budget has nothing left for another round",
    StopReason.NO_NEW_PROPOSAL: "the planner kept repeating proposals it had already made",
    StopReason.PLANNER_FAILED: "the planner's model call failed",
    StopReason.RUN_FAILED: "an admitted subgraph failed while running",
    StopReason.APPROVAL_DECLINED: "a person declined an approval the proposal needed",
}


@dataclass(frozen=True)
class RoundRecord:
    """One round: what was proposed, the admission verdict, and whether it ran."""

    round: int
    proposal: Subgraph | None
    admission: AdmissionResult
    executed: bool
    tokens: int
    iterations: int
    duration_ms: float
    error: str = ""

    @property
    def nodes(self) -> int:
        return len(self.proposal.nodes) if self.proposal is not None else 0

    def as_dict(self) -> dict[str, Any]:
        return {"round": self.round, "status": self.admission.status.value,
                "fingerprint": self.admission.fingerprint, "nodes": self.nodes,
                "executed": self.executed, "rejected": self.admission.codes(),
                "rejections": [r.as_dict() for r in self.admission.rejections],
                "tokens": self.tokens, "iterations": self.iterations,
                "duration_ms": round(self.duration_ms, 3), "error": self.error}

    def record(self) -> dict[str, Any]:
        """The round as loop state keeps it: plain data a checkpoint holds (args left out)."""
        verdict = self.admission
        return {"round": self.round, "executed": self.executed, "tokens": self.tokens,
                "iterations": self.iterations, "duration_ms": self.duration_ms, "error": self.error,
                "proposal": None if self.proposal is None else self.proposal.model_dump(mode="json"),
                "admission": {"status": verdict.status.value, "fingerprint": verdict.fingerprint,
                              "rejections": [asdict(r) for r in verdict.rejections],
                              "worst_case": asdict(verdict.worst_case), "depth": verdict.depth,
                              "nodes": verdict.node_count, "audit": [asdict(a) for a in verdict.audit],
                              "checks_run": list(verdict.checks_run)}}

    @classmethod
    def from_record(cls, data: dict[str, Any]) -> RoundRecord:
        """A round as ``record()`` kept it."""
        verdict = data["admission"]
        admission = AdmissionResult(
            AdmissionStatus(verdict["status"]), verdict["fingerprint"],
            tuple(Rejection(**r) for r in verdict["rejections"]), CostEstimate(**verdict["worst_case"]),
            verdict["depth"], verdict["nodes"], audit=tuple(AuditRecord(**a) for a in verdict["audit"]),
            checks_run=tuple(verdict["checks_run"]))
        proposal = None if data["proposal"] is None else Subgraph.model_validate(data["proposal"])
        return cls(data["round"], proposal, admission, data["executed"], data["tokens"],
                   data["iterations"], data["duration_ms"], data["error"])


@dataclass
class LoopResult:
    """How the loop ended, every round, and the final state."""

    stop: StopReason
    rounds: list[RoundRecord]
    state: BaseModel
    detail: str = ""
    spent: dict[str, float] = field(default_factory=dict)

    def rejections(self) -> list[Rejection]:
        """Every rejection of every round, in order."""
        return [r for record in self.rounds for r in record.admission.rejections]
