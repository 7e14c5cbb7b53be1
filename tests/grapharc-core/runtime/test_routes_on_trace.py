"""A routing node's end event records where its router sent the run, so viz and replay draw
what happened rather than guess it from the next step."""

from __future__ import annotations

import json
import operator
from pathlib import Path
from typing import Annotated

import pytest
from pydantic import Field

from grapharc import Budget, GraphARC, GraphARCState
from grapharc.observe.replay import replay
from grapharc.observe.viz import viz
from grapharc.runtime.errors import GraphRoutingError
from grapharc.runtime.fanout import WorkerOutcome
from grapharc.runtime.graph import END, START


class State(GraphARCState):
    n: int = 0
    left: list[str] = Field(default_factory=list)
    right: list[str] = Field(default_factory=list)


class FanState(GraphARCState):
    items: list[str] = Field(default_factory=list)
    found: Annotated[list[WorkerOutcome], operator.add] = Field(default_factory=list)


def events(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def ends(path: Path) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for event in events(path):
        if event["phase"] == "end":
            found.setdefault(event["node"], []).append(event)
    return found


def looping(trace: Path) -> GraphARC:
    g = GraphARC(State, name="loop", budget=Budget(max_iterations=10), trace=trace)
    g.add_node("tick", lambda s: {"n": s.n + 1}, writes={"n"})
    g.add_node("done", lambda s: {}, writes=set())
    g.add_edge(START, "tick")
    g.add_conditional_edge("tick", lambda s: "finish" if s.n >= 2 else "again",
                           {"again": "tick", "finish": "done"})
    g.add_edge("done", END)
    return g


def test_a_routing_nodes_end_event_records_the_key_and_the_node_it_led_to(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    looping(trace).compile().invoke({})
    routes = [e["route"] for e in ends(trace)["tick"]]
    assert routes == [{"key": "again", "to": ["tick"]}, {"key": "finish", "to": ["done"]}]
    assert "route" not in ends(trace)["done"][0]


def test_a_router_that_returns_several_keys_records_every_destination(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    g = GraphARC(State, name="split", trace=trace)
    g.add_node("plan", lambda s: {}, writes=set())
    g.add_node("a", lambda s: {"left": ["a"]}, writes={"left"})
    g.add_node("b", lambda s: {"right": ["b"]}, writes={"right"})
    g.add_edge(START, "plan")
    g.add_conditional_edge("plan", lambda s: ["l", "r"], {"l": "a", "r": "b"})
    g.add_edge("a", END)
    g.add_edge("b", END)
    g.compile().invoke({})
    assert ends(trace)["plan"][0]["route"] == {"key": ["l", "r"], "to": ["a", "b"]}


def test_a_fan_out_records_its_workers_as_destinations(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    g = GraphARC(FanState, name="fan", trace=trace)
    g.add_node("load", lambda s: {"items": ["x", "y"]}, writes={"items"})
    g.add_node("sum", lambda s: {}, writes=set())
    g.add_edge(START, "load")
    g.add_fanout("work", lambda item: item.upper(), after="load", over=lambda s: s.items, into="found",
                 then="sum")
    g.add_edge("sum", END)
    g.compile().invoke({})
    assert ends(trace)["load"][0]["route"] == {"key": ["work", "work"], "to": ["work"]}


def test_a_router_that_fails_turns_its_nodes_end_into_an_error(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    g = GraphARC(State, name="bad", trace=trace)
    g.add_node("tick", lambda s: {"n": 1}, writes={"n"})
    g.add_node("done", lambda s: {}, writes=set())
    g.add_edge(START, "tick")
    g.add_conditional_edge("tick", lambda s: "nowhere", {"finish": "done"})
    g.add_edge("done", END)

    with pytest.raises(GraphRoutingError):
        g.compile().invoke({})

    phases = [(e["phase"], e.get("node")) for e in events(trace)]
    assert phases == [("run_start", None), ("start", "tick"), ("error", "tick"), ("run_end", None)]
    error = events(trace)[2]
    assert error["exception"]["type"].endswith("GraphRoutingError") and error["step"] == 1


def test_viz_draws_two_independent_parallel_branches_without_crossing_them(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    g = GraphARC(State, name="branches", trace=trace)
    g.add_node("a1", lambda s: {"left": ["a1"]}, writes={"left"})
    g.add_node("a2", lambda s: {"left": ["a2"]}, writes={"left"})
    g.add_node("b1", lambda s: {"right": ["b1"]}, writes={"right"})
    g.add_node("b2", lambda s: {"right": ["b2"]}, writes={"right"})
    for source, target in ((START, "a1"), (START, "b1"), ("a1", "a2"), ("b1", "b2"),
                           ("a2", END), ("b2", END)):
        g.add_edge(source, target)
    run = g.compile()
    run.invoke({})

    drawn = {(edge["from"], edge["to"]) for edge in viz(trace, run.last_run.run_id).to_document()["edges"]}
    assert drawn == {("__start__", "a1"), ("__start__", "b1"), ("a1", "a2"), ("b1", "b2"),
                     ("a2", "__end__"), ("b2", "__end__")}


def test_viz_follows_the_route_of_a_router_that_picked_one_of_two_parallel_paths(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    g = GraphARC(State, name="pick", trace=trace)
    g.add_node("left", lambda s: {"left": ["l"]}, writes={"left"})
    g.add_node("right", lambda s: {"right": ["r"]}, writes={"right"})
    g.add_node("after_left", lambda s: {}, writes=set())
    g.add_node("after_right", lambda s: {}, writes=set())
    g.add_edge(START, "left")
    g.add_edge(START, "right")
    g.add_conditional_edge("left", lambda s: "go", {"go": "after_left"})
    g.add_conditional_edge("right", lambda s: "go", {"go": "after_right"})
    g.add_edge("after_left", END)
    g.add_edge("after_right", END)
    run = g.compile()
    run.invoke({})

    drawn = {(edge["from"], edge["to"]) for edge in viz(trace, run.last_run.run_id).to_document()["edges"]}
    assert ("left", "after_right") not in drawn and ("right", "after_left") not in drawn
    assert {("left", "after_left"), ("right", "after_right")} <= drawn


def test_replay_shows_each_routing_step_with_its_route(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    run = looping(trace).compile()
    run.invoke({})
    steps = []
    replay(trace, run.last_run.run_id, on_step=steps.append)
    assert [(s.node, s.route["to"] if s.route else None) for s in steps] == [
        ("tick", ["tick"]), ("tick", ["done"]), ("done", None)]
