"""State isolation: a node gets a deep copy, so the returned dict is the only way out."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, Field

from grapharc import GraphARC, GraphARCState
from grapharc.runtime.graph import END, START


class Inner(BaseModel):
    items: list[str] = Field(default_factory=list)


class State(GraphARCState):
    inner: Inner = Inner()
    tags: list[str] = Field(default_factory=list)
    seen: list[str] = Field(default_factory=list)
    index: dict[str, list[str]] = Field(default_factory=dict)
    rows: list[list[str]] = Field(default_factory=list)


def mutate_in_place(state: State) -> dict:
    state.inner.items.append("sneaked")
    state.tags.append("sneaked")
    state.index.setdefault("k", []).append("sneaked")
    state.rows[0].append("sneaked")
    return {}


def observe(state: State) -> dict:
    return {"seen": [*state.inner.items, *state.tags, *state.index.get("k", []), *state.rows[0]]}


def build(copy_state: bool, trace: Path | None = None):
    g = GraphARC(State, name="iso", trace=trace)
    g.add_node("mutate", mutate_in_place, writes=set(), copy_state=copy_state)
    g.add_node("observe", observe, writes={"seen"})
    g.add_edge(START, "mutate")
    g.add_edge("mutate", "observe")
    g.add_edge("observe", END)
    return g.compile()


def test_mutating_a_nested_model_in_place_does_not_reach_the_next_node() -> None:
    result = build(copy_state=True).invoke(
        {"inner": {"items": ["a"]}, "tags": ["t"], "index": {"k": ["i"]}, "rows": [["r"]]}
    )

    assert result["seen"] == ["a", "t", "i", "r"]
    assert result["inner"].items == ["a"]


def test_opting_out_of_the_copy_shares_langgraphs_instance_and_the_trace_says_so(
    tmp_path: Path,
) -> None:
    trace = tmp_path / "trace.jsonl"
    graph = build(copy_state=False, trace=trace)

    result = graph.invoke({"inner": {"items": ["a"]}, "tags": ["t"], "rows": [["r"]]})
    graph.close()

    assert "sneaked" in result["inner"].items  # the documented cost of the opt-out
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    mutate = [e for e in events if e.get("node") == "mutate"]
    observe_events = [e for e in events if e.get("node") == "observe"]
    assert [e["phase"] for e in mutate] == ["start", "end"]
    assert all(e["copy"] == "shared" for e in mutate)
    assert all("copy" not in e for e in observe_events)
