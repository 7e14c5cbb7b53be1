"""Topology checks: parallel write conflicts at compile, and earned cycles under dag=True."""

from __future__ import annotations

import operator
from typing import Annotated

import pytest
from pydantic import Field

from grapharc import GraphARC, GraphARCState
from grapharc.runtime.errors import DagViolationError, WriteConflictError
from grapharc.runtime.graph import END, START


class State(GraphARCState):
    summary: str = ""
    notes: Annotated[list[str], operator.add] = Field(default_factory=list)
    count: int = 0


def writer(field: str, value: object):
    return lambda state: {field: value}


def fan_out_graph(left_writes: set[str], right_writes: set[str]) -> GraphARC:
    g = GraphARC(State, name="fan")
    g.add_node("split", writer("count", 1), writes={"count"})
    g.add_node("left", writer("notes", ["l"]), writes=left_writes)
    g.add_node("right", writer("notes", ["r"]), writes=right_writes)
    g.add_edge(START, "split")
    g.add_edge("split", "left")
    g.add_edge("split", "right")
    g.add_edge("left", END)
    g.add_edge("right", END)
    return g


def test_compile_refuses_parallel_nodes_that_may_both_write_a_field_without_a_reducer() -> None:
    g = fan_out_graph({"notes", "summary"}, {"summary"})

    with pytest.raises(WriteConflictError) as raised:
        g.compile()

    assert raised.value.nodes == ("left", "right")
    assert raised.value.field == "summary"
    assert "'left' and 'right'" in str(raised.value) and "'summary'" in str(raised.value)


def test_parallel_writes_to_a_field_with_a_reducer_compile_and_merge() -> None:
    result = fan_out_graph({"notes"}, {"notes"}).compile().invoke({})

    assert sorted(result["notes"]) == ["l", "r"]


def test_dag_refuses_a_conditional_edge_when_it_is_added() -> None:
    g = GraphARC(State, dag=True)
    g.add_node("a", writer("count", 1), writes={"count"})

    with pytest.raises(DagViolationError, match="conditional edge from 'a'"):
        g.add_conditional_edge("a", lambda s: END, {END: END})


def test_dag_refuses_a_fan_out_edge_when_it_is_added() -> None:
    g = GraphARC(State, dag=True)
    g.add_node("a", writer("count", 1), writes={"count"})
    g.add_node("b", writer("notes", ["b"]), writes={"notes"})
    g.add_node("c", writer("notes", ["c"]), writes={"notes"})
    g.add_edge("a", "b")

    with pytest.raises(DagViolationError, match="would fan out"):
        g.add_edge("a", "c")


def test_dag_refuses_a_worker_fan_out_when_it_is_added() -> None:
    g = GraphARC(State, dag=True)
    g.add_node("a", writer("count", 1), writes={"count"})

    with pytest.raises(DagViolationError, match="fan-out 'w'"):
        g.add_fanout("w", lambda item: item, after="a", over=lambda s: [], into="notes", then=END)


def test_dag_refuses_a_cycle_at_compile_naming_it() -> None:
    g = GraphARC(State, dag=True)
    for name in ("a", "b", "c"):
        g.add_node(name, writer("count", 1), writes={"count"})
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    g.add_edge("c", "a")

    with pytest.raises(DagViolationError, match="a -> b -> c -> a"):
        g.compile()


def test_a_linear_dag_compiles_and_runs_in_order() -> None:
    g = GraphARC(State, dag=True)
    g.add_node("load", writer("notes", ["load"]), writes={"notes"})
    g.add_node("count", lambda s: {"count": len(s.notes)}, writes={"count"})
    g.add_edge(START, "load")
    g.add_edge("load", "count")
    g.add_edge("count", END)

    assert g.compile().invoke({})["count"] == 1


def test_a_cycle_is_allowed_when_the_graph_is_not_a_dag() -> None:
    g = GraphARC(State)
    g.add_node("tick", lambda s: {"count": s.count + 1}, writes={"count"})
    g.add_edge(START, "tick")
    g.add_conditional_edge("tick", lambda s: "tick" if s.count < 3 else END, ["tick", END])

    assert g.compile().invoke({})["count"] == 3
