"""Stage 6, memory: three runs against one claim store, each reading what the earlier ones left.

Every run is recall -> ask -> remember: ``retrieve`` what the store holds (superseded claims
included) and ``render_context`` it into the prompt, ask the model, and store what the reply
states as claims with provenance. Run 1 reads an on-call chat and records a guess at the cause
and when the spike started. Run 2 reads the postmortem; its cause ``contradictions`` flags
against run 1's guess, and because the postmortem is the authority this run supersedes the
guess on purpose (kept, marked replaced). Run 3 reads no source and writes nothing: it answers
from memory, reusing run 1's start time and run 2's cause, and sees the dead end together with
the source and run it came from. The store is ``memory:`` unless a durable URI is given; on a
durable store each run can be a separate process (``run_number``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import Field

from grapharc.examples.demo_outcome import Check, StageOutcome
from grapharc.examples.demo_runs import RunRecord, run_record
from grapharc.examples.demo_support import (
    SCRIPTED_LABEL,
    DemoInputError,
    ask,
    demo_model,
    new_thread_id,
    open_memory,
    run_to_end,
    thread_config,
)
from grapharc.memory.claims import Claim, ClaimStore, Provenance, normalise_entity
from grapharc.memory.conflicts import contradictions
from grapharc.memory.context import render_claim, render_context
from grapharc.memory.retrieval import retrieve
from grapharc.models.replies import NoJSONError, extract_json
from grapharc.models.spec import resolve_backend
from grapharc.runtime.budget import Budget
from grapharc.runtime.context import CURRENT_RUN
from grapharc.runtime.graph import END, START, GraphARC
from grapharc.runtime.state import GraphARCState
from grapharc.trace.sinks import check_trace_writable

TITLE = "memory: provenance, supersession, recall"
LESSON = (
    "Facts outlive the run that found them, with where they came from. A correction supersedes "
    "a claim instead of overwriting it, so a later run sees both the fact it can reuse and the "
    "dead end it should not chase again, each with its source and the run that recorded it."
)
DEFAULT_BUDGET = Budget(max_iterations=10, max_tokens=50_000)
DEFAULT_MEMORY = "memory:"
SUBJECT = "checkout latency spike"
RECALL_K = 10
MEMORY_TOKENS = 600


@dataclass(frozen=True)
class Source:
    """A document a run reads: its name and when it was observed go into every claim's provenance."""

    name: str
    observed_at: datetime
    text: str


CHAT = Source(
    name="oncall-chat.log", observed_at=datetime(2026, 3, 14, 14, 10, tzinfo=UTC),
    text="14:03 ana: checkout p99 jumped from 180 ms to 2.4 s, it started at 14:02. "
         "14:06 ben: I see payment gateway timeouts in the checkout logs, that must be it. "
         "14:08 ana: paging the payments team.")
POSTMORTEM = Source(
    name="postmortem-checkout.md", observed_at=datetime(2026, 3, 16, 9, 0, tzinfo=UTC),
    text="The checkout latency spike was caused by the 14:01 deploy of checkout v2.3, which reduced "
         "the database connection pool from 20 to 2. The payment gateway timeouts seen during the "
         "incident were a symptom: requests queued for a connection and their gateway calls timed out.")


@dataclass(frozen=True)
class RunPlan:
    """One of the three runs: what it reads, what it asks, which reply fields it stores and how."""

    number: int
    name: str
    source: Source | None
    query: str
    question: str
    stores: dict[str, str]
    corrects: bool
    script: str


PLANS = (
    RunPlan(1, "investigate", CHAT, SUBJECT,
            "From the on-call chat, what caused the checkout latency spike and when did it start? "
            'Reply with JSON only: {"cause": "...", "started_at": "..."}',
            {"cause": "caused by", "started_at": "started at"}, False,
            '{"cause": "payment gateway timeouts", "started_at": "14:02 UTC"}'),
    RunPlan(2, "correct", POSTMORTEM, SUBJECT,
            "What does the postmortem say caused the checkout latency spike? "
            'Reply with JSON only: {"cause": "..."}',
            {"cause": "caused by"}, True,
            '{"cause": "the 14:01 deploy of checkout v2.3 cut the database connection pool '
            'from 20 to 2"}'),
    RunPlan(3, "recall", None, "checkout latency spike caused by started at",
            "Checkout latency is spiking again. From memory alone: what caused the last spike, "
            'when did it start, and which lead is a dead end? Reply with JSON only: {"answer": "..."}',
            {}, False,
            '{"answer": "The last spike started at 14:02 UTC; the 14:01 deploy of checkout v2.3 cut '
            "the database connection pool from 20 to 2. Payment gateway timeouts are a dead end: "
            'the on-call chat guessed them and the postmortem replaced that guess."}'),
)


class Stage6State(GraphARCState):
    """One run: the memory it was given, the model's reply, and what it wrote to the store."""

    run: int
    memory: str = ""
    recalled: list[str] = Field(default_factory=list)
    held_before: int = 0
    reply: str = ""
    recorded: list[str] = Field(default_factory=list)
    superseded: list[str] = Field(default_factory=list)
    conflicts: list[str] = Field(default_factory=list)
    answer: str = ""


def run_prompt(plan: RunPlan, memory: str) -> str:
    """The question, what memory holds (with provenance), and the run's source if it has one."""
    prompt = (f"{plan.question}\n\nMemory (claims from earlier runs, each with where it came "
              f"from):\n{memory or '(nothing yet)'}")
    if plan.source is not None:
        prompt += f"\n\nSource {plan.source.name}:\n{plan.source.text}"
    return prompt


def read_fields(reply: str) -> dict[str, str]:
    """The non-empty string fields of the JSON object in ``reply`` (none when it holds no object)."""
    try:
        data = extract_json(reply)
    except NoJSONError:
        return {}
    if not isinstance(data, dict):
        return {}
    return {key: value.strip() for key, value in data.items() if isinstance(value, str) and value.strip()}


def build_stage6(model: Any, store: ClaimStore, *, trace: Path | None,
                 budget: Budget = DEFAULT_BUDGET, checkpointer: Any = None) -> Any:
    """The compiled recall -> ask -> remember graph; invoke it with ``{"run": 1 | 2 | 3}``."""

    def recall(state: Stage6State) -> dict[str, Any]:
        plan = PLANS[state.run - 1]
        hits = retrieve(store, plan.query, k=RECALL_K, include_superseded=True)
        return {"memory": render_context(hits, max_tokens=MEMORY_TOKENS),
                "recalled": [hit.claim.id for hit in hits],
                "held_before": len(store.all(include_superseded=True))}

    def ask_model(state: Stage6State) -> dict[str, Any]:
        return {"reply": ask(model, run_prompt(PLANS[state.run - 1], state.memory))}

    def remember(state: Stage6State) -> dict[str, Any]:
        plan = PLANS[state.run - 1]
        fields = read_fields(state.reply)
        update: dict[str, Any] = {"answer": fields.get("answer", "")}
        if plan.source is None:
            return update
        run = CURRENT_RUN.get()
        provenance = Provenance(source=plan.source.name, observed_at=plan.source.observed_at,
                                run_id=run.run_id if run is not None else None)
        recorded, superseded, conflicts = [], [], []
        for field, predicate in plan.stores.items():
            if field not in fields:
                continue
            claim = Claim(subject=SUBJECT, predicate=predicate, object=fields[field],
                          provenance=provenance)
            clashing = contradictions(store, claim)
            if clashing and plan.corrects:  # the source is the authority: correct on purpose
                store.supersede(clashing[-1].id, claim)
                superseded.append(clashing[-1].id)
                clashing = clashing[:-1]
            else:
                store.add(claim)
            recorded.append(claim.id)
            conflicts += [old.id for old in clashing]
        return {**update, "recorded": recorded, "superseded": superseded, "conflicts": conflicts}

    graph = GraphARC(Stage6State, name="stage6", budget=budget, trace=trace)
    graph.add_node("recall", recall, writes={"memory", "recalled", "held_before"})
    graph.add_node("ask", ask_model, writes={"reply"})
    graph.add_node("remember", remember, writes={"answer", "recorded", "superseded", "conflicts"})
    graph.add_edge(START, "recall")
    graph.add_edge("recall", "ask")
    graph.add_edge("ask", "remember")
    graph.add_edge("remember", END)
    return graph.compile(checkpointer=checkpointer)


@dataclass(frozen=True)
class RunResult:
    """What one run did, as its state and its trace record say."""

    plan: RunPlan
    state: Stage6State
    record: RunRecord
    exhausted: bool


def run_stage6(*, trace: Path, memory: str = DEFAULT_MEMORY, run_number: int | None = None,
               model_spec: str | None = None, budget: Budget = DEFAULT_BUDGET) -> StageOutcome:
    """Run 1, 2 and 3 against the store ``memory`` names (or only ``run_number``, on a durable one)."""
    if run_number is not None and memory.partition(":")[0].lower() == "memory":
        raise DemoInputError(
            f"--run {run_number} needs a store that outlives the process; {memory} is gone when "
            "the process ends", hint="pass --memory sqlite:PATH (or ladybug:PATH), or drop --run")
    if model_spec is not None:
        resolve_backend(model_spec)  # a spec that names no model is refused before a store is created
    plans = PLANS if run_number is None else (PLANS[run_number - 1],)
    check_trace_writable(trace)  # before the store exists: a refused trace must leave no store
    store = open_memory(memory)
    try:
        if plans[0].number == 1 and store.about(SUBJECT):
            raise DemoInputError(
                f"the store {memory} already holds claims about {SUBJECT!r}, so run 1 would not "
                "start from an empty memory", hint="pass a fresh --memory path, or --run 3 to "
                                                   "recall from this one")
        results = [_run_once(plan, store, trace, model_spec, budget) for plan in plans]
        checks = [check for result in results for check in _checks(result, store)]
        claims = subject_claims(store)
    finally:
        store.close()
    return _outcome(results, checks, claims, memory, model_spec)


def _run_once(plan: RunPlan, store: ClaimStore, trace: Path, model_spec: str | None,
              budget: Budget) -> RunResult:
    from langgraph.checkpoint.memory import InMemorySaver

    model = demo_model(model_spec, (plan.script,), name=f"stage6-run{plan.number}")
    config = thread_config(new_thread_id(f"stage6-run{plan.number}"))
    graph = build_stage6(model, store, trace=trace, budget=budget, checkpointer=InMemorySaver())
    values, exhausted = run_to_end(graph, {"run": plan.number}, config)
    state = Stage6State.model_validate(values)
    return RunResult(plan, state, run_record(trace, graph.last_run), exhausted)


def subject_claims(store: ClaimStore) -> list[Claim]:
    """Every claim about the demo's subject, superseded ones included, in the order stored."""
    key = normalise_entity(SUBJECT)
    return [claim for claim in store.all(include_superseded=True) if claim.subject_key == key]


def _head(claim: Claim) -> str:
    """How a claim's line in the memory text starts: the fact and its provenance, successor aside."""
    return render_claim(claim.model_copy(update={"superseded_by": None})).removesuffix(")")


def _shown(claim: Claim, memory: str) -> bool:
    return any(line.startswith(_head(claim)) for line in memory.splitlines())


def _checks(result: RunResult, store: ClaimStore) -> list[Check]:
    """What run ``plan.number`` must show, checked against the store after it."""
    plan, state, run_id = result.plan, result.state, result.record.run_id
    label = f"run {plan.number} ({plan.name})"
    checks = [Check(f"{label} ended without hitting a budget ceiling", not result.exhausted)]
    stored = subject_claims(store)
    if plan.number == 1:
        mine = [store.get(i) for i in state.recorded]
        checks.append(Check(
            f"{label} recorded {len(plan.stores)} claims, each with its source ({CHAT.name}), "
            f"observation time and run id",
            len(mine) == len(plan.stores) and all(
                c.provenance.source == CHAT.name and c.provenance.run_id == run_id for c in mine)))
    elif plan.number == 2:
        guess = [store.get(i) for i in state.superseded]
        from_chat = [c for c in stored if c.provenance.source == CHAT.name]
        checks.append(Check(
            f"{label} was given run 1's claims from memory, each with its source and run",
            bool(from_chat) and all(c.id in state.recalled and _shown(c, state.memory)
                                    for c in from_chat)))
        checks.append(Check(
            f"{label} found the postmortem contradicting run 1's guess and superseded it on "
            "purpose: the guess is kept, marked replaced by the correction",
            len(guess) == 1 and len(state.recorded) == 1
            and guess[0].provenance.source == CHAT.name and guess[0].provenance.run_id != run_id
            and guess[0].superseded_by == state.recorded[0]
            and [c.id for c in store.history(state.recorded[0])] == [guess[0].id, state.recorded[0]]))
    else:
        current = store.about(SUBJECT)
        dead = [c for c in stored if c.superseded_by is not None]
        checks += [
            Check(f"{label} read no source and wrote nothing: the store held {state.held_before} "
                  "claims before it and as many after",
                  not state.recorded and state.held_before == len(store.all(include_superseded=True))),
            Check(f"{label} reused {len(current)} current facts from earlier runs, each shown with "
                  "its source and run",
                  len(current) >= 2 and all(_shown(c, state.memory) and c.provenance.run_id != run_id
                                            for c in current)
                  and len({c.provenance.run_id for c in current}) >= 2),
            Check(f"{label} saw the dead end: {len(dead)} superseded claim(s) with their source, "
                  "run and the claim that replaced them",
                  bool(dead) and all(any(line.startswith(_head(c))
                                         and f"superseded by {c.superseded_by}" in line
                                         for line in state.memory.splitlines()) for c in dead)),
        ]
    return checks


def claim_document(claim: Claim) -> dict[str, Any]:
    """A claim as the JSON document shows it."""
    return claim.model_dump(mode="json")


def _run_document(result: RunResult) -> dict[str, Any]:
    state = result.state
    return {"run": result.plan.number, "name": result.plan.name, **result.record.identity(),
            "status": result.record.status, "source": result.plan.source.name if result.plan.source else None,
            "recalled": state.recalled, "memory": state.memory, "recorded": state.recorded,
            "superseded": state.superseded, "conflicts": state.conflicts,
            "answer": state.answer or None}


def _facts(results: list[RunResult], claims: list[Claim], memory: str) -> list[tuple[str, str]]:
    facts = [("memory", memory)]
    for result in results:
        plan, state = result.plan, result.state
        read = f"read {plan.source.name}" if plan.source else "read no source"
        wrote = f"recorded {len(state.recorded)}" + (f", superseded {len(state.superseded)}"
                                                     if state.superseded else "")
        facts.append((f"run {plan.number}", f"{plan.name}: {read}, recalled {len(state.recalled)} "
                                            f"claims, {wrote}"))
    facts += [("claims" if index == 0 else "", line) for index, line in
              enumerate(render_context(claims, max_tokens=MEMORY_TOKENS).splitlines())]
    answer = results[-1].state.answer
    if answer:
        facts.append(("answer", answer))
    return facts


def _outcome(results: list[RunResult], checks: list[Check], claims: list[Claim], memory: str,
             model_spec: str | None) -> StageOutcome:
    exhausted = any(result.exhausted for result in results)
    last = results[-1]
    numbers = ", ".join(str(result.plan.number) for result in results)
    dead = sum(1 for claim in claims if claim.superseded_by is not None)
    summary = (f"after run {numbers}, {memory} holds {len(claims)} claims about {SUBJECT!r}, "
               f"{dead} of them superseded and kept" if not exhausted
               else f"a budget ceiling ({last.record.stop_reason}) ended a run")
    return StageOutcome(
        stage="stage6", title=TITLE, lesson=LESSON, status="exhausted" if exhausted else "remembered",
        summary=summary, run=last.record, checks=tuple(checks),
        facts=tuple(_facts(results, claims, memory)), stop_reason=last.record.stop_reason,
        model=model_spec or SCRIPTED_LABEL,
        state={"claims": [claim_document(claim) for claim in claims], "answer": last.state.answer or None},
        details={"memory": memory, "runs": [_run_document(result) for result in results]})
