"""Stage 3, bounded fan-out: three workers read overlapping shards, isolated from each other.

``plan`` cuts six chunks into three overlapping shards; the ``read`` fan-out runs one worker
per shard under the run's ``max_concurrency``, each asking the model which of its chunks
answer the question; ``synthesize`` answers from whatever survived. In the isolation
scenario one worker crashes and one hangs: the kernel records them as ``crashed`` (with the
exception type) and ``timed_out`` instead of failing the run, and the answer comes from the
third. In the overlap scenario every worker succeeds, the shared chunks come back twice,
and ``unique_sources`` counts chunks, not repetitions.
"""

from __future__ import annotations

import operator
import re
import time
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, Field

from grapharc.errors import GraphARCError
from grapharc.examples.demo_choices import FanoutScenario as Scenario
from grapharc.examples.demo_outcome import Check, StageOutcome
from grapharc.examples.demo_runs import RunRecord, run_record
from grapharc.examples.demo_support import (
    SCRIPTED_LABEL,
    DemoInputError,
    ask,
    demo_model,
    new_thread_id,
    run_to_end,
    thread_config,
)
from grapharc.runtime.budget import Budget
from grapharc.runtime.fanout import WorkerOutcome, dedupe, split_outcomes, unique_sources
from grapharc.runtime.graph import END, START, GraphARC
from grapharc.runtime.state import GraphARCState
from grapharc.trace import schema as ts

TITLE = "bounded fan-out with failure isolation and dedup"
LESSON = (
    "Three workers read overlapping shards in parallel, never more at once than max_concurrency "
    "allows. A worker that crashes or hangs becomes a recorded outcome with its cause instead of "
    "failing the run, so the others still produce an answer; evidence the overlap duplicates is "
    "counted once, by source chunk."
)
QUESTION = "What does GraphARC enforce on a LangGraph run?"
CHUNKS = {
    "c1": "Every node declares the state fields it may write.",
    "c2": "An undeclared write raises WritePermissionError.",
    "c3": "Each run has a budget of iterations, tokens, seconds and concurrency.",
    "c4": "max_seconds is delivered as an interrupt into the running node.",
    "c5": "Every node execution writes start and end events to the JSONL trace.",
    "c6": "metrics, replay and diff read that same trace file.",
}
SHARDS = (("c1", "c2", "c3"), ("c3", "c4", "c5"), ("c5", "c6", "c1"))
DEFAULT_BUDGET = Budget(max_iterations=20, max_tokens=100_000, max_concurrency=3)
DEFAULT_TIMEOUT = 2.0
HANG_SECONDS = 300.0
_CHUNK_ID = re.compile(r"\bc\d+\b")
FAULTS: dict[Scenario, dict[int, str]] = {
    Scenario.ISOLATION: {1: "crash", 2: "hang"},
    Scenario.OVERLAP: {},
}
ANSWERS: dict[Scenario, str] = {
    Scenario.ISOLATION: "Every node declares the fields it may write, an undeclared write raises "
                        "WritePermissionError, and each run has a budget. [c1, c2, c3]",
    Scenario.OVERLAP: "Declared writes (an undeclared one raises), a per-run budget with max_seconds "
                      "as an interrupt, and a JSONL trace that metrics, replay and diff read. "
                      "[c1-c6]",
}


class ShardUnreadableError(GraphARCError):
    """A worker could not read its shard (the isolation scenario injects this)."""


class Shard(BaseModel):
    """One worker's slice of the chunks."""

    index: int
    chunks: list[str]


class Evidence(BaseModel):
    """A chunk a worker judged relevant, and which shard it came through."""

    chunk: str
    text: str
    shard: int


class Stage3State(GraphARCState):
    """The fan-out's state: shards out, outcomes back (appended by the reducer), then the answer."""

    question: str
    shards: list[Shard] = Field(default_factory=list)
    outcomes: Annotated[list[WorkerOutcome], operator.add] = Field(default_factory=list)
    evidence: list[Evidence] = Field(default_factory=list)
    unique: list[Evidence] = Field(default_factory=list)
    answer: str = ""


def _hang() -> None:
    """Stand in for a worker stuck on a dead socket; short sleeps let its timeout stop it."""
    deadline = time.monotonic() + HANG_SECONDS
    while time.monotonic() < deadline:
        time.sleep(0.05)


def _read_prompt(question: str, shard: Shard) -> str:
    lines = [f"Question: {question}", "Which of these chunks help answer it? Reply with their ids."]
    lines += [f"{chunk}: {CHUNKS[chunk]}" for chunk in shard.chunks]
    return "\n".join(lines)


def _answer_prompt(question: str, unique: list[Evidence]) -> str:
    lines = [f"Question: {question}", "Answer in one or two sentences using only this evidence, "
             "and cite the chunk ids."]
    lines += [f"{item.chunk}: {item.text}" for item in unique]
    return "\n".join(lines)


def build_stage3(readers: list[Any], writer: Any, *, trace: Path | None,
                 faults: dict[int, str] | None = None, worker_timeout: float = DEFAULT_TIMEOUT,
                 budget: Budget = DEFAULT_BUDGET, checkpointer: Any = None) -> Any:
    """The compiled fan-out; ``readers[i]`` serves shard i, ``faults`` maps shard -> crash / hang."""
    faults = faults or {}

    def plan(state: Stage3State) -> dict[str, Any]:
        return {"shards": [Shard(index=i, chunks=list(chunks)) for i, chunks in enumerate(SHARDS)]}

    def read(shard: Shard) -> list[Evidence]:
        fault = faults.get(shard.index)
        if fault == "crash":
            raise ShardUnreadableError(f"shard {shard.index}: the chunk store refused the read")
        if fault == "hang":
            _hang()
        reply = ask(readers[shard.index], _read_prompt(QUESTION, shard))
        picked = dedupe((c for c in _CHUNK_ID.findall(reply) if c in shard.chunks), key=str)
        return [Evidence(chunk=c, text=CHUNKS[c], shard=shard.index) for c in picked]

    def synthesize(state: Stage3State) -> dict[str, Any]:
        succeeded, _failed = split_outcomes(state.outcomes)
        evidence = [item for outcome in succeeded for item in outcome.value]
        unique = dedupe(evidence, key=lambda item: item.chunk)
        answer = ask(writer, _answer_prompt(state.question, unique)) if unique else ""
        return {"evidence": evidence, "unique": unique, "answer": answer}

    graph = GraphARC(Stage3State, name="stage3", budget=budget, trace=trace)
    graph.add_node("plan", plan, writes={"shards"})
    graph.add_node("synthesize", synthesize, writes={"evidence", "unique", "answer"})
    graph.add_edge(START, "plan")
    graph.add_fanout("read", read, after="plan", over=lambda s: s.shards, into="outcomes",
                     then="synthesize", timeout=worker_timeout)
    graph.add_edge("synthesize", END)
    return graph.compile(checkpointer=checkpointer)


def run_stage3(*, trace: Path, scenario: Scenario = Scenario.ISOLATION, model_spec: str | None = None,
               worker_timeout: float = DEFAULT_TIMEOUT, budget: Budget = DEFAULT_BUDGET) -> StageOutcome:
    """Fan out over the three shards (scripted unless ``model_spec``) and check what came back."""
    from langgraph.checkpoint.memory import InMemorySaver

    if not worker_timeout > 0:
        raise DemoInputError(f"worker timeout must be a positive number of seconds, got {worker_timeout}")
    if model_spec is not None:
        shared = demo_model(model_spec, (), name="stage3")
        readers, writer = [shared] * len(SHARDS), shared
    else:
        readers = [demo_model(None, (f"Relevant: {', '.join(chunks)}",), name=f"stage3-reader{i}")
                   for i, chunks in enumerate(SHARDS)]
        writer = demo_model(None, (ANSWERS[scenario],), name="stage3-writer")
    thread_id = new_thread_id("stage3")
    config = thread_config(thread_id)
    graph = build_stage3(readers, writer, trace=trace, faults=FAULTS[scenario],
                         worker_timeout=worker_timeout, budget=budget,
                         checkpointer=InMemorySaver())
    values, exhausted = run_to_end(graph, {"question": QUESTION}, config)
    state = Stage3State.model_validate(values)
    return _outcome(state, run_record(trace, graph.last_run), scenario, model_spec, worker_timeout, budget,
                    exhausted)


def peak_concurrency(run: RunRecord, node: str) -> int:
    """The most executions of ``node`` the trace shows running at the same time."""
    edges = sorted((event[ts.TS], 1 if event[ts.PHASE] == ts.START else -1)
                   for event in run.node_events if event[ts.NODE] == node)
    peak = running = 0
    for _ts, change in edges:
        running += change
        peak = max(peak, running)
    return peak


def _worker_line(outcome: WorkerOutcome) -> str:
    shard = Shard.model_validate(outcome.item)
    head = f"shard {shard.index} [{' '.join(shard.chunks)}]: {outcome.status}"
    if outcome.ok:
        return f"{head}, {len(outcome.value)} chunks of evidence"
    cause = f"{outcome.error_type}: {outcome.error}" if outcome.error_type else outcome.error
    return f"{head} ({cause})"


def _outcome(state: Stage3State, run: RunRecord, scenario: Scenario, model_spec: str | None,
             worker_timeout: float, budget: Budget, exhausted: bool) -> StageOutcome:
    succeeded, failed = split_outcomes(state.outcomes)
    distinct = unique_sources(state.evidence, key=lambda item: item.chunk)
    peak = peak_concurrency(run, "read")
    limit = budget.max_concurrency
    facts = [("question", QUESTION),
             ("workers", f"{len(state.shards)} over overlapping shards, max_concurrency "
                         f"{limit or 'unbounded'}, timeout {worker_timeout:g} s each")]
    facts += [("", _worker_line(outcome)) for outcome in sorted(state.outcomes, key=lambda o: o.index)]
    facts += [("evidence", f"{len(state.evidence)} items from {distinct} distinct chunks "
                           "(unique_sources)"),
              ("peak", f"{peak} workers ran at once (max_concurrency {limit or 'unbounded'})"),
              ("answer", state.answer or "(none)")]
    checks = (Check(f"an answer came from the surviving workers ({len(succeeded)} of "
                    f"{len(state.shards)})", bool(state.answer)),
              Check(f"every failed worker is recorded by its cause ({len(failed)} failed)",
                    all(o.status == "timed_out" or o.error_type for o in failed)),
              Check(f"unique_sources counts {distinct} chunks among {len(state.evidence)} "
                    "evidence items, not the repetitions",
                    distinct == len(state.unique) == len({item.chunk for item in state.evidence})),
              Check(f"no more than max_concurrency workers ran at once (peak {peak})",
                    limit is None or peak <= limit),
              Check("the run ended by completing, not on a budget", not exhausted))
    summary = (f"{len(succeeded)} of {len(state.shards)} workers succeeded and the answer rests on "
               f"{distinct} distinct chunks" if state.answer else "no worker survived to answer")
    return StageOutcome(
        stage="stage3", title=TITLE, lesson=LESSON, status="completed" if state.answer else "no_answer",
        summary=summary, run=run, checks=checks, facts=tuple(facts), stop_reason=run.stop_reason,
        model=model_spec or f"{SCRIPTED_LABEL}, scenario {scenario}",
        state={"answer": state.answer, "evidence": len(state.evidence), "unique_sources": distinct,
               "unique": [item.chunk for item in state.unique]},
        details={"workers": [o.model_dump(mode="json") for o in sorted(state.outcomes,
                                                                       key=lambda o: o.index)],
                 "failures": [{"shard": o.index, "status": o.status, "error_type": o.error_type,
                               "error": o.error} for o in failed],
                 "peak_concurrency": peak, "max_concurrency": limit,
                 "worker_timeout": worker_timeout})
