"""The governed loop: propose -> admit -> materialise -> run -> replan, until a stated stop.

A rejection is data: its feedback goes back to the planner, and nothing of a
rejected proposal runs. A proposal identical to one already seen is never
checked or run again. Every round and decision is traced as a ``phase="admission"``
event, and the loop ends with a machine-readable ``StopReason`` (``grapharc.planner.rounds``
holds it, each round's record and the result).

The loop is itself a graph (``GovernedLoop.graph()``): a ``begin`` node starts a fresh loop
from the goal and the domain (whatever else the input says), a ``plan`` node asks the planner, a
``round`` node admits the proposal and, if admitted, materialises and runs it; everything the
loop knows lives in its state (``LoopState``). ``run()`` compiles and invokes it in-process. A
session can drive the same graph, which is what makes an ``ask`` durable: when admission
needs a person, the ``round`` node pauses on the session's approval record
(``grapharc.decisions.approval``) before anything of the proposal runs, and a decision made later, in
any process, resumes it. A declined approval stops the loop (``approval_declined``). The
loop graph's own run carries the stop reason on its ``run_end``; each admitted subgraph runs
as a run of its own.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Literal

from pydantic import BaseModel, Field

from grapharc.errors import GraphARCError
from grapharc.planner import events
from grapharc.planner.admission import AdmissionChecker
from grapharc.planner.goal import require_goal
from grapharc.planner.materialize import Materializer
from grapharc.planner.planner_node import PlannerNode
from grapharc.planner.proposal import Subgraph
from grapharc.planner.registry import CostEstimate
from grapharc.planner.rounds import LoopResult, RoundRecord, StopReason
from grapharc.planner.verdict import AdmissionResult, AdmissionStatus, Rejection
from grapharc.runtime.budget import Budget, BudgetExceededError, BudgetMeter
from grapharc.runtime.context import CURRENT_RUN, record_stop_reason
from grapharc.runtime.graph import END, START, GraphARC
from grapharc.runtime.state import GraphARCState, StateContract
from grapharc.trace.writer import TraceWriter


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


def _nothing_spent() -> dict[str, float]:
    return {"iterations": 0, "tokens": 0, "cost_usd": 0.0, "unpriced_calls": 0}


class LoopState(GraphARCState):
    """Everything the governed loop knows between its steps (so a checkpoint holds all of it).

    ``domain`` is the state the admitted subgraphs work on, as JSON; ``plan`` the current
    round's proposal (as JSON) or why there is none; ``rounds`` every round's record.
    """

    goal: str
    domain: dict[str, Any] = Field(default_factory=dict)
    round: int = 0
    started_at: float = 0.0
    plan: dict[str, Any] | None = None
    feedback: str = ""
    seen: dict[str, int] = Field(default_factory=dict)
    repeats: int = 0
    rounds: list[dict[str, Any]] = Field(default_factory=list)
    spent: dict[str, float] = Field(default_factory=_nothing_spent)
    stop: str | None = None
    detail: str = ""


_BOOKKEEPING = frozenset(LoopState.model_fields) - {"goal", "domain"}
"""The loop state only the loop writes: reset when a loop begins, whatever the input said."""


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


def _loop_ids() -> tuple[str, str]:
    """The loop's id (the run id of the loop graph's run, which its events carry) and its thread."""
    run = CURRENT_RUN.get()
    return (run.run_id, run.thread_id) if run is not None else ("", "")


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
        self.schema = materializer.state_schema

    # -- in-process and session use ------------------------------------------------------

    def run(self, goal: str, state: BaseModel) -> LoopResult:
        """Plan and run rounds until the goal is met or a limit stops the loop."""
        compiled = self.graph().compile()
        try:
            return self.result(compiled.invoke(self.start(goal, state)))
        finally:
            compiled.close()

    def start(self, goal: str, state: BaseModel) -> dict[str, Any]:
        """The loop graph's input for ``goal`` starting from the domain ``state``."""
        return {"goal": goal, "domain": state.model_dump(mode="json")}

    def result(self, values: dict[str, Any]) -> LoopResult:
        """The ``LoopResult`` of a finished loop graph's state."""
        loop = LoopState.model_validate(values)
        stop = StopReason(loop.stop) if loop.stop is not None else StopReason.MAX_ROUNDS
        return LoopResult(stop, [RoundRecord.from_record(r) for r in loop.rounds],
                          self.schema.model_validate(loop.domain), loop.detail, dict(loop.spent))

    def graph(self, name: str = "governed_loop") -> GraphARC:
        """The loop as a graph: begin -> plan -> round -> plan ... until a stop; a session can drive it."""
        limit = 2 * self.limits.max_rounds + 2  # the loop's own steps; spend is metered in its state
        graph = GraphARC(LoopState, name=name, budget=Budget(max_iterations=limit), trace=self.trace)
        graph.add_node("begin", self._begin, writes={"domain", *_BOOKKEEPING})
        graph.add_node("plan", self._plan, writes={"round", "started_at", "plan", "spent", "stop", "detail"})
        graph.add_node("round", self._round_node,
                       writes={"domain", "seen", "repeats", "rounds", "spent", "feedback", "stop", "detail"})
        graph.add_edge(START, "begin")
        graph.add_edge("begin", "plan")
        graph.add_conditional_edge("plan", _next_after_plan, {"round": "round", "stop": END})
        graph.add_conditional_edge("round", _next_after_round, {"plan": "plan", "stop": END})
        return graph

    # -- the two steps -------------------------------------------------------------------

    def _meter(self, spent: dict[str, float]) -> BudgetMeter:
        """The loop budget with what the loop has spent so far (seconds from this attempt's start)."""
        meter = BudgetMeter(self.budget, iterations=int(spent["iterations"]), tokens=int(spent["tokens"]),
                            cost_usd=spent["cost_usd"], unpriced_calls=int(spent["unpriced_calls"]))
        run = CURRENT_RUN.get()
        if run is not None:
            meter.started_at = run.meter.started_at
        return meter

    def _stop(self, loop: LoopState, reason: StopReason, detail: str = "",
              rounds: int | None = None) -> dict[str, Any]:
        """The state writes that end the loop, with its stop event and the run's stop reason."""
        detail = detail or reason.description
        events.emit(self.trace, "stop", *_loop_ids(), stop_reason=reason.value, detail=detail,
                    rounds=len(loop.rounds) if rounds is None else rounds)
        record_stop_reason(reason.value)
        return {"stop": reason.value, "detail": detail}

    def _begin(self, loop: LoopState) -> dict[str, Any]:
        """Start a fresh loop: the domain checked against the surface's state (its ``goal`` field,
        if it has one, defaults to the loop's goal), and the bookkeeping at its defaults, so a
        turn's input can name a goal and a domain but never forge rounds, seen proposals or spend."""
        require_goal(loop.goal)
        domain = dict(loop.domain)
        if "goal" in self.schema.model_fields:
            domain.setdefault("goal", loop.goal)
        checked = StateContract(self.schema, {}).initial_state("governed loop domain", domain)
        fresh = {name: LoopState.model_fields[name].get_default(call_default_factory=True)
                 for name in _BOOKKEEPING}
        return {**fresh, "domain": checked.model_dump(mode="json")}

    def _plan(self, loop: LoopState) -> dict[str, Any]:
        """Ask the planner for this round's proposal, unless the budget has nothing left."""
        exhausted = _exhausted(self._meter(loop.spent))
        if exhausted is not None:
            return self._stop(loop, StopReason.BUDGET_EXHAUSTED, exhausted)
        number = loop.round + 1
        started = time.time()
        try:
            plan = self.planner.propose(loop.goal, self.schema.model_validate(loop.domain), loop.feedback)
        except Exception as exc:
            return self._stop(loop, StopReason.PLANNER_FAILED, f"{type(exc).__name__}: {exc}")
        spent = dict(loop.spent)
        spent["tokens"] += plan.tokens
        spent["cost_usd"] += plan.cost_usd or 0.0
        spent["unpriced_calls"] += int(plan.cost_usd is None)
        events.emit(self.trace, "plan", *_loop_ids(), round=number, readable=plan.proposal is not None)
        proposal = None if plan.proposal is None else plan.proposal.model_dump(mode="json")
        return {"round": number, "started_at": started, "spent": spent,
                "plan": {"proposal": proposal, "error": plan.error, "tokens": plan.tokens}}

    def _round_node(self, loop: LoopState) -> dict[str, Any]:
        """Admit this round's proposal and, if admitted, run it; then decide whether to go on."""
        number, plan = loop.round, loop.plan or {}
        proposal = None if plan.get("proposal") is None else Subgraph.model_validate(plan["proposal"])
        seen, spent = dict(loop.seen), dict(loop.spent)
        domain = self.schema.model_validate(loop.domain)
        record, domain, failure = self._round(number, proposal, plan.get("error", ""), domain, seen, spent)
        record = replace(record, tokens=int(plan.get("tokens", 0)),
                         duration_ms=(time.time() - loop.started_at) * 1000.0)
        rounds = [*loop.rounds, record.record()]
        events.emit(self.trace, "round", *_loop_ids(), round=number, status=record.admission.status.value,
                    fingerprint=record.admission.fingerprint, executed=record.executed,
                    failed=record.admission.codes(),
                    state_delta={"round_tokens": record.tokens, "round_iterations": record.iterations,
                                 "round_duration_ms": record.duration_ms})
        repeats = loop.repeats + 1 if record.admission.codes() == ["proposal_repeated"] else 0
        writes: dict[str, Any] = {
            "domain": domain.model_dump(mode="json"), "seen": seen, "spent": spent, "rounds": rounds,
            "repeats": repeats,
            "feedback": record.admission.feedback() if not record.executed else
            "your last proposal was admitted and ran; the goal is not met yet",
        }
        stop = self._verdict(record, domain, repeats, failure)
        if stop is not None:
            writes.update(self._stop(loop, *stop, rounds=len(rounds)))
        return writes

    def _verdict(self, record: RoundRecord, domain: BaseModel, repeats: int,
                 failure: tuple[StopReason, str] | None) -> tuple[StopReason, str] | None:
        """Why the loop stops after this round, if it does."""
        if failure is not None:
            return failure
        if record.executed and self.goal_reached(domain):
            return StopReason.GOAL_MET, ""
        declined = [r for r in record.admission.rejections if r.code.endswith("_approval_declined")]
        if declined:
            return StopReason.APPROVAL_DECLINED, f"{declined[0].code} at {declined[0].location}: " \
                                                 f"{declined[0].message}"
        if repeats >= self.limits.max_repeats:
            return StopReason.NO_NEW_PROPOSAL, ""
        if record.round >= self.limits.max_rounds:
            return StopReason.MAX_ROUNDS, ""
        return None

    def _round(self, number: int, proposal: Subgraph | None, plan_error: str, state: BaseModel,
               seen: dict[str, int], spent: dict[str, Any]
               ) -> tuple[RoundRecord, BaseModel, tuple[StopReason, str] | None]:
        """Check, and if admitted run, one round's proposal."""
        if proposal is None:
            verdict = _refused("proposal_invalid", plan_error)
            return RoundRecord(number, None, verdict, False, 0, 0, 0.0), state, None
        fingerprint = proposal.fingerprint()
        if fingerprint in seen:
            verdict = _refused("proposal_repeated",
                               f"identical to the proposal of round {seen[fingerprint]}; "
                               "propose something different", fingerprint)
            return RoundRecord(number, proposal, verdict, False, 0, 0, 0.0), state, None
        seen[fingerprint] = number
        current = self._meter(spent)
        verdict = self.checker.check(proposal, meter=current)
        events.emit(self.trace, "decision", *_loop_ids(), round=number, **verdict.event())
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


def _next_after_plan(loop: LoopState) -> Literal["round", "stop"]:
    return "stop" if loop.stop is not None else "round"


def _next_after_round(loop: LoopState) -> Literal["plan", "stop"]:
    return "stop" if loop.stop is not None else "plan"
