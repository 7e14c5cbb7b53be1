"""A synthetic trace of realistic mixed events, written through GraphARC's own trace writer.

Several interleaved runs: node start/end pairs with state deltas, fan-out supersteps of
workers, failures, agent sub-steps (model and tool calls) inside nodes, and planning rounds and
admission decisions outside any node. Events are built with the writer's own builders and the
schema's names, and written by ``TraceWriter``, so the trace follows the format the readers read
(a format change shows up here, not as readers stopping at line 1). ``synthesise`` returns what
it wrote of each run, which a benchmark checks the readers' answers against.
"""

from __future__ import annotations

import dataclasses
import itertools
import random
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grapharc.runtime.budget import Budget
from grapharc.runtime.tokens import ModelCalls, NodeUsage, model_fields
from grapharc.trace import schema as ts
from grapharc.trace.writer import TraceWriter, end_fields, exception_document, node_identity

RUNS = 4
GRAPH = "incident"
MODEL = "openrouter/some/model"
CHAIN = ("intake", "collect_context", "investigate", "plan_fix", "verify", "summarize")
WORKERS = 4
EDGES = [["__start__", CHAIN[0]], *([a, b] for a, b in itertools.pairwise(CHAIN)), [CHAIN[-1], "worker"]]
BATCH = 1000
"""Events handed to the writer at once (one write each batch)."""


@dataclass
class Written:
    """What ``synthesise`` wrote for one run: what a reader must find of it again."""

    thread_id: str
    events: int = 0
    executions: int = 0
    completed: int = 0
    failed: int = 0
    node_tokens: int = 0
    outside_tokens: int = 0

    @property
    def tokens(self) -> int:
        """The run's tokens: its nodes' and its planner's (outside any node)."""
        return self.node_tokens + self.outside_tokens

def _node(phase: str, run_id: str, written: Written, node: str, step: int, **fields: Any) -> dict[str, Any]:
    """A node event as GraphARC's writer builds it, with ``fields`` added."""
    event = node_identity(phase, run_id, written.thread_id, 1, GRAPH, node, step)
    event.update(fields)
    return event


def _run_events(rng: random.Random, run_id: str, written: Written, tenant: str
                ) -> Iterator[dict[str, Any]]:
    """An endless stream of one run's events (the caller stops it and appends run_end)."""
    yield {ts.PHASE: ts.RUN_START, ts.RUN_ID: run_id, ts.THREAD_ID: written.thread_id, ts.ATTEMPT: 1,
           ts.GRAPH: GRAPH, ts.SCHEMA_VERSION_FIELD: ts.SCHEMA_VERSION,
           ts.BUDGET: dataclasses.asdict(Budget(max_tokens=200_000)), ts.TENANT: tenant,
           ts.LABELS: {"team": rng.choice(["sre", "data", "web"])}, ts.EDGES: EDGES}
    step = 0
    while True:
        step += 1
        if rng.random() < 0.1:
            planner = rng.randint(100, 900)
            written.outside_tokens += planner
            governance = {ts.PHASE: ts.ADMISSION, ts.RUN_ID: run_id, ts.THREAD_ID: written.thread_id,
                          ts.LOOP_ID: run_id, ts.ROUND: step}
            yield {**governance, ts.ACTION: "plan", ts.READABLE: True, ts.TOKENS: planner,
                   ts.COST_USD: rng.uniform(0.0001, 0.01)}
            yield {**governance, ts.ACTION: "decision", ts.STATUS: "admitted",
                   ts.FINGERPRINT: uuid.UUID(int=rng.getrandbits(128)).hex,
                   ts.CHECKS_RUN: ["kind", "edge", "budget", "depth", "acyclic"], ts.FAILED: []}
        nodes = ["worker"] * WORKERS if step % 5 == 0 else [CHAIN[step % len(CHAIN)]]
        for node in nodes:
            written.executions += 1
            yield _node(ts.START, run_id, written, node, step)
        for index, node in enumerate(nodes):
            if rng.random() < 0.15:
                yield _node(ts.MODEL_CALL, run_id, written, node, step, **{
                    ts.DURATION_MS: rng.uniform(100, 900), ts.MODEL: MODEL,
                    ts.TOOL_CALLS: 1})
                yield _node(ts.TOOL_CALL, run_id, written, node, step, **{
                    ts.TOOL: "read_file", ts.CALL_ID: f"call-{step}-{index}", ts.OUTCOME: "ok",
                    ts.EXECUTOR: "local", ts.DURATION_MS: rng.uniform(1, 30)})
            duration = rng.uniform(0.05, 40.0)
            if rng.random() < 0.02:
                written.failed += 1
                failure = _node(ts.ERROR, run_id, written, node, step)
                failure[ts.DURATION_MS] = duration
                failure[ts.EXCEPTION] = exception_document(ValueError("upstream returned 502"))
                yield failure
                continue
            text = "evidence " * rng.randint(2, 30)
            delta = ({"evidence": [{"source": f"doc-{rng.randint(1, 999)}.md", "chunk": index,
                                    "text": text}]} if node == "worker"
                     else {"notes": text, "round": step})
            tokens = rng.randint(0, 1500)
            written.completed += 1
            written.node_tokens += tokens
            end = end_fields(_node(ts.END, run_id, written, node, step), delta, duration, tokens,
                             rng.choice([None, rng.uniform(0.0001, 0.005)]))
            yield end | model_fields(_one_call(tokens)) if tokens else end


def _one_call(tokens: int) -> NodeUsage:
    """The usage scope of a node whose one model call spent ``tokens`` (three in four of them input),
    from which the kernel writes an ``end`` event's model fields."""
    input_tokens = tokens * 3 // 4
    calls = ModelCalls(1, tokens, input_tokens, tokens - input_tokens)
    return NodeUsage(tokens, calls.input_tokens, calls.output_tokens, calls=1, models={MODEL: calls})


def _run_end(run_id: str, written: Written) -> dict[str, Any]:
    """The closing event of a synthetic run, with what its meter would have charged."""
    return {ts.PHASE: ts.RUN_END, ts.RUN_ID: run_id, ts.THREAD_ID: written.thread_id, ts.ATTEMPT: 1,
            ts.GRAPH: GRAPH, ts.STATUS: ts.COMPLETED, ts.STOP_REASON: ts.COMPLETED,
            ts.ITERATIONS: written.executions, ts.TOKENS: written.node_tokens + written.outside_tokens,
            ts.COST_USD: None, ts.UNPRICED_CALLS: 0, ts.DURATION_MS: 1000.0}


def synthesise(path: Path, events: int, seed: int = 7) -> dict[str, Written]:
    """Write ``events`` events of ``RUNS`` interleaved runs to ``path`` through GraphARC's own
    trace writer; what was written, by run id (in the order the runs began)."""
    rng = random.Random(seed)
    clock = [1_790_000_000.0]

    def tick() -> float:
        clock[0] += rng.uniform(0.0005, 0.02)
        return clock[0]

    runs: dict[str, Written] = {}
    streams = []
    for number in range(RUNS):
        run_id = str(uuid.UUID(int=rng.getrandbits(128)))
        runs[run_id] = Written(uuid.UUID(int=rng.getrandbits(128)).hex)
        streams.append((run_id, _run_events(rng, run_id, runs[run_id], f"tenant-{number % 2}")))
    budget = events - RUNS  # room for each run's run_end
    pending: list[dict[str, Any]] = []
    with TraceWriter(path) as writer:
        while budget > 0:
            for run_id, stream in streams:
                for _ in range(min(rng.randint(1, 12), budget)):
                    pending.append({**next(stream), ts.TS: tick()})
                    runs[run_id].events += 1
                    budget -= 1
            if len(pending) >= BATCH:
                writer.append_many(pending)
                pending = []
        for run_id, written in runs.items():
            pending.append({**_run_end(run_id, written), ts.TS: tick()})
            written.events += 1
        writer.append_many(pending)
    return runs
