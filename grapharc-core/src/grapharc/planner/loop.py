"""The governed loop: propose -> admit -> materialise -> run -> replan, until a stated stop.

A rejection is data: its feedback goes back to the planner, and nothing of a
rejected proposal runs. A proposal identical to one already seen is never
checked or run again. Every round and decision is traced as a ``phase="admission"``
event, and the loop ends with a machine-readable ``StopReason``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any
from uuid import uuid4

from pydantic import BaseModel

from grapharc.errors import GraphARCError
from grapharc.planner import events
from grapharc.planner.admission import (
    AdmissionChecker,
    AdmissionResult,
    AdmissionStatus,
    Rejection,
)
from grapharc.planner.materialize import Materializer
from grapharc.planner.planner_node import PlannerNode
from grapharc.planner.proposal import Subgraph
from grapharc.planner.registry import CostEstimate
from grapharc.runtime.budget import Budget, BudgetExceededError, BudgetMeter
from grapharc.runtime.trace import TraceWriter


class StopReason(StrEnum):
    """Why a governed loop stopped."""

    GOAL_MET = "goal_met"
    MAX_ROUNDS = "max_rounds"
    BUDGET_EXHAUSTED = "budget_exhausted"
    NO_NEW_PROPOSAL = "no_new_proposal"
    PLANNER_FAILED = "planner_failed"
    RUN_FAILED = "run_failed"

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
}


class LoopSetupError(GraphARCError):
    """A governed loop configured with limits it cannot keep."""


@dataclass(frozen=True)
class LoopLimits:
    """``max_rounds`` planning rounds at most; stop after ``max_repeats`` repeats in a row."""

    max_rounds: int = 8
    max_repeats: int = 2

    def __post_init__(self) -> None:
        for name in ("max_rounds", "max_repeats"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 10_000:
                raise LoopSetupError(f"LoopLimits.{name} must be an integer from 1 to 10000, "
                                     f"got {value!r}")


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


def _exhausted(meter: BudgetMeter) -> str | None:
    """Why the budget cannot pay for another round, or None when every dimension has some left."""
    spent = meter.exhausted()
    if not spent:
        return None
    if "cost_usd" in spent and meter.unpriced_calls:
        return (f"{StopReason.BUDGET_EXHAUSTED.description}: {meter.unpriced_calls} model call(s) "
                "reported no price, so the dollar ceiling cannot be kept")
    return StopReason.BUDGET_EXHAUSTED.description


def _refused(code: str, message: str, fingerprint: str = "") -> AdmissionResult:
    """A verdict for a round that never reached the checker (unreadable or repeated)."""
    return AdmissionResult(AdmissionStatus.REJECTED, fingerprint,
                           (Rejection("proposal", code, message, "proposal"),), CostEstimate(),
                           0, 0, checks_run=())


class GovernedLoop:
    """Drives planner, checker and materialiser against one budget, shared by every round."""

    def __init__(self, planner: PlannerNode, checker: AdmissionChecker,
                 materializer: Materializer, *, budget: Budget,
                 limits: LoopLimits | None = None,
                 goal_reached: Callable[[Any], bool] = lambda state: False,
                 trace: TraceWriter | None = None) -> None:
        self.planner = planner
        self.checker = checker
        self.materializer = materializer
        self.budget = budget
        self.limits = limits or LoopLimits()
        self.goal_reached = goal_reached
        self.trace = trace if trace is not None else materializer.trace

    def run(self, goal: str, state: BaseModel) -> LoopResult:
        """Plan and run rounds until the goal is met or a limit stops the loop."""
        loop_id = str(uuid4())
        spent = {"iterations": 0, "tokens": 0, "cost_usd": 0.0, "unpriced_calls": 0}
        started = time.monotonic()
        rounds: list[RoundRecord] = []
        seen: dict[str, int] = {}
        feedback, repeats = "", 0

        def meter() -> BudgetMeter:
            current = BudgetMeter(self.budget, iterations=spent["iterations"],
                                  tokens=spent["tokens"], cost_usd=spent["cost_usd"],
                                  unpriced_calls=spent["unpriced_calls"])
            current.started_at = started
            return current

        def stop(reason: StopReason, detail: str = "") -> LoopResult:
            events.emit(self.trace, "stop", loop_id, stop_reason=reason.value,
                        detail=detail or reason.description, rounds=len(rounds))
            return LoopResult(reason, rounds, state, detail or reason.description, dict(spent))

        for number in range(1, self.limits.max_rounds + 1):
            exhausted = _exhausted(meter())
            if exhausted is not None:
                return stop(StopReason.BUDGET_EXHAUSTED, exhausted)
            round_started = time.monotonic()
            try:
                plan = self.planner.propose(goal, state, feedback)
            except Exception as exc:
                return stop(StopReason.PLANNER_FAILED, f"{type(exc).__name__}: {exc}")
            spent["tokens"] += plan.tokens
            spent["cost_usd"] += plan.cost_usd or 0.0
            spent["unpriced_calls"] += int(plan.cost_usd is None)
            events.emit(self.trace, "plan", loop_id, round=number,
                        tokens=plan.tokens, readable=plan.proposal is not None)
            record, state, failure = self._round(number, plan, state, seen, meter, spent,
                                                 loop_id)
            record = RoundRecord(record.round, record.proposal, record.admission, record.executed,
                                 plan.tokens, record.iterations,
                                 (time.monotonic() - round_started) * 1000.0, record.error)
            rounds.append(record)
            events.emit(self.trace, "round", loop_id, round=number,
                        status=record.admission.status.value,
                        fingerprint=record.admission.fingerprint, executed=record.executed,
                        failed=record.admission.codes(),
                        state_delta={"round_tokens": record.tokens,
                               "round_iterations": record.iterations,
                               "round_duration_ms": record.duration_ms})
            if failure is not None:
                return stop(*failure)
            if record.executed and self.goal_reached(state):
                return stop(StopReason.GOAL_MET)
            repeated = record.admission.codes() == ["proposal_repeated"]
            repeats = repeats + 1 if repeated else 0
            if repeats >= self.limits.max_repeats:
                return stop(StopReason.NO_NEW_PROPOSAL)
            feedback = record.admission.feedback() if not record.executed else \
                "your last proposal was admitted and ran; the goal is not met yet"
        return stop(StopReason.MAX_ROUNDS)

    def _round(self, number: int, plan: Any, state: BaseModel, seen: dict[str, int],
               meter: Callable[[], BudgetMeter], spent: dict[str, Any],
               loop_id: str) -> tuple[RoundRecord, BaseModel, tuple[StopReason, str] | None]:
        """Check, and if admitted run, one round's proposal."""
        proposal: Subgraph | None = plan.proposal
        if proposal is None:
            verdict = _refused("proposal_invalid", plan.error)
            return RoundRecord(number, None, verdict, False, 0, 0, 0.0), state, None
        fingerprint = proposal.fingerprint()
        if fingerprint in seen:
            verdict = _refused("proposal_repeated",
                               f"identical to the proposal of round {seen[fingerprint]}; "
                               "propose something different", fingerprint)
            return RoundRecord(number, proposal, verdict, False, 0, 0, 0.0), state, None
        seen[fingerprint] = number
        current = meter()
        verdict = self.checker.check(proposal, meter=current)
        events.emit(self.trace, "decision", loop_id, round=number, **verdict.event())
        if not verdict.admitted:
            return RoundRecord(number, proposal, verdict, False, 0, 0, 0.0), state, None
        exhausted = _exhausted(current)
        if exhausted is not None:  # the planner's own call used up what an admitted round needs
            record = RoundRecord(number, proposal, verdict, False, 0, 0, 0.0, exhausted)
            return record, state, (StopReason.BUDGET_EXHAUSTED, exhausted)
        left = current.remaining()
        budget = Budget(max_iterations=left["iterations"], max_tokens=left["tokens"],
                        max_seconds=left["seconds"], max_cost_usd=left["cost_usd"],
                        max_concurrency=self.budget.max_concurrency)
        failure: tuple[StopReason, str] | None = None
        graph = None
        try:
            graph = self.materializer.materialize(verdict, proposal, budget=budget)
            out = graph.invoke(state)
            state = type(state).model_validate(out)
        except BudgetExceededError as exc:
            failure = (StopReason.BUDGET_EXHAUSTED, str(exc))
        except Exception as exc:
            failure = (StopReason.RUN_FAILED, f"{type(exc).__name__}: {exc}")
        ran = graph.last_run if graph is not None else None
        if ran is not None:
            spent["iterations"] += ran.iterations
            spent["tokens"] += ran.tokens
            spent["cost_usd"] += ran.cost_usd
            spent["unpriced_calls"] += ran.unpriced_calls
        record = RoundRecord(number, proposal, verdict, True, 0, ran.iterations if ran else 0, 0.0,
                             failure[1] if failure else "")
        return record, state, failure
