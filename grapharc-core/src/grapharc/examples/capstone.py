"""Capstone, one research agent: recall -> research -> review -> remember -> answer.

``recall`` retrieves what memory already holds about the question and renders it within a
token budget; ``research`` asks the author model for claims about the postmortem, each with a
quote; ``review`` runs ``verify_claim`` on each with an independent reviewer; ``remember``
writes the supported claims memory does not already hold, with provenance, in one batch
(contradictions with stored claims are reported, never resolved); ``answer`` retrieves from
memory again and has the author answer from that alone. Nothing supported means no write and
no answer: a reviewer that rejects everything leaves memory exactly as it was.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from grapharc.examples.demo_choices import ReviewScenario
from grapharc.examples.demo_outcome import Check, StageOutcome, Warn, no_warning
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
from grapharc.examples.stage5 import SOURCE, independence, shared_vendor_warnings
from grapharc.memory.claims import Claim, ClaimStore, InvalidEntityError, Provenance, normalise_entity
from grapharc.memory.conflicts import contradictions, fold
from grapharc.memory.context import estimate_tokens, render_context
from grapharc.memory.retrieval import retrieve
from grapharc.memory.verify import Verdict, Verification, anchored, require_distinct, verify_claim
from grapharc.models.replies import NoJSONError, extract_json
from grapharc.runtime.budget import Budget
from grapharc.runtime.context import CURRENT_RUN
from grapharc.runtime.graph import END, START, GraphARC
from grapharc.runtime.state import GraphARCState
from grapharc.trace.sinks import check_trace_writable

TITLE = "all of the above in one research agent"
LESSON = (
    "One agent, every mechanism: it recalls what memory holds within a token budget, proposes "
    "claims with quotes, has an independent reviewer check each one against the source, writes "
    "only what the reviewer supported to memory with provenance, and answers from memory. A "
    "reviewer that supports nothing means no answer and not one write."
)
DEFAULT_BUDGET = Budget(max_iterations=20, max_tokens=100_000)
QUESTION = "What caused the checkout latency spike, and what fixed it?"
SOURCE_NAME = "postmortem-checkout.md"
OBSERVED_AT = datetime(2026, 3, 16, 9, 0, tzinfo=UTC)
RECALL_K = 10
MEMORY_TOKENS = 400
AUTHOR_INSTRUCTIONS = (
    "Research the question from the postmortem below. Reply with a JSON array only, as "
    '[{"subject": "...", "predicate": "...", "object": "...", "citation": "..."}], one entry per '
    "fact, where each citation is copied word for word from the postmortem."
)
ANSWER_INSTRUCTIONS = "Answer the question in two sentences or fewer, using only the verified claims below."
SCRIPTED_CLAIMS = (
    {"subject": "checkout latency spike", "predicate": "caused by",
     "object": "payment gateway timeouts",
     "citation": "payment gateway timeouts caused the checkout outage"},
    {"subject": "rollback of checkout v2.3", "predicate": "fixed", "object": "the latency",
     "citation": "restore normal latency"},
    {"subject": "checkout latency spike", "predicate": "caused by",
     "object": "the 14:01 deploy of checkout v2.3 cutting the database connection pool from 20 to 2",
     "citation": "reduced the database connection pool from 20 to 2"},
    {"subject": "checkout latency spike", "predicate": "fixed by",
     "object": "restarting the checkout hosts at 14:31",
     "citation": "Restarting the checkout hosts at 14:31 restored normal latency"},
)
SCRIPTED_ANSWER = ("The 14:01 deploy of checkout v2.3 cut the database connection pool from 20 to 2, "
                   "which caused the spike; restarting the checkout hosts at 14:31 fixed it.")
AUTHOR_SCRIPT = (json.dumps(list(SCRIPTED_CLAIMS), indent=1), SCRIPTED_ANSWER)
REVIEWER_SCRIPTS = {
    ReviewScenario.HONEST: (
        '{"supported": false, "reason": "the excerpt says the rollback did not restore normal latency"}',
        '{"supported": true, "reason": "the excerpt says the deploy cut the pool from 20 to 2"}',
        '{"supported": true, "reason": "the excerpt says the restart at 14:31 restored latency"}'),
    ReviewScenario.REJECT_ALL: ('{"supported": false, "reason": "I support nothing"}',),
}


class Proposal(BaseModel):
    """A claim as the author proposed it: the fact and the quote it cites."""

    model_config = ConfigDict(extra="forbid")
    subject: str
    predicate: str
    object: str
    citation: str

    @property
    def text(self) -> str:
        """The claim as one sentence, which is what the reviewer judges."""
        return f"{self.subject} {self.predicate} {self.object}"


class Reviewed(BaseModel):
    """A proposal and how its verification ended."""

    proposal: Proposal
    verification: Verification


class CapstoneState(GraphARCState):
    """The question, the memory recalled, each proposal's review, what was written, the answer."""

    question: str
    memory: str = ""
    held_before: int = 0
    reply: str = ""
    proposals: list[Proposal] = Field(default_factory=list)
    dropped: int = 0
    reviewed: list[Reviewed] = Field(default_factory=list)
    written: list[str] = Field(default_factory=list)
    conflicts: list[str] = Field(default_factory=list)
    known: int = 0
    context: str = ""
    answer: str = ""


def research_prompt(question: str, memory: str) -> str:
    """The author's research request: instructions, the question, memory, the postmortem."""
    return (f"{AUTHOR_INSTRUCTIONS}\n\nQuestion: {question}\n\nMemory (claims already "
            f"verified, with where each came from):\n{memory or '(nothing yet)'}\n\n"
            f"Postmortem ({SOURCE_NAME}):\n{SOURCE}")


def answer_prompt(question: str, context: str) -> str:
    """The author's answer request: the question and the verified claims memory returned."""
    return f"{ANSWER_INSTRUCTIONS}\n\nQuestion: {question}\n\nVerified claims:\n{context}"


def _usable(entry: Any) -> bool:
    fields = ("subject", "predicate", "object", "citation")
    if not isinstance(entry, dict) or not all(isinstance(entry.get(f), str) and entry[f].strip()
                                              for f in fields):
        return False
    try:
        normalise_entity(entry["subject"])
    except InvalidEntityError:
        return False
    return True


def read_proposals(reply: str) -> tuple[list[Proposal], int]:
    """The well-formed proposals in the author's reply, and how many entries were not."""
    try:
        data = extract_json(reply)
    except NoJSONError:
        return [], 0
    entries = data if isinstance(data, list) else [data]
    proposals = [Proposal(subject=e["subject"], predicate=e["predicate"], object=e["object"],
                          citation=e["citation"]) for e in entries if _usable(e)]
    return proposals, len(entries) - len(proposals)


def _known(store: ClaimStore, proposal: Proposal) -> bool:
    """Whether memory already holds this fact as a current claim, so it is not written twice."""
    fact = (fold(proposal.predicate), fold(proposal.object))
    return any((fold(c.predicate), fold(c.object)) == fact for c in store.about(proposal.subject))


def build_capstone(author_model: Any, reviewer_model: Any, store: ClaimStore, *, trace: Path | None,
                   budget: Budget = DEFAULT_BUDGET, checkpointer: Any = None) -> Any:
    """The compiled research agent over ``store``; refuses one object as author and reviewer."""
    require_distinct(author_model, reviewer_model)

    def recall(state: CapstoneState) -> dict[str, Any]:
        hits = retrieve(store, state.question, k=RECALL_K, include_superseded=True)
        return {"memory": render_context(hits, max_tokens=MEMORY_TOKENS),
                "held_before": len(store.all(include_superseded=True))}

    def research(state: CapstoneState) -> dict[str, Any]:
        reply = ask(author_model, research_prompt(state.question, state.memory))
        proposals, dropped = read_proposals(reply)
        return {"reply": reply, "proposals": proposals, "dropped": dropped}

    def review(state: CapstoneState) -> dict[str, Any]:
        return {"reviewed": [Reviewed(proposal=p, verification=verify_claim(p.text, p.citation, SOURCE,
                                                                            reviewer_model))
                             for p in state.proposals]}

    def remember(state: CapstoneState) -> dict[str, Any]:
        supported = [r.proposal for r in state.reviewed if r.verification.supported]
        if not supported:
            return {"written": [], "conflicts": [], "known": 0}
        run = CURRENT_RUN.get()
        provenance = Provenance(source=SOURCE_NAME, observed_at=OBSERVED_AT,
                                run_id=run.run_id if run is not None else None)
        fresh = [p for p in supported if not _known(store, p)]
        claims = [Claim(subject=p.subject, predicate=p.predicate, object=p.object, provenance=provenance)
                  for p in fresh]
        conflicts = [old.id for claim in claims for old in contradictions(store, claim)]
        if claims:
            store.add_many(claims)
        return {"written": [claim.id for claim in claims], "conflicts": conflicts,
                "known": len(supported) - len(fresh)}

    def answer(state: CapstoneState) -> dict[str, Any]:
        if not any(r.verification.supported for r in state.reviewed):
            return {"context": "", "answer": ""}
        hits = retrieve(store, state.question, k=RECALL_K)
        context = render_context(hits, max_tokens=MEMORY_TOKENS)
        return {"context": context, "answer": ask(author_model, answer_prompt(state.question, context))}

    graph = GraphARC(CapstoneState, name="capstone", budget=budget, trace=trace)
    graph.add_node("recall", recall, writes={"memory", "held_before"})
    graph.add_node("research", research, writes={"reply", "proposals", "dropped"})
    graph.add_node("review", review, writes={"reviewed"})
    graph.add_node("remember", remember, writes={"written", "conflicts", "known"})
    graph.add_node("answer", answer, writes={"context", "answer"})
    graph.add_edge(START, "recall")
    graph.add_edge("recall", "research")
    graph.add_edge("research", "review")
    graph.add_edge("review", "remember")
    graph.add_edge("remember", "answer")
    graph.add_edge("answer", END)
    return graph.compile(checkpointer=checkpointer)


def run_capstone(*, trace: Path, memory: str = "memory:", model_spec: str | None = None,
                 reviewer_spec: str | None = None, scenario: ReviewScenario = ReviewScenario.HONEST,
                 budget: Budget = DEFAULT_BUDGET, warn: Warn = no_warning) -> StageOutcome:
    """Research the question against the store ``memory`` names, scripted unless specs are given.

    ``scenario`` picks the scripted reviewer; with a real author and no reviewer spec the honest
    reviewer is a second instance of the author's spec (with a warning), as in stage5.
    """
    from langgraph.checkpoint.memory import InMemorySaver

    if scenario is ReviewScenario.REJECT_ALL and reviewer_spec is not None:
        raise DemoInputError("--scenario reject-all scripts the reviewer, so it takes no "
                             "--reviewer-model", hint="drop one of the two")
    if scenario is ReviewScenario.HONEST:
        reviewer_spec = reviewer_spec or model_spec
    pair = independence(model_spec or "mock/capstone-author", reviewer_spec or "mock/capstone-reviewer")
    warnings = () if reviewer_spec is None else shared_vendor_warnings(pair)
    for warning in warnings:  # before any model is built or called: a run that fails still warned
        warn(warning)
    author = demo_model(model_spec, AUTHOR_SCRIPT, name="capstone-author")
    reviewer = demo_model(reviewer_spec, REVIEWER_SCRIPTS[scenario], name="capstone-reviewer")
    check_trace_writable(trace)  # before the store exists: a refused trace must leave no store
    store = open_memory(memory)
    config = thread_config(new_thread_id("capstone"))
    try:
        graph = build_capstone(author, reviewer, store, trace=trace, budget=budget,
                               checkpointer=InMemorySaver())
        values, exhausted = run_to_end(graph, {"question": QUESTION}, config)
        state = CapstoneState.model_validate(values)
        held_after = len(store.all(include_superseded=True))
        written = [store.get(claim_id) for claim_id in state.written]
    finally:
        store.close()
    label = (SCRIPTED_LABEL if model_spec is None and reviewer_spec is None
             else f"author {pair['author']}, reviewer {pair['reviewer']}")
    checks = [Check("the run ended without hitting a budget ceiling", not exhausted),
              *_invariants(state, held_after, written, graph.last_run.run_id),
              *(_scenario_checks(state, scenario, written, getattr(author, "calls", None))
                if reviewer_spec is None else [Check("the agent answered", bool(state.answer))])]
    return _outcome(state, run_record(trace, graph.last_run), checks, exhausted, held_after, written,
                    memory=memory, scenario=scenario, label=label, pair=pair, warnings=warnings)


def _invariants(state: CapstoneState, held_after: int, written: list[Claim], run_id: str) -> list[Check]:
    """What holds whatever the models said."""
    supported = [r.proposal for r in state.reviewed if r.verification.supported]
    anchored_count = sum(1 for r in state.reviewed if anchored(r.proposal.citation, SOURCE)
                         and r.verification.verdict is not Verdict.EMPTY_CLAIM)
    made = sum(r.verification.reviewer_calls for r in state.reviewed)
    return [
        Check(f"the reviewer was called once per anchored claim and never otherwise ({made} calls "
              f"for {anchored_count} of {len(state.reviewed)} claims)", made == anchored_count),
        Check(f"memory received the {len(supported)} claim(s) the reviewer supported and nothing "
              f"else ({state.known} already known): the store held {state.held_before} before and "
              f"{held_after} after",
              held_after - state.held_before == len(written) == len(supported) - state.known
              and {(c.subject, c.predicate, c.object) for c in written}
              <= {(p.subject, p.predicate, p.object) for p in supported}),
        Check("every claim written carries its source, observation time and this run's id",
              all(c.provenance.source == SOURCE_NAME and c.provenance.observed_at == OBSERVED_AT
                  and c.provenance.run_id == run_id for c in written)),
        Check("there is an answer only when a claim was verified, built from memory within "
              f"{MEMORY_TOKENS} tokens",
              bool(state.answer) == bool(supported) and estimate_tokens(state.context) <= MEMORY_TOKENS
              and all(f"| {p.object} (source: " in state.context for p in supported)),
    ]


def _scenario_checks(state: CapstoneState, scenario: ReviewScenario, written: list[Claim],
                     author_calls: list[Any] | None) -> list[Check]:
    """The gate for the scenario the scripted reviewer plays (``author_calls`` when scripted too)."""
    if scenario is ReviewScenario.REJECT_ALL:
        return [Check("a reviewer that rejects everything left no answer, zero memory writes and "
                      "no answer call to the author",
                      not state.answer and not written and not state.written
                      and (author_calls is None or len(author_calls) == 1))]
    verdicts = [r.verification.verdict for r in state.reviewed]
    return [Check("the fabricated citation was rejected before the reviewer and the negated quote "
                  "by it; the two supported claims were written and answered from",
                  verdicts == [Verdict.NOT_IN_SOURCE, Verdict.NOT_SUPPORTED, Verdict.SUPPORTED,
                               Verdict.SUPPORTED]
                  and len(written) + state.known == 2 and state.answer == SCRIPTED_ANSWER)]


def _outcome(state: CapstoneState, run: RunRecord, checks: list[Check], exhausted: bool,
             held_after: int, written: list[Claim], *, memory: str, scenario: ReviewScenario,
             label: str, pair: dict[str, Any], warnings: tuple[str, ...]) -> StageOutcome:
    facts: list[tuple[str, str]] = [
        ("question", state.question), ("memory", f"{memory} held {state.held_before} claims before "
                                                 f"the run; {len(state.memory.splitlines())} recalled"),
        ("research", f"{len(state.proposals)} claims" + (f" ({state.dropped} malformed entries dropped)"
                                                         if state.dropped else ""))]
    for number, reviewed in enumerate(state.reviewed, start=1):
        result = reviewed.verification
        facts.append(("claims" if number == 1 else "", f"{number}. {reviewed.proposal.text!r} citing "
                                                       f"{reviewed.proposal.citation!r}"))
        asked = "no reviewer call" if result.reviewer_calls == 0 else "1 reviewer call"
        facts.append(("", f"   -> {result.verdict}, {asked}: {result.reason}"))
    facts.append(("written", f"{len(written)} claims to {memory}"
                             + (f", {state.known} already known" if state.known else "")
                             + (f", {len(state.conflicts)} contradicting stored ones (reported)"
                                if state.conflicts else "")))
    facts.append(("answer", state.answer or "none: no claim was verified"))
    status = "exhausted" if exhausted else ("answered" if state.answer else "no answer")
    summary = (f"a budget ceiling ({run.stop_reason}) ended the run" if exhausted else
               f"{sum(1 for r in state.reviewed if r.verification.supported)} of "
               f"{len(state.reviewed)} claims verified, {len(written)} written to memory "
               f"({state.known} already known); "
               + ("answered from memory" if state.answer else "no answer"))
    return StageOutcome(
        stage="capstone", title=TITLE, lesson=LESSON, status=status, summary=summary, run=run,
        checks=tuple(checks), facts=tuple(facts), stop_reason=run.stop_reason, model=label,
        warnings=warnings,
        state={"question": state.question, "memory": state.memory,
               "reviewed": [{**r.proposal.model_dump(), **r.verification.model_dump(mode="json")}
                            for r in state.reviewed],
               "written": [claim.model_dump(mode="json") for claim in written],
               "conflicts": state.conflicts, "context": state.context, "answer": state.answer or None},
        details={"memory": memory, "scenario": str(scenario), "independence": pair,
                 "reviewer_calls": sum(r.verification.reviewer_calls for r in state.reviewed),
                 "memory_writes": held_after - state.held_before})
