"""Stage 4, a bounded investigation: plan -> search -> assess, repeated until a guard converges.

``plan`` asks the model for the next search query; ``search`` looks it up in a fixed log
corpus (code); ``assess`` asks a ``ProgressGuard`` whether the investigation is done (root
cause found), stuck (no new fact for three rounds) or out of rounds; ``conclude`` writes
the finding or says what is missing. Under the guard sit the run's hard ceilings
(iterations and tokens). In the impossible case the logs that would explain the spike do
not exist, so the facts stop growing and the no-progress window ends the investigation far
under the ceiling.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from grapharc.examples.demo_choices import Case
from grapharc.examples.demo_outcome import Check, StageOutcome
from grapharc.examples.demo_runs import RunRecord, run_record
from grapharc.examples.demo_support import (
    SCRIPTED_LABEL,
    ask,
    demo_model,
    new_thread_id,
    run_to_end,
    thread_config,
)
from grapharc.runtime.budget import Budget
from grapharc.runtime.graph import END, START, GraphARC
from grapharc.runtime.progress import ProgressGuard, StopReason
from grapharc.runtime.state import GraphARCState

TITLE = "bounded investigation loop with convergence guards"
LESSON = (
    "An investigation has no fixed length, so it runs under layered guards: a target (root cause "
    "found), a no-progress window (no new fact for three rounds), a round cap, and the run's hard "
    "ceilings on iterations and tokens. An investigation that cannot succeed stops on the "
    "no-progress window, far under the ceiling, and says what it found and what is missing."
)
QUESTION = "Why did checkout latency spike at 14:02?"
DEFAULT_BUDGET = Budget(max_iterations=300, max_tokens=100_000)
DEFAULT_ROUNDS = 25
WINDOW = 3


@dataclass(frozen=True)
class Entry:
    """One log line, the words that find it, and whether it explains the spike."""

    id: str
    text: str
    words: frozenset[str]
    cause: bool = False


SYMPTOMS = (
    Entry("l1", "14:02 checkout p99 latency 2.4 s (normal: 180 ms)",
          frozenset({"latency", "checkout", "p99", "slow"})),
    Entry("l2", "14:02 payment-gateway timeouts: 0 (normal)",
          frozenset({"payment", "gateway", "timeouts", "errors"})),
    Entry("l3", "14:03 checkout error rate 0.1% (normal)", frozenset({"errors", "checkout"})),
    Entry("l4", "14:02 database cpu 35% (normal)", frozenset({"database", "db", "cpu"})),
)
CORPUS: dict[Case, tuple[Entry, ...]] = {
    Case.IMPOSSIBLE: (*SYMPTOMS, Entry("l5", "no deploys or config changes since 09:00 "
                                             "(change log for the payment host not retained)",
                                       frozenset({"deploys", "deploy", "changes", "config"}))),
    Case.SOLVABLE: (*SYMPTOMS, Entry("l5", "14:01 deploy checkout v2.3: database pool size 20 -> 2",
                                     frozenset({"deploys", "deploy", "changes", "config", "pool"}),
                                     cause=True)),
}
SCRIPTS: dict[Case, tuple[str, ...]] = {
    Case.IMPOSSIBLE: ("latency", "errors", "deploys", "latency", "checkout", "errors"),
    Case.SOLVABLE: ("latency", "deploys"),
}


class Fact(BaseModel):
    """A log line the investigation found, with the query and round that found it."""

    id: str
    text: str
    query: str
    round: int
    cause: bool


class Stage4State(GraphARCState):
    """The investigation's state: queries tried, facts found, and how it stopped."""

    question: str
    case: Case
    round: int = 0
    query: str = ""
    queries: list[str] = Field(default_factory=list)
    facts: list[Fact] = Field(default_factory=list)
    stop_reason: StopReason | None = None
    conclusion: str = ""


def search(corpus: tuple[Entry, ...], query: str) -> list[Entry]:
    """Log lines sharing a word with ``query`` (the investigation's only window on the logs)."""
    words = set(query.lower().replace(",", " ").split())
    return [entry for entry in corpus if entry.words & words]


def build_prompt(state: Stage4State) -> str:
    """What ``plan`` asks: the question, what is known, what was tried."""
    lines = [f"Question: {state.question}", "Facts found so far:"]
    lines += [f"- {fact.text}" for fact in state.facts] or ["- none"]
    lines += [f"Queries tried: {', '.join(state.queries) or 'none'}",
              "Reply with the next log search query: one or two words, nothing else."]
    return "\n".join(lines)


def build_stage4(model: Any, case: Case, *, trace: Path | None, budget: Budget = DEFAULT_BUDGET,
                 max_rounds: int = DEFAULT_ROUNDS, window: int = WINDOW,
                 checkpointer: Any = None) -> Any:
    """The compiled investigation over the ``case`` corpus, guarded as the module says.

    The guard lives in this graph and is reset when a run starts, so the graph serves one run
    at a time.
    """
    corpus = CORPUS[case]
    guard = ProgressGuard(max_rounds=max_rounds, window=window,
                          target=lambda s: any(fact.cause for fact in s.facts),
                          measure=lambda s: len(s.facts))

    def plan(state: Stage4State) -> dict[str, Any]:
        if state.round == 0:
            guard.reset()
        reply = ask(model, build_prompt(state)).strip()
        query = (reply.splitlines()[0] if reply else "").strip().strip("\"'.").lower()[:40]
        return {"round": state.round + 1, "query": query, "queries": [*state.queries, query]}

    def search_logs(state: Stage4State) -> dict[str, Any]:
        known = {fact.id for fact in state.facts}
        found = [Fact(id=e.id, text=e.text, query=state.query, round=state.round, cause=e.cause)
                 for e in search(corpus, state.query) if e.id not in known]
        return {"facts": [*state.facts, *found]}

    def assess(state: Stage4State) -> dict[str, Any]:
        return {"stop_reason": guard.check(state)}

    def next_step(state: Stage4State) -> Literal["continue", "conclude"]:
        return "conclude" if state.stop_reason is not None else "continue"

    def conclude(state: Stage4State) -> dict[str, Any]:
        cause = next((fact for fact in state.facts if fact.cause), None)
        if cause is not None:
            return {"conclusion": f"root cause: {cause.text} (found by {cause.query!r} in round "
                                  f"{cause.round})"}
        return {"conclusion": f"inconclusive: {len(state.facts)} facts, none explains the spike; the "
                              "evidence that would is not in these logs"}

    graph = GraphARC(Stage4State, name="stage4", budget=budget, trace=trace)
    graph.add_node("plan", plan, writes={"round", "query", "queries"})
    graph.add_node("search", search_logs, writes={"facts"})
    graph.add_node("assess", assess, writes={"stop_reason"})
    graph.add_node("conclude", conclude, writes={"conclusion"})
    graph.add_edge(START, "plan")
    graph.add_edge("plan", "search")
    graph.add_edge("search", "assess")
    graph.add_conditional_edge("assess", next_step, {"continue": "plan", "conclude": "conclude"})
    graph.add_edge("conclude", END)
    return graph.compile(checkpointer=checkpointer)


def run_stage4(*, trace: Path, case: Case = Case.IMPOSSIBLE, model_spec: str | None = None,
               budget: Budget = DEFAULT_BUDGET, max_rounds: int = DEFAULT_ROUNDS,
               window: int = WINDOW) -> StageOutcome:
    """Investigate ``case`` (scripted unless ``model_spec``) and report which guard ended it."""
    from langgraph.checkpoint.memory import InMemorySaver

    model = demo_model(model_spec, SCRIPTS[case], name=f"stage4-{case}")
    thread_id = new_thread_id("stage4")
    config = thread_config(thread_id)
    graph = build_stage4(model, case, trace=trace, budget=budget, max_rounds=max_rounds,
                         window=window, checkpointer=InMemorySaver())
    values, _ = run_to_end(graph, {"question": QUESTION, "case": case}, config)  # a ceiling: see the run
    state = Stage4State.model_validate(values)
    return _outcome(state, run_record(trace, graph.last_run), budget, max_rounds, window, model_spec)


def stale_rounds(state: Stage4State) -> int:
    """Rounds since the last one that found a new fact."""
    found = {fact.round for fact in state.facts}
    latest = max(found, default=0)
    return state.round - latest


def _guard_lines(state: Stage4State, run: RunRecord, budget: Budget, max_rounds: int,
                 window: int) -> list[str]:
    reason = state.stop_reason
    tripped = {True: "  <- tripped", False: ""}
    ceiling_hit = run.status == "budget_exceeded"
    return [
        f"target       root cause found: {'yes' if reason is StopReason.TARGET_MET else 'no'}"
        + tripped[reason is StopReason.TARGET_MET],
        f"no progress  {stale_rounds(state)} of {window} rounds without a new fact"
        + tripped[reason is StopReason.NO_PROGRESS],
        f"round cap    {state.round} of {max_rounds} rounds" + tripped[reason is StopReason.ROUND_CAP],
        f"iterations   {run.iterations} of {budget.max_iterations or 'unlimited'} (hard ceiling)"
        + tripped[ceiling_hit and run.stop_reason == "iterations"],
        f"tokens       {run.tokens} of {budget.max_tokens or 'unlimited'}"
        + tripped[ceiling_hit and run.stop_reason == "tokens"],
    ]


def _outcome(state: Stage4State, run: RunRecord, budget: Budget, max_rounds: int, window: int,
             model_spec: str | None) -> StageOutcome:
    ceiling = budget.max_iterations
    guards = _guard_lines(state, run, budget, max_rounds, window)
    facts = [("question", f"{state.question}  [{state.case}]"),
             ("queries", ", ".join(state.queries) or "none"),
             ("found", f"{len(state.facts)} facts")]
    facts += [("", f"{fact.id} (round {fact.round}, {fact.query!r}): {fact.text}") for fact in state.facts]
    facts += [("guards" if index == 0 else "", line) for index, line in enumerate(guards)]
    facts.append(("concluded", state.conclusion or "(not reached)"))
    halted = state.stop_reason is not None and run.status == "completed"
    of_ceiling = f" of {ceiling}" if ceiling else ""
    checks = (Check("the investigation stopped on a guard's recorded reason", state.stop_reason is not None),
              Check(f"it stopped under the hard ceiling ({run.iterations}{of_ceiling} iterations)",
                    run.status == "completed"),
              Check("it concluded, saying what it found or what is missing", bool(state.conclusion)))
    summary = (f"the {state.case} investigation stopped on {state.stop_reason} after {state.round} "
               f"rounds, {run.iterations}{of_ceiling} iterations" if halted else
               f"a hard ceiling ({run.stop_reason}) ended the investigation after {state.round} rounds")
    return StageOutcome(
        stage="stage4", title=TITLE, lesson=LESSON, status="halted" if halted else "exhausted",
        summary=summary, run=run, checks=checks, facts=tuple(facts),
        stop_reason=state.stop_reason.value if state.stop_reason else run.stop_reason,
        model=model_spec or SCRIPTED_LABEL,
        state={"case": state.case.value, "rounds": state.round, "queries": state.queries,
               "facts": [fact.model_dump() for fact in state.facts],
               "stop_reason": state.stop_reason.value if state.stop_reason else None,
               "conclusion": state.conclusion},
        details={"guards": {"window": window, "stale_rounds": stale_rounds(state),
                            "max_rounds": max_rounds, "max_iterations": ceiling,
                            "max_tokens": budget.max_tokens}})
