"""Budgets enforced by the runtime: iterations, tokens, seconds and concurrency."""

from __future__ import annotations

import contextlib
import json
import operator
import threading
import time
from pathlib import Path
from typing import Annotated

import pytest
from langchain_core.messages import HumanMessage
from pydantic import Field

from grapharc import Budget, GraphARC, GraphARCState
from grapharc.models.scripted import ScriptedChatModel
from grapharc.runtime.budget import BudgetExceededError
from grapharc.runtime.fanout import WorkerOutcome
from grapharc.runtime.graph import END, START


class State(GraphARCState):
    count: int = 0
    reply: str = ""
    done: list[str] = Field(default_factory=list)
    outcomes: Annotated[list[WorkerOutcome], operator.add] = Field(default_factory=list)


def events(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def looping(budget: Budget, trace: Path | None = None):
    g = GraphARC(State, name="loop", budget=budget, trace=trace)
    g.add_node("tick", lambda s: {"count": s.count + 1}, writes={"count"})
    g.add_edge(START, "tick")
    g.add_conditional_edge("tick", lambda s: "tick", ["tick"])
    return g.compile()


def test_iterations_are_charged_per_node_execution_and_the_ceiling_ends_the_run(
    tmp_path: Path,
) -> None:
    trace = tmp_path / "trace.jsonl"

    with pytest.raises(BudgetExceededError) as raised:
        looping(Budget(max_iterations=5), trace).invoke({})

    assert (raised.value.dimension, raised.value.limit, raised.value.node) == ("iterations", 5, "tick")
    run_end = events(trace)[-1]
    assert run_end["phase"] == "run_end"
    assert (run_end["status"], run_end["stop_reason"], run_end["iterations"]) == (
        "budget_exceeded",
        "iterations",
        5,
    )
    assert sum(1 for e in events(trace) if e["phase"] == "end") == 5


def test_a_model_call_inside_a_node_is_charged_without_the_nodes_cooperation(
    tmp_path: Path,
) -> None:
    model = ScriptedChatModel(responses=["a reply of some length"])
    trace = tmp_path / "trace.jsonl"

    def ask(state: State) -> dict:
        return {"reply": str(model.invoke([HumanMessage("question?")]).content)}

    g = GraphARC(State, name="ask", trace=trace)
    g.add_node("ask", ask, writes={"reply"})
    g.add_edge(START, "ask")
    g.add_edge("ask", END)
    g.compile().invoke({})

    end = next(e for e in events(trace) if e["phase"] == "end")
    assert end["tokens"] > 0
    assert events(trace)[-1]["tokens"] == end["tokens"]


def test_the_token_ceiling_bites_at_the_call_that_crosses_it(tmp_path: Path) -> None:
    model = ScriptedChatModel(responses=["x" * 200], cycle=True)
    trace = tmp_path / "trace.jsonl"

    def ask(state: State) -> dict:
        model.invoke([HumanMessage("question?")])
        return {"count": state.count + 1}

    g = GraphARC(State, name="ask", budget=Budget(max_tokens=120), trace=trace)
    g.add_node("ask", ask, writes={"count"})
    g.add_edge(START, "ask")
    g.add_conditional_edge("ask", lambda s: "ask", ["ask"])

    with pytest.raises(BudgetExceededError) as raised:
        g.compile().invoke({})

    assert raised.value.dimension == "tokens"
    assert len(model.calls) == 3  # 53 + 53 tokens fit, the third call crosses 120
    assert events(trace)[-1]["stop_reason"] == "tokens"


def test_max_seconds_interrupts_a_node_parked_in_sleep_and_its_writes_never_land() -> None:
    g = GraphARC(State, budget=Budget(max_seconds=0.3))
    g.add_node("fast", lambda s: {"count": 1}, writes={"count"})
    g.add_node("slow", lambda s: time.sleep(30) or {"reply": "late"}, writes={"reply"})
    g.add_edge(START, "fast")
    g.add_edge("fast", "slow")
    g.add_edge("slow", END)
    started = time.monotonic()

    with pytest.raises(BudgetExceededError) as raised:
        g.compile().invoke({})

    assert time.monotonic() - started < 10
    assert (raised.value.dimension, raised.value.node) == ("seconds", "slow")


def test_a_node_that_swallows_the_deadline_and_returns_still_gets_no_writes() -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    def stubborn(state: State) -> dict:
        with contextlib.suppress(BaseException):
            time.sleep(30)
        return {"reply": "late"}

    g = GraphARC(State, budget=Budget(max_seconds=0.3))
    g.add_node("stubborn", stubborn, writes={"reply"})
    g.add_edge(START, "stubborn")
    g.add_edge("stubborn", END)
    compiled = g.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}

    with pytest.raises(BudgetExceededError):
        compiled.invoke({}, config)

    assert compiled.get_state(config).values.get("reply", "") == ""


def test_max_concurrency_caps_parallel_workers() -> None:
    lock = threading.Lock()
    running = [0]
    peak = [0]
    # each worker waits for a second one to be running beside it (8 items: four pairs), instead
    # of sleeping and hoping the next one starts meanwhile; the bound only matters when the cap
    # lets fewer than two run at once
    pair = threading.Barrier(2, timeout=60)

    def worker(item: int) -> int:
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        pair.wait()
        with lock:
            running[0] -= 1
        return item

    g = GraphARC(State, budget=Budget(max_concurrency=2))
    g.add_node("plan", lambda s: {"count": 8}, writes={"count"})
    g.add_edge(START, "plan")
    g.add_fanout("work", worker, after="plan", over=lambda s: range(s.count), into="outcomes", then=END)

    result = g.compile().invoke({})

    assert len(result["outcomes"]) == 8
    assert peak[0] == 2
