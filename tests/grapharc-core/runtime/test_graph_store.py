"""A compiled GraphARC hands nodes its store as LangGraph does, and every write is on the trace."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from langgraph.config import get_store
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from pydantic import Field

from grapharc import GraphARC, GraphARCState
from grapharc.memory.longterm import open_long_term_store
from grapharc.observe.render import event_line
from grapharc.runtime.errors import GraphBuildError
from grapharc.runtime.graph import END, START
from grapharc.trace import schema as ts
from grapharc.trace.schema import json_schema


class State(GraphARCState):
    found: list[str] = Field(default_factory=list)


def remember(state: State, *, store: BaseStore) -> dict[str, Any]:
    store.put(("users", "ada"), "m1", {"text": "likes the analytical engine"}, ttl=30)
    store.put(("users", "ada"), "m2", {"text": "writes notes"})
    get_store().delete(("users", "ada"), "m2")
    return {"found": [item.key for item in get_store().search(("users",), query="engine")]}


async def aremember(state: State, config: Any, store: BaseStore) -> dict[str, Any]:
    await store.aput(("users", "bob"), "m3", {"text": "likes looms"})
    return {"found": [item.key for item in await get_store().asearch(("users",), query="looms")]}


def compile_graph(body: Any, trace: Path, store: Any, **options: Any) -> Any:
    graph = GraphARC(State, name="memory-graph", trace=trace)
    graph.add_node("remember", body, writes={"found"})
    graph.add_edge(START, "remember")
    graph.add_edge("remember", END)
    return graph.compile(store=store, **options)


def store_events(trace: Path) -> list[dict[str, Any]]:
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    return [event for event in events if event[ts.PHASE] == ts.STORE_WRITE]


def test_a_node_puts_and_searches_through_its_store_parameter_and_get_store(tmp_path: Path) -> None:
    store = open_long_term_store("memory:")
    out = compile_graph(remember, tmp_path / "t.jsonl", store).invoke({})
    assert out["found"] == ["m1"]
    assert store.get(("users", "ada"), "m1").value == {"text": "likes the analytical engine"}  # type: ignore[union-attr]
    assert store.get(("users", "ada"), "m2") is None


def test_every_write_is_on_the_trace_with_its_size_and_without_its_value(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    compile_graph(remember, trace, open_long_term_store("memory:")).invoke({})
    put, other_put, delete = store_events(trace)
    assert {key: put[key] for key in (ts.NODE, ts.STEP, ts.GRAPH, ts.NAMESPACE, ts.KEY, ts.OPERATION,
                                      ts.SIZE_BYTES, ts.TTL_MINUTES)} == {
        ts.NODE: "remember", ts.STEP: 1, ts.GRAPH: "memory-graph", ts.NAMESPACE: ["users", "ada"],
        ts.KEY: "m1", ts.OPERATION: "put", ts.SIZE_BYTES: len('{"text":"likes the analytical engine"}'),
        ts.TTL_MINUTES: 30}
    assert ts.VALUE not in put and "analytical" not in json.dumps([put, other_put, delete])
    assert (other_put[ts.KEY], delete[ts.KEY], delete[ts.OPERATION]) == ("m2", "m2", "delete")
    assert ts.SIZE_BYTES not in delete
    assert event_line(put).endswith("remember  put users.ada/m1 38B")


def note(state: State, *, store: BaseStore) -> dict[str, Any]:
    store.put(("users", "ada"), "m1", {"text": "a note"})
    return {"found": [item.key for item in store.search(("users",))]}


def test_any_base_store_serves_and_values_go_on_the_trace_only_when_asked(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    store = InMemoryStore()
    assert compile_graph(note, trace, store, trace_store_values=True).invoke({})["found"] == ["m1"]
    assert store.get(("users", "ada"), "m1").value == {"text": "a note"}  # type: ignore[union-attr]
    assert store_events(trace)[0][ts.VALUE] == {"text": "a note"}


def test_an_async_node_gets_the_store_and_its_writes_are_traced(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    out = asyncio.run(compile_graph(aremember, trace, open_long_term_store("memory:")).ainvoke({}))
    assert out["found"] == ["m3"]
    assert [(event[ts.KEY], event[ts.OPERATION]) for event in store_events(trace)] == [("m3", "put")]


def test_writes_outside_a_run_are_not_traced(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    compiled = compile_graph(remember, trace, open_long_term_store("memory:"))
    compiled.inner.store.put(("users", "eve"), "k", {"v": 1})
    assert not trace.exists() or store_events(trace) == []


def test_the_store_write_event_is_in_the_trace_schema() -> None:
    variants = {variant["title"]: variant for variant in json_schema()["oneOf"]}
    assert set(variants[ts.STORE_WRITE]["required"]) >= {ts.NAMESPACE, ts.KEY, ts.OPERATION, ts.NODE}


def test_a_store_that_is_not_a_base_store_is_refused(tmp_path: Path) -> None:
    with pytest.raises(GraphBuildError, match="BaseStore"):
        compile_graph(remember, tmp_path / "t.jsonl", {"not": "a store"})


def test_without_a_store_a_nodes_store_parameter_is_none(tmp_path: Path) -> None:
    def look(state: State, store: BaseStore | None) -> dict[str, Any]:
        return {"found": [repr(store)]}

    assert compile_graph(look, tmp_path / "t.jsonl", None).invoke({})["found"] == ["None"]
