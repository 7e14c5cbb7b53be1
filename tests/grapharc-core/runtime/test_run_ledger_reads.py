"""Closing a run's ledger reads the thread's latest checkpoint once: it pins the end marker on it and
asks whether nodes are still due there (the run stopped interrupted) from the same read."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from grapharc import GraphARC, GraphARCState
from grapharc.runtime.graph import END, START

CONFIG = {"configurable": {"thread_id": "t"}}


class State(GraphARCState):
    log: list[str] = []  # noqa: RUF012 - pydantic copies field defaults


class CountingSaver(InMemorySaver):
    """An in-memory checkpointer that counts its checkpoint reads (in ``reads``, shared with the
    copies compiling a graph makes of it)."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: list[Any] = []

    def get_tuple(self, config: Any) -> Any:
        self.reads.append(config)
        return super().get_tuple(config)


def _draft_then_send() -> GraphARC:
    graph = GraphARC(State, name="draft-send")
    for name in ("draft", "send"):
        graph.add_node(name, lambda state, name=name: {"log": [*state.log, name]}, writes={"log"})
    graph.add_edge(START, "draft")
    graph.add_edge("draft", "send")
    graph.add_edge("send", END)
    return graph


@pytest.mark.parametrize(("payload", "status"), [({}, "interrupted"), (None, "completed")])
def test_a_run_reads_its_threads_latest_checkpoint_three_times_and_says_whether_it_stopped_short(
        payload: dict[str, Any] | None, status: str) -> None:
    """Three reads a run: the ledger's opening, LangGraph's own, the ledger's closing (four before,
    when whether nodes were still due was read again after the marker was pinned)."""
    saver = CountingSaver()
    compiled = _draft_then_send().compile(checkpointer=saver, interrupt_before=["send"])
    if payload is None:
        compiled.invoke({}, CONFIG)
    saver.reads.clear()
    compiled.invoke(payload, CONFIG)
    assert compiled.last_run is not None and compiled.last_run.status == status
    assert len(saver.reads) == 3
