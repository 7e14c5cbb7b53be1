"""Async is carried through: the same discipline on ainvoke, astream and astream_events."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from grapharc import Budget, GraphARC, GraphARCState
from grapharc.runtime.budget import BudgetExceededError
from grapharc.runtime.context import CURRENT_RUN
from grapharc.runtime.errors import UnsupportedStreamError, WritePermissionError
from grapharc.runtime.graph import END, START


class State(GraphARCState):
    count: int = 0
    label: str = ""


async def count(state: State) -> dict:
    await asyncio.sleep(0)
    return {"count": state.count + 1}


def build(*, label=None, budget: Budget | None = None, trace: Path | None = None):
    async def name(state: State) -> dict:
        return {"label": f"n{state.count}"}

    g = GraphARC(State, name="async", budget=budget, trace=trace)
    g.add_node("count", count, writes={"count"})
    g.add_node("name", label or name, writes={"label"})
    g.add_edge(START, "count")
    g.add_edge("count", "name")
    g.add_edge("name", END)
    return g.compile()


def test_ainvoke_runs_async_nodes_with_traces_and_checked_writes(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"

    result = asyncio.run(build(trace=trace).ainvoke({}))

    assert result == {"count": 1, "label": "n1"}
    kinds = [json.loads(line)["phase"] for line in trace.read_text().splitlines()]
    assert kinds == ["run_start", "start", "end", "start", "end", "run_end"]


def test_an_async_node_write_outside_its_allowlist_is_refused() -> None:
    async def sneaky(state: State) -> dict:
        return {"label": "x", "count": 99}

    with pytest.raises(WritePermissionError, match="'count'"):
        asyncio.run(build(label=sneaky).ainvoke({}))


def test_astream_yields_updates_and_leaves_no_run_context_behind() -> None:
    async def consume() -> list:
        chunks = [chunk async for chunk in build().astream({}, stream_mode="updates")]
        assert CURRENT_RUN.get() is None
        return chunks

    chunks = asyncio.run(consume())

    assert chunks == [{"count": {"count": 1}}, {"name": {"label": "n1"}}]


@pytest.mark.filterwarnings("ignore:astream_events version='v1' is deprecated")
@pytest.mark.parametrize("version", ["v1", "v2"])
def test_astream_events_reports_each_node(version: str) -> None:
    async def consume() -> list[dict]:
        return [event async for event in build().astream_events({}, version=version)]

    events = asyncio.run(consume())

    started = [e["name"] for e in events if e["event"] == "on_chain_start"]
    assert {"count", "name"} <= set(started)


def test_astream_events_v3_is_refused_with_a_clear_error() -> None:
    with pytest.raises(UnsupportedStreamError, match="'v3'"):
        build().astream_events({}, version="v3")


def test_max_seconds_cancels_an_async_node_and_its_writes_never_land() -> None:
    async def slow(state: State) -> dict:
        await asyncio.sleep(30)
        return {"label": "late"}

    started = time.monotonic()

    with pytest.raises(BudgetExceededError) as raised:
        asyncio.run(build(label=slow, budget=Budget(max_seconds=0.3)).ainvoke({}))

    assert time.monotonic() - started < 10
    assert (raised.value.dimension, raised.value.node) == ("seconds", "name")


def test_sync_nodes_run_under_the_async_entry_points_too() -> None:
    g = GraphARC(State)
    g.add_node("count", lambda s: {"count": s.count + 1}, writes={"count"})
    g.add_edge(START, "count")
    g.add_edge("count", END)

    assert asyncio.run(g.compile().ainvoke({"count": 4}))["count"] == 5


def test_the_async_state_twins_inspect_and_make_checked_edits() -> None:
    g = GraphARC(State, name="twins")
    g.add_node("count", count, writes={"count"})
    g.add_edge(START, "count")
    g.add_edge("count", END)
    graph = g.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "twins"}}

    async def scenario() -> tuple[int, int]:
        await graph.ainvoke({}, config)
        with pytest.raises(WritePermissionError):
            await graph.aupdate_state(config, {"label": "forged"}, as_node="count")
        await graph.aupdate_state(config, {"count": 41}, as_node="count")
        history = [snapshot async for snapshot in graph.aget_state_history(config)]
        return (await graph.aget_state(config)).values["count"], len(history)

    value, checkpoints = asyncio.run(scenario())

    assert value == 41
    assert checkpoints >= 4


def test_an_abandoned_astream_leaves_no_run_context_and_ends_as_cancelled(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"

    async def consume_one() -> None:
        stream = build(trace=trace).astream({}, stream_mode="updates")
        first = await stream.__anext__()
        assert first == {"count": {"count": 1}}
        assert CURRENT_RUN.get() is None
        await stream.aclose()

    asyncio.run(consume_one())

    run_end = json.loads(trace.read_text().splitlines()[-1])
    assert (run_end["phase"], run_end["status"]) == ("run_end", "cancelled")
