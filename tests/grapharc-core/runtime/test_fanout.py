"""Bounded fan-out with failure isolation: crashed and hung workers still yield an answer."""

from __future__ import annotations

import asyncio
import json
import operator
import time
from pathlib import Path
from typing import Annotated

import pytest
from langchain_core.messages import HumanMessage
from pydantic import Field

from grapharc import Budget, GraphARC, GraphARCState
from grapharc.models.scripted import ScriptedChatModel
from grapharc.runtime.budget import BudgetExceededError
from grapharc.runtime.errors import GraphBuildError
from grapharc.runtime.fanout import WorkerOutcome, dedupe, split_outcomes, unique_sources
from grapharc.runtime.graph import END, START


class State(GraphARCState):
    shards: list[str] = Field(default_factory=list)
    outcomes: Annotated[list[WorkerOutcome], operator.add] = Field(default_factory=list)
    answer: str = ""
    failures: list[str] = Field(default_factory=list)
    last: str = ""


def research(shard: str) -> str:
    if shard == "crash":
        raise ValueError("shard unreadable")
    if shard == "hang":
        time.sleep(30)
    return f"found in {shard}"


def merge(state: State) -> dict:
    ok, failed = split_outcomes(state.outcomes)
    return {
        "answer": "; ".join(str(o.value) for o in ok),
        "failures": [f"{o.item}:{o.status}:{o.error_type}" for o in failed],
    }


def fan_graph(worker, *, timeout: float | None, budget: Budget | None = None, trace=None):
    g = GraphARC(State, name="fan", budget=budget, trace=trace)
    g.add_node("plan", lambda s: {"last": "planned"}, writes={"last"})
    g.add_node("merge", merge, writes={"answer", "failures"})
    g.add_edge(START, "plan")
    g.add_fanout(
        "research",
        worker,
        after="plan",
        over=lambda s: s.shards,
        into="outcomes",
        then="merge",
        timeout=timeout,
    )
    g.add_edge("merge", END)
    return g.compile()


def test_a_crashed_and_a_hung_worker_out_of_three_still_yield_an_answer_with_causes() -> None:
    started = time.monotonic()

    result = fan_graph(research, timeout=0.5).invoke({"shards": ["good", "crash", "hang"]})

    assert time.monotonic() - started < 10
    assert result["answer"] == "found in good"
    assert result["failures"] == ["crash:crashed:ValueError", "hang:timed_out:None"]
    statuses = {o.item: (o.status, o.error) for o in result["outcomes"]}
    assert statuses["crash"] == ("crashed", "shard unreadable")
    assert statuses["hang"][0] == "timed_out"


def test_async_workers_are_isolated_and_a_hung_one_is_cancelled_at_its_timeout() -> None:
    async def aresearch(shard: str) -> str:
        if shard == "crash":
            raise KeyError(shard)
        if shard == "hang":
            await asyncio.sleep(30)
        return f"found in {shard}"

    started = time.monotonic()
    result = asyncio.run(fan_graph(aresearch, timeout=0.3).ainvoke({"shards": ["good", "crash", "hang"]}))

    assert time.monotonic() - started < 10
    assert result["answer"] == "found in good"
    assert result["failures"] == ["crash:crashed:KeyError", "hang:timed_out:None"]


def test_each_worker_is_charged_only_its_own_model_calls(tmp_path: Path) -> None:
    model = ScriptedChatModel()  # echoes, so the usage grows with the prompt
    trace = tmp_path / "t.jsonl"

    def ask(shard: str) -> str:
        time.sleep(0.01)  # let the workers overlap
        return str(model.invoke([HumanMessage(shard)]).content)

    shards = ["a" * 40, "b" * 400, "c" * 4000]
    fan_graph(ask, timeout=None, trace=trace).invoke({"shards": shards})

    recorded = [json.loads(line) for line in trace.read_text().splitlines()]
    ends = {
        e["state_delta"]["outcomes"][0]["index"]: e["tokens"]
        for e in recorded
        if e["phase"] == "end" and e["node"] == "research"
    }
    solo = {}
    for index, shard in enumerate(shards):
        with_prompt = model.invoke([HumanMessage(shard)])
        solo[index] = with_prompt.usage_metadata["total_tokens"]
    assert ends == solo
    assert recorded[-1]["tokens"] == sum(solo.values())


def test_budget_exhaustion_in_a_worker_is_not_isolated() -> None:
    model = ScriptedChatModel(responses=["y" * 400], cycle=True)

    def ask(shard: str) -> str:
        return str(model.invoke([HumanMessage(shard)]).content)

    graph = fan_graph(ask, timeout=None, budget=Budget(max_tokens=150))

    with pytest.raises(BudgetExceededError, match="tokens"):
        graph.invoke({"shards": ["a", "b", "c"]})


def test_nothing_to_map_over_goes_straight_to_the_join() -> None:
    result = fan_graph(research, timeout=None).invoke({"shards": []})

    assert result["answer"] == "" and result["outcomes"] == []


def test_a_fan_out_into_a_field_without_a_reducer_is_refused_at_compile() -> None:
    class Plain(GraphARCState):
        outcomes: list[WorkerOutcome] = Field(default_factory=list)

    g = GraphARC(Plain)
    g.add_fanout("w", research, after=START, over=lambda s: ["a"], into="outcomes", then=END)

    with pytest.raises(GraphBuildError, match="no reducer"):
        g.compile()


def test_dedupe_counts_unique_sources_not_repetitions() -> None:
    evidence = [
        ("chunk-1", "alpha"),
        ("chunk-2", "beta"),
        ("chunk-1", "alpha"),
        ("chunk-3", "gamma"),
        ("chunk-2", "beta"),
        ("chunk-1", "alpha"),
    ]

    assert unique_sources(evidence, key=lambda e: e[0]) == 3
    assert dedupe(evidence, key=lambda e: e[0]) == [
        ("chunk-1", "alpha"),
        ("chunk-2", "beta"),
        ("chunk-3", "gamma"),
    ]


def test_overlapping_shards_manufacture_duplicates_that_unique_sources_sees_through() -> None:
    chunks = {"s1": ["c1", "c2"], "s2": ["c2", "c3"], "s3": ["c3", "c1"]}

    result = fan_graph(lambda shard: chunks[shard], timeout=None).invoke({"shards": ["s1", "s2", "s3"]})

    found = [chunk for outcome in result["outcomes"] for chunk in outcome.value]
    assert len(found) == 6
    assert unique_sources(found, key=lambda chunk: chunk) == 3


def test_a_worker_mutating_its_item_in_place_cannot_reach_the_state() -> None:
    class Batches(GraphARCState):
        batches: list[list[str]] = Field(default_factory=list)
        outcomes: Annotated[list[WorkerOutcome], operator.add] = Field(default_factory=list)
        seen: list[list[str]] = Field(default_factory=list)

    def worker(batch: list[str]) -> int:
        batch.append("sneaked")
        return len(batch)

    g = GraphARC(Batches)
    g.add_node("after", lambda s: {"seen": s.batches}, writes={"seen"})
    g.add_fanout("work", worker, after=START, over=lambda s: s.batches, into="outcomes", then="after")
    g.add_edge("after", END)

    result = g.compile().invoke({"batches": [["a"], ["b", "c"]]})

    assert result["seen"] == [["a"], ["b", "c"]]
    assert sorted(o.value for o in result["outcomes"]) == [2, 3]
