"""Fail-closed entry points: no run without a context, checked state edits, no half-run graphs."""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from pydantic import Field

from grapharc import GraphARC, GraphARCState
from grapharc.runtime.context import CURRENT_RUN
from grapharc.runtime.errors import (
    AsyncNodeError,
    MissingRunContextError,
    RunInputError,
    StateTypeError,
    UnknownFieldError,
    UnknownNodeError,
    WritePermissionError,
)
from grapharc.runtime.graph import END, START


class State(GraphARCState):
    count: int = 0
    label: str = ""
    log: Annotated[list[str], operator.add] = Field(default_factory=list)


def counter_graph(checkpointer=None):
    g = GraphARC(State, name="fc")
    g.add_node("count", lambda s: {"count": s.count + 1}, writes={"count"})
    g.add_node("name", lambda s: {"label": f"n{s.count}"}, writes={"label"})
    g.add_edge(START, "count")
    g.add_edge("count", "name")
    g.add_edge("name", END)
    return g.compile(checkpointer=checkpointer)


def test_driving_inner_directly_raises_missing_run_context_error() -> None:
    graph = counter_graph()

    with pytest.raises(MissingRunContextError, match="'count'"):
        graph.inner.invoke({"count": 0})
    with pytest.raises(MissingRunContextError):
        list(graph.inner.stream({"count": 0}))
    with pytest.raises(MissingRunContextError):
        asyncio.run(graph.inner.ainvoke({"count": 0}))


def test_the_run_context_does_not_outlive_the_run() -> None:
    graph = counter_graph()

    graph.invoke({})
    for _ in graph.stream({}):
        pass

    assert CURRENT_RUN.get() is None
    with pytest.raises(MissingRunContextError):
        graph.inner.invoke({"count": 0})


def test_an_abandoned_stream_does_not_leak_its_run_context() -> None:
    graph = counter_graph()
    stream = graph.stream({})

    next(stream)

    assert CURRENT_RUN.get() is None
    stream.close()


def test_sync_entry_points_refuse_a_graph_with_async_nodes_before_anything_runs() -> None:
    ran: list[str] = []

    async def later(state: State) -> dict:
        ran.append("later")
        return {}

    g = GraphARC(State, name="mixed")
    g.add_node("first", lambda s: ran.append("first") or {}, writes=set())
    g.add_node("later", later, writes=set())
    g.add_edge(START, "first")
    g.add_edge("first", "later")
    graph = g.compile()

    with pytest.raises(AsyncNodeError) as raised:
        graph.invoke({})
    with pytest.raises(AsyncNodeError):
        graph.stream({})

    assert raised.value.nodes == {"later"}
    assert ran == []
    asyncio.run(graph.ainvoke({}))
    assert ran == ["first", "later"]


def test_update_state_rejects_unknown_fields() -> None:
    graph = counter_graph(InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    graph.invoke({}, config)

    with pytest.raises(UnknownFieldError, match="'cuont'"):
        graph.update_state(config, {"cuont": 3})


def test_update_state_type_checks_and_coerces_values() -> None:
    graph = counter_graph(InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    graph.invoke({}, config)

    with pytest.raises(StateTypeError, match="update_state wrote 'count'"):
        graph.update_state(config, {"count": "lots"})
    graph.update_state(config, {"count": "5"})

    assert graph.get_state(config).values["count"] == 5


def test_update_state_as_a_node_applies_that_nodes_allowlist() -> None:
    graph = counter_graph(InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    graph.invoke({}, config)

    with pytest.raises(WritePermissionError) as raised:
        graph.update_state(config, {"label": "forged"}, as_node="count")
    with pytest.raises(UnknownNodeError):
        graph.update_state(config, {"label": "x"}, as_node="cuont")
    graph.update_state(config, {"label": "fixed"}, as_node="name")

    assert (raised.value.node, raised.value.field) == ("count", "label")
    assert graph.get_state(config).values["label"] == "fixed"


def test_a_command_carrying_an_update_is_refused_as_run_input() -> None:
    graph = counter_graph(InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}

    with pytest.raises(RunInputError, match="only resume="):
        graph.invoke(Command(update={"count": 99}), config)
    with pytest.raises(RunInputError):
        graph.invoke(Command(resume="x", goto="name"), config)
