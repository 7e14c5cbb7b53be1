"""A turn's live sink (``grapharc.session.live``): an async turn hands it the chunks of the modes it
asks for (tokens, custom writes, the chat model's events), flushed before each node is recorded; the
trail records the same with or without one, and a sink that raises is dropped, never the turn."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.config import get_stream_writer

from grapharc.runtime.graph import END, START, GraphARC
from grapharc.runtime.state import GraphARCState
from grapharc.session import SessionManager
from grapharc.session.live import CHAT_EVENTS
from grapharc.session.turn_options import TurnOptions
from grapharc.testing import ScriptedChatModel

ANSWER = "three words here"


class Talk(GraphARCState):
    answer: str = ""


def talk(state: Talk, config: RunnableConfig) -> dict[str, Any]:
    get_stream_writer()({"asking": True})
    return {"answer": str(ScriptedChatModel(responses=[ANSWER]).invoke("hi", config).content)}


class Recorder:
    """A sink keeping what it is given, and what it was given when each flush came."""

    subgraphs = False

    def __init__(self, modes: frozenset[str]) -> None:
        self.modes = modes
        self.chunks: list[tuple[tuple[str, ...], str, Any]] = []
        self.flushed_at: list[int] = []

    def put(self, namespace: tuple[str, ...], mode: str, chunk: Any) -> None:
        self.chunks.append((namespace, mode, chunk))

    async def flush(self) -> None:
        self.flushed_at.append(len(self.chunks))


class Broken(Recorder):
    def put(self, namespace: tuple[str, ...], mode: str, chunk: Any) -> None:
        raise RuntimeError("the sink broke")


def turn(tmp_path: Path, thread: str, sink: Recorder | None) -> tuple[str, list[tuple[str, str | None]]]:
    """Run ``talk`` once on a new thread with ``sink``: the session's status and its trail."""
    manager = SessionManager(tmp_path / "sessions")
    graph = GraphARC(Talk, name="talk")
    graph.add_node("talk", talk, writes={"answer"})
    graph.add_edge(START, "talk")
    graph.add_edge("talk", END)
    manager.register(graph)

    async def scenario() -> tuple[str, list[tuple[str, str | None]]]:
        manager.create("talk", thread_id=thread)
        try:
            status = (await manager.arun(thread, {}, options=TurnOptions(live=sink))).status
            return status, [(entry.kind, entry.node) for entry in manager.audit(thread)]
        finally:
            await manager.aclose()

    return asyncio.run(scenario())


def test_the_sink_gets_tokens_custom_writes_and_chat_events_flushed_before_the_node_is_recorded(
        tmp_path: Path) -> None:
    sink = Recorder(frozenset({"messages", "custom", CHAT_EVENTS}))
    status, trail = turn(tmp_path, "t1", sink)
    plain_status, plain_trail = turn(tmp_path, "t2", None)
    assert status == plain_status == "completed" and trail == plain_trail
    modes = [mode for _ns, mode, _chunk in sink.chunks]
    assert {"messages", "custom", CHAT_EVENTS} == set(modes) and "updates" not in modes
    tokens = [chunk[0].content for _ns, mode, chunk in sink.chunks if mode == "messages"]
    assert "".join(tokens) == ANSWER and len(tokens) > 3
    events = [chunk["event"] for _ns, mode, chunk in sink.chunks if mode == CHAT_EVENTS]
    assert events[:2] == ["on_chain_start", "on_chat_model_start"] and events[-1] == "on_chat_model_end"
    assert events.count("on_chain_start") == 1  # the node's task, not the runnables inside it
    assert sink.flushed_at and sink.flushed_at[0] == len(sink.chunks)  # all of the node's, before its entry


def test_a_sink_that_raises_is_dropped_and_the_turn_goes_on(tmp_path: Path) -> None:
    status, trail = turn(tmp_path, "t1", Broken(frozenset({"messages", "custom"})))
    assert status == "completed" and ("node", "talk") in trail
