"""``compiled.last_run``: the caller learns the run it just made without reading the trace."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from uuid import UUID

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from grapharc import Budget, GraphARC, GraphARCState
from grapharc.observe.metrics import metrics
from grapharc.observe.replay import replay
from grapharc.runtime.budget import BudgetExceededError
from grapharc.runtime.errors import RunInputError
from grapharc.runtime.graph import END, START
from grapharc.runtime.progress import ProgressGuard
from grapharc.testing import ScriptedChatModel


class State(GraphARCState):
    n: int = 0
    reply: str = ""
    stop: str | None = None


def events(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def chain(trace: Path | None = None, budget: Budget | None = None) -> GraphARC:
    model = ScriptedChatModel(responses=["hello there"], cycle=True)

    def ask(state: State) -> dict:
        return {"reply": str(model.invoke("hi").content), "n": state.n + 1}

    g = GraphARC(State, name="chain", trace=trace, budget=budget or Budget())
    g.add_node("ask", ask, writes={"reply", "n"})
    g.add_node("count", lambda s: {"n": s.n + 1}, writes={"n"})
    g.add_edge(START, "ask")
    g.add_edge("ask", "count")
    g.add_edge("count", END)
    return g


def test_invoke_leaves_the_run_its_ids_steps_spend_and_how_it_ended(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    compiled = chain(trace).compile(checkpointer=InMemorySaver())
    assert compiled.last_run is None

    compiled.invoke({}, {"configurable": {"thread_id": "t1"}})

    info = compiled.last_run
    run_end = events(trace)[-1]
    assert (info.run_id, info.thread_id, info.attempt) == (run_end["run_id"], "t1", 1)
    assert (info.status, info.stop_reason, info.finished) == ("completed", "completed", True)
    assert (info.first_step, info.last_step, info.iterations) == (1, 2, 2)
    assert info.tokens == run_end["tokens"] > 0 and info.cost_usd == run_end["cost_usd"]

    compiled.invoke(None, {"configurable": {"thread_id": "t1"}})
    assert compiled.last_run.attempt == 2 and compiled.last_run.run_id != info.run_id


def test_a_run_that_hits_its_budget_says_which_dimension_stopped_it() -> None:
    compiled = chain(budget=Budget(max_iterations=1)).compile()
    with pytest.raises(BudgetExceededError):
        compiled.invoke({})
    info = compiled.last_run
    assert (info.status, info.stop_reason, info.iterations) == ("budget_exceeded", "iterations", 1)
    assert info.error.startswith("BudgetExceededError")


def test_a_guards_stop_reason_is_the_runs_stop_reason_on_run_end_metrics_and_replay(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    guard = ProgressGuard(max_rounds=50, measure=lambda s: 0, window=2)
    g = GraphARC(State, name="stuck", trace=trace, budget=Budget(max_iterations=100))
    g.add_node("try", lambda s: {"n": s.n + 1, "stop": (reason := guard.check(s)) and reason.value},
               writes={"n", "stop"})
    g.add_conditional_edge("try", lambda s: "end" if s.stop else "again", {"again": "try", "end": END})
    g.add_edge(START, "try")
    compiled = g.compile()

    compiled.invoke({})

    run_id = compiled.last_run.run_id
    assert (compiled.last_run.status, compiled.last_run.stop_reason) == ("completed", "no_progress")
    assert events(trace)[-1]["stop_reason"] == "no_progress"
    assert metrics(trace, run_id).to_document()["stop_reason"] == "no_progress"
    assert replay(trace, run_id).to_document()["stop_reason"] == "no_progress"


def test_while_a_stream_runs_the_caller_already_knows_the_run_id(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    compiled = chain(trace).compile()
    seen = []
    for _chunk in compiled.stream({}, stream_mode="updates"):
        seen.append((compiled.last_run.run_id, compiled.last_run.status))
    assert {status for _, status in seen} == {"running"}
    assert {run_id for run_id, _ in seen} == {compiled.last_run.run_id} == {events(trace)[0]["run_id"]}
    assert compiled.last_run.status == "completed"


def test_async_entry_points_leave_their_run_in_the_awaiting_task() -> None:
    compiled = chain().compile()

    async def both() -> tuple[str, list[str]]:
        await compiled.ainvoke({})
        first = compiled.last_run.run_id
        ids = [compiled.last_run.run_id async for _ in compiled.astream({})]
        return first, ids

    first, streamed = asyncio.run(both())
    assert len(set(streamed)) == 1 and streamed[0] != first


def test_each_thread_sees_only_the_runs_it_made() -> None:
    compiled = chain().compile()
    seen: dict[str, tuple[str, str]] = {}

    def work(name: str) -> None:
        compiled.invoke({}, {"run_id": f"run-{name}"})
        seen[name] = (compiled.last_run.run_id, compiled.last_run.status)

    threads = [threading.Thread(target=work, args=(name,)) for name in ("a", "b", "c")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == {name: (f"run-{name}", "completed") for name in ("a", "b", "c")}
    assert compiled.last_run is None  # this thread made no run


def test_a_run_id_the_caller_chose_is_the_runs_id_and_a_bad_one_is_refused(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    compiled = chain(trace).compile()
    chosen = UUID("12345678-1234-5678-1234-567812345678")
    compiled.invoke({}, {"run_id": chosen})
    assert compiled.last_run.run_id == str(chosen) == events(trace)[0]["run_id"]
    for bad in ("", "x" * 201, "line\nbreak", {"id": 1}):
        with pytest.raises(RunInputError, match="run_id"):
            compiled.invoke({}, {"run_id": bad})
