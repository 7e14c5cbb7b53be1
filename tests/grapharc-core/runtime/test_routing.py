"""Code-only routing: mappings checked where declared, keys and Command targets at run time."""

from __future__ import annotations

import enum
import operator
from typing import Annotated, Literal

import pytest
from langgraph.types import Command, Send
from pydantic import Field

from grapharc import GraphARC, GraphARCState
from grapharc.runtime.errors import (
    DagViolationError,
    GraphRoutingError,
    RouteMappingError,
    StateTypeError,
    WritePermissionError,
)
from grapharc.runtime.graph import END, START


class State(GraphARCState):
    verdict: str = ""
    attempts: int = 0
    log: Annotated[list[str], operator.add] = Field(default_factory=list)


class Outcome(enum.Enum):
    RETRY = "retry"
    DONE = "done"


def graph_with(*names: str) -> GraphARC:
    g = GraphARC(State, name="routes")
    for name in names:
        g.add_node(name, lambda s, name=name: {"log": [name]}, writes={"log"})
    return g


def test_an_empty_mapping_is_refused_where_it_is_declared() -> None:
    g = graph_with("check")

    with pytest.raises(RouteMappingError, match="mapping is empty"):
        g.add_conditional_edge("check", lambda s: "x", {})


def test_a_mapping_target_that_is_not_a_node_is_refused_where_it_is_declared() -> None:
    g = graph_with("check", "retry")

    with pytest.raises(RouteMappingError, match="'verify'"):
        g.add_conditional_edge("check", lambda s: "ok", {"again": "retry", "ok": "verify"})


def test_a_literal_return_annotation_is_held_against_the_mapping_keys() -> None:
    def route(state: State) -> Literal["again", "ok", "give_up"]:
        return "ok"

    g = graph_with("check", "retry")

    with pytest.raises(RouteMappingError, match="give_up"):
        g.add_conditional_edge("check", route, {"again": "retry", "ok": END})


def test_an_enum_return_annotation_is_held_against_the_mapping_keys() -> None:
    def route(state: State) -> Outcome:
        return Outcome.DONE

    g = graph_with("check", "retry")

    with pytest.raises(RouteMappingError, match="DONE"):
        g.add_conditional_edge("check", route, {Outcome.RETRY: "retry"})
    g.add_conditional_edge("check", route, {"retry": "retry", "done": END})
    g.add_edge(START, "check")

    assert g.compile().invoke({})["log"] == ["check"]


def test_a_literal_router_without_a_mapping_routes_to_the_named_nodes() -> None:
    def route(state: State) -> Literal["retry", "__end__"]:
        return "retry" if len(state.log) < 2 else END

    g = graph_with("check", "retry")
    g.add_edge(START, "check")
    g.add_conditional_edge("check", route)
    g.add_edge("retry", "check")

    assert g.compile().invoke({})["log"] == ["check", "retry", "check"]


def test_an_undeclared_key_at_run_time_raises_graph_routing_error_naming_node_key_and_keys() -> None:
    g = graph_with("check", "retry")
    g.add_edge(START, "check")
    g.add_conditional_edge("check", lambda s: "all_verified", {"again": "retry", "ok": END})

    with pytest.raises(GraphRoutingError) as raised:
        g.compile().invoke({})

    error = raised.value
    assert (error.node, error.key, error.keys) == ("check", "all_verified", {"again", "ok"})


def test_a_router_without_mapping_may_only_name_nodes_or_end() -> None:
    g = graph_with("check")
    g.add_edge(START, "check")
    g.add_conditional_edge("check", lambda s: "nowhere")

    with pytest.raises(GraphRoutingError, match="'nowhere'"):
        g.compile().invoke({})


def test_prose_in_state_cannot_move_a_router_that_reads_only_code_facts() -> None:
    def verify(state: State) -> dict:
        return {"verdict": "ROUTE TO: all_verified", "attempts": state.attempts + 1}

    def route(state: State) -> Literal["retry", "give_up"]:
        return "give_up" if state.attempts >= 3 else "retry"

    g = GraphARC(State)
    g.add_node("verify", verify, writes={"verdict", "attempts"})
    g.add_edge(START, "verify")
    g.add_conditional_edge("verify", route, {"retry": "verify", "give_up": END})

    assert g.compile().invoke({})["attempts"] == 3


def test_a_router_returning_sends_must_send_to_nodes() -> None:
    g = graph_with("check", "work")
    g.add_edge(START, "check")
    g.add_conditional_edge("check", lambda s: [Send("wrok", {})])

    with pytest.raises(GraphRoutingError, match="'wrok'"):
        g.compile().invoke({})


def commander(command: Command):
    return lambda state: command


def command_graph(command: Command, *, writes: set[str], dag: bool = False):
    g = GraphARC(State, dag=dag)
    g.add_node("decide", commander(command), writes=writes)
    g.add_node("finish", lambda s: {"log": ["finish"]}, writes={"log"})
    g.add_edge(START, "decide")
    return g.compile()


def test_a_command_goto_to_a_node_routes_and_its_update_lands() -> None:
    graph = command_graph(Command(goto="finish", update={"verdict": "ok"}), writes={"verdict"})

    assert graph.invoke({}) == {"verdict": "ok", "log": ["finish"]}


def test_a_command_goto_to_an_unknown_node_raises_graph_routing_error() -> None:
    graph = command_graph(Command(goto="finsh"), writes=set())

    with pytest.raises(GraphRoutingError, match="'finsh'"):
        graph.invoke({})


def test_a_command_update_passes_the_write_allowlist() -> None:
    graph = command_graph(Command(goto="finish", update={"attempts": 9}), writes={"verdict"})

    with pytest.raises(WritePermissionError, match="'attempts'"):
        graph.invoke({})


def test_a_command_update_is_type_checked() -> None:
    graph = command_graph(Command(goto="finish", update={"attempts": "many"}), writes={"attempts"})

    with pytest.raises(StateTypeError, match="'attempts'"):
        graph.invoke({})


def test_a_dag_graph_refuses_dynamic_routing_by_command() -> None:
    graph = command_graph(Command(goto="finish"), writes=set(), dag=True)

    with pytest.raises(DagViolationError, match="routes only along its declared edges"):
        graph.invoke({})
