"""Stage 5, independent verification: author -> review -> publish.

``author`` asks the author model for claims about a postmortem, each with a quote copied
from it; ``review`` runs ``verify_claim`` on every claim with a separate reviewer model;
``publish`` keeps the claims the reviewer supported. The anchor rejects a fabricated or
trivial quote before the reviewer is called; the reviewer sees only the claim, the quote
and a window of source, so a real quote lifted out of a negated sentence is exposed; a
reply that is not a boolean verdict is a rejection. The scripted run shows each of these.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from grapharc.examples.demo_outcome import Check, StageOutcome, Warn, no_warning
from grapharc.examples.demo_runs import RunRecord, run_record
from grapharc.examples.demo_support import (
    SCRIPTED_LABEL,
    ask,
    demo_model,
    new_thread_id,
    run_to_end,
    thread_config,
)
from grapharc.memory.verify import (
    Verdict,
    Verification,
    anchored,
    read_verdict,
    require_distinct,
    review_prompt,
    verify_claim,
)
from grapharc.models.replies import NoJSONError, extract_json
from grapharc.runtime.budget import Budget
from grapharc.runtime.graph import END, START, GraphARC
from grapharc.runtime.state import GraphARCState

TITLE = "verifier: fresh context + deterministic evidence anchor"
LESSON = (
    "A claim is only as good as its evidence, so evidence is checked twice, by different means. "
    "Code checks first and for free: the quote must appear verbatim in the source, so a "
    "fabricated one is rejected before any reviewer is paid. A separate reviewer then reads the "
    "claim, the quote and the source around it, never the author's conversation, and must answer "
    "a boolean verdict; anything it says that is not one is a rejection."
)
SOURCE = (
    "At 14:02 UTC checkout latency rose from 180 ms to 2.4 s. The 14:01 deploy of checkout v2.3 "
    "had reduced the database connection pool from 20 to 2. Rolling back the deploy at 14:19 did "
    "not restore normal latency, because the pool size is read only at startup. Restarting the "
    "checkout hosts at 14:31 restored normal latency within four minutes. No customer data was lost."
)
AUTHOR_INSTRUCTIONS = (
    "List the factual claims the postmortem below supports. Reply with a JSON array only, as "
    '[{"claim": "...", "citation": "..."}], where each citation is copied word for word from '
    "the postmortem."
)
DEFAULT_BUDGET = Budget(max_iterations=20, max_tokens=100_000)
NEGATED_CONTEXT = "did not restore normal latency"


class ScriptedClaim(BaseModel):
    """One scripted claim: what it demonstrates, what the author says, what the reviewer replies."""

    name: str
    claim: str
    citation: str
    review: str | None
    expected: Verdict
    shows: str


CASES = (
    ScriptedClaim(name="fabricated", claim="A payment-gateway timeout caused the outage",
         citation="payment gateway timeouts caused the checkout outage", review=None,
         expected=Verdict.NOT_IN_SOURCE,
         shows="a fabricated citation was rejected with the reviewer never called"),
    ScriptedClaim(name="trivial", claim="The deploy caused the outage", citation="the deploy", review=None,
         expected=Verdict.TRIVIAL_CITATION,
         shows="a citation under 12 characters was rejected with the reviewer never called"),
    ScriptedClaim(name="negated", claim="Rolling back the deploy fixed the latency",
         citation="restore normal latency",
         review='Reading the excerpt (see note [1]): {"supported": false, "reason": "the excerpt '
                'says the rollback did not restore normal latency"}',
         expected=Verdict.NOT_SUPPORTED,
         shows=f"a quote lifted out of a negated sentence reached the reviewer inside the window "
               f"that exposes it ('{NEGATED_CONTEXT}') and was rejected"),
    ScriptedClaim(name="unparseable", claim="Checkout latency rose at 14:02",
         citation="checkout latency rose from 180 ms to 2.4 s",
         review="Yes, the postmortem clearly supports this.", expected=Verdict.UNPARSEABLE,
         shows="a reviewer reply with no JSON verdict was a rejection"),
    ScriptedClaim(name="non-boolean", claim="No customer data was lost", citation="No customer data was lost",
         review='{"supported": "yes", "reason": "stated outright"}', expected=Verdict.NOT_BOOLEAN,
         shows="a non-boolean 'supported' was a rejection"),
    ScriptedClaim(name="correct", claim="The 14:01 deploy shrank the database connection pool",
         citation="reduced the database connection pool from 20 to 2",
         review='{"supported": true, "reason": "the excerpt states the pool went from 20 to 2 in '
                'the 14:01 deploy"}', expected=Verdict.SUPPORTED,
         shows="a correctly cited claim was accepted and published"),
)


def author_script() -> str:
    """The scripted author's one reply: every case's claim and citation, as a JSON array."""
    return json.dumps([{"claim": case.claim, "citation": case.citation} for case in CASES], indent=1)


REVIEWER_SCRIPT = tuple(case.review for case in CASES if case.review is not None)


class AuthoredClaim(BaseModel):
    """A claim as the author stated it, with the quote it cites."""

    model_config = ConfigDict(extra="forbid")
    claim: str
    citation: str


class Reviewed(BaseModel):
    """A claim and how its verification ended."""

    claim: str
    citation: str
    verification: Verification


class Stage5State(GraphARCState):
    """The source, the author's reply and claims, each claim's verification, what was published."""

    source: str
    reply: str = ""
    claims: list[AuthoredClaim] = Field(default_factory=list)
    dropped: int = 0
    reviewed: list[Reviewed] = Field(default_factory=list)
    published: list[str] = Field(default_factory=list)


def author_prompt(source: str) -> str:
    """The author's whole conversation with the graph: the instructions and the postmortem."""
    return f"{AUTHOR_INSTRUCTIONS}\n\nPostmortem:\n{source}"


def read_claims(reply: str) -> tuple[list[AuthoredClaim], int]:
    """The well-formed claims in the author's reply, and how many entries were not claims."""
    try:
        data = extract_json(reply)
    except NoJSONError:
        return [], 0
    entries = data if isinstance(data, list) else [data]
    claims = [AuthoredClaim(claim=e["claim"], citation=e["citation"]) for e in entries
              if isinstance(e, dict) and isinstance(e.get("claim"), str)
              and isinstance(e.get("citation"), str)]
    return claims, len(entries) - len(claims)


def build_stage5(author_model: Any, reviewer_model: Any, *, trace: Path | None,
                 budget: Budget = DEFAULT_BUDGET, checkpointer: Any = None) -> Any:
    """The compiled author -> review -> publish graph; refuses one object as author and reviewer."""
    require_distinct(author_model, reviewer_model)

    def author(state: Stage5State) -> dict[str, Any]:
        reply = ask(author_model, author_prompt(state.source))
        claims, dropped = read_claims(reply)
        return {"reply": reply, "claims": claims, "dropped": dropped}

    def review(state: Stage5State) -> dict[str, Any]:
        return {"reviewed": [Reviewed(claim=c.claim, citation=c.citation,
                                      verification=verify_claim(c.claim, c.citation, state.source,
                                                                reviewer_model))
                             for c in state.claims]}

    def publish(state: Stage5State) -> dict[str, Any]:
        return {"published": [r.claim for r in state.reviewed if r.verification.supported]}

    graph = GraphARC(Stage5State, name="stage5", budget=budget, trace=trace)
    graph.add_node("author", author, writes={"reply", "claims", "dropped"})
    graph.add_node("review", review, writes={"reviewed"})
    graph.add_node("publish", publish, writes={"published"})
    graph.add_edge(START, "author")
    graph.add_edge("author", "review")
    graph.add_edge("review", "publish")
    graph.add_edge("publish", END)
    return graph.compile(checkpointer=checkpointer)


def independence(author_spec: str, reviewer_spec: str) -> dict[str, Any]:
    """The vendor each spec reaches and whether they differ (raises on a bad spec)."""
    from grapharc.models import vendor_of

    author, reviewer = vendor_of(author_spec), vendor_of(reviewer_spec)
    return {"author": author_spec, "reviewer": reviewer_spec, "author_vendor": author,
            "reviewer_vendor": reviewer, "different_providers": author != reviewer}


def shared_vendor_warnings(pair: dict[str, Any]) -> tuple[str, ...]:
    """The warning for an ``independence`` pair whose author and reviewer reach one vendor."""
    if pair["different_providers"]:
        return ()
    return (f"the author ({pair['author']}) and the reviewer ({pair['reviewer']}) both reach "
            f"{pair['author_vendor']}: their agreement is correlated, not independent; pass "
            "--reviewer-model with a model from another vendor",)


def run_stage5(*, trace: Path, model_spec: str | None = None, reviewer_spec: str | None = None,
               budget: Budget = DEFAULT_BUDGET, warn: Warn = no_warning) -> StageOutcome:
    """Author and review the claims (scripted unless specs are given) and check every verdict.

    A real author with no reviewer spec is reviewed by a second instance of the same spec; a pair
    that shares a vendor is told to ``warn`` as soon as the specs resolve, before any model is
    built or called, and the outcome carries the warning too.
    """
    from langgraph.checkpoint.memory import InMemorySaver

    reviewer_spec = reviewer_spec or model_spec
    pair = independence(model_spec or "mock/stage5-author", reviewer_spec or "mock/stage5-reviewer")
    scripted = model_spec is None and reviewer_spec is None
    warnings = () if scripted else shared_vendor_warnings(pair)
    for warning in warnings:
        warn(warning)
    author_model = demo_model(model_spec, (author_script(),), name="stage5-author")
    reviewer_model = demo_model(reviewer_spec, REVIEWER_SCRIPT, name="stage5-reviewer")
    config = thread_config(new_thread_id("stage5"))
    graph = build_stage5(author_model, reviewer_model, trace=trace, budget=budget,
                         checkpointer=InMemorySaver())
    values, exhausted = run_to_end(graph, {"source": SOURCE}, config)
    state = Stage5State.model_validate(values)
    return _outcome(state, run_record(trace, graph.last_run), scripted, exhausted, pair, warnings,
                    calls=getattr(reviewer_model, "calls", None))


def _invariants(state: Stage5State, calls: list[Any] | None) -> list[Check]:
    """What holds whatever the models said: checked from raw replies, not the stored verdicts."""
    author_turn = (author_prompt(state.source), state.reply)
    prompts = [r.verification.prompt for r in state.reviewed if r.verification.prompt is not None]
    anchored_claims = [r for r in state.reviewed if anchored(r.citation, state.source)]
    made = sum(r.verification.reviewer_calls for r in state.reviewed)
    counted = made if calls is None else len(calls)
    accepted = [r.claim for r in state.reviewed if r.verification.reply is not None
                and anchored(r.citation, state.source)
                and read_verdict(r.verification.reply)[0] is Verdict.SUPPORTED]
    return [
        Check(f"the reviewer was called once per anchored claim and never otherwise "
              f"({counted} calls for {len(anchored_claims)} of {len(state.reviewed)} claims)",
              made == counted == len(anchored_claims)
              and all(r.verification.reviewer_calls == 1 for r in anchored_claims)),
        Check("each reviewer prompt held the claim, the quote and its evidence window, and none "
              "of the author's conversation",
              all(r.verification.prompt == review_prompt(r.claim, r.citation, r.verification.window)
                  for r in state.reviewed if r.verification.prompt is not None and r.verification.window)
              and not any(turn and turn in prompt for turn in author_turn for prompt in prompts)),
        Check("only claims whose reviewer answered \"supported\": true were published",
              state.published == accepted),
    ]


def _case_checks(state: Stage5State) -> list[Check]:
    """The scripted run's gate: each scripted case ended on the verdict it demonstrates."""
    by_claim = {r.claim: r.verification for r in state.reviewed}
    checks = []
    for case in CASES:
        result = by_claim.get(case.claim)
        ok = result is not None and result.verdict is case.expected
        if case.review is None:
            ok = ok and result is not None and result.reviewer_calls == 0
        if case.name == "negated":
            ok = ok and result is not None and NEGATED_CONTEXT in (result.window or "")
        if case.expected is Verdict.SUPPORTED:
            ok = ok and case.claim in state.published
        checks.append(Check(case.shows, ok))
    return checks


def _outcome(state: Stage5State, run: RunRecord, scripted: bool, exhausted: bool,
             pair: dict[str, Any], warnings: tuple[str, ...], calls: list[Any] | None) -> StageOutcome:
    checks = [Check("the run ended without hitting a budget ceiling", not exhausted),
              *(_case_checks(state) if scripted else []), *_invariants(state, calls)]
    facts: list[tuple[str, str]] = [("source", f"{len(state.source)} characters of postmortem"),
                                    ("author", f"{len(state.claims)} claims"
                                               + (f" ({state.dropped} malformed entries dropped)"
                                                  if state.dropped else ""))]
    for number, reviewed in enumerate(state.reviewed, start=1):
        result = reviewed.verification
        facts.append(("claims" if number == 1 else "",
                      f"{number}. {reviewed.claim!r} citing {reviewed.citation!r}"))
        asked = "no reviewer call" if result.reviewer_calls == 0 else "1 reviewer call"
        facts.append(("", f"   -> {result.verdict}, {asked}: {result.reason}"))
    facts.append(("published", "; ".join(state.published) or "nothing"))
    made = sum(r.verification.reviewer_calls for r in state.reviewed)
    summary = (f"{len(state.published)} of {len(state.reviewed)} claims published; "
               f"{made} reviewer calls, none for a quote the source does not hold"
               if not exhausted else f"a budget ceiling ({run.stop_reason}) ended the run")
    label = SCRIPTED_LABEL if scripted else f"author {pair['author']}, reviewer {pair['reviewer']}"
    return StageOutcome(
        stage="stage5", title=TITLE, lesson=LESSON, status="exhausted" if exhausted else "verified",
        summary=summary, run=run, checks=tuple(checks), facts=tuple(facts),
        stop_reason=run.stop_reason, model=label, warnings=warnings,
        state={"claims": len(state.claims), "dropped": state.dropped,
               "reviewed": [{"claim": r.claim, "citation": r.citation,
                             **r.verification.model_dump(mode="json")} for r in state.reviewed],
               "published": state.published},
        details={"independence": pair, "reviewer_calls": made})
